"""An annotator's studies as their Home lists them, one HTML block (issue 46): names shown as they are, a link
to the questions while a study is open, "done, thank you." once finished, and each study's progress bar."""

from lxml import html as lxml_html

from structext_core.studio import study
from structext_core.views.your_studies import studies_html


def mine(name: str, answered: int, n_items: int) -> study.AnnotatorStudy:
    return study.AnnotatorStudy(id=1, name=name, rule_text="r", show_correctness=False, n_items=n_items,
                                rule_accepted_at=None, answered=answered)


def test_each_study_is_framed_with_its_link_or_its_end_and_its_progress():
    made = studies_html([mine("<b>pilot</b>", 1, 4), mine("done-one", 4, 4)], "human_baseline")
    tree = lxml_html.fromstring(f"<div>{made}</div>")
    cards = tree.xpath('//div[@data-testid="sxStudy"]')
    assert [" ".join(c.xpath("./p")[0].text_content().split()) for c in cards] == [
        "<b>pilot</b>: go to the questions", "done-one: done, thank you."]  # a name is text, never markup
    assert [a.get("href") for a in tree.iter("a")] == ["human_baseline"]  # a finished study links nowhere
    assert [bar.get("aria-valuenow") for bar in tree.xpath('//*[@role="progressbar"]')] == ["25", "100"]
    assert studies_html([], "human_baseline").startswith("<style>") and "sxStudy" not in studies_html([], "x")
