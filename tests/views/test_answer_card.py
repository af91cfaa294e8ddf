"""An answer as Adjudication shows it, one HTML block (issue 46): what a person typed shown exactly as it is,
the option chosen with its letter, the score that counts in bold, the times."""

from lxml import html as lxml_html

from structext_core.studio import study
from structext_core.views.answer_card import answer_html, answer_label, answers_html


def response(text: str, **changes) -> study.ResponseDetail:
    base = dict(response_id=1, user_id=2, annotator="ann<1>", response=text, gave_up=False, rouge_l=0.5,
                exact_match=0, score_auto=0.0, override=None, score=0.25, submitted_at=90.0, elapsed_seconds=75.0,
                paused_seconds=0.0, idle_seconds=None, away_seconds=3.0, wall_seconds=80.0)
    return study.ResponseDetail(**{**base, **changes})


def read(made: str) -> tuple[str, list[str]]:
    tree = lxml_html.fromstring(made)
    return " ".join(" ".join(tree.itertext()).split()), [b.text_content() for b in tree.iter("strong")]


def test_a_typed_answer_is_shown_exactly_with_its_graded_score_and_times():
    hostile = "<img src=x onerror=alert(1)>\n  **not bold** & [a link](http://x)"
    made = answer_html(response(hostile), score_label="ROUGE-L", changed_by_hand=False)
    assert "<img" not in made and "&lt;img src=x onerror=alert(1)&gt;" in made
    text, bold = read(made)
    assert bold == ["ann<1>", "final score 0.25"]
    assert " ".join(hostile.split()) in text  # as typed, markup and all
    assert "ROUGE-L 0.500 · exact match 0 · automatic score 0.00 · final score 0.25" in text
    assert "Time: active 1:15 · paused 0:00 · idle – · away 0:03 · wall 1:20 · submitted 1970-01-01 00:01 UTC" in text
    assert text.endswith("Never changed by hand.")
    assert "Never changed" not in answer_html(response("x"), score_label="ROUGE-L")


def test_a_choice_shows_its_letter_and_option_and_a_give_up_nothing_answered():
    text, bold = read(answer_html(response("B", exact_match=1, score_auto=1.0, score=1.0),
                                  options=("yes", "no <b>really</b>")))
    assert "Chose B · no <b>really</b>" in text and bold == ["ann<1>", "B", "final score 1.00"]
    assert "correct (automatic score 1) · final score 1.00" in text
    text, _ = read(answer_html(response("", gave_up=True), options=("yes", "no")))
    assert text.startswith("ann<1> · gave up not correct (automatic score 0)") and "Chose" not in text


def test_a_page_of_answers_frames_each_with_its_note_and_history_escaped():
    hostile = "<script>alert(1)</script> **x**"
    set_by_hand = study.Override(id=2, response_id=1, score=1.0, reason=hostile, by=None, at=3600.0)
    history = [set_by_hand, study.Override(id=1, response_id=1, score=None, reason="first look", by="lead", at=60.0)]
    made = answers_html([(response("a", override=set_by_hand, score=1.0), history), (response("b"), [])],
                        score_label="ROUGE-L")
    assert "<script>" not in made and made.count('class="sx-card"') == 2
    tree = lxml_html.fromstring(f"<div>{made}</div>")
    first, second = tree.find_class("sx-card")
    text = " ".join(" ".join(first.itertext()).split())
    assert f"Set by hand to 1 by (deleted account) on 1970-01-01 01:00 UTC: {hostile}" in text
    [folded] = first.iter("details")
    assert folded.find("summary").text_content() == "History of this score (2 changes)"
    rows = [[c.text_content() for c in row] for row in folded.iter("tr")]
    assert rows == [["when", "by", "score", "reason"], ["1970-01-01 01:00 UTC", "(deleted account)", "1", hostile],
                    ["1970-01-01 00:01 UTC", "lead", "back to automatic", "first look"]]
    assert "Never changed by hand." in second.text_content() and not list(second.iter("details"))
    assert "Set by hand" not in second.text_content()


def test_a_chooser_names_an_answer_by_who_what_and_its_final_score():
    assert answer_label(response("x" * 50 + "\n<b>")) == f"ann<1> · “{'x' * 40}…” · final score 0.25"
    assert answer_label(response("B", score=1.0), options=("yes", "no")) == "ann<1> · chose B · final score 1.00"
    assert answer_label(response("", gave_up=True)) == "ann<1> · gave up · final score 0.25"
