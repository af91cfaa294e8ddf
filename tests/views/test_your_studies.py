"""An annotator's studies as their Home and the question page's chooser list them, one HTML block (issue 46):
names shown as they are, a link naming its study (Start, Continue, Open) while a study is open, "done, thank
you." on Home once finished, and each study's progress bar."""

import pytest
from lxml import html as lxml_html

from structext_core.studio import study
from structext_core.views.your_studies import also_html, studies_html, verb


def mine(study_id: int, name: str, answered: int, n_items: int, accepted: float | None = None) -> study.AnnotatorStudy:
    return study.AnnotatorStudy(id=study_id, name=name, rule_text="r", show_correctness=False, n_items=n_items,
                                rule_accepted_at=accepted, answered=answered)


def cards(made: str) -> list[tuple[str, str | None, str, str]]:
    """Each card as (its head's text, its link, the link's classes, its progress bar's percentage)."""
    tree = lxml_html.fromstring(f"<div>{made}</div>")
    found = []
    for card in tree.xpath('//div[@data-testid="sxStudy"]'):
        links = card.xpath(".//a")
        found.append((" ".join(" ".join(card.xpath('./div[@class="sx-study-head"]//text()')).split()),
                      links[0].get("href") if links else None, links[0].get("class") if links else "",
                      card.xpath('.//*[@role="progressbar"]')[0].get("aria-valuenow")))
    return found


STUDIES = [mine(3, "done-one", 4, 4), mine(7, "<b>pilot</b>", 0, 4), mine(9, "went-on", 1, 4)]


def test_home_links_each_open_study_by_its_id_and_thanks_for_a_finished_one():
    assert cards(studies_html(STUDIES, "human_baseline")) == [
        ("done-one done, thank you.", None, "", "100"),  # a finished study links nowhere on Home
        ("<b>pilot</b> Start", "human_baseline?study=7", "sx-go sx-first", "0"),  # a name is text, never markup
        ("went-on Continue", "human_baseline?study=9", "sx-go", "25")]  # the first open one is the primary


def test_the_chooser_opens_a_finished_study_too():
    assert [(head, href) for head, href, _, _ in cards(studies_html(STUDIES, "human_baseline", open_finished=True))] == [
        ("done-one Open", "human_baseline?study=3"), ("<b>pilot</b> Start", "human_baseline?study=7"),
        ("went-on Continue", "human_baseline?study=9")]
    assert studies_html([], "human_baseline").startswith("<style>") and "sxStudy" not in studies_html([], "x")


@pytest.mark.parametrize(("answered", "accepted", "said"), [(0, None, "Start"), (0, 1.0, "Continue"), (2, None, "Continue"),
                                                           (4, 1.0, "Open")])
def test_the_verb_says_what_opening_does(answered, accepted, said):
    assert verb(mine(1, "s", answered, 4, accepted)) == said


def test_also_for_you_links_each_page_in_the_same_tab_its_title_as_text():
    tree = lxml_html.fromstring(f"<div>{also_html([('<i>Rewriting</i>', 'rewrite'), ('Pairwise', 'pairwise')])}</div>")
    assert [(a.text_content(), a.get("href"), a.get("target")) for a in tree.xpath('//ul[@data-testid="sxAlso"]/li/a')] == [
        ("<i>Rewriting</i>", "rewrite", None), ("Pairwise", "pairwise", None)]
    assert not tree.xpath("//i")
