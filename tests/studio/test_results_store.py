"""Storing results: imports from uploads and folders (all or nothing, every problem named),
deletion, loading back with the human baseline, the parsed-suite cache, and both ROUGE-L
metrics on every stored row. Real data: see tests/results_data.py."""

import hashlib
import json
import os
import re
import tracemalloc
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from structext_core.evaluation import scoring
from structext_core.evaluation.matching import ResultsImportError
from structext_core.structext_eval import result_files as results
from structext_core.structext_eval import results_frame, results_store
from structext_core.structext_eval.samples import write_jsonl
from structext_core.studio import storage
from tests.results_data import (
    bad_uploads,
    build_dataset,
    count,
    hard_samples,
    original_line,
    response_for,
    result_lines,
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return build_dataset(tmp_path_factory.mktemp("results"))


@pytest.fixture
def frame(dataset):
    return results_frame.load_results(dataset["db"])


@pytest.fixture
def fresh(tmp_path):
    db = storage.open_db(tmp_path / "fresh.db")
    return db, hard_samples()


# ---------------------------------------------------------------- storage


def test_load_results_has_models_and_people(dataset, frame):
    models = Counter(frame["model"])
    assert models["good"] == models["weak"] == 72 * 2 + 36
    # each answer once, under its person: no pool `human` repeating them (views pool on demand)
    assert "human" not in models and models["human:ann1"] == models["human:ann2"] == 12
    assert len(frame) == dataset["n_model_rows"] + 24
    assert set(frame["format"]) == {"csv", "tree", "json", "yaml", "xml", "markdown"}
    assert set(frame["suite"]) == {"test-hard", "test", "real-test"}


def test_stored_scores_are_the_cores_scores(dataset, frame):
    hard = {s["id"]: s for s in dataset["hard"]}
    stored = frame[(frame["model"] == "good") & (frame["prompt"] == "naive") & (frame["suite"] == "test-hard")]
    for index, sample in enumerate(dataset["hard"]):
        row = stored[stored["sample_id"] == sample["id"]].iloc[0]
        expected = results.score_response(hard[sample["id"]]["answer"], response_for("good", index, sample["answer"]))
        assert row["rouge_l"] == pytest.approx(expected.rouge_l, abs=1e-12)
        assert row["score"] == pytest.approx(expected.score, abs=1e-12)
        assert row["exact_match"] == expected.exact_match


def test_results_survive_reopening_the_database(dataset, frame):
    reopened = storage.open_db(Path(dataset["db"].conn.execute("PRAGMA database_list").fetchone()[2]))
    again = results_frame.load_results(reopened)
    pd.testing.assert_frame_equal(again.reset_index(drop=True), frame.reset_index(drop=True))


def test_data_version_changes_with_imports(fresh):
    db, samples = fresh
    before = results_frame.data_version(db)
    results_store.import_results(db, "\n".join(result_lines(samples[:3], models=("good",))).encode(), "a.jsonl", samples)
    assert results_frame.data_version(db) != before


def test_data_version_reads_indexes_not_rows(dataset):
    """Each run of Results fingerprints what is stored: every statement reads indexes (migration 17), none
    walks a table's rows (a response's row holds its answer), and the figures are the counts, latest ids
    and latest times, as the tables have them."""
    db = dataset["db"]
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        version = results_frame.data_version(db)
    finally:
        db.conn.set_trace_callback(None)
    plans = [row[3] for statement in statements for row in db.execute("EXPLAIN QUERY PLAN " + statement).fetchall()]
    assert plans and not [p for p in plans if re.fullmatch(r"SCAN (results|responses|score_overrides)", p)], plans
    expected = (*db.execute("SELECT COUNT(*), MAX(id), MAX(imported_at) FROM results").fetchone(),
                *db.execute("SELECT COUNT(*), MAX(id), MAX(submitted_at), MAX(scored_at) FROM responses").fetchone(),
                *db.execute("SELECT COUNT(*), MAX(id) FROM score_overrides").fetchone())
    assert version == expected and version[3] == 24  # the two annotators' answers are counted


def test_delete_upload_removes_its_rows_only(fresh):
    db, samples = fresh
    first = results_store.import_results(db, "\n".join(result_lines(samples[:4], models=("good",))).encode(), "a.jsonl", samples)
    results_store.import_results(db, "\n".join(result_lines(samples[:4], models=("weak",))).encode(), "b.jsonl", samples)
    assert results_store.delete_upload(db, first.upload_id) == 4
    assert set(results_frame.load_results(db)["model"]) == {"weak"}
    assert [u.filename for u in results_store.list_uploads(db)] == ["b.jsonl"]


def test_import_summary_and_upload_note(fresh):
    db, samples = fresh
    data = "\n".join(result_lines(samples[:5], models=("good", "weak"), prompts=("naive", "hint"))).encode()
    summary = results_store.import_results(db, data, "run.jsonl", samples, user_id=None)
    assert (summary.n_rows, summary.models, summary.prompts, summary.file_format) == (
        20, ("good", "weak"), ("hint", "naive"), "ours")
    upload, = results_store.list_uploads(db)
    assert upload.note.startswith(f"sha256:{hashlib.sha256(data).hexdigest()}")
    assert upload.rows_stored == 20


def test_original_repository_output_is_imported_and_scored(fresh):
    db, samples = fresh
    lines = [original_line(s, i) for i, s in enumerate(samples[:6])]
    summary = results_store.import_results(db, "\n".join(lines).encode(), "gpt.jsonl", samples)
    assert summary.file_format == "original" and summary.models == ("orig-model",)
    frame = results_frame.load_results(db)
    assert sorted(frame["sample_id"]) == sorted(s["id"] for s in samples[:6])
    assert (frame["score"] == 1.0).all()


# ---------------------------------------------------------------- bad uploads: say what and where, import nothing


@pytest.mark.parametrize("case", ["not JSON", "missing field", "unknown sample", "50 MB", "Latin-1", "UTF-16"])
def test_bad_upload_names_what_and_where_and_imports_nothing(fresh, case):
    db, samples = fresh
    data, where, what = bad_uploads(samples)[case]
    before = (count(db, "results"), count(db, "uploads"))
    with pytest.raises(ResultsImportError) as raised:
        results_store.import_results(db, data, "upload.jsonl", samples)
    message = results_store.describe_problems(raised.value)
    assert "**upload.jsonl** was not imported, nothing was stored" in message
    assert f"- {where}: " in message and what in message
    assert (count(db, "results"), count(db, "uploads")) == before


def test_a_50_mb_upload_is_refused_before_reading(fresh):
    db, samples = fresh
    data = b"x" * (50 * 1024 * 1024)
    with pytest.raises(ResultsImportError) as raised:
        results_store.import_results(db, data, "huge.jsonl", samples)
    assert raised.value.problems[0].line == 0
    assert "at most 40 MB" in raised.value.problems[0].message


def test_utf8_with_byte_order_mark_is_accepted(fresh):
    db, samples = fresh
    data = "\ufeff" + "\n".join(result_lines(samples[:2], models=("good",)))
    assert results_store.import_results(db, data.encode("utf-8"), "bom.jsonl", samples).n_rows == 2


def test_import_folder_imports_new_good_files_and_reports_bad_ones(fresh, tmp_path):
    db, samples = fresh
    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(result_lines(samples[:4], models=("good",))), encoding="utf-8")
    (folder / "b.jsonl").write_text("{broken\n", encoding="utf-8")
    report = results_store.import_folder(db, folder, samples)
    assert [s.filename for s in report.imported] == ["a.jsonl"]
    assert [e.source for e in report.failed] == ["b.jsonl"] and report.failed[0].problems[0].line == 1
    again = results_store.import_folder(db, folder, samples)
    assert again.skipped == ["a.jsonl"] and not again.imported
    assert count(db, "results") == 4


