"""No answer lost under load, none duplicated, and a killed writer leaves a sound file.

Writers are separate processes, each with its own connection, doing what the answering
page does: open the current question, then submit it.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from structext_core.structext_eval import results_frame, suites
from structext_core.structext_eval import study as structext_study
from structext_core.studio import accounts, storage, study
from tests import processes

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 16
SUBMISSIONS = 250


def many_samples(count):
    cells = [(t, d, w) for t in range(1, 30) for d in (1, 2) for w in (1, 2)]
    per_cell = -(-count // len(cells))
    return [suites.generate_sample(t, d, w, suite="load", index=i) for t, d, w in cells for i in range(per_cell)]


def make_load_study(db_path, n_annotators, n_items):
    db = storage.open_db(db_path)
    # Hash cost does not matter here; one password hash for all accounts keeps setup fast.
    password_hash = accounts.hash_password("password-123")
    with storage.write_transaction(db):
        for i in range(n_annotators):
            db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, 'annotator', 0)",
                       [f"writer{i}", password_hash])
    user_ids = [row[0] for row in db.execute("SELECT id FROM users ORDER BY id")]
    study_id = structext_study.create_study(db, name="load", suite="load", samples=many_samples(n_items),
                                  n_items=n_items, annotator_ids=user_ids)
    for user_id in user_ids:
        study.accept_rule(db, study_id, user_id)
    return study_id, user_ids


def answer_all(args):
    """One annotator answering every question; returns (acknowledged, errors)."""
    db_path, study_id, user_id = args
    acknowledged, errors = [], []
    try:
        db = storage.open_db(db_path)
        while (view := study.open_question(db, study_id, user_id)) is not None:
            submission = study.submit_answer(db, user_id, view.assignment_id, f"answer {user_id}/{view.seq}")
            acknowledged.append((submission.response_id, view.assignment_id))
    except Exception as error:  # any error here would have reached a user
        errors.append(repr(error))
    return acknowledged, errors


READER_DEADLINE_SECONDS = 300


def read_while_writing(args):
    """One reader doing what a view does, again and again until every answer is in.

    Returns (kind, reads, answers seen by each read, failures): a failure is any exception,
    as a page would have shown it.
    """
    kind, db_path, study_id, expected = args
    db = storage.open_db(db_path)
    reads, seen, failures = 0, [], []
    deadline = time.monotonic() + READER_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        finished = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] >= expected
        try:
            if kind == "dashboard":  # the Studies dashboard's frames
                frame = study.responses_frame(db, study_id)
                study.progress_table(db, study_id)
                study.annotator_summary(frame)
                study.time_summary(frame, study.kind_of("structext-eval").time_cells)
                study.flag_fast(frame)
                seen.append(len(frame))
            elif kind == "export":
                rows = study.export_rows(db, study_id)
                study.to_csv(rows)
                study.to_jsonl(rows)
                seen.append(len(rows))
            else:  # Results: every stored result plus the human baseline, read live
                frame = results_frame.load_results(db)
                seen.append(int(frame["model"].astype(str).str.startswith("human:").sum()))  # each answer once
            reads += 1
        except Exception as error:  # what a page would have shown
            failures.append(repr(error))
        if finished:
            break
    return kind, reads, seen, failures


def writer_or_reader(args):
    return answer_all(args[1:]) if args[0] == "write" else read_while_writing(args)


def test_sixteen_writers_lose_and_duplicate_nothing_while_views_read(tmp_path):
    """16 annotators submit 250 answers each while the dashboard, the export and Results read
    live: no answer lost, none duplicated, and no read fails (answers are scored in the commit
    that stores them, and reads tolerate unscored rows)."""
    db_path = tmp_path / "load.db"
    study_id, user_ids = make_load_study(db_path, WRITERS, SUBMISSIONS)
    expected = WRITERS * SUBMISSIONS
    readers = [(kind, db_path, study_id, expected) for kind in ("dashboard", "export", "results")]
    writers = [("write", db_path, study_id, user_id) for user_id in user_ids]
    with processes.pool(len(readers) + len(writers)) as pool:
        outcomes = pool.map(writer_or_reader, readers + writers, chunksize=1)
    read_outcomes, write_outcomes = outcomes[:len(readers)], outcomes[len(readers):]
    assert [error for _, errors in write_outcomes for error in errors] == []
    acknowledged = [ack for acks, _ in write_outcomes for ack in acks]
    assert len(acknowledged) == expected == 4000

    db = storage.open_db(db_path)
    rows = db.execute("SELECT id, assignment_id, user_id, response FROM responses").fetchall()
    assert len(rows) == 4000
    assert len({assignment for _, assignment, _, _ in rows}) == 4000  # none duplicated
    assert {(response_id, assignment) for response_id, assignment, _, _ in rows} == set(acknowledged)
    per_user = db.execute("SELECT user_id, COUNT(*) FROM responses GROUP BY user_id").fetchall()
    assert sorted(count for _, count in per_user) == [SUBMISSIONS] * WRITERS
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM responses WHERE rouge_l IS NULL").fetchone()[0] == 0
    for kind, reads, seen, failures in read_outcomes:
        assert failures == [], f"{kind}: {len(failures)} of {reads + len(failures)} reads failed: {failures[:3]}"
        assert seen[-1] == expected, kind  # the last read saw every answer
        # Real concurrency: this reader saw the study at several stages of being answered.
        assert len(set(seen)) >= 2 and min(seen) < expected, (kind, seen)


WRITER_SCRIPT = textwrap.dedent("""
    import sys
    from structext_core.studio import storage
    from structext_core.studio import study
    db = storage.open_db(sys.argv[1])
    study_id, user_id = int(sys.argv[2]), int(sys.argv[3])
    while (view := study.open_question(db, study_id, user_id)) is not None:
        text = f"answer {view.assignment_id} " + "x" * 2000
        submission = study.submit_answer(db, user_id, view.assignment_id, text)
        # Acknowledge only after submit_answer returned: the commit is done.
        print(submission.response_id, view.assignment_id, flush=True)
