"""StrucText-Eval's human-baseline studies: a stratified draw of a suite's samples (by format,
task, depth and width), with practice and gold drawn from the rest of the suite, written through
the shared study store (:func:`structext_core.studio.study.store.insert_study`), which every
benchmark's studies share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import sqlite_utils

from structext_core.structext_eval import member, suites
from structext_core.structext_eval.study_draws import (
    _avoiding,
    _elsewhere,
    _rest,
    _swap_out,
    gold_draw,
    practice_draw,
    stratum,
)
from structext_core.studio import seal
from structext_core.studio.study.draws import stratified_draw
from structext_core.studio.study.store import (
    DEFAULT_GOLD_PASS,
    _check_quality_setup,
    insert_study,
    validate_setup,
)
from structext_core.text.words import plural

DEFAULT_SUITE = "test-hard"
# The paper's suites, the study default first: ("test-hard", "test").
BUILT_IN_SUITES = (DEFAULT_SUITE, *(name for name in suites.SUITES if name != DEFAULT_SUITE))
DEFAULT_N_ITEMS = 500
DEFAULT_RULE = (
    "Answer from the reference alone: no tools, no web search, no scripts, no help from "
    "others. Copying text out of the reference is fine. Pause when you take a break."
)


#: What a sample stores as its strata (``study_items.strata``).
_STRATA = tuple(member.STRATA)


def create_study(
    db: sqlite_utils.Database,
    *,
    name: str,
    suite: str,
    samples: Sequence[dict],
    n_items: int = DEFAULT_N_ITEMS,
    annotator_ids: Sequence[int],
    rule_text: str = DEFAULT_RULE,
    seed: int = 0,
    show_correctness: bool = False,
    created_by: int | None = None,
    practice_items: int = 0,
    gold_items: int = 0,
    gold_pass: float = DEFAULT_GOLD_PASS,
) -> int:
    """Create a study with a stratified draw of ``n_items`` from ``samples``; return its id.

    ``practice_items`` (answered first, with feedback, not counted; :func:`practice_draw`) and
    ``gold_items`` (mixed in, not counted, checking care; :func:`gold_draw`) are drawn from
    the rest of the suite: no sample (and no reference text) is in two of the three draws.
    Across studies over the same ``suite``: practice and gold avoid every item of the others
    (when too few samples are left, practice still avoids their counted and gold items, gold
    their counted and practice items, if it can), and a counted item that is another study's
    practice item is swapped for a free sample of its stratum where there is one. Samples the
    annotators were shown the answers of outside a study (:func:`structext_core.studio.seal.seen_keys`)
    are in no draw.
    Raises :class:`StudyError` for an empty or taken name, an empty rule, no annotators,
    an account that is not an annotator, a question count outside the suite's size, too many
    practice or gold items, or a gold pass mark outside 0 to 100 %.
    """
    name, rule_text = validate_setup(db, name, rule_text, annotator_ids)
    practice_items, gold_items, gold_pass = _check_quality_setup(practice_items, gold_items, gold_pass, n_items)
    pool_name = "the suite"
    # Samples the annotators were shown the answers of (given to them to rewrite, answered as
    # practice in another study) are left out.
    if seen := seal.seen_keys(db, annotator_ids, member.NAME):
        kept = [sample for sample in samples if not seen.covers(sample)]
        if len(kept) < len(samples):
            pool_name = (f"the suite without the {plural(len(samples) - len(kept), 'sample')} whose answers "
                         "the annotators have seen")
        samples = kept
    drawn = stratified_draw(samples, int(n_items), seed, pool_name=pool_name, stratum_of=stratum)
    # Other studies over the same suite: their answer keys must stay useful and sealed.
    # Counted items avoid items others show keys of (practice), where a sample of the same
    # stratum is free. Practice and gold avoid every item of the others; when too few samples
    # are left for that, practice still avoids others' counted and gold items (so its feedback
    # has a key to show) and gold others' counted and practice items.
    drawn = _swap_out(samples, drawn, _elsewhere(db, suite, ("practice",)), seed)
    every = _elsewhere(db, suite, ("study", "gold", "practice"))
    gold = gold_draw(_avoiding(_rest(samples, drawn), [every, _elsewhere(db, suite, ("study", "practice"))],
                               gold_items), gold_items, seed)
    practice = practice_draw(_avoiding(_rest(samples, [*drawn, *gold]),
                                       [every, _elsewhere(db, suite, ("study", "gold"))], practice_items),
                             practice_items, seed)
    return insert_study(
        db, {"name": name, "suite": suite, "seed": seed, "rule_text": rule_text,
             "show_correctness": int(show_correctness), "created_by": created_by, "gold_pass": gold_pass},
        [(item_row(sample), kind) for samples_of_kind, kind in
         ((drawn, "study"), (gold, "gold"), (practice, "practice")) for sample in samples_of_kind],
        annotator_ids,
    )


def item_row(sample: dict) -> dict:
    """The ``study_items`` columns of a sample."""
    return {"sample_id": sample["id"], "strata": {key: sample[key] for key in _STRATA},
            "reference_chars": len(sample["reference"]), "sample_json": json.dumps(sample, ensure_ascii=False)}




def available_suites(directory: str | Path) -> list[str]:
    """Suites a study can draw from: Test-Hard and Test (generated on first use), then
    every other ``<name>.jsonl`` in the suites folder."""
    stored = (path.stem for path in suites.suite_files(directory))
    return [*BUILT_IN_SUITES, *(name for name in stored if name not in BUILT_IN_SUITES)]
