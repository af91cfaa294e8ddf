"""A study's answers as an Inspect AI log, for each of the three benchmarks: written with Inspect's
own API, read back with ``read_eval_log`` and through Inspect's data frames, each item's score the
dashboard's figure; and the error paths (Inspect missing, no answers, a file already there)."""
from __future__ import annotations

import json
import sys

import pytest

from structext_core.studio import study
from structext_core.studio.study import inspect_log
from tests.pages.light_parts import notes
from tests.pairwise.conftest import aibench_root, world  # noqa: F401
from tests.studio.study.support import grid_samples, on_screen


def _right(stored: dict) -> str:
    """A right answer to a stored study item: the key's letter, the first accepted short answer, or the answer."""
    rule, sep, targets = stored["answer"].partition(": ")
    if not stored.get("options") and sep and rule in ("exact", "normalised"):
        return targets.split(" | ")[0]
    return stored["answer"]


def _wrong(stored: dict) -> str:
    return next(x for x in "ABCD"[:len(stored["options"])] if x != stored["answer"]) if stored.get("options") \
        else "zzz nothing alike"


def answer_all(db, study_id, users):
    """ann1 answers all right; ann2 right on even places, wrong on odd ones; a third person gives up
    on every third question and answers the others right. Item k takes 10 (k + 1) seconds."""
    clock = 1000.0
    for who, user in enumerate(users):
        study.accept_rule(db, study_id, user["id"])
        index = 0
        while (view := study.open_question(db, study_id, user["id"], at=clock)) is not None:
            stored = json.loads(db.execute("SELECT sample_json FROM study_items WHERE id = ?",
                                           [view.item_id]).fetchone()[0])
            on_screen(db, user["id"], view.assignment_id, clock, clock + 10 * (index + 1))
            clock += 10 * (index + 1)
            if who == 2 and index % 3 == 0:
                study.give_up(db, user["id"], view.assignment_id, at=clock)
            else:
                right = who == 0 or who == 2 or index % 2 == 0
                study.submit_answer(db, user["id"], view.assignment_id, _right(stored) if right else _wrong(stored),
                                    at=clock)
            index += 1


def structext_study(db, annotators, admin):
    from structext_core.structext_eval import study as structext
    return structext.create_study(db, name="pilot", suite="test-hard", samples=grid_samples(), n_items=6,
                                  annotator_ids=[a["id"] for a in annotators])


def aibench_study(db, annotators, admin):
    from structext_core.aibench import study as aibench
    return aibench.create_aibench_study(db, name="img", dataset="synthetic", n_items=6,
                                        annotator_ids=[a["id"] for a in annotators], seed=0, created_by=admin["id"])


def labset_study(db, annotators, admin, folder):
    from structext_core.labset.dataset import load_set
    from structext_core.labset.study import create_study
    from tests.labset.conftest import samples, write_set
    items = load_set(write_set(folder, samples()))
    return create_study(db, name="lab pilot", source="set.jsonl", items=items, n_items=6,
                        annotator_ids=[a["id"] for a in annotators], rule_text="No help.")[0]


def _answered(request, benchmark, tmp_path):
    from structext_core.studio import accounts
    if benchmark == "aibench":
        world = request.getfixturevalue("world")
        db, lead = world["db"], world["people"]["lead"]
        people = [world["people"]["ann1"], world["people"]["ann2"],
                  accounts.create_user(db, "ann3", "password1", "annotator")]
        study_id = aibench_study(db, people, lead)
    else:
        from structext_core.studio import storage
        request.getfixturevalue("monkeypatch").setattr(accounts.credentials, "SCRYPT_N", 2**4)
        db = storage.open_db(":memory:")
        lead = accounts.create_user(db, "lead", "password1", "admin")
        people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in (1, 2, 3)]
        study_id = (structext_study(db, people, lead) if benchmark == "structext-eval"
                    else labset_study(db, people, lead, tmp_path))
    answer_all(db, study_id, people)
    frame = study.responses_frame(db, study_id)
    wrong = frame[(frame["annotator"] == "ann2") & (frame["score"] == 0)]["response_id"].iloc[0]
    study.override_score(db, int(wrong), 0.5, "right in substance", lead)
    return db, study_id, benchmark


@pytest.fixture(params=["structext-eval", "aibench", "labset"])
def answered(request, tmp_path):
    """(db, study id, benchmark) of a study of each benchmark answered by three people, one answer overridden."""
    return _answered(request, request.param, tmp_path)


