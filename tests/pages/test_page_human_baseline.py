"""The answering page, run with Streamlit's AppTest against a temporary database."""

import json
import re
from pathlib import Path

import pytest
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.testing.v1 import AppTest

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study
from tests.pages.answer_boxes import answer_box, answer_boxes, has_button, press
from tests.pages.html_tables import html_blocks, html_progress, html_text, progress_text
from tests.pages.input_reports import with_input_report
from tests.pages.light_choices import choice, choices, choose, open_section, sections, send
from tests.pages.text_blocks import shown_texts, text_blocks

PAGE = Path(__file__).resolve().parents[2] / "pages" / "human_baseline.py"


def samples_for_test(n_tasks=6):
    return [suites.generate_sample(task_id, 1, 1, suite="test-hard", index=i)
            for task_id in range(1, n_tasks + 1) for i in range(2)]


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "structext.db"))
    return storage.open_db()


@pytest.fixture
def people(db):
    return {
        "ann1": accounts.create_user(db, "ann1", "password-123", "annotator"),
        "ann2": accounts.create_user(db, "ann2", "password-123", "annotator"),
        "lead": accounts.create_user(db, "lead", "password-123", "admin"),
    }


def new_study(db, people, samples=None, n_items=4, **options):
    return structext_study.create_study(
        db, name=options.pop("name", "pilot"), suite="test-hard", samples=samples or samples_for_test(),
        n_items=n_items, annotator_ids=[people["ann1"]["id"], people["ann2"]["id"]], **options,
    )


def open_page(user) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    if user is not None:
        at.session_state["user"] = user
    return at.run()


def follow_study_link(at, user, study_id: int) -> AppTest:
    """Follow the chooser's link to ``study_id`` as the browser does: a new page load of its address (a new
    session, the study named in its query)."""
    hrefs = {int(sid): page for page, sid in re.findall(r'<a class="sx-go[^"]*" href="([^"?]*)\?study=(\d+)"',
                                                        "".join(html_blocks(at)))}
    assert hrefs.get(study_id) == "human_baseline", f"no link to study {study_id}: {hrefs}"
    opened = AppTest.from_file(str(PAGE), default_timeout=30)
    opened.session_state["user"] = user
    opened.query_params["study"] = str(study_id)
    return opened.run()


def button(at, label):
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}; buttons: {[b.label for b in at.button]}"
    return found[0]


def click(at, label) -> AppTest:
    """Click the button ``label``: one of the answer's (the text typed so far goes with it), else Streamlit's."""
    if has_button(at, label):
        return press(at, label)
    return button(at, label).click().run()


def shown_question(at) -> str:
    return answer_box(at).question


def started_page(db, people, **options) -> tuple[int, AppTest]:
    study_id = new_study(db, people, **options)
    at = click(open_page(people["ann1"]), "I have read the rule: start")
    assert not at.exception
    return study_id, at


def components(at, name) -> list[dict]:
    """The data the page gave its components v2 ``name`` (the browser side is JavaScript)."""
    return [json.loads(e.proto.json) for e in at.get("bidi_component") if e.proto.component_name == name]


def clock(at) -> dict:
    """What the question's clock component was told: the active time, running or not."""
    found = components(at, "structext_question_clock")
    assert len(found) == 1, f"{len(found)} clock components"
    return found[0]


def current_row(db, user_id):
    return db.execute(
        "SELECT a.id, a.first_shown_at, json_extract(i.sample_json, '$.question') FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id LEFT JOIN responses r ON r.assignment_id = a.id"
        " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [user_id],
    ).fetchone()


def test_logged_out_visitor_is_refused(db):
    at = open_page(None)
    assert "not logged in" in at.error[0].value
    assert not at.title and not shown_texts(at)


def test_annotator_without_a_study_is_told_so(db, people):
    at = open_page(people["ann1"])
    assert "do not take part in an open study" in at.info[0].value


def test_admin_is_pointed_to_the_studies_page(db, people):
    new_study(db, people)
    at = open_page(people["lead"])
    assert "Admins do not answer in studies" in at.info[0].value
    assert not answer_boxes(at) and not shown_texts(at)  # no question, no reference


def test_rule_is_shown_and_recorded_before_the_first_question(db, people):
    new_study(db, people, rule_text="No tools. No web. **Really.**")
    at = open_page(people["ann1"])
    assert any("No tools. No web." in m.value for m in at.markdown)
    assert not shown_texts(at) and not answer_boxes(at)  # no question before the rule is accepted
    at = click(at, "I have read the rule: start")
    accepted = db.execute("SELECT rule_accepted_at FROM study_annotators WHERE user_id = ?",
                          [people["ann1"]["id"]]).fetchone()[0]
    assert accepted is not None
    assert text_blocks(at)[0] == current_reference(db, people["ann1"]["id"])
    shown = clock(at)
    assert shown["label"] == "Time on this question" and shown["running"] and shown["show"]
    assert 0 <= shown["seconds"] < 5 and shown["beat_ms"] == 5000  # the default heartbeat
    # The rule stays a click away above the question, drawn only when opened.
    assert "Study rule" in sections(at) and not any("No tools. No web." in m.value for m in at.markdown)
    at = open_section(at, "Study rule")
    assert any("No tools. No web." in m.value for m in at.markdown) and answer_box(at).question


def current_reference(db, user_id):
    return db.execute(
        "SELECT json_extract(i.sample_json, '$.reference') FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id LEFT JOIN responses r ON r.assignment_id = a.id"
        " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [user_id],
    ).fetchone()[0]