def sparse_file(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of ``size`` bytes, ``head`` then NUL bytes that take no disk space (truncate)."""
    path.write_bytes(head)
    os.truncate(path, size)
    if os.stat(path).st_blocks * 512 >= size // 2:
        path.unlink()
        pytest.skip("this filesystem has no sparse files")
    return path


def test_the_folder_import_streams_a_large_jsonl_file(fresh, tmp_path, monkeypatch):
    """Issue 19: a 6 GB sparse .jsonl in the folder ended in MemoryError (read whole). Here 1.5 GB of
    NUL bytes after good lines: refused at its first NUL line, with far less memory than the file."""
    db, samples = fresh
    folder = tmp_path / "incoming"
    folder.mkdir()
    good = "\n".join(result_lines(samples[:2], models=("good",))) + "\n"
    (folder / "a.jsonl").write_text(good, encoding="utf-8")
    sparse_file(folder / "huge.jsonl", 1536 * 1024 * 1024, head=good.encode())
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"{self.name} was read whole"))
    tracemalloc.start()
    try:
        report = results_store.import_folder(db, folder, samples)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [s.filename for s in report.imported] == ["a.jsonl"]
    failed, = report.failed
    assert failed.source == "huge.jsonl" and failed.problems[0].line == 3
    assert "NUL characters" in failed.problems[0].message
    assert peak < 200 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"
    assert count(db, "results") == 2


@pytest.mark.parametrize("content, line, message", [
    (b"\xff\xfe{}", 1, "UTF-16"),
    (b'{"sample_id": "x"}\n\xe9t\xe9\n', 2, "not UTF-8 text"),
    (b"\n" + b"x" * 40 + b"\n", 2, "not valid JSON"),
])
def test_the_streamed_folder_import_names_the_line_at_fault(fresh, tmp_path, content, line, message):
    db, samples = fresh
    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / "bad.jsonl").write_bytes(content)
    failed, = results_store.import_folder(db, folder, samples).failed
    assert failed.problems[0].line == line and message in failed.problems[0].message
    assert count(db, "results") == 0


def test_a_folder_line_longer_than_the_limit_is_named_without_being_held(fresh, tmp_path, monkeypatch):
    db, samples = fresh
    monkeypatch.setattr(results_store.limits, "MAX_RECORD_CHARS", 1000)
    monkeypatch.setattr(results.limits, "MAX_RECORD_CHARS", 1000)
    folder = tmp_path / "incoming"
    folder.mkdir()
    good = result_lines(samples[:1], models=("good",))[0]
    (folder / "long.jsonl").write_text(good + "\n" + "y" * 5_000_000 + "\n" + good + "\n", encoding="utf-8")
    failed, = results_store.import_folder(db, folder, samples).failed
    assert [p.line for p in failed.problems] == [2, 3] and "longer than 1,000 characters" in failed.problems[0].message


def test_describe_sources(frame):
    sources = results_frame.describe_sources(frame)
    assert set(sources["source"]) == {"upload:hard.jsonl", "upload:test.jsonl", "human-study:pilot"}
    assert sources["rows"].sum() == len(frame)
    assert results_frame.source_count(frame) == len(sources) == 3  # the note's count, without the table
    assert results_frame.source_count(frame.iloc[:0]) == len(results_frame.describe_sources(frame.iloc[:0])) == 0
    # the page's note names each kind of source from the rows (a study alone was "1 source: imported files and ...")
    assert results_frame.sources_said(frame) == (
        f"{len(frame):,} scored results from 2 imported files (kept in the database) and 1 human-baseline study "
        "(models `human:<annotator>` and the pool `human`).")
    people = frame[frame["source"] == "human-study:pilot"]
    assert results_frame.sources_said(people) == (
        f"{len(people):,} scored results from 1 human-baseline study (models `human:<annotator>` and the pool `human`).")
    assert results_frame.sources_said(frame[frame["source"] == "upload:hard.jsonl"]).endswith(
        " from 1 imported file (kept in the database).")
    assert results_frame.sources_said(frame.iloc[:0]) == "No scored result yet."


# ---------------------------------------------------------------- both ROUGE-L metrics, typed uploads


def test_both_rouge_metrics_are_stored_as_the_core_scores_them(fresh):
    db, samples = fresh
    rows = [{"sample_id": s["id"], "model": "m", "prompt": "naive", "response": response}
            for s in samples[:6] for response in (f"Reasoning first.\n### Answer:\n{s['answer'].upper()}",)]
    results_store.import_results(db, "\n".join(json.dumps(r) for r in rows).encode(), "run.jsonl", samples)
    stored = {r["sample_id"]: r for r in db.query("SELECT sample_id, rouge_l, score, rouge_l_paper, score_paper "
                                                   "FROM results")}
    by_id = {s["id"]: s for s in samples}
    for row in rows:
        expected = scoring.score_response(by_id[row["sample_id"]]["answer"], row["response"])
        got = stored[row["sample_id"]]
        assert got["rouge_l"] == pytest.approx(expected.rouge_l, abs=1e-12)
        assert got["score"] == pytest.approx(expected.score, abs=1e-12)  # score stays the strict one
        assert got["rouge_l_paper"] == pytest.approx(expected.rouge_l_paper, abs=1e-12)
        assert got["score_paper"] == pytest.approx(expected.score_paper, abs=1e-12)
    frame = results_frame.load_results(db)
    assert "rouge_l_paper" in frame.columns and frame["rouge_l_paper"].notna().all()


def test_people_carry_the_papers_metric_of_their_answers(dataset, frame):
    people = frame[frame["model"].str.startswith("human:")]
    answers = {s["id"]: s["answer"] for s in dataset["hard"]}
    for row in people.to_dict("records"):
        expected = scoring.score_response(answers[row["sample_id"]], row["response"]).rouge_l_paper
        assert row["rouge_l_paper"] == pytest.approx(expected)
    assert (people.loc[people["model"] == "human:ann1", "rouge_l_paper"] > 0.99).all()  # ann1 typed every answer


def test_uploads_are_typed_records(fresh):
    db, samples = fresh
    results_store.import_results(db, "\n".join(result_lines(samples[:3], models=("good",))).encode(), "a.jsonl",
                                 samples)
    upload, = results_store.list_uploads(db)
    assert isinstance(upload, results_store.StoredUpload)
    assert (upload.filename, upload.source, upload.model, upload.n_rows, upload.rows_stored) == (
        "a.jsonl", "upload:a.jsonl", "good", 3, 3)
    assert upload.with_paper_metric == 3 and upload.label == f"#{upload.id} a.jsonl (3 rows)"
    assert upload.uploaded.endswith(" UTC")
    with pytest.raises(AttributeError):
        upload.filename = "b.jsonl"


def test_rows_stored_before_the_papers_metric_load_as_missing(fresh):
    db, samples = fresh
    summary = results_store.import_results(db, "\n".join(result_lines(samples[:4], models=("old",))).encode(),
                                           "old.jsonl", samples)
    db.execute("UPDATE results SET rouge_l_paper = NULL, score_paper = NULL WHERE upload_id = ?", [summary.upload_id])
    db.conn.commit()
    frame = results_frame.load_results(db)
    assert frame["rouge_l_paper"].isna().all() and frame["rouge_l"].notna().all()
    assert results_store.list_uploads(db)[0].with_paper_metric == 0


def test_the_suite_is_parsed_once_per_version_of_its_file(tmp_path):
    path = tmp_path / "test-hard.jsonl"
    samples = hard_samples()
    write_jsonl(path, samples[:10])
    results_store.clear_sample_indexes()
    first = results_store.sample_index(path)
    assert results_store.sample_index(path) is first and len(first) == 10
    assert first.by_id == results_store.read_sample_index(path).by_id
    write_jsonl(path, samples[:20])  # a new version of the file: parsed again
    second = results_store.sample_index(path)
    assert second is not first and len(second) == 20


def test_migration_6_keeps_rows_stored_before_it(tmp_path, monkeypatch):
    samples = hard_samples()
    path = tmp_path / "old.db"
    monkeypatch.setattr(storage, "MIGRATIONS", storage.MIGRATIONS[:5])
    old = storage.open_db(path)
    old.execute("INSERT INTO uploads (filename, source, model, note, n_rows, uploaded_at) "
                "VALUES ('old.jsonl', 'upload:old.jsonl', 'm', '', 1, 0)")
    old.execute("INSERT INTO results (source, sample_id, model, prompt, suite, language, task, task_id, depth, width,"
                " rouge_l, score, exact_match, bleu, upload_id) VALUES ('upload:old.jsonl', ?, 'm', 'naive',"
                " 'test-hard', 'csv', 'Join', 1, 1, 1, 0.5, 0.0, 0, 0.1, 1)", [samples[0]["id"]])
    old.conn.commit()
    old.conn.close()
    monkeypatch.undo()
    db = storage.open_db(path)
    frame = results_frame.load_results(db)
    assert frame["rouge_l"].tolist() == [0.5] and frame["rouge_l_paper"].isna().all()
    assert results_store.list_uploads(db)[0].with_paper_metric == 0


def test_warm_up_prepares_a_suites_answers_once_per_file_version(tmp_path):
    from structext_core.structext_eval import suites

    rows = [suites.generate_sample(task_id, 1, 1, suite="warm", index=0) for task_id in (1, 5, 9, 21)]
    path = tmp_path / "warm.jsonl"
    write_jsonl(path, rows)
    scoring.prepare_answer.cache_clear()
    results_store.clear_sample_indexes()
    thread = results_store.warm_up(path)
    thread.join(60)
    assert not thread.is_alive()
    assert results_store.warm_up(path) is thread  # the same version: not warmed twice
    info = scoring.prepare_answer.cache_info()
    answers = {str(row["answer"]) for row in rows}
    assert info.currsize == len(answers)
    for answer in answers:  # what an import asks for now comes from the cache
        scoring.prepare_answer(answer)
    assert scoring.prepare_answer.cache_info().hits == info.hits + len(answers)
    write_jsonl(path, rows[:2])  # a new version of the file is warmed again
    again = results_store.warm_up(path)
    assert again is not thread
    again.join(60)
    assert results_store.warm_up(tmp_path / "missing.jsonl") is None
    # An import's index waits for the warm-up of its suite: the answers are prepared by then.
    write_jsonl(path, rows)
    scoring.prepare_answer.cache_clear()
    index = results_store.ready_index(path)
    assert index is results_store.sample_index(path) and len(index) == len(rows)
    assert scoring.prepare_answer.cache_info().currsize == len(answers)


def test_a_scored_file_keeps_the_metric_it_was_scored_with(fresh, tmp_path):
    """Issue 20: a file written by `score --metric paper --out` is stored with that metric named."""
    from structext_core.cli.main import main as cli

    db, samples = fresh
    samples_file = tmp_path / "samples.jsonl"
    write_jsonl(samples_file, samples[:6])
    responses = tmp_path / "responses.jsonl"
    responses.write_text("\n".join(result_lines(samples[:6], models=("good",))) + "\n", encoding="utf-8")
    scored = {}
    for metric in ("paper", "strict"):
        scored[metric] = tmp_path / f"scored-{metric}.jsonl"
        assert cli(["score", str(responses), "--samples", str(samples_file), "--metric", metric,
                    "--out", str(scored[metric]), "--n-boot", "0"]) == 0
    paper = results_store.import_results(db, scored["paper"].read_bytes(), "paper.jsonl", samples)
    strict = results_store.import_results(db, scored["strict"].read_bytes(), "strict.jsonl", samples)
    plain = results_store.import_results(db, responses.read_bytes(), "responses.jsonl", samples)
    assert (paper.scored_with, strict.scored_with, plain.scored_with) == ("paper", "strict", None)
    by_name = {u.filename: u for u in results_store.list_uploads(db)}
    assert {name: u.scored_with for name, u in by_name.items()} == {
        "paper.jsonl": "paper", "strict.jsonl": "strict", "responses.jsonl": None}
    # a file whose rows name different metrics (or none) names none
    assert results_store.scored_with([{"metric": "paper"}, {"metric": "strict"}]) is None
    assert results_store.scored_with([{"metric": "paper"}, {}]) is None


# ---------------------------------------------------------------- which suite a file answers (issue 32, item 3)


def test_a_results_file_is_matched_to_the_suite_that_holds_its_samples(dataset, tmp_path):
    """On 820246e the page matched every upload against test-hard.jsonl unless told otherwise;
    now each file is tried against the suites, the one its sample ids name first."""
    db = storage.open_db(tmp_path / "match.db")
    suites = [dataset["data_dir"] / "test.jsonl", dataset["data_dir"] / "test-hard.jsonl"]
    test = "\n".join(result_lines(dataset["test"], models=("m",))).encode()
    hard = "\n".join(result_lines(dataset["hard"], models=("m",))).encode()
    assert results_store.likely_suites(hard, suites) == suites[::-1]  # test-hard-... also starts with test-
    assert results_store.likely_suites(test, suites) == suites
    summary, path = results_store.import_matching(db, test, "t.jsonl", suites[::-1])
    assert path == suites[0] and summary.n_rows == len(dataset["test"])
    summary, path = results_store.import_matching(db, hard, "h.jsonl", suites)
    assert path == suites[1] and summary.n_rows == len(dataset["hard"])
    # ids of neither suite: named in the error with the suites tried; nothing stored
    before = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    mixed = "\n".join([*result_lines(dataset["test"][:2], models=("x",)),
                       *result_lines(dataset["hard"][:1], models=("x",))]).encode()
    with pytest.raises(ResultsImportError) as error:
        results_store.import_matching(db, mixed, "mixed.jsonl", suites)
    first, *rest = error.value.problems
    assert "no suite file holds all its samples (tried test.jsonl, test-hard.jsonl)" in first.message
    assert "the closest is test.jsonl, where 1 result name no sample" in first.message and len(rest) == 1
    # a problem no suite can fix is reported at once, as it is
    with pytest.raises(ResultsImportError, match="not valid JSON"):
        results_store.import_matching(db, b"{nope", "bad.jsonl", suites)
    assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == before


def test_the_folder_import_matches_each_file_to_its_suite(dataset, tmp_path):
    db = storage.open_db(tmp_path / "folder.db")
    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(result_lines(dataset["test"], models=("a",))), encoding="utf-8")
    (folder / "b.jsonl").write_text("\n".join(result_lines(dataset["hard"], models=("b",))), encoding="utf-8")
    report = results_store.import_folder(db, folder, [dataset["data_dir"] / "test.jsonl",
                                                      dataset["data_dir"] / "test-hard.jsonl"])
    assert not report.failed and sorted(s.n_rows for s in report.imported) == sorted(
        [len(dataset["test"]), len(dataset["hard"])])
