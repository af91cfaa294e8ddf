"""The human-baseline page with an AIBench study, run with AppTest: real clicks on options, submit,
practice feedback, a flag, pause, give-up; and what an annotator never gets."""
from __future__ import annotations

import json
import re

from structext_core.aibench import study as aibench_study
from structext_core.aibench.model import ORIGINAL_SYSTEM
from structext_core.studio import study
from tests.pages.html_tables import progress_text
from tests.pages.test_page_access import Downloads, leaks, run_page


def _create(world, practice=0, gold=0, n_items=4, show_correctness=False):
    p = world["people"]
    return aibench_study.create_aibench_study(world["db"], name="images", dataset="synthetic", n_items=n_items,
                                      annotator_ids=[p["ann1"]["id"], p["ann2"]["id"]], seed=1,
                                      practice_items=practice, gold_items=gold, show_correctness=show_correctness)


def _button(at, start: str):
    found = [b for b in at.button if b.label.startswith(start)]
    assert found, f"no button {start!r}: {[b.label for b in at.button]}"
    return found[0]


def _option(at, letter: str):
    return _button(at, f"**{letter}**")


def _started(world, **options):
    study_id = _create(world, **options)
    at = run_page("human_baseline", world["people"]["ann1"])
    _button(at, "I have read the rule").click().run()
    assert not at.exception
    return study_id, at


def _current(world, study_id, user="ann1") -> dict:
    db = world["db"]
    row = db.execute("SELECT i.sample_json, a.id FROM assignments a JOIN study_items i ON i.id = a.item_id"
                     " LEFT JOIN responses r ON r.assignment_id = a.id WHERE a.study_id = ? AND a.user_id = ?"
                     " AND r.id IS NULL ORDER BY a.seq LIMIT 1", [study_id, world["people"][user]["id"]]).fetchone()
    return {**json.loads(row[0]), "assignment_id": row[1]}


def _responses(world, user="ann1"):
    return world["db"].execute("SELECT response, rouge_l FROM responses WHERE user_id = ? ORDER BY id",
                               [world["people"][user]["id"]]).fetchall()


def test_choose_by_clicking_then_submit(world):
    study_id, at = _started(world)
    assert len(at.get("image")) == 1 and "Question 1 of 4" == progress_text(at)
    item = _current(world, study_id)
    assert at.text[0].value == item["question"]
    letters = "ABCD"[:len(item["options"])]
    assert [b.label.split("**")[1] for b in at.button if b.label.startswith("**")] == list(letters)
    submit = _button(at, "Submit")
    assert submit.disabled  # nothing chosen yet
    wrong = next(x for x in letters if x != item["answer"])
    _option(at, wrong).click().run()
    assert _option(at, wrong).proto.type == "primary" and _button(at, f"Submit {wrong}")
    # the choice is the server's draft at once
    assert world["db"].execute("SELECT draft FROM assignments WHERE id = ?",
                               [item["assignment_id"]]).fetchone()[0] == wrong
    _option(at, item["answer"]).click().run()  # changed my mind
    _button(at, "Submit").click().run()
    assert _responses(world) == [(item["answer"], 1.0)]
    assert "Question 2 of 4" == progress_text(at)
    keys = [json.loads(e.proto.json) for e in at.get("bidi_component")
            if e.proto.component_name.endswith("structext_option_keys")]
    assert keys and set(keys[0]["keys"]) >= {"A", "B", "Enter"}


def test_the_key_of_an_option_the_question_lacks_says_so(world):
    """Regression (issue item 9f): pressing D on a two-option question did nothing and said
    nothing. The keys' component carries a note for every letter the question lacks."""
    study_id = _create(world)
    db = world["db"]
    for item_id, sample_json in db.execute("SELECT id, sample_json FROM study_items WHERE study_id = ?",
                                           [study_id]).fetchall():
        sample = json.loads(sample_json)
        db.execute("UPDATE study_items SET sample_json = ? WHERE id = ?",
                   [json.dumps({**sample, "options": sample["options"][:2]}), item_id])
    db.conn.commit()
    at = run_page("human_baseline", world["people"]["ann1"])
    _button(at, "I have read the rule").click().run()
    assert [b.label.split("**")[1] for b in at.button if b.label.startswith("**")] == ["A", "B"]
    data = [json.loads(e.proto.json) for e in at.get("bidi_component")
            if e.proto.component_name.endswith("structext_option_keys")][0]
    assert set(data["keys"]) == {"A", "B", "Enter"}
    assert data["notes"]["D"] == "This question has options A and B; D is not one of them."
    assert set(data["notes"]) == {"C", "D"}