@pytest.fixture
def lab_answered(request, tmp_path):
    """The same of a study of the lab's own set (the set written to ``tmp_path/set.jsonl``)."""
    return _answered(request, "labset", tmp_path)


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_the_log_read_back_gives_the_dashboards_item_scores(answered, tmp_path, suffix):
    from inspect_ai.analysis import evals_df, samples_df
    from inspect_ai.log import read_eval_log
    db, study_id, benchmark = answered
    chosen = study.get_study(db, study_id)
    frame = study.responses_frame(db, study_id)
    dashboard = study.item_scores(frame)
    assert len(dashboard) == 6 and dashboard["n"].tolist() == [3] * 6
    assert 0 < dashboard["score"].mean() < 1 and 0.5 in set(frame["score"])  # mixed scores, the override in force
    path = study.write_inspect_log(db, study_id, tmp_path / inspect_log.log_name(chosen.name, suffix[1:]))
    scorer = inspect_log.scorer_name(benchmark)

    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.model == f"human/{chosen.name}"
    assert log.eval.config.epochs == 3 and len(log.samples) == 18
    ids = {item_id: sample_id for item_id, sample_id in zip(dashboard["item_id"], dashboard["sample_id"])}
    logged_ids = {s.id for s in log.samples}
    assert len(logged_ids) == 6
    if benchmark == "labset":  # the set's own ids, as its Inspect task names the samples
        assert logged_ids <= {f"mc{i:02d}" for i in range(50)} | {str(i) for i in range(20)}
    else:
        assert logged_ids == set(ids.values())
    by_item: dict[str, list[float]] = {}
    for sample in log.samples:
        by_item.setdefault(sample.id, []).append(sample.scores[scorer].value)
        assert sample.working_time > 0 and sample.metadata["active_seconds"] == sample.working_time
        assert sample.metadata["annotator"] == ["ann1", "ann2", "ann3"][sample.epoch - 1]
    expected = dict(zip([s for s in log.eval.dataset.sample_ids], dashboard["score"]))
    assert {k: sum(v) / len(v) for k, v in by_item.items()} == pytest.approx(expected)
    reduced = {s.sample_id: s.value for s in log.reductions[0].samples}
    assert reduced == pytest.approx(expected)
    assert log.results.scores[0].metrics["mean"].value == pytest.approx(dashboard["score"].mean())

    df = samples_df(str(path), quiet=True)
    assert len(df) == 18 and set(df["metadata_annotator"]) == {"ann1", "ann2", "ann3"}
    per_item = df.groupby("id")[f"score_{scorer}"].mean().to_dict()
    assert per_item == pytest.approx(expected)
    assert set(df["working_time"]) == set(frame["elapsed_seconds"])
    evals = evals_df(str(path), quiet=True)
    assert evals["model"].tolist() == [f"human/{chosen.name}"]
    assert evals[f"score_{scorer}_mean"].iloc[0] == pytest.approx(dashboard["score"].mean())


def test_the_labset_log_is_read_back_as_a_models_log(lab_answered, tmp_path):
    db, study_id, _ = lab_answered
    from inspect_ai.log import read_eval_log

    from structext_core.evaluation.item_sets import read_inspect_log
    from structext_core.labset.dataset import load_set
    path = study.write_inspect_log(db, study_id, tmp_path / "human.eval")
    items = {str(i["source_id"]): i for i in load_set(tmp_path / "set.jsonl")}
    for sample in read_eval_log(str(path)).samples:  # the key's letter, or every accepted short answer
        item = items[sample.id]
        assert sample.target == (item["target"][0] if item["choices"] else list(item["target"]))
        assert (sample.choices or []) == list(item["choices"]) and sample.input == item["question"]
    assert any(isinstance(s.target, list) and len(s.target) == 2 for s in read_eval_log(str(path)).samples)
    rows = read_inspect_log("labset", path, load_set(tmp_path / "set.jsonl"))
    frame = study.responses_frame(db, study_id)
    assert len(rows) == 18 and {r["model"] for r in rows} == {"human/lab pilot"}
    # read as a model's answers and scored again by the set's rule: the automatic scores, the give-ups 0
    assert sorted(r["score"] for r in rows) == sorted(frame["score_auto"])


def test_inspect_missing_is_said_clearly_and_nothing_is_written(lab_answered, tmp_path, monkeypatch):
    db, study_id, _ = lab_answered
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(study.LogExportError, match=r"Inspect AI is not installed.*bash start.sh.*\.\[inspect\]"):
        study.write_inspect_log(db, study_id, tmp_path / "human.eval")
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".eval"]


