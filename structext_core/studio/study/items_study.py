"""A human-baseline study over any benchmark's items, through the protocol
(:mod:`structext_core.protocol`): what its member module declares is all it needs.

Each item is stored as what the annotator's screen shows (``show_question``: the question, its
options when it has them), the key it is scored against at commit (the member's ``study_answer``,
or the item's ``answer``) and its strata (``STRATA``, checked on insert). The draw is the
workbench's own: counted items in proportion to the strata, then gold and practice items from the
rest in the seed's order. Scoring, the answer an annotator may give, the dashboard's breakdowns and
the export's columns come from the member's ``STUDY``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import sqlite_utils

from structext_core import protocol
from structext_core.evaluation import item_sets
from structext_core.studio import seal
from structext_core.studio.errors import StudyError
from structext_core.studio.study.draws import stratified_draw
from structext_core.studio.study.kinds import scores_by_item, study_declaration
from structext_core.studio.study.store import (
    DEFAULT_GOLD_PASS,
    _check_quality_setup,
    insert_study,
    validate_setup,
)


def study_row(member, item) -> dict:
    """The ``study_items`` columns of one of ``member``'s items; never sent to a browser whole."""
    shown = member.show_question(item)
    if shown.image is not None and protocol.option(member, "STUDY_IMAGE") is None:
        raise StudyError(f"{member.DISPLAY_NAME} item {member.item_id(item)!r} shows an image, and the benchmark "
                         "serves no study image (STUDY_IMAGE): a study of items with images is made by the "
                         "benchmark's own study setup.")
    answer = member.study_answer(item) if callable(getattr(member, "study_answer", None)) else item.get("answer", "")
    strata = protocol.check_strata(member.NAME, {key: item[key] for key in member.STRATA})
    sample = {"id": member.item_id(item), "question": shown.text, "options": list(shown.choices),
              "answer": str(answer), "reference": "", "requirement": ""}
    if shown.image is not None:  # served by the member's STUDY_IMAGE, never sent as a path
        sample["image"] = shown.image
    keep = protocol.option(member, "study_keep")
    kept = {} if keep is None else dict(keep(item))  # for its exports: open_question reads the shown fields by name
    own = item_sets.item_names(member, item)[0]
    if own != sample["id"]:  # the id the lab knows it by, where its id is ours (a content hash)
        kept["name"] = own
    facets = protocol.clean_facets(member, item)
    if facets:  # more fields its results break down by (the dashboard, exports, Results)
        kept["facets"] = facets
    if scores_by_item(member.NAME):  # scored by its score_answer on the whole item, on the server only
        kept["item"] = dict(item)
    if kept:
        sample["kept"] = kept
    return {"sample_id": sample["id"], "strata": strata, "reference_chars": 0,
            "sample_json": json.dumps(sample, ensure_ascii=False)}


def create_items_study(
    db: sqlite_utils.Database,
    *,
    benchmark: str,
    name: str,
    source: str,
    items: Sequence,
    n_items: int,
    annotator_ids: Sequence[int],
    rule_text: str,
    seed: int = 0,
    show_correctness: bool = False,
    created_by: int | None = None,
    practice_items: int = 0,
    gold_items: int = 0,
    gold_pass: float = DEFAULT_GOLD_PASS,
    notes: list[str] | None = None,
) -> int:
    """Create a study of ``benchmark`` over ``items`` (its data set ``source``); its id. Items whose
    keys its annotators were shown (as practice elsewhere: the benchmark's part of the seal says which
    items are the same) are in no draw, and ``notes`` (when given) is told how many. Raises
    :class:`StudyError` saying what to change (nothing is written then)."""
    member = protocol.get_module(benchmark)
    if study_declaration(member) is None:
        raise StudyError(f"{member.DISPLAY_NAME} declares no studies (its member has no STUDY and no load_items).")
    name, rule_text = validate_setup(db, name, rule_text, annotator_ids)
    practice_items, gold_items, gold_pass = _check_quality_setup(practice_items, gold_items, gold_pass, n_items)
    try:
        rows = [study_row(member, item) for item in items]
    except (KeyError, TypeError, ValueError) as error:
        raise StudyError(f"An item of {source!r} cannot be put in a study: {str(error)[:300]}") from None
    seen = seal.seen_keys(db, annotator_ids, benchmark)
    if seen:  # never a question whose key its people saw
        unseen = [row for row in rows if not seen.covers({**row["strata"], "sample_id": row["sample_id"],
                                                         "sample_json": row["sample_json"], "suite": source})]
        if not unseen:
            raise StudyError("Its annotators were shown the keys of every item of this data set (as practice in "
                             "another study): choose other annotators or another data set.")
        if len(unseen) < len(rows) and notes is not None:
            notes.append(f"Left out of the draw: {len(rows) - len(unseen)} whose keys its annotators were shown "
                         "as practice in another study.")
        rows = unseen
    pool = [{"id": row["sample_id"], "row": row} for row in rows]
    counted = stratified_draw(pool, int(n_items), seed, pool_name=source,
                              stratum_of=lambda entry: tuple(entry["row"]["strata"].values()))
    taken = {entry["id"] for entry in counted}
    rest = [entry for entry in pool if entry["id"] not in taken]
    random.Random(f"structext-items-study|{seed}").shuffle(rest)
    if gold_items + practice_items > len(rest):
        raise StudyError(f"Not enough items left for {gold_items} gold and {practice_items} practice items after "
                         f"the study's questions ({len(rest)} left): ask for fewer.")
    gold, practice = rest[:gold_items], rest[gold_items:gold_items + practice_items]
    return insert_study(
        db, {"name": name, "suite": source, "seed": seed, "rule_text": rule_text, "benchmark": benchmark,
             "show_correctness": int(show_correctness), "created_by": created_by, "gold_pass": gold_pass},
        [(entry["row"], kind) for entries, kind in ((counted, "study"), (gold, "gold"), (practice, "practice"))
         for entry in entries],
        annotator_ids,
    )