def test_a_reload_keeps_the_chosen_option(world):
    study_id, at = _started(world)
    item = _current(world, study_id)
    _option(at, "B").click().run()
    again = run_page("human_baseline", world["people"]["ann1"])  # a new session: a reload
    assert _option(again, "B").proto.type == "primary" and _button(again, "Submit B")
    assert _current(world, study_id)["assignment_id"] == item["assignment_id"]


def test_practice_feedback_shows_the_key_only_after_the_answer(world):
    study_id, at = _started(world, practice=2)
    item = _current(world, study_id)
    assert item["system"] == ORIGINAL_SYSTEM
    page_text = "".join(m.value for m in at.markdown)
    assert "answer key" not in page_text.lower()
    wrong = next(x for x in "ABCD"[:len(item["options"])] if x != item["answer"])
    _option(at, wrong).click().run()
    _button(at, "Submit").click().run()
    assert any("not correct" in w.value for w in at.warning)
    said = " ".join(m.value for m in at.markdown)
    assert f"The answer key: **{item['answer']}**" in said and f"Your answer: **{wrong}**" in said
    assert len(at.get("image")) == 1 and item["question"] in [t.value for t in at.text]
    _button(at, "Next practice question").click().run()
    assert "Practice question 2 of 2" == progress_text(at)


def test_flag_pause_and_give_up(world):
    study_id, at = _started(world)
    item = _current(world, study_id)
    _option(at, "A").click().run()
    at.session_state[f"hb_flag_open_{item['assignment_id']}"] = True  # as a click on the box does
    at.run()
    at.selectbox(key=f"hb_flag_kind_{item['assignment_id']}").set_value("unclear")
    at.text_area(key=f"hb_flag_note_{item['assignment_id']}").input("the arrows are unreadable")
    _button(at, "Send report").click().run()
    assert any("study lead will look" in s.value for s in at.success)
    flags = study.flags(world["db"], study_id)
    assert [(f.kind, f.note) for f in flags] == [("unclear", "the arrows are unreadable")]
    _button(at, "Pause").click().run()
    assert not at.get("image") and any("Paused" in h.value for h in at.subheader)
    _button(at, "Resume").click().run()
    assert _option(at, "A").proto.type == "primary"  # the pause kept the choice
    _button(at, "Give up").click().run()
    _button(at, "Yes, give up").click().run()
    assert _responses(world) == [("", 0.0)]


def test_correctness_note_when_the_study_shows_it(world):
    study_id, at = _started(world, show_correctness=True)
    item = _current(world, study_id)
    _option(at, item["answer"]).click().run()
    _button(at, "Submit").click().run()
    assert any(s.value == "Your previous answer was **correct**." for s in at.success)


def _secrets(world, study_id) -> dict[str, list[bytes]]:
    data = aibench_study.load("synthetic")
    db = world["db"]
    out = {f"system {s}": [s.encode()] for s in data.systems if s != ORIGINAL_SYSTEM}
    out["the original"] = [ORIGINAL_SYSTEM.encode()]
    out.update({f"paper {p}": [p.encode()] for p in data.papers})
    out["an image path"] = [b"images/"]
    out["ann2's name"] = [b"ann2"]
    open_items = db.execute("SELECT sample_json FROM study_items WHERE study_id = ?", [study_id]).fetchall()
    for (sample,) in open_items:
        item = json.loads(sample)
        out[f"rationale or method of {item['id']}"] = [item["id"].encode()]
    return out


def test_an_annotator_never_gets_the_system_the_paper_or_a_key(world, monkeypatch):
    study_id = _create(world, n_items=6)
    p = world["people"]
    db = world["db"]
    study.accept_rule(db, study_id, p["ann2"]["id"])
    while (view := study.open_question(db, study_id, p["ann2"]["id"])) is not None:
        study.submit_answer(db, p["ann2"]["id"], view.assignment_id, "A")
    secrets = _secrets(world, study_id)
    downloads = Downloads(monkeypatch)
    at = run_page("human_baseline", p["ann1"])
    _button(at, "I have read the rule").click().run()
    for _ in range(3):
        assert leaks(at, downloads, secrets) == {}
        urls = [img.url for image in at.get("image") for img in image.proto.imgs]
        assert len(urls) == 1 and re.fullmatch(r"[/a-z]*/media/[0-9a-f]{16,}\.png", urls[0]), urls
        option_labels = " ".join(b.label for b in at.button) + " ".join(b.help or "" for b in at.button)
        assert "key" not in option_labels.lower().replace("key a", "").replace("key b", "").replace(
            "key c", "").replace("key d", "")
        _option(at, "A").click().run()
        assert leaks(at, downloads, secrets) == {}
        _button(at, "Submit").click().run()
