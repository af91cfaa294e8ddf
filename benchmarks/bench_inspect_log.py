"""How long writing a study's answers as an Inspect AI log takes, and how large the log is.

    .venv/bin/python benchmarks/bench_inspect_log.py [--items 200] [--people 3]

A StrucText-Eval study of ``--items`` Test-Hard samples answered by ``--people`` annotators (each
answer the key: the clock is not what is measured) in a database in memory; then
``study.write_inspect_log`` to ``.eval`` and to ``.json``, after importing Inspect AI (timed apart).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from structext_core.structext_eval import study as structext_study
from structext_core.structext_eval import suites
from structext_core.studio import accounts, storage, study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--people", type=int, default=3)
    args = parser.parse_args()
    accounts.credentials.SCRYPT_N = 2**4  # accounts are not what is measured
    db = storage.open_db(":memory:")
    people = [accounts.create_user(db, f"ann{i}", "password1", "annotator") for i in range(1, args.people + 1)]
    samples = [suites.generate_sample(task, depth, width, suite="test-hard", index=index)
               for task in (1, 5, 8, 10, 18, 21) for depth in (1, 2, 3) for width in (1, 2, 3)
               for index in range(max(1, args.items // 40))]
    study_id = structext_study.create_study(db, name="bench", suite="test-hard", samples=samples,
                                            n_items=min(args.items, len(samples)),
                                            annotator_ids=[p["id"] for p in people])
    for person in people:
        study.accept_rule(db, study_id, person["id"])
        while (view := study.open_question(db, study_id, person["id"])) is not None:
            key = db.execute("SELECT json_extract(sample_json, '$.answer') FROM study_items WHERE id = ?",
                             [view.item_id]).fetchone()[0]
            study.submit_answer(db, person["id"], view.assignment_id, key)
    answers = len(study.responses_frame(db, study_id))
    started = time.perf_counter()
    import inspect_ai.log  # noqa: F401 - timed apart from the writes
    print(f"importing Inspect AI's log API: {time.perf_counter() - started:.2f} s")
    out = Path(tempfile.mkdtemp(prefix="bench-inspect-log-"))
    for fmt in ("eval", "json"):
        started = time.perf_counter()
        path = study.write_inspect_log(db, study_id, out / study.inspect_log_name("bench", fmt))
        print(f"{answers} answers ({args.people} people) -> .{fmt}: {time.perf_counter() - started:.2f} s, "
              f"{os.path.getsize(path) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
