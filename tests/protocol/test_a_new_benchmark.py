"""A benchmark written in this file, registered through the entry-point group, declaring only what
is new (its items, how a question is shown and how a reply is scored), gets what the workbench
gives a benchmark without a line of it elsewhere: command-line scoring, the lead's study form, a
study that an annotator answers on the question page, adjudication, the dashboard, Results with
people beside models, and Explore.

The benchmark: multiple-choice questions with four options, one topic each, scored by accuracy.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from structext_core.evaluation.choices import parse_letter
from structext_core.protocol import Place, ShownQuestion
from tests.pages import light_forms
from tests.pages.html_tables import progress_text

# ---------------------------------------------------------------- the benchmark (its member module)

NAME = "tiny-mc"
DISPLAY_NAME = "Tiny MC"
SUMMARY = "Thirty multiple-choice questions on three topics, four options each, scored by accuracy."
PLACES = (Place("human_baseline", "answer its questions"), Place("results", "people's accuracy by topic", True))
ITEM_FIELDS = ("id", "question", "options", "answer", "topic")
AXES = ("topic",)
STRATA = {"topic": str}


def item_id(item) -> str:
    return item["id"]


def show_question(item) -> ShownQuestion:
    return ShownQuestion(text=item["question"], choices=tuple(item["options"]))


def score_answer(item, reply: str) -> float:
    return 1.0 if parse_letter(reply, len(item["options"])) == item["answer"] else 0.0


def load_items(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


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


def test_a_study_is_opened_answered_adjudicated_shown_on_the_dashboard_results_and_explore(tiny, tmp_path,
                                                                                            monkeypatch):
    from structext_core.evaluation import item_sets
    from structext_core.studio import accounts, storage, study
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("STRUCTEXT_DATA_DIR", str(tmp_path / "suites"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead, ann1, ann2 = (accounts.create_user(db, name, "password1", role)
                        for name, role in (("lead", "admin"), ("ann1", "annotator"), ("ann2", "annotator")))
    # its item file in the shared place, and a model's answers beside it
    folder = item_sets.data_dir(NAME)
    folder.mkdir(parents=True)
    (folder / "tiny.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items()))
    kept = item_sets.predictions_dir(NAME, "tiny.jsonl")
    kept.mkdir(parents=True)
    (kept / "m.jsonl").write_text("".join(json.dumps({"id": i["id"], "model": "always-a", "answer": "A"}) + "\n"
                                          for i in items()))
    # the lead opens the study on Study admin's default form (the benchmark declares none)
    at = run_page("study_admin", lead, sa_benchmark=NAME)
    form = light_forms.only(at)
    at = light_forms.submit(at, form, name="tiny-pilot", n_items=6,
                            annotators=light_forms.options(at, form, "annotators")[:2])
    assert not at.exception and not at.error
    (created,) = study.list_studies(db)
    assert (created.name, created.benchmark, created.suite) == ("tiny-pilot", NAME, "tiny.jsonl")
    study_id = created.id
    keys = {row[0]: json.loads(row[1])["answer"] for row in db.execute(
        "SELECT id, sample_json FROM study_items WHERE study_id = ?", [study_id])}
    # ann1 answers on the question page, by clicking an option and Submit
    at = run_page("human_baseline", ann1)
    next(b for b in at.button if b.label.startswith("I have read the rule")).click().run()
    for n in range(6):
        assert not at.exception and f"Question {n + 1} of 6" == progress_text(at)
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
    frame = study.responses_frame(db, study_id)  # scored by its score_answer on the item the study keeps
    assert len(frame) == 12 and frame.groupby("annotator")["score"].sum().to_dict() == {"ann1": 4.0, "ann2": 6.0}
    assert list(frame.columns[frame.columns.get_loc("sample_id") + 1:][:3]) == ["item", "topic", "reference_chars"]
    by_topic = study.accuracy_by(frame, ["topic"], n_boot=50)
    assert set(by_topic["topic"]) <= set(TOPICS) and by_topic["n"].sum() == 12
    # adjudication: the items by their strata
    listed = study.adjudication_items(db, study_id)
    assert len(listed) == 6 and all(s.describe.startswith("topic ") for s in listed)
    at = run_page("adjudication", lead)
    assert not at.exception and any("topic " in c.value for c in at.caption)
    # the dashboard groups by its strata
    at = run_page("study_admin", lead, sa_open_accuracy=True)
    assert not at.exception
    assert any("Topic" in str(g.proto) for g in at.get("button_group"))  # "Group by": the default groupings
    # the export: its strata as columns
    rows = study.export_rows(db, study_id)
    assert len(rows) == 12 and list(rows[0])[:7] == ["study", "suite", "annotator", "seq", "sample_id", "topic",
                                                     "answer"]
    # Results: the default section, people beside the model kept with the file
    at = run_page("results", lead, rs_benchmark=NAME, **{f"default_{NAME}_table_open": True})  # the figures' box open
    assert not at.exception
    assert any("Tiny MC: people beside models" in h.value for h in at.subheader)
    table = next(d.value for d in at.dataframe if "overall" in d.value.columns)
    assert list(table["model"]) == ["human", "always-a"] and table["n"].tolist() == [12, 6]
    assert table.set_index("model").loc["human", "mean"] == pytest.approx(100 * 10 / 12)
    next(s for s in at.get("button_group")).set_value("Topic").run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "topic" in d.value.columns)
    assert set(table["topic"]) <= set(TOPICS)
    # Explore: the default view, its items with their keys for the lead
    at = run_page("explore", lead, explore_benchmark=NAME)
    assert not at.exception
    shown = at.dataframe[0].value
    assert len(shown) == 30 and list(shown.columns) == ["id", "topic", "question", "options", "key"]


def test_a_new_study_leaves_out_the_questions_whose_keys_its_people_saw_as_practice(tiny, tmp_path, monkeypatch):
    """The shared items study asks the benchmark's part of the seal (here the default, by content):
    questions answered as practice elsewhere, where the key is shown, are in no later draw of theirs."""
    from structext_core.studio import accounts, storage, study
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    ann = accounts.create_user(db, "ann1", "password1", "annotator")
    first = study.create_items_study(db, benchmark=NAME, name="warm-up", source="tiny.jsonl", items=items(),
                                     n_items=6, annotator_ids=[ann["id"]], rule_text="No help.", practice_items=4)
    study.accept_rule(db, first, ann["id"])
    practised = set()
    for _ in range(4):  # the four practice questions come first
        view = study.open_question(db, first, ann["id"])
        practised.add(db.execute("SELECT sample_id FROM study_items WHERE id = ?", [view.item_id]).fetchone()[0])
        study.submit_answer(db, ann["id"], view.assignment_id, "A")
    copy = [dict(item, id=item["id"] + "-copy") for item in items()]  # the same questions under other ids
    notes: list[str] = []
    second = study.create_items_study(db, benchmark=NAME, name="main", source="copy.jsonl", items=copy, n_items=26,
                                      annotator_ids=[ann["id"]], rule_text="No help.", notes=notes)
    drawn = {row[0].removesuffix("-copy") for row in db.execute(
        "SELECT sample_id FROM study_items WHERE study_id = ?", [second])}
    assert len(drawn) == 26 and not drawn & practised
    assert notes == ["Left out of the draw: 4 whose keys its annotators were shown as practice in another study."]
    with pytest.raises(study.StudyError, match="Number of questions must be between 1 and 26"):
        study.create_items_study(db, benchmark=NAME, name="too many", source="copy.jsonl", items=copy, n_items=27,
                                 annotator_ids=[ann["id"]], rule_text="No help.")