def test_answering_commits_and_moves_on(db, people):
    _, at = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    assert shown_question(at) == question
    assert "Question 1 of 4" == progress_text(at)
    answer_box(at).input("my answer")
    at = click(at, "Submit answer")
    row = db.execute("SELECT assignment_id, response, gave_up FROM responses").fetchone()
    assert row == (assignment_id, "my answer", 0)
    assert "Question 2 of 4" == progress_text(at)
    assert answer_box(at).value == ""
    assert "Saved your answer to question 1" in at.toast[0].value


def test_empty_answer_is_refused_with_a_message(db, people):
    _, at = started_page(db, people)
    before = current_row(db, people["ann1"]["id"])
    answer_box(at).input("   ")
    at = click(at, "Submit answer")
    assert "answer is empty" in at.error[0].value
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert current_row(db, people["ann1"]["id"]) == before


def test_pause_hides_the_question_and_resume_restores_the_draft(db, people):
    _, at = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    answer_box(at).input("half done")
    at = click(at, "Pause")
    assert at.subheader[0].value.startswith("Paused: question 1 of 4")
    assert not shown_texts(at) and not answer_boxes(at)  # nothing of the question is shown
    assert db.execute("SELECT paused_at IS NOT NULL, draft FROM assignments WHERE id = ?",
                      [assignment_id]).fetchone() == (1, "half done")
    # A reload while paused stays paused.
    assert open_page(people["ann1"]).subheader[0].value.startswith("Paused")
    at = click(at, "Resume")
    assert shown_question(at) == question
    assert answer_box(at).value == "half done"
    paused_at, paused_seconds, ended = db.execute(
        "SELECT a.paused_at, a.paused_seconds, p.ended_at FROM assignments a"
        " JOIN pauses p ON p.assignment_id = a.id WHERE a.id = ?", [assignment_id]).fetchone()
    assert paused_at is None and paused_seconds > 0 and ended is not None


def test_reload_mid_question_keeps_the_question_the_clock_and_the_draft(db, people):
    _, at = started_page(db, people)
    user_id = people["ann1"]["id"]
    assignment_id, first_shown, question = current_row(db, user_id)
    # 100 s of active time, the answer typed so far saved as a draft (what the page's activity
    # component does every few seconds while typing), then the tab closed 60 s ago.
    status = study.record_activity(db, user_id, assignment_id, None, draft="typed so far\nline two")
    assert status.draft_saved
    closed_at = study.now() - 60
    db.execute("UPDATE assignments SET active_seconds = 100, last_beat_at = ?, first_shown_at = ?"
               " WHERE id = ?", [closed_at, closed_at - 100, assignment_id])
    reloaded = open_page(people["ann1"])  # a new session, as after a refresh or a reopened tab
    assert shown_question(reloaded) == question
    assert answer_box(reloaded).value == "typed so far\nline two"
    assert 100 <= clock(reloaded)["seconds"] < 110  # the 60 s with the tab closed do not count
    active, away, first = db.execute("SELECT active_seconds, away_seconds, first_shown_at FROM assignments"
                                     " WHERE id = ?", [assignment_id]).fetchone()
    assert first == closed_at - 100  # not restarted
    assert active == 100 and 60 <= away < 70


def test_give_up_then_keep_answering_keeps_the_text(db, people):
    _, at = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    answer_box(at).input("almost there")
    at = click(at, "Give up")
    assert "Give up on this question?" in at.warning[0].value
    assert answer_box(at).value == "almost there"
    at = click(at, "No, keep answering")
    assert shown_question(at) == question and not at.warning
    assert answer_box(at).value == "almost there"
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    # The text was also saved as the draft when Give up was pressed.
    assert db.execute("SELECT draft FROM assignments WHERE id = ?", [assignment_id]).fetchone()[0] == "almost there"
    click(at, "Submit answer")
    assert db.execute("SELECT response FROM responses").fetchall() == [("almost there",)]


def test_give_up_asks_first_and_records_the_time(db, people):
    _, at = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    at = click(at, "Give up")
    assert "Give up on this question?" in at.warning[0].value
    at = click(at, "No, keep answering")
    assert shown_question(at) == question and not at.warning
    at = click(click(at, "Give up"), "Yes, give up")
    row = db.execute("SELECT assignment_id, gave_up, elapsed_seconds FROM responses").fetchone()
    assert row[:2] == (assignment_id, 1) and row[2] >= 0
    assert "Question 2 of 4" == progress_text(at)


def shows_nothing_of_the_question(at, question) -> bool:
    texts = [t.value for t in at.text] + [m.value for m in at.markdown]
    return not shown_texts(at) and not answer_boxes(at) and not any(question in t for t in texts)


def test_a_second_tab_takes_the_question_over(db, people):
    _, first_tab = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    answer_box(first_tab).input("typed in tab one")
    second_tab = open_page(people["ann1"])  # the same annotator opens the page in another tab
    assert shown_question(second_tab) == question
    # Tab one still shows its old page; what it sends now is refused and kept for later.
    first_tab = click(first_tab, "Submit answer")
    assert "open in another tab" in first_tab.error[0].value
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert first_tab.subheader[0].value == "This question is open in another tab"
    assert shows_nothing_of_the_question(first_tab, question)
    # Tab one takes it back with "Continue here"; its unsent text comes along.
    first_tab = click(first_tab, "Continue here")
    assert shown_question(first_tab) == question
    assert answer_box(first_tab).value == "typed in tab one"
    second_tab.run()  # what the second tab's heartbeat makes it do
    assert second_tab.subheader[0].value == "This question is open in another tab"
    assert shows_nothing_of_the_question(second_tab, question)
    assert db.execute("SELECT takeovers FROM assignments WHERE id = ?", [assignment_id]).fetchone()[0] == 2