def test_a_study_without_answers_a_file_there_and_a_wrong_suffix_are_refused(tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(":memory:")
    people = [accounts.create_user(db, "ann1", "password1", "annotator")]
    study_id = structext_study(db, people, None)
    with pytest.raises(study.LogExportError, match="no counted answer yet"):
        study.write_inspect_log(db, study_id, tmp_path / "empty.eval")
    assert list(tmp_path.iterdir()) == []
    answer_all(db, study_id, people)
    theirs = tmp_path / "theirs.eval"
    theirs.write_bytes(b"someone else's log")
    with pytest.raises(study.LogExportError, match="exists already"):
        study.write_inspect_log(db, study_id, theirs)
    assert theirs.read_bytes() == b"someone else's log" and sorted(p.name for p in tmp_path.iterdir()) == ["theirs.eval"]  # no temporary left
    with pytest.raises(study.LogExportError, match=r"\.eval or \.json"):
        study.write_inspect_log(db, study_id, tmp_path / "human.csv")
    with pytest.raises(study.LogExportError, match="starts with the time"):  # Inspect would not list it
        study.write_inspect_log(db, study_id, tmp_path / "human.json")
    written = study.write_inspect_log(db, study_id, tmp_path)  # a folder: named as Inspect names its logs
    assert written.parent == tmp_path and written.name.endswith("_human-baseline_pilot.eval")
    from structext_core import protocol
    with monkeypatch.context() as patch:  # two items one id in the log: Inspect would pool them
        patch.setattr(protocol, "plain_log_item", lambda stored, strata, source: protocol.LoggedItem("same", "q?", "a"))
        with pytest.raises(study.LogExportError, match="have the id 'same' in a log"):
            study.write_inspect_log(db, study_id, tmp_path / "pooled.eval")
    with pytest.raises(study.StudyError, match="no study with id 999"):
        study.write_inspect_log(db, 999, tmp_path / "none.eval")
    assert study.inspect_log_bytes(db, study_id)[:2] == b"PK"  # the .eval format is a zip


def test_the_command_line_writes_the_log_and_refuses_what_it_must(tmp_path, monkeypatch, capsys):
    from inspect_ai.log import read_eval_log

    from structext_core.cli.main import main
    from structext_core.studio import accounts, storage
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db_path = tmp_path / "db.sqlite"
    db = storage.open_db(db_path)
    people = [accounts.create_user(db, "ann1", "password1", "annotator")]
    study_id = structext_study(db, people, None)
    args = ["study", "inspect-log", "pilot", "--db", str(db_path), "--out"]
    assert main([*args, str(tmp_path / "empty.eval")]) == 2
    assert "no counted answer yet" in capsys.readouterr().err and not (tmp_path / "empty.eval").exists()
    answer_all(db, study_id, people)
    out = tmp_path / "logs"
    out.mkdir()
    assert main([*args, str(out)]) == 0
    written = next(out.iterdir())
    assert "wrote 6 answers of study 'pilot' as model human/pilot" in capsys.readouterr().out
    assert read_eval_log(str(written)).eval.model == "human/pilot"
    assert main(["study", "inspect-log", str(study_id), "--db", str(db_path), "--out", str(written)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert main(["study", "inspect-log", "nope", "--db", str(db_path), "--out", str(out)]) == 2
    assert "no study is named or numbered 'nope' (studies: 'pilot')" in capsys.readouterr().err
    assert main(["study", "inspect-log", "pilot", "--db", str(tmp_path / "none.db"), "--out", str(out)]) == 2
    assert "no such database file" in capsys.readouterr().err and len(list(out.iterdir())) == 1


def test_the_dashboard_offers_the_log_only_when_it_can_be_made(tmp_path, monkeypatch):
    from structext_core.studio import accounts, storage
    from tests.pages.test_page_access import run_page
    monkeypatch.setenv("STRUCTEXT_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    db = storage.open_db(tmp_path / "db.sqlite")
    lead = accounts.create_user(db, "lead", "password1", "admin")
    people = [accounts.create_user(db, "ann1", "password1", "annotator")]
    study_id = structext_study(db, people, lead)
    label = "People as an Inspect AI log (.eval)"

    def export_page():
        at = run_page("study_admin", lead, sa_section="Export", sa_study=study.get_study(db, study_id))
        return [b.label for b in at.get("download_button")], [c.value for c in notes(at, "caption")]

    labels, captions = export_page()
    assert label not in labels and any("once the study has a counted answer" in c for c in captions)
    answer_all(db, study_id, people)
    assert label in export_page()[0]
    monkeypatch.setattr(inspect_log, "installed", lambda: False)
    labels, captions = export_page()
    assert label not in labels and any("not installed" in c and "bash start.sh" in c for c in captions)