""")


def test_writer_killed_mid_stream_loses_no_acknowledged_answer(tmp_path):
    db_path = tmp_path / "killed.db"
    study_id, (user_id,) = make_load_study(db_path, 1, 300)
    acknowledged: dict[int, int] = {}
    for round_number, kill_after in enumerate((7, 31, 52, 90)):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER_SCRIPT, str(db_path), str(study_id), str(user_id)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for _ in range(kill_after):
            line = process.stdout.readline()
            assert line, f"writer stopped early in round {round_number}"
            response_id, assignment_id = map(int, line.split())
            acknowledged[assignment_id] = response_id
        process.send_signal(signal.SIGKILL)  # mid-stream: it is busy submitting the next ones
        process.wait()
        assert process.returncode == -signal.SIGKILL
        for line in process.stdout:  # acknowledgements written before the kill landed
            response_id, assignment_id = map(int, line.split())
            acknowledged[assignment_id] = response_id

        db = storage.open_db(db_path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = dict(db.execute("SELECT assignment_id, id FROM responses").fetchall())
        assert all(stored.get(assignment) == response for assignment, response in acknowledged.items())
        texts = db.execute("SELECT assignment_id, response FROM responses").fetchall()
        assert all(text == f"answer {assignment} " + "x" * 2000 for assignment, text in texts)  # no torn rows
        db.close()
    assert len(acknowledged) >= 7 + 31 + 52 + 90
    # The annotator carries on where the killed writer stopped.
    db = storage.open_db(db_path)
    view = study.open_question(db, study_id, user_id)
    assert view is not None and view.seq == db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] + 1


# ---------------------------------------------------------------- several app processes on one database
# What N `streamlit run` processes behind a sticky proxy share: only the database. Each process
# has its own write lock (storage._WRITE_LOCKS), so between processes only SQLite's lock
# (BEGIN IMMEDIATE, the busy timeout, the retries) keeps them apart.

RACERS = 4


def submit_every_current(args):
    """One process submitting the shown question of every annotator (as a second tab of each
    would, on another process); returns (assignments it saved, assignments refused as already
    answered, other errors)."""
    db_path, current = args
    db = storage.open_db(db_path)
    saved, refused, errors = [], [], []
    for user_id, assignment_id in current:
        try:
            study.submit_answer(db, user_id, assignment_id, f"answer from {os.getpid()}")
            saved.append(assignment_id)
        except study.StaleQuestionError:
            refused.append(assignment_id)
        except Exception as error:  # a lock error or anything else would reach a user
            errors.append(repr(error))
    return saved, refused, errors


def test_processes_submitting_the_same_questions_save_each_once(tmp_path):
    db_path = tmp_path / "race.db"
    study_id, user_ids = make_load_study(db_path, 40, 3)
    db = storage.open_db(db_path)
    current = {user_id: study.open_question(db, study_id, user_id).assignment_id for user_id in user_ids}
    with processes.pool(RACERS) as pool:
        results = pool.map(submit_every_current, [(db_path, sorted(current.items()))] * RACERS)
    assert [errors for _, _, errors in results] == [[]] * RACERS
    saved = [a for s, _, _ in results for a in s]
    assert sorted(saved) == sorted(current.values())  # each saved once, by one process
    refused = [a for _, r, _ in results for a in r]
    assert len(refused) == len(user_ids) * (RACERS - 1)
    rows = db.execute("SELECT assignment_id FROM responses").fetchall()
    assert sorted(a for (a,) in rows) == sorted(current.values())
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def fail_logins(args):
    """Wrong passwords for one name from one process; returns the messages."""
    db_path, name, attempts = args
    db = storage.open_db(db_path)
    return [accounts.log_in(db, name, "wrong-password").message for _ in range(attempts)]


def test_login_throttle_and_sessions_are_shared_by_processes(tmp_path):
    db_path = tmp_path / "throttle.db"
    db = storage.open_db(db_path)
    user = accounts.create_user(db, "ann", "password-123", "annotator")
    per_process = accounts.MAX_FAILED_LOGINS - 2
    with processes.pool(2) as pool:
        pool.map(fail_logins, [(db_path, "ann", per_process)] * 2)
    # Failures from both processes counted together: the name is locked for every process.
    outcome = accounts.log_in(storage.open_db(db_path), "ann", "password-123")
    assert outcome.user is None and outcome.locked_seconds > 0
    # A session issued by one process is known to another, and ends for both when revoked.
    token = accounts.issue_session(db, user["id"])
    other = storage.open_db(db_path)
    assert accounts.verify_session(other, token).user["id"] == user["id"]
    accounts.revoke_user_sessions(db, user["id"], "logged out")
    assert accounts.verify_session(other, token).user is None
