"""A third benchmark written in this file, registered through the entry-point group, gets what the
workbench gives a benchmark without a line of it elsewhere: command-line scoring, a study that an
annotator answers on the question page, adjudication, the dashboard and a Results section.

The benchmark: multiple-choice questions with four options, one topic each, scored by accuracy.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from structext_core.evaluation.choices import parse_letter
from structext_core.protocol import Place, ShownQuestion, StudyKind

# ---------------------------------------------------------------- the benchmark (its member module)

NAME = "tiny-mc"
DISPLAY_NAME = "Tiny MC"
SUMMARY = "Thirty multiple-choice questions on three topics, four options each, scored by accuracy."
PLACES = (Place("human_baseline", "answer its questions"), Place("results", "people's accuracy by topic", True))
ITEM_FIELDS = ("id", "question", "options", "answer", "topic")
AXES = ("topic",)
STRATA = {"topic": str}
RESULTS_VIEW = f"{__name__}:results_view"


def item_id(item) -> str:
    return item["id"]


def show_question(item) -> ShownQuestion:
    return ShownQuestion(text=item["question"], choices=tuple(item["options"]))


def score_answer(item, reply: str) -> float:
    return 1.0 if parse_letter(reply, len(item["options"])) == item["answer"] else 0.0


def load_items(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _study_score(answer, response, gave_up) -> tuple[float, int]:
    right = not gave_up and parse_letter(response or "", 4) == answer
    return (1.0, 1) if right else (0.0, 0)


def _refuse(response: str, n_options: int) -> str | None:
    return None if parse_letter(response, n_options) else "Choose one of the options before you submit."


STUDY = StudyKind(
    NAME, _study_score, _refuse, ("topic",), {"Annotator": ["annotator"], "Topic": ["topic"]}, False,
    "Score: accuracy, the share of answers whose letter is the key, in percent.", ("topic",), False,
    "Tiny MC {suite}", "Click an option (or press its letter), then **Submit**.", "Tiny MC (text choices)")


def results_view(db, user) -> None:
    """Its Results section: people's accuracy by topic over its studies."""
    import streamlit as st

    from structext_core.studio import study
    st.subheader("Tiny MC: people's accuracy by topic")
    for each in study.list_studies(db):
        if each.benchmark == NAME:
            frame = study.responses_frame(db, each.id)
            st.dataframe(study.accuracy_by(frame, ["topic"], n_boot=100), key=f"tiny_{each.id}")


# ---------------------------------------------------------------- the tests

TOPICS = ("maps", "music", "tides")


def items() -> list[dict]:
    return [{"id": f"q{i:02d}", "question": f"Question {i}: which option is {'ABCD'[i % 4]}?",
             "options": [f"option {x}" for x in "ABCD"], "answer": "ABCD"[i % 4], "topic": TOPICS[i % 3]}
            for i in range(30)]


@pytest.fixture
def tiny(install_member):
    """The benchmark above registered as an installed package would register it."""
    return install_member("tiny_mc", NAME, __name__)


def test_it_is_a_member_found_by_its_entry_point(tiny):
    from structext_core import protocol
    assert tiny is sys.modules[__name__] and protocol.names()[-1] == NAME
    assert protocol.display_name(NAME) == DISPLAY_NAME and tuple(protocol.members())[:2] == ("structext-eval", "aibench")


def test_the_command_line_scores_its_replies(tiny, tmp_path, capsys):
    from structext_core.cli.main import main
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items()))
    replies = [{"id": i["id"], "reply": f"The answer is {i['answer'] if n % 2 else 'A'}", "model": "m"}
               for n, i in enumerate(items()[:12])]
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replies))
    assert main(["items", "score", str(tmp_path / "replies.jsonl"), "--benchmark", NAME,
                 "--items", str(tmp_path / "items.jsonl"), "--by", "topic"]) == 0
    out = capsys.readouterr().out
    right = {t: [score_answer(i, r["reply"]) for i, r in zip(items(), replies) if i["topic"] == t] for t in TOPICS}
    for topic, scores in right.items():
        assert f"m\t{topic}\t{len(scores)}\t{sum(scores) / len(scores):.3f}" in out


def test_a_study_is_answered_adjudicated_shown_on_the_dashboard_and_on_results(tiny, tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage, study
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead, ann1, ann2 = (accounts.create_user(db, name, "password1", role)
                        for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator")))
    study_id = study.create_items_study(db, benchmark=NAME, name="tiny-pilot", source="tiny.jsonl", items=items(),
                                        n_items=6, annotator_ids=[ann1["id"], ann2["id"]], rule_text="No help.")
    keys = {row[0]: json.loads(row[1])["answer"] for row in db.execute(
        "SELECT id, sample_json FROM study_items WHERE study_id = ?", [study_id])}
    # ann1 answers on the question page, by clicking an option and Submit
    at = run_page("human_baseline", ann1)
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    for n in range(6):
        assert not at.exception and f"Question **{n + 1}** of 6" in at.get("progress")[0].proto.text
        assert not at.get("image")  # a text question: no image box
        item = db.execute("SELECT a.item_id FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                          " WHERE a.user_id = ? AND r.id IS NULL ORDER BY a.seq LIMIT 1", [ann1["id"]]).fetchone()[0]
        letter = keys[item] if n < 4 else "ABCD".replace(keys[item], "")[0]  # four right, two wrong
        next(b for b in at.button if b.label.startswith(f"**{letter}**")).click().run()
        next(b for b in at.button if b.label.startswith("Submit")).click().run()
    assert not at.exception
    # ann2 through the same service the page calls: all right
    study.accept_rule(db, study_id, ann2["id"])
    for row in db.execute("SELECT id, item_id FROM assignments WHERE user_id = ? ORDER BY seq", [ann2["id"]]).fetchall():
        study.open_question(db, study_id, ann2["id"])
        study.submit_answer(db, ann2["id"], row[0], keys[row[1]])
    frame = study.responses_frame(db, study_id)
    assert len(frame) == 12 and frame.groupby("annotator")["rouge_l"].sum().to_dict() == {"ann1": 4.0, "ann2": 6.0}
    by_topic = study.accuracy_by(frame, ["topic"], n_boot=50)
    assert set(by_topic["topic"]) <= set(TOPICS) and by_topic["n"].sum() == 12
    # adjudication: the items by their strata, and an override
    listed = study.adjudication_items(db, study_id)
    assert len(listed) == 6 and all(s.describe.startswith("topic ") for s in listed)
    at = run_page("adjudication", lead)
    assert not at.exception and any("topic " in c.value for c in at.caption)
    # the dashboard groups by its strata
    at = run_page("study_admin", lead)
    assert not at.exception
    grouping = at.get("button_group")
    assert any("Topic" in str(g.proto) for g in grouping)  # "Group by": its kind's groupings
    # Results: its own section
    at = run_page("results", lead, rs_benchmark=NAME)
    assert not at.exception
    assert any("Tiny MC: people's accuracy by topic" in h.value for h in at.subheader)
    assert len(at.dataframe) == 1 and set(at.dataframe[0].value["topic"]) <= set(TOPICS)