def test_pause_in_one_tab_hides_the_question_in_every_tab(db, people):
    _, first_tab = started_page(db, people)
    _, _, question = current_row(db, people["ann1"]["id"])
    second_tab = open_page(people["ann1"])
    second_tab = click(second_tab, "Pause")
    assert second_tab.subheader[0].value.startswith("Paused: question 1 of 4")
    assert shows_nothing_of_the_question(second_tab, question)
    first_tab.run()
    assert shows_nothing_of_the_question(first_tab, question)
    third_tab = open_page(people["ann1"])  # a tab opened now: paused too, nothing to read
    assert third_tab.subheader[0].value.startswith("Paused: question 1 of 4")
    assert shows_nothing_of_the_question(third_tab, question)
    third_tab = click(third_tab, "Resume")  # resuming in a tab moves the question there
    assert shown_question(third_tab) == question
    second_tab.run()
    assert second_tab.subheader[0].value == "This question is open in another tab"


def test_second_tab_cannot_answer_an_answered_question(db, people):
    _, first_tab = started_page(db, people)
    second_tab = open_page(people["ann1"])
    answer_box(second_tab).input("from tab two")
    click(second_tab, "Submit answer")
    answer_box(first_tab).input("from tab one")
    first_tab = click(first_tab, "Submit answer")  # its page still showed the answered question
    assert "already submitted" in first_tab.info[0].value
    assert db.execute("SELECT response FROM responses").fetchall() == [("from tab two",)]
    # The next question belongs to the tab in use; this one offers to continue here.
    assert first_tab.subheader[0].value == "This question is open in another tab"
    assert any("Question 2 of 4" in m.value for m in first_tab.markdown)


def test_an_answer_sent_after_the_visit_ended_says_so_and_shows_the_end(db, people):
    """The visit ended while the question was on screen (another tab reached the time budget's end):
    the answer sent from this page is not recorded, the page says why and shows the end."""
    from structext_core.studio.crowd import outcomes

    study_id, at = started_page(db, people)
    outcomes.record_outcome(db, study_id, people["ann1"]["id"], "completed")
    answer_box(at).input("too late")
    at = click(at, "Submit answer")
    assert not at.exception
    assert any("Your part in this study has ended" in e.value for e in at.error)
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert not answer_boxes(at)  # the end, not the question again


def test_the_question_page_shows_no_figure_that_identifies_the_sample(db, people):
    _, at = started_page(db, people)
    assignment_id = current_row(db, people["ann1"]["id"])[0]
    sample_id, reference = db.execute(
        "SELECT i.sample_id, json_extract(i.sample_json, '$.reference') FROM assignments a"
        " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]).fetchone()
    assert text_blocks(at)[0] == reference  # the page is the question page
    # The size of the annotator's own answer is theirs to see (counted in the browser, as they type); the page
    # says nothing of the sample's.
    box = answer_box(at)
    assert box.data["size"] and box.value == ""
    words = " ".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.text]
                     + [box.question, box.requirement or "", box.hint, box.label, box.placeholder]
                     + [json.dumps(c) for c in components(at, "structext_question_clock")])
    assert "characters" not in words and "lines" not in words  # "Add lines" and its line boxes name no count
    shown = words + json.dumps(box.data)
    assert f"{len(reference):,}" not in shown and str(len(reference)) not in shown
    assert sample_id not in shown


