"""The Adjudication page with AppTest: the item list disagreement first, one item in full, an
admin overriding and clearing a score (seen in the history and the dashboard), the errors, the
flags on a question, and everyone but admins refused."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.studio import access, accounts, storage, study
from tests.pages.html_tables import html_blocks, html_tables, html_text
from tests.pages.light_choices import choice, choices, choose, open_section, sections, send
from tests.pages.text_blocks import text_blocks
from tests.studio.study.support import grid_samples, run_study

PAGE = Path(__file__).resolve().parents[2] / "pages" / "adjudication.py"


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return storage.open_db()


@pytest.fixture
def people(db):
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator"),
                               ("reader", "researcher"))}


def policy(username, index, answer):
    """ann1 is always right; ann2 gives up on the first question it sees, then is right."""
    return answer if username == "ann1" or index > 0 else None


@pytest.fixture
def answered(db, people):
    """Three questions answered by ann1 and ann2: exactly one has a give-up beside a right answer."""
    return run_study(db, grid_samples(), [people["ann1"], people["ann2"]], policy, n_items=3)


def open_page(user, **state) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    if user is not None:
        at.session_state["user"] = user
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def gave_up_response(db, study_id):
    return db.execute("SELECT id, item_id FROM responses WHERE study_id = ? AND gave_up = 1", [study_id]).fetchone()


def html_text_of(at) -> str:
    return "".join(html_blocks(at))


def changing(db, response_id) -> dict:
    """The page's state with its "Change a score" box open on ``response_id``'s answer."""
    item_id = db.execute("SELECT item_id FROM responses WHERE id = ?", [response_id]).fetchone()[0]
    return {f"adj_change_{item_id}": True, f"adj_pick_{item_id}": response_id}


def test_the_admin_sees_the_disputed_question_first_in_full(db, people, answered):
    at = open_page(people["lead"])
    assert at.title[0].value == "Adjudication"
    response_id, item_id = gave_up_response(db, answered)
    question = choice(at, f"adj_item_{answered}")
    assert question.value == str(item_id)  # the disagreement: one right, one gave up
    assert len(question.options) == 3
    detail = study.adjudication_item(db, item_id)
    codes = text_blocks(at)
    assert detail.reference in codes and detail.answer in codes and not at.code  # no highlighter to load
    shown = html_text(at)  # the question beside its reference, one block (issue 46: columns of elements before)
    name = study.kind_of(detail.summary.benchmark).reference_view(dict(detail.summary.strata))[0]
    assert f"Reference · {name}" in shown and f"Question: {' '.join(detail.question.split())}" in shown
    assert not at.columns and not at.markdown
    shown = html_text(at)  # each answer one HTML block (issue 46: six elements each before)
    assert "ROUGE-L 1.000 · exact match 1 · automatic score 1.00 · final score 1.00" in shown and "ann2 · gave up" in shown
    assert "final score 0.00" in shown and "Never changed by hand." in shown
    assert "<strong>ann2</strong> · gave up" in "".join(html_blocks(at))
    # every answer in one HTML block, no element of its own (issue 46: a framed box and a closed box each)
    assert html_blocks(at)[-1].count('data-testid="sxAnswer"') == html_blocks(at)[-1].count('class="sx-card"') == 2
    assert sum(h.count("sxAnswer") for h in html_blocks(at)) == 2 and not at.info  # no note: nothing set by hand
    # the override form is drawn only once its box is opened, for the answer chosen in it
    assert not [r for r in at.radio if r.label == "New score"] and not [b for b in at.button if b.key.startswith("adj_save")]
    assert "Change a score" in sections(at) and not at.expander  # closed: a light header
    at = open_section(at, "Change a score")  # a click on it
    assert at.expander(key=f"adj_change_{item_id}").label == "Change a score"
    answers = at.selectbox(key=f"adj_pick_{item_id}")
    assert answers.options == ["ann1 · “" + detail.answer[:40] + ("…”" if len(detail.answer) > 40 else "”")
                               + " · final score 1.00", "ann2 · gave up · final score 0.00"]
    at = answers.set_value(response_id).run()
    assert at.button(key=f"adj_clear_{response_id}").disabled  # nothing to clear yet
    assert [r.key for r in at.radio if r.key.startswith("adj_verdict")] == [f"adj_verdict_{response_id}"]
    table = html_tables(at)[0]  # the list, an HTML table (issue 46: no grid nor Arrow table before a click)
    assert table["#"].tolist()[0] == detail.summary.position and len(table) == 3
    assert not at.dataframe and not [label for label in sections(at) if label.startswith("Every question")]


def test_the_admin_overrides_a_score_sees_it_in_the_history_and_clears_it(db, people, answered):
    response_id, item_id = gave_up_response(db, answered)
    at = open_page(people["lead"], **changing(db, response_id))
    at.radio(key=f"adj_verdict_{response_id}").set_value("Correct (score 1)")
    at.text_input(key=f"adj_reason_{response_id}").input("answered on paper, entered as a give-up")
    at.button(key=f"adj_save_{response_id}").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["The score of ann2's answer is now 1 (set by hand)."]
    [override] = study.override_history(db, response_id)
    assert (override.score, override.reason, override.by) == (1.0, "answered on paper, entered as a give-up", "lead")
    history = [t for t in html_tables(at) if "reason" in t.columns]  # in the answer's card, folded
    assert len(history) == 1 and history[0]["reason"].tolist() == ["answered on paper, entered as a give-up"]
    assert "History of this score (1 change)" in html_text(at)
    assert re.search(r"Set by hand to 1 by lead on \S+ \S+ UTC: answered on paper, entered as a give-up", html_text(at))
    assert at.text_input(key=f"adj_reason_{response_id}").value == ""  # ready for the next change
    frame = study.responses_frame(db, answered)
    assert frame.set_index("response_id").loc[response_id, "score"] == 1.0
    assert html_tables(at)[0]["overridden"].tolist()[0] == 1  # still first: one gave up, one answered
    assert "1 overridden" in choice(at, f"adj_item_{answered}").options[0]

    at.text_input(key=f"adj_reason_{response_id}").input("no: it was a give-up")
    at.button(key=f"adj_clear_{response_id}").click().run()
    assert [s.value for s in at.success] == ["ann2's answer is back to its automatic score."]
    assert [o.cleared for o in study.override_history(db, response_id)] == [True, False]
    history = [t for t in html_tables(at) if "reason" in t.columns]
    assert history[0]["score"].tolist() == ["back to automatic", "1"] and "Set by hand" not in html_text(at)
    assert at.button(key=f"adj_clear_{response_id}").disabled


def test_a_typed_score_is_used_when_chosen(db, people, answered):
    response_id, _ = gave_up_response(db, answered)
    at = open_page(people["lead"], **changing(db, response_id))
    at.radio(key=f"adj_verdict_{response_id}").set_value("The score below")
    at.number_input(key=f"adj_score_{response_id}").set_value(0.4)
    at.text_input(key=f"adj_reason_{response_id}").input("half of the path")
    at.button(key=f"adj_save_{response_id}").click().run()
    assert study.override_history(db, response_id)[0].score == 0.4
    assert "final score 0.40" in html_text(at)


def test_an_override_without_a_reason_is_refused_and_nothing_is_written(db, people, answered):
    response_id, _ = gave_up_response(db, answered)
    at = open_page(people["lead"], **changing(db, response_id))
    at.radio(key=f"adj_verdict_{response_id}").set_value("Correct (score 1)")
    at.button(key=f"adj_save_{response_id}").click().run()
    assert not at.success
    assert [e.value for e in at.error] == [
        "The score of ann2's answer was not changed. Give a reason for the change "
        "(e.g. 'right in substance, worded differently')."]
    assert study.override_history(db, response_id) == []


def test_no_verdict_is_chosen_for_the_lead(db, people, answered):
    """Issue 19: "Correct (score 1)" was preselected; a save with a reason alone set the score to 1."""
    response_id, _ = gave_up_response(db, answered)
    at = open_page(people["lead"], **changing(db, response_id))
    assert at.radio(key=f"adj_verdict_{response_id}").value is None
    at.text_input(key=f"adj_reason_{response_id}").input("looked at it")
    at.button(key=f"adj_save_{response_id}").click().run()
    assert not at.exception and not at.success
    assert [e.value for e in at.error] == [
        "The score of ann2's answer was not changed: choose a new score first "
        "(Correct (score 1), Incorrect (score 0), The score below)."]
    assert study.override_history(db, response_id) == []


def test_the_order_can_be_by_position(db, people, answered):
    at = open_page(people["lead"])
    choose(at, "adj_order", "position")
    positions = html_tables(at)[0]["#"].tolist()
    assert positions == [1, 2, 3]


def test_open_flags_on_the_question_are_shown_and_resolved(db, people, answered):
    _, item_id = gave_up_response(db, answered)
    study.flag_question(db, answered, people["ann2"]["id"], item_id, "broken", "the key looks wrong to me")
    at = open_page(people["lead"])
    assert any("the key looks wrong to me" in t.value for t in at.text)
    assert "1 open flag" in choice(at, f"adj_item_{answered}").options[0]
    assert html_tables(at)[0]["open flags"].tolist()[0] == 1
    [flag] = study.flags(db, answered, item_id=item_id)
    at.text_input(key=f"adj_resolution_{flag.id}").input("key checked: it is right")
    at.button(key=f"adj_resolve_{flag.id}").click().run()
    assert [s.value for s in at.success] == ["The flag is resolved."]
    [flag] = study.flags(db, answered, item_id=item_id)
    assert not flag.is_open and flag.resolution == "key checked: it is right" and flag.resolved_by == "lead"
    assert not any("the key looks wrong to me" in t.value for t in at.text)
    assert any("key checked: it is right" in c.value for c in at.caption)


def test_practice_questions_are_listed_only_when_asked_for(db, people):
    study_id = structext_study.create_study(db, name="with-practice", suite="test-hard", samples=grid_samples(), n_items=3,
                                  annotator_ids=[people["ann1"]["id"]], practice_items=2)
    at = open_page(people["lead"])
    assert html_tables(at)[0]["kind"].tolist() == ["study"] * 3
    send(at, "adj_practice", True)
    assert sorted(html_tables(at)[0]["kind"]) == ["practice"] * 2 + ["study"] * 3
    assert sum("[practice]" in label for label in choice(at, f"adj_item_{study_id}").options) == 2


def test_without_a_study_the_page_says_where_to_create_one(db, people):
    at = open_page(people["lead"])
    assert [i.value for i in at.info] == ["No study yet: create one on **Studies**."]


@pytest.mark.parametrize("who", ["visitor", "ann1", "reader"])
def test_everyone_but_admins_is_refused(db, people, answered, who):
    user = people.get(who)
    at = open_page(user)
    assert [e.value for e in at.error] == [access.refusal(user, "adjudication")]
    assert not at.title and not at.code and not at.dataframe and not at.button


# ---------------------------------------------------------------- a page that opens fast (issue 46)


def test_a_long_list_shows_its_first_questions_and_every_one_in_a_lazy_expander(db, people):
    """The first view draws no data grid: the first questions as a static table; all of them, to sort,
    only once their expander is opened."""
    study_id = structext_study.create_study(db, name="long", suite="test-hard", samples=grid_samples(), n_items=12,
                                            annotator_ids=[people["ann1"]["id"]])
    at = open_page(people["lead"])
    assert len(html_tables(at)[0]) == 10 and not at.dataframe and not at.table and not at.get("vega_lite_chart")
    # nobody has answered yet: said so, and no box to change a score in
    assert "No annotator has answered this question yet." in [i.value for i in at.info]
    assert "Change a score" not in sections(at) and "sxAnswer" not in html_text_of(at)
    [box] = [label for label in sections(at) if label.startswith("Every question")]
    assert box == "Every question in this order (12): a table to sort"
    at = open_section(at, box)
    every = at.dataframe[0].value
    assert len(every) == 12 and every["position"].tolist()[:10] == html_tables(at)[0]["#"].tolist()
    assert len(choice(at, f"adj_item_{study_id}").options) == 12


def test_hundreds_of_answers_to_a_question_come_a_page_at_a_time(db, people):
    crowd = [accounts.create_user(db, f"p{i:02d}", "password-123", "annotator") for i in range(23)]
    run_study(db, grid_samples(), crowd, lambda username, index, answer: answer, n_items=1)
    at = open_page(people["lead"])
    [pages] = [key for key, data in choices(at).items() if data["label"] == "Answers shown"]
    assert choice(at, pages).options == ["1-20 of 23", "21-23 of 23"]
    names = re.findall(r"<strong>(p\d+)</strong>", "".join(html_blocks(at)))
    assert names == [f"p{i:02d}" for i in range(20)]
    at = open_section(at, "Change a score")
    [answers] = [s for s in at.selectbox if s.label == "Answer"]
    assert [o.split(" · ")[0] for o in answers.options] == names  # the answers shown, to change one
    at = answers.select_index(1).run()  # p01's answer chosen on the first page of answers...
    at = choose(at, pages, 20)  # ...then the next page's
    names = re.findall(r"<strong>(p\d+)</strong>", "".join(html_blocks(at)))
    [answers] = [s for s in at.selectbox if s.label == "Answer"]
    assert names == ["p20", "p21", "p22"] and [o.split(" · ")[0] for o in answers.options] == names
    assert answers.index == 0  # p01's is not among them: the first shown is chosen