@pytest.mark.parametrize("show", [False, True])
def test_correctness_feedback_follows_the_study_setting(db, people, show):
    _, at = started_page(db, people, show_correctness=show)
    assignment_id = current_row(db, people["ann1"]["id"])[0]
    truth = db.execute("SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
                       " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]).fetchone()[0]
    answer_box(at).input(truth)
    at = click(at, "Submit answer")
    verdicts = [m.value for m in at.success if "previous answer" in m.value]
    assert verdicts == (["Your previous answer was **correct** (ROUGE-L 1.00)."] if show else [])


def test_finishing_the_study(db, people):
    _, at = started_page(db, people)
    for _ in range(4):
        answer_box(at).input("x")
        at = click(at, "Submit answer")
    assert "You have answered all 4 study questions of pilot (0 given up)" in at.success[0].value
    assert not answer_boxes(at)


def test_closed_study_is_not_offered(db, people):
    study_id, _ = started_page(db, people)
    study.set_study_status(db, study_id, "closed")
    at = open_page(people["ann1"])
    assert "do not take part in an open study" in at.info[0].value
    assert not shown_texts(at)


# ---------------------------------------------------------------- blinding

SENTINEL_ANSWER = "ANSWERSENTINEL"
SENTINEL_HINT = "HINTSENTINEL"


@pytest.fixture
def sent_messages(monkeypatch):
    """Every message the page sends towards the browser, serialised."""
    sent: list[bytes] = []
    original = ForwardMsgQueue.enqueue

    def recording(self, msg):
        sent.append(msg.SerializeToString())
        return original(self, msg)

    monkeypatch.setattr(ForwardMsgQueue, "enqueue", recording)
    return sent


@pytest.mark.parametrize("show_correctness", [False, True])
def test_answers_and_hints_are_never_sent_to_the_annotator(db, people, sent_messages, show_correctness):
    """Render the page for 40 items (and the pause screen) and search every message sent."""
    samples = []
    for index, sample in enumerate(samples_for_test(n_tasks=20)):
        samples.append({**sample, "answer": f"{SENTINEL_ANSWER}{index:03d}",
                        "rule_hint": f"{SENTINEL_HINT}{index:03d}",
                        "params": {"secret": f"{SENTINEL_ANSWER}P{index:03d}"},
                        "reference": sample["reference"] + f"\nREFMARK{index:03d}"})
    new_study(db, people, samples=samples, n_items=40, show_correctness=show_correctness)
    at = click(open_page(people["ann1"]), "I have read the rule: start")
    for step in range(41):
        if step % 10 == 3:
            at = click(click(at, "Pause"), "Resume")
        sent = b"".join(sent_messages)
        sent_messages.clear()
        assert SENTINEL_ANSWER.encode() not in sent, f"an answer was sent before submission {step + 1}"
        assert SENTINEL_HINT.encode() not in sent, f"a rule hint was sent before submission {step + 1}"
        if step == 40:
            assert "You have answered all 40 study questions" in at.success[-1].value
            break
        # The capture works: this step's reference was among the messages searched.
        assert b"REFMARK" in sent
        answer_box(at).input(f"guess {step}")
        at = click(at, "Submit answer")
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 40


def test_sample_copy_in_the_database_does_hold_the_answer(db, people):
    """Guard for the blinding test: the answer is there to leak, the page just never reads it."""
    new_study(db, people)
    stored = [json.loads(r[0]) for r in db.execute("SELECT sample_json FROM study_items")]
    assert all(s["answer"] and s["rule_hint"] for s in stored)


# ---------------------------------------------------------------- practice round and flags (quality)


def _truth(db, assignment_id):
    return db.execute("SELECT json_extract(i.sample_json, '$.answer') FROM assignments a"
                      " JOIN study_items i ON i.id = a.item_id WHERE a.id = ?", [assignment_id]).fetchone()[0]


def test_rule_screen_announces_the_practice_round(db, people):
    new_study(db, people, n_items=4, practice_items=2, gold_items=1)
    at = open_page(people["ann1"])
    shown = " ".join(m.value for m in at.markdown)
    assert "First come **2 practice questions**" in shown
    assert "Then you answer the **5 study questions**" in shown  # 4 + 1 gold: gold looks like any question


def test_practice_feedback_comes_after_submitting_and_not_before(db, people):
    _, at = started_page(db, people, n_items=4, practice_items=2)
    assignment_id = current_row(db, people["ann1"]["id"])[0]
    truth = _truth(db, assignment_id)
    assert "Practice question 1 of 2" == progress_text(at)
    assert not any("answer key" in m.value for m in at.markdown)  # not before answering
    assert truth not in shown_texts(at)
    answer_box(at).input("draft")
    at = click(at, "Pause")  # a practice question is named as such everywhere
    assert at.subheader[0].value == "Paused: practice question 1 of 2"
    at = click(at, "Resume")
    answer_box(at).input(truth)
    at = click(at, "Submit answer")
    assert not at.exception
    assert "Saved your answer to practice question 1" in at.toast[0].value
    assert any("Practice question 1 of 2: how you did" in s.value for s in at.subheader)
    assert any("Your answer **passed**: ROUGE-L 1.00" in s.value for s in at.success)
    assert text_blocks(at) == [truth, truth]  # their answer and the key
    assert not answer_boxes(at)  # no question while the feedback is on screen ...
    assert current_row(db, people["ann1"]["id"])[1] is None  # ... so the next one's clock has not started
    at = click(at, "Next practice question")
    assert "Practice question 2 of 2" == progress_text(at)
    second = current_row(db, people["ann1"]["id"])[0]
    at = click(at, "Give up")
    at = click(at, "Yes, give up")
    assert any("You gave up on this one" in w.value for w in at.warning)
    assert text_blocks(at) == [_truth(db, second)]
    at = click(at, "Start the study")
    assert "Question 1 of 4" == progress_text(at)
    answer_box(at).input("a guess")
    at = click(at, "Submit answer")
    assert "Question 2 of 4" == progress_text(at)  # no feedback on study questions
    assert not any("how you did" in s.value for s in at.subheader)


def test_practice_round_never_sends_an_unanswered_items_answer(db, people, sent_messages):
    """Practice keys appear only once their item is answered; no gold or study key, no hint, ever."""
    samples = []
    for index, sample in enumerate(samples_for_test(n_tasks=20)):
        samples.append({**sample, "answer": f"{SENTINEL_ANSWER}{index:03d}",
                        "rule_hint": f"{SENTINEL_HINT}{index:03d}"})
    study_id = new_study(db, people, samples=samples, n_items=8, practice_items=3, gold_items=3)
    kind_of = dict(db.execute("SELECT json_extract(sample_json, '$.answer'), kind FROM study_items"
                              " WHERE study_id = ?", [study_id]).fetchall())
    at = click(open_page(people["ann1"]), "I have read the rule: start")
    answered_practice: set[str] = set()
    for step in range(20):
        sent = b"".join(sent_messages).decode("utf-8", "replace")
        sent_messages.clear()
        leaked = {key for key in kind_of if key in sent}
        assert leaked <= answered_practice, f"step {step}: sent {leaked - answered_practice}"
        assert SENTINEL_HINT not in sent
        if not answer_boxes(at):
            break
        assignment_id = current_row(db, people["ann1"]["id"])[0]
        key = _truth(db, assignment_id)
        answer_box(at).input(f"guess {step}")
        at = click(at, "Submit answer")
        if kind_of[key] == "practice":
            answered_practice.add(key)
            sent = b"".join(sent_messages).decode("utf-8", "replace")
            assert key in sent  # the feedback screen did send this item's key
            at = click(at, "Start the study" if len(answered_practice) == 3 else "Next practice question")
    # Issue 19: it said "all 14" (practice counted) after a rule screen of 11 questions.
    assert "You have answered all 11 study questions of pilot, after 3 practice questions" in at.success[-1].value
    assert len(answered_practice) == 3


def test_flagging_a_question_keeps_the_draft_and_the_clock(db, people):
    study_id, at = started_page(db, people)
    assignment_id, _, question = current_row(db, people["ann1"]["id"])
    answer_box(at).input("half an answer")
    at = click(click(at, "Pause"), "Resume")  # the draft is saved and back in the box
    assert answer_box(at).value == "half an answer"
    before = db.execute("SELECT * FROM assignments WHERE id = ?", [assignment_id]).fetchone()
    assert not [s for s in at.selectbox if s.label == "What is wrong"]  # closed: no form is built
    at = open_flag_box(at, assignment_id)
    widget = next(s for s in at.selectbox if s.label == "What is wrong")
    widget.set_value("broken")
    next(t for t in at.text_area if t.label.startswith("Note for the study lead")).input("the key looks wrong")
    at = click(at, "Send report")
    assert not at.exception
    assert any("the study lead will look at this question" in s.value for s in at.success)
    [flag] = study.flags(db, study_id)
    assert (flag.username, flag.kind, flag.note) == ("ann1", "broken", "the key looks wrong")
    assert flag.item_id == db.execute("SELECT item_id FROM assignments WHERE id = ?", [assignment_id]).fetchone()[0]
    # The question is still open, unpaused, with the same clock row and the text typed so far.
    assert db.execute("SELECT * FROM assignments WHERE id = ?", [assignment_id]).fetchone() == before
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
    assert db.execute("SELECT draft FROM assignments WHERE id = ?", [assignment_id]).fetchone()[0] == "half an answer"
    assert shown_question(at) == question and answer_box(at).value == "half an answer"
    assert next(t for t in at.text_area if t.label.startswith("Note for the study lead")).value == ""
    at = click(at, "Submit answer")
    assert db.execute("SELECT response FROM responses").fetchone()[0] == "half an answer"


def open_flag_box(at, assignment_id):
    """Open "Report a problem with this question", as a click on it does (its form is built
    only while it is open)."""
    at.session_state[f"hb_flag_open_{assignment_id}"] = True
    return at.run()


def test_a_flag_of_kind_other_needs_a_note(db, people):
    study_id, at = started_page(db, people)
    at = open_flag_box(at, current_row(db, people["ann1"]["id"])[0])
    next(s for s in at.selectbox if s.label == "What is wrong").set_value("other")
    at = click(at, "Send report")
    assert any("The report was not sent. Say in the note what the problem is" in e.value for e in at.error)
    assert study.flags(db, study_id) == []


# ---------------------------------------------------------------- long answers: the reference tools


def json_samples():
    """JSON references of 200 to 250 lines, as long answers come from."""
    return [suites.generate_sample(t, 2, 2, suite="test-hard", index=i) for t in (8, 9) for i in range(2)]


def long_page(db, people, samples=None) -> tuple[AppTest, int, str]:
    new_study(db, people, samples=samples or json_samples(), n_items=2)
    at = click(open_page(people["ann1"]), "I have read the rule: start")
    assert not at.exception
    assignment_id = current_row(db, people["ann1"]["id"])[0]
    return at, assignment_id, current_reference(db, people["ann1"]["id"])


def widget(elements, label):
    found = [e for e in elements if e.label == label]
    assert len(found) == 1, f"no single {label!r}: {[e.label for e in elements]}"
    return found[0]


def light_box(at, label) -> tuple[str, dict]:
    """The reference tools' light box that reads ``label`` (a line of text or a line number): its key and the
    data the browser was sent."""
    found = [(key, data) for key, data in choices(at).items() if data["label"] == label]
    assert len(found) == 1, f"no single {label!r}: {[data['label'] for data in choices(at).values()]}"
    return found[0]


def set_box(at, label, value) -> AppTest:
    """Type ``value`` into the light box ``label`` as the browser sends it (Enter, or leaving the box): the page
    runs once."""
    return send(at, light_box(at, label)[0], value)


def add_label(at) -> str:
    found = [label for label in answer_box(at).buttons if label.startswith("Add lines")]
    assert len(found) == 1
    return found[0]


def take_lines(at, first, last, typed=None) -> AppTest:
    """Type From / To line under the answer box, and into the box if asked (nothing is sent before the
    click, as in the browser), then press "Add lines": the lines and the text go with it."""
    if typed is not None:
        answer_box(at).input(typed)
    return press(at, add_label(at), first=first, last=last)


def saved_draft(db, assignment_id):
    return db.execute("SELECT draft FROM assignments WHERE id = ?", [assignment_id]).fetchone()[0]


def test_search_shows_the_count_and_a_chosen_match_shows_its_lines_marked(db, people):
    at, _, ref = long_page(db, people)
    at = set_box(at, "Search the reference", '"ID"')
    expected = ref.lower().count('"id"')
    assert expected > 3
    matches = widget(at.selectbox, f"{expected} matches")  # the count, case-insensitive by default
    assert len(matches.options) == expected and matches.value is None
    assert text_blocks(at)[0] == ref  # nothing chosen yet: the whole reference
    # Match case: the reference writes "id", so no match.
    (case_key,) = [key for key, data in choices(at).items() if data["label"] == "Match case"]  # a light switch
    at = send(at, case_key, True)
    assert [c.value for c in at.caption if c.value == "No match"] == ["No match"]
    at = send(at, case_key, False)
    # Choose the third match: the lines around it, the match marked, From/To set to its line.
    at = widget(at.selectbox, f"{expected} matches").select_index(2).run()
    line = [n for n, text in enumerate(ref.split("\n"), 1) if '"id"' in text][2]
    assert any(c.value.endswith(f"around line {line}") for c in at.caption)
    shown = components(at, "structext_reference_window")[0]
    marked = [(text, mark) for _, text, mark, _, _ in shown["rows"] if mark]
    assert len(marked) == 1 and marked[0][0][slice(*marked[0][1])] == '"id"'
    # no HTML block but the sidebar's progress box: the component puts the reference's text as text
    assert shown["target"] == line and [b for b in html_blocks(at) if 'data-testid="sxBox"' not in b] == []
    assert not shown_texts(at)  # the window replaces the whole reference (nothing large is resent)
    assert answer_box(at).lines == (line, line)  # the line boxes under the answer are set to it
    assert add_label(at) == f"Add lines {line}–{line} to the answer"
    at = click(at, "Whole reference")
    assert text_blocks(at)[0] == ref and not components(at, "structext_reference_window")


def test_go_to_line_shows_the_window_and_a_missing_line_is_named(db, people):
    at, _, ref = long_page(db, people)
    n_lines = ref.count("\n") + 1
    at = set_box(at, "Go to line", 40)
    assert any(c.value == "Lines 34–58, around line 40" for c in at.caption)
    rows = components(at, "structext_reference_window")[0]["rows"]
    assert [40, ref.split(chr(10))[39], None, 0, 0] in rows
    at = set_box(at, "Go to line", n_lines + 5)
    assert f"'Go to line' is {n_lines + 5}, past the end: the reference has {n_lines} lines." in at.error[0].value
    assert text_blocks(at)[0] == ref  # the whole reference stays readable


@pytest.mark.parametrize("forged", [float("nan"), float("inf"), -float("inf"), 2.5, 0, -3, 10**12, "7", True])
def test_a_forged_line_number_is_no_error(db, people, forged):
    """Issue 19: NaN in "Go to line" failed inside Streamlit, before the page ran (its redacted error). The boxes
    are the browser's own now: what "Go to line" sends beyond a whole line number from 1 is ignored, the box left
    empty; a click of the answer's buttons with such a line is ignored whole (nothing added, nothing submitted)."""
    at, assignment_id, ref = long_page(db, people)
    at = set_box(at, "Go to line", forged)
    assert not at.exception, at.exception[0].value if at.exception else None
    assert light_box(at, "Go to line")[1]["value"] is None  # the box is empty as before
    for first, last in ((forged, 3), (3, forged)):
        answer_box(at).input("typed")
        at = press(at, add_label(at), sent={"action": "add", "text": "typed", "first": first, "last": last})
        assert not at.exception and not at.error and not at.toast
        assert saved_draft(db, assignment_id) in (None, "")  # nothing added, nothing saved
    assert text_blocks(at)[0] == ref  # the whole reference, as before
    at = set_box(at, "Go to line", 7626 if ref.count("\n") > 7626 else 40)
    assert not at.exception and any("around line" in c.value for c in at.caption)
    assert "Add lines 40–40 to the answer" in answer_box(at).buttons or any(
        "7,626–7,626" in label for label in answer_box(at).buttons)


def test_an_input_report_sent_before_add_lines_does_not_take_the_lines_out_of_the_draft(db, people):
    """CI, under load: the page's script sent the text typed so far, the annotator pressed "Add lines", and the
    report reached the server after the click's run: the draft went back to the text without the lines."""
    at, assignment_id, ref = long_page(db, people)
    at = take_lines(at, 3, 5, typed="My answer")
    expected = "My answer\n" + "\n".join(ref.split("\n")[2:5])
    assert saved_draft(db, assignment_id) == expected
    at = with_input_report(at, {"assignment": assignment_id, "seq": 101, "visible": True, "idle_ms": 300,
                                "text": "My answer"})  # late: sent before the click
    assert not at.exception and saved_draft(db, assignment_id) == expected
    assert answer_box(at).value == expected
    at = with_input_report(at, {"assignment": assignment_id, "seq": 102, "visible": True, "idle_ms": 0,
                                "text": expected + " and more"})  # typed after: saved as ever
    assert saved_draft(db, assignment_id) == expected + " and more"
    at = with_input_report(at, {"assignment": assignment_id, "seq": 103, "visible": True, "idle_ms": 0,
                                "text": "My answer"})  # the lines taken out by hand, later: saved
    assert saved_draft(db, assignment_id) == "My answer"


def test_add_lines_puts_exactly_those_lines_into_the_answer_box_and_the_draft(db, people):
    at, assignment_id, ref = long_page(db, people)
    at = take_lines(at, 3, 5, typed="My answer starts here")  # typed, not yet sent: the click sends it
    expected = "My answer starts here\n" + "\n".join(ref.split("\n")[2:5])
    assert not at.error
    assert answer_box(at).value == expected
    assert saved_draft(db, assignment_id) == expected  # saved as the draft, as typing is
    assert "Added lines 3–5 to your answer." in [t.value for t in at.toast]
    # Again, at the end: on a line of its own, no blank line between.
    at = take_lines(at, 1, 1)
    assert answer_box(at).value == expected + "\n" + ref.split("\n")[0]
    assert saved_draft(db, assignment_id) == answer_box(at).value
    # The answer is what is submitted, verbatim.
    at = click(at, "Submit answer")
    assert db.execute("SELECT response FROM responses").fetchone()[0] == expected + "\n" + ref.split("\n")[0]


@pytest.mark.parametrize("first, last, message", [
    (5, 3, "Nothing was added. 'From line' (5) is after 'To line' (3): give the first line first."),
    (2, 100_000, "Nothing was added. 'To line' is 100,000, past the end: the reference has"),
    (None, 4, "Nothing was added. Type a line number in 'From line'."),
])
def test_a_bad_range_shows_a_clear_error_and_changes_nothing(db, people, first, last, message):
    at, assignment_id, _ = long_page(db, people)
    at = take_lines(at, first, last, typed="typed so far")
    assert at.error[0].value.startswith(message)
    assert answer_box(at).value == "typed so far"
    assert saved_draft(db, assignment_id) in (None, "")  # nothing written
    assert not at.toast


def test_an_overlong_search_is_refused_by_the_page(db, people):
    at, _, _ = long_page(db, people)
    key, box = light_box(at, "Search the reference")
    assert box["max_chars"] == 200  # the browser keeps it short; the core refuses longer anyway
    at = send(at, key, "x" * 201)  # a forged longer one is not kept
    assert not at.exception and light_box(at, "Search the reference")[1]["value"] == ""


# ---------------------------------------------------------------- the annotator's own view


def sidebar_progress(at) -> str:
    """The sidebar's light blocks (the *Your progress* box) as a person reads them."""
    return html_text(at, at.sidebar)


def test_the_progress_panel_shows_answered_time_and_breaks(db, people):
    study_id = new_study(db, people)
    user_id = people["ann1"]["id"]
    study.accept_rule(db, study_id, user_id, at=50.0)
    first = study.open_question(db, study_id, user_id, at=100.0)
    study.record_activity(db, user_id, first.assignment_id, None, at=105.0)
    study.submit_answer(db, user_id, first.assignment_id, "one", at=110.0)           # 10 s active
    second = study.open_question(db, study_id, user_id, at=110.0)
    study.pause_question(db, user_id, second.assignment_id, at=115.0)               # 5 s active
    study.resume_question(db, user_id, second.assignment_id, at=175.0)              # a 1:00 pause
    study.pause_question(db, user_id, second.assignment_id, at=180.0, reason="idle")
    study.resume_question(db, user_id, second.assignment_id, at=200.0)              # a 0:20 idle pause
    at = open_page(people["ann1"])  # long after: the gap since is away time, not active
    panel = sidebar_progress(at)
    assert "Your progress" in panel
    assert "Progress: 1 of 4 study questions answered" in panel
    assert "Active time: 0:15" in panel
    assert "Pauses: 1 · 1:00" in panel
    assert "Idle auto-pauses: 1 · 0:20" in panel
    # Giving up counts as answered, and says so.
    at = click(click(at, "Give up"), "Yes, give up")
    assert "Progress: 2 of 4 study questions answered · 1 given up" in sidebar_progress(at)


def test_the_progress_panel_is_not_shown_before_the_rule_is_accepted(db, people):
    new_study(db, people)
    at = open_page(people["ann1"])
    assert "Your progress" not in sidebar_progress(at)


# ---------------------------------------------------------------- the new tools carry no answer


def test_the_reference_tools_never_carry_the_answer(db, people, sent_messages):
    """Search (also for the answer's own text), choose a match, go to a line, add lines: every
    message sent is searched for the answer, the rule hint and the parameters."""
    samples = [{**s, "answer": f"{SENTINEL_ANSWER}{i:03d}", "rule_hint": f"{SENTINEL_HINT}{i:03d}",
                "params": {"secret": f"{SENTINEL_ANSWER}P{i:03d}"}} for i, s in enumerate(json_samples())]
    at, assignment_id, ref = long_page(db, people, samples=samples)
    # The search runs over the reference only: the answer's text is not found.
    at = set_box(at, "Search the reference", SENTINEL_ANSWER.lower())
    assert [c.value for c in at.caption if c.value == "No match"] == ["No match"]
    sent_messages.clear()  # what was sent so far echoes the annotator's own search text
    at = set_box(at, "Search the reference", "id")
    at = widget(at.selectbox, at.selectbox[0].label).select_index(1).run()
    at = set_box(at, "Go to line", 7)
    at = take_lines(at, 2, 9)
    at = click(at, "Whole reference")
    assert answer_box(at).value == "\n".join(ref.split("\n")[1:9])
    sent = b"".join(sent_messages)
    assert b'\\"id\\"' in sent and json.dumps(ref.split("\n")[8])[1:-1].encode() in sent  # the capture works
    assert SENTINEL_ANSWER.encode() not in sent and SENTINEL_HINT.encode() not in sent


def test_a_practice_key_open_in_another_study_is_never_sent(db, people, sent_messages):
    """Issue 19, item 2: in two studies with the same practice question (a copy of a study), the
    feedback after answering it in one shows the score and a note, and never sends the key, while
    the question is still open in the other."""
    samples = [{**sample, "answer": f"{SENTINEL_ANSWER}{index:03d}"}
               for index, sample in enumerate(samples_for_test())]
    first = new_study(db, people, samples=samples, n_items=4, practice_items=1, name="first")
    second = study.clone_study(db, first, name="second", annotator_ids=[people["ann1"]["id"]],
                               by_user=people["lead"]["id"])
    for study_id in (first, second):  # (the rule screens of two studies are another matter)
        study.accept_rule(db, study_id, people["ann1"]["id"])
    at = follow_study_link(open_page(people["ann1"]), people["ann1"], first)  # two studies: chosen first
    assert choice(at, "hb_study").value == str(first)
    assignment_id = current_row(db, people["ann1"]["id"])[0]
    key = _truth(db, assignment_id)
    sent_messages.clear()
    answer_box(at).input("a guess")
    at = click(at, "Submit answer")
    assert not at.exception
    assert key not in b"".join(sent_messages).decode("utf-8", "replace")  # not in any message sent
    assert any("Practice question 1 of 1: how you did" in s.value for s in at.subheader)
    assert any("Your answer **did not pass**" in s.value for s in at.warning)  # the score is given (it said "not passed")
    assert study.KEY_WITHHELD in [i.value for i in at.info]
    assert not any("The answer key" in m.value for m in at.markdown)
    assert text_blocks(at) == ["a guess"]
    sent_messages.clear()
    at = click(at, "Start the study")
    assert not at.exception and "Question 1 of 4" == progress_text(at)
    assert SENTINEL_ANSWER not in b"".join(sent_messages).decode("utf-8", "replace")


# ---------------------------------------------------------------- issue 19: drafts, studies side by side, practice


def test_text_saved_by_the_page_comes_back_after_a_pause_taken_in_another_tab(db, people):
    """Issue 19 item 3: the box drawn empty, the text typed saved by the page's input reports
    alone (never sent by the form), then paused in a second tab and resumed in the first: the
    box shows the saved text, not the empty text this session drew first."""
    _, first_tab = started_page(db, people)
    user_id = people["ann1"]["id"]
    assignment_id = current_row(db, user_id)[0]
    assert answer_box(first_tab).value == ""
    tab = first_tab.session_state["hb_tab"]
    assert study.record_activity(db, user_id, assignment_id, tab, draft="typed, then saved").draft_saved
    second_tab = click(open_page(people["ann1"]), "Pause")
    assert second_tab.subheader[0].value.startswith("Paused")
    first_tab.run()  # its next heartbeat: the question is paused
    first_tab = click(first_tab, "Resume")
    assert answer_box(first_tab).value == "typed, then saved"


def test_the_practice_feedback_screen_survives_a_reload(db, people):
    """Issue 19 item 11: a reload of the feedback screen still shows it, with its button."""
    started_page(db, people, n_items=2, practice_items=1)
    _, at = None, open_page(people["ann1"])
    answer_box(at).input("a practice try")
    at = click(at, "Submit answer")
    assert any("Practice question 1 of 1: how you did" in s.value for s in at.subheader)
    reloaded = open_page(people["ann1"])  # a new session
    assert any("Practice question 1 of 1: how you did" in s.value for s in reloaded.subheader)
    assert current_row(db, people["ann1"]["id"])[1] is None  # the next question's clock has not started
    reloaded = click(reloaded, "Start the study")
    assert "Question 1 of 2" == progress_text(reloaded)
    assert not any("how you did" in s.value for s in open_page(people["ann1"]).subheader)


def test_an_annotator_in_two_studies_answers_in_the_second_and_stays_there(db, people):
    """Issue 19 item 6: an answer changes the chooser's label (its count); the page stays on
    the chosen study, and that study's practice feedback shows."""
    first = new_study(db, people, name="first")
    second = new_study(db, people, name="second", n_items=2, practice_items=1)
    at = follow_study_link(open_page(people["ann1"]), people["ann1"], first)
    assert at.subheader[0].value == "Before you start: the rule of first"
    at = choose(at, "hb_study", choice(at, "hb_study").ids[1])
    assert at.subheader[0].value == "Before you start: the rule of second"
    at = click(at, "I have read the rule: start")
    answer_box(at).input("practice")
    at = click(at, "Submit answer")
    assert any("Practice question 1 of 1: how you did" in s.value for s in at.subheader)
    at = click(at, "Start the study")
    answer_box(at).input("an answer")
    at = click(at, "Submit answer")
    assert "Question 2 of 2" == progress_text(at)
    assert choice(at, "hb_study").value == str(second)
    assert not any("rule of first" in s.value for s in at.subheader)


# ---------------------------------------------------------------- issue 32: the first hour


def test_in_two_studies_nothing_opens_before_the_person_chooses(db, people):
    """Issue 32, item 4: on 820246e a question of the first study opened at once, its clock
    running, and the other study could be chosen only after. Now the tab starts on a chooser."""
    first = new_study(db, people, name="first")
    second = new_study(db, people, name="second", n_items=2)
    for study_id in (first, second):
        study.accept_rule(db, study_id, people["ann1"]["id"])
    at = open_page(people["ann1"])
    assert not at.exception
    assert at.subheader[0].value == "Choose a study"
    assert not components(at, "structext_question_clock") and not answer_boxes(at)
    assert db.execute("SELECT COUNT(*) FROM assignments WHERE first_shown_at IS NOT NULL").fetchone()[0] == 0
    labels = [text for text, _ in html_progress(at)]
    assert "0 of 4 study questions answered" in labels and "0 of 2 study questions answered" in labels
    at = follow_study_link(at, people["ann1"], second)
    assert "Question 1 of 2" == progress_text(at)
    shown = db.execute("SELECT study_id FROM assignments WHERE first_shown_at IS NOT NULL").fetchall()
    assert shown == [(second,)]  # only the chosen study's question opened
    assert at.query_params["study"] == str(second)  # a reload stays on it


def test_one_persons_counts_read_the_same_on_every_page(db, people):
    """Issue 32, item 5: for one person and one study, 820246e said "Answered 5 of 11" (sidebar),
    "answered 6 / questions 12" (the lead's table), "12 questions" (creation) and "the study's
    11 questions" (rule). Every page now says it in one vocabulary, from one function."""
    study_id = new_study(db, people, n_items=4, practice_items=1, gold_items=1, samples=samples_for_test())
    ann1 = people["ann1"]["id"]
    study.accept_rule(db, study_id, ann1)
    for _ in range(3):  # the practice question, then two study questions
        view = study.open_question(db, study_id, ann1)
        study.submit_answer(db, ann1, view.assignment_id, "an answer")
    words = "2 of 5 study questions answered · practice 1 of 1"
    at = open_page(people["ann1"])
    assert f"Progress: {words}" in sidebar_progress(at)  # the sidebar
    home = AppTest.from_file(str(PAGE.parent / "home.py"), default_timeout=30)
    home.session_state["user"] = people["ann1"]
    home.run()
    assert html_progress(home) == [(words, 50)]  # Home: the bar fills with every question, practice too (3 of 6)
    mine = study.studies_for_annotator(db, ann1)[0]
    assert mine.progress_words == words  # the study chooser
    assert study.own_progress(db, study_id, ann1).rows[0] == ("Progress", words)
    member = next(m for m in study.study_members(db, study_id) if m.user_id == ann1)  # the lead's table
    assert member.progress_words.startswith("2 of 5 study questions answered (gold ") and \
        member.progress_words.endswith(" among them) · practice 1 of 1")


def test_an_options_letter_and_its_text_read_apart():
    # Options that are letters themselves ("E", "A") read "A E" when the label was letter, two spaces, text:
    # the browser collapses the spaces. The middle dot keeps them apart, as practice feedback and adjudication do.
    from structext_core.ui.question_screen.choice_answer import option_label

    assert option_label("A", "E") == "**A** · E"
    assert option_label("B", "A") == "**B** · A"
