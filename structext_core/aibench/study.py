"""AIBench studies: people answer AIBench questions from a generated image alone (issue 22, item 2).

An item is (one system's image of a paper, one of that paper's questions). The study is a study
like StrucText's (:mod:`structext_core.studio.study.store`: the same annotators, own orders,
honest clock, pauses, flags, give-up, practice, gold, dashboard, adjudication, export); what
differs is declared in :mod:`structext_core.studio.study.kinds` and drawn here.

The draw (deterministic for (data set, n, practice, gold, seed)):

1. **One image per paper.** Every annotator answers the same items, and a person who has seen one
   image of a paper answers the next question about that paper from memory, not from the image in
   front of them. So each paper is shown through one system's image only, in the whole study:
   papers, in a seeded order within each conference, are dealt to the systems in turn (the next
   system with an image of the paper when one has none), so systems are balanced within each
   conference.
2. **Practice** uses papers of its own (set aside first, in the seeded order, until they hold
   enough questions), on their original figure: its answer key is shown after each answer, and a
   key is only fair feedback where the image can answer the question. Drawn evenly over levels.
3. **Gold** items check care, so their key must be certain: level-1 questions (is this component
   in the figure?) asked on the paper's *original figure*, which the question was written from
   and which the experts checked. A generated image may lack the component, so a miss there says
   nothing about care. Gold uses papers of its own too (the next in the seeded order, until they
   hold enough level-1 questions), drawn evenly over conferences; to an annotator they look like
   any other item (original figures are among the counted items' images too).
4. **Counted** items: a stratified draw (:func:`structext_core.studio.study.draws.stratified_draw`)
   in proportion to level x system x conference over every question of the other papers.

Across studies over the same data set: a paper that another AIBench study uses for practice has
had its keys shown, so practice takes such papers first, and the counted draw leaves them out
while the papers left still hold enough questions (the seal withholds keys otherwise).

Blinding: the annotator's page gets the question, its options and the image's pixels re-encoded
without metadata and padded to a size bucket (:func:`structext_core.aibench.pairwise.blinded_png`),
asked for by the assignment's own id; never the system, the paper id, the file's name or path.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence

import sqlite_utils

from structext_core.aibench import dataset as aibench_dataset
from structext_core.aibench import pairwise, seal
from structext_core.aibench import store as aibench_store
from structext_core.aibench.model import LEVELS, ORIGINAL_SYSTEM
from structext_core.evaluation import draws
from structext_core.studio.study.draws import stratified_draw
from structext_core.studio.study.store import (
    DEFAULT_GOLD_PASS,
    StudyError,
    _check_quality_setup,
    insert_study,
    validate_setup,
)

DEFAULT_AIBENCH_RULE = (
    "Answer from the image alone: no search, no reading of the paper, no tools, no help from others. "
    "Choose the option the image supports; when it does not show enough to answer, choose the option "
    "that says so. Pause when you take a break."
)
#: AIBench's name in the registry (structext_core.aibench.member).
AIBENCH = "aibench"
STRATUM_KEYS = ("level", "system", "conference")
#: The level whose questions (component existence) may be gold, on the original figure.
GOLD_LEVEL = 1


def stratum(item: dict) -> tuple:
    """The stratum of an AIBench item: (level, system, conference)."""
    return tuple(item[key] for key in STRATUM_KEYS)


def _item(paper: aibench_dataset.Paper, question, system: str, image: str) -> dict:
    """The stored item (``sample_json``): never sent to an annotator's browser as a whole."""
    return {"id": f"{paper.id}/{question.id}@{system}", "paper_id": paper.id, "question_id": question.id,
            "system": system, "image": image, "level": question.level, "conference": paper.conference,
            "question": question.question, "options": list(question.options), "answer": question.answer}


def _item_row(item: dict) -> dict:
    """The ``study_items`` columns of an AIBench item."""
    return {"sample_id": item["id"], "reference_chars": 0, "sample_json": json.dumps(item, ensure_ascii=False),
            "strata": {key: item[key] for key in ("paper_id", "system", "question_id", "level", "conference")}}


def _papers_in_order(data: aibench_dataset.Dataset, seed: int) -> list[str]:
    ids = sorted(data.papers)
    random.Random(f"aibench-study-papers|{seed}").shuffle(ids)
    return ids


def deal_systems(data: aibench_dataset.Dataset, paper_ids: Sequence[str], seed: int) -> dict[str, str]:
    """Each paper's one system in the study: within each conference, papers (in their given order)
    dealt to the systems in turn, from a seeded start; a paper without an image of its turn's
    system gets the next system that has one. Papers with no image at all are left out."""
    systems = data.systems
    if not systems:
        return {}
    rng = random.Random(f"aibench-study-systems|{seed}")
    turn = rng.randrange(len(systems))
    by_conference: dict[str, list[str]] = {}
    for paper_id in paper_ids:
        by_conference.setdefault(data.papers[paper_id].conference, []).append(paper_id)
    dealt = {}
    for conference in sorted(by_conference):
        for paper_id in by_conference[conference]:
            for step in range(len(systems)):
                system = systems[(turn + step) % len(systems)]
                if (system, paper_id) in data.images:
                    dealt[paper_id] = system
                    turn = (turn + step + 1) % len(systems)
                    break
    return dealt


def _set_aside(data: aibench_dataset.Dataset, order: Sequence[str], wanted: int, levels: Sequence[int],
               what: str, skip: set[tuple[str, str]] | frozenset = frozenset()) -> list[dict]:
    """The questions of ``levels`` on the original figures of the first papers of ``order`` that
    have one, as items, until there are at least ``wanted``; :class:`StudyError` when the papers
    run out first."""
    items: list[dict] = []
    for paper_id in order:
        if len(items) >= wanted:
            break
        if (ORIGINAL_SYSTEM, paper_id) in data.images:
            paper = data.papers[paper_id]
            items += [_item(paper, q, ORIGINAL_SYSTEM, data.images[(ORIGINAL_SYSTEM, paper_id)].path)
                      for q in paper.questions if q.level in levels and (paper_id, q.id) not in skip]
    if len(items) < wanted:
        raise StudyError(f"The papers left hold {len(items)} {what} on original figures; ask for at most that many.")
    return items


def draw_items(data: aibench_dataset.Dataset, n_items: int, practice_items: int, gold_items: int,
               seed: int, dataset: str = "the data set", keys_shown: set[str] | frozenset = frozenset(),
               left_out: set[str] | frozenset = frozenset(),
               left_out_questions: set[tuple[str, str]] | frozenset = frozenset(),
               no_original: set[str] | frozenset = frozenset(),
               ) -> tuple[list[dict], list[dict], list[dict]]:
    """The counted, gold and practice items of a study over ``data`` (see the module notes);
    ``keys_shown``: papers other studies use for practice (taken for practice first, kept out
    of the counted draw where it can do without them); ``left_out``: papers in no draw (the
    annotators saw their keys in the question review); ``left_out_questions``: (paper, question)
    pairs in no draw (the annotators saw their keys after answering them as practice);
    ``no_original``: papers in no practice or gold draw (those show the original figure; the
    annotators still answer or judge these papers in another study)."""
    order = [p for p in _papers_in_order(data, seed) if p not in left_out]
    order = [p for p in order if p in keys_shown] + [p for p in order if p not in keys_shown]
    originals = [p for p in order if p not in no_original]
    practice_pool = _set_aside(data, originals, practice_items, sorted(LEVELS), "questions for practice",
                               left_out_questions) if practice_items else []
    order = [p for p in order if p not in {item["paper_id"] for item in practice_pool}]
    originals = [p for p in order if p not in no_original]
    gold_pool = _set_aside(data, originals, gold_items, [GOLD_LEVEL], f"level-{GOLD_LEVEL} questions for gold",
                           left_out_questions) if gold_items else []
    rest = [p for p in order if p not in {item["paper_id"] for item in gold_pool}]
    unseen = [p for p in rest if p not in keys_shown]
    if sum(len(data.papers[p].questions) for p in unseen) >= n_items:
        rest = unseen
    dealt = deal_systems(data, rest, seed)
    pool = [_item(data.papers[p], q, dealt[p], data.images[(dealt[p], p)].path)
            for p in rest if p in dealt for q in data.papers[p].questions if (p, q.id) not in left_out_questions]
    counted = stratified_draw(pool, int(n_items), seed, stratum_of=stratum,
                              pool_name=f"data set {dataset!r} ({len(pool):,} questions outside practice and gold"
                                        + (" and the papers and questions whose keys the annotators have seen"
                                           if left_out or left_out_questions else "") + ")")
    gold = draws.stratified_draw(gold_pool, gold_items, stratum=lambda i: i["conference"],
                                 seed=f"aibench-study-gold|{seed}|{gold_items}", allocation=draws.EVEN) \
        if gold_items else []
    practice = draws.stratified_draw(practice_pool, practice_items, stratum=lambda i: i["level"],
                                     seed=f"aibench-study-practice|{seed}|{practice_items}",
                                     allocation=draws.EVEN) if practice_items else []
    return counted, gold, practice


def load(dataset: str) -> aibench_dataset.Dataset:
    """The stored data set ``dataset``; :class:`StudyError` naming it when it cannot be read."""
    try:
        return aibench_dataset.load_dataset(aibench_store.dataset_path(dataset))
    except (ValueError, OSError) as error:
        raise StudyError(f"The AIBench data set {dataset[:60]!r} cannot be read: {str(error)[:300]}") from None


def create_aibench_study(
    db: sqlite_utils.Database,
    *,
    name: str,
    dataset: str,
    n_items: int,
    annotator_ids: Sequence[int],
    rule_text: str = DEFAULT_AIBENCH_RULE,
    seed: int = 0,
    show_correctness: bool = False,
    created_by: int | None = None,
    practice_items: int = 0,
    gold_items: int = 0,
    gold_pass: float = DEFAULT_GOLD_PASS,
) -> int:
    """Create an AIBench study over the stored data set ``dataset`` (its ``suite``); its id.
    Raises :class:`StudyError` saying what to change (nothing is written then)."""
    name, rule_text = validate_setup(db, name, rule_text, annotator_ids)
    practice_items, gold_items, gold_pass = _check_quality_setup(practice_items, gold_items, gold_pass, n_items)
    data = load(dataset)
    # Papers and questions are known by their content, in this set and every copy of it (seal.paper_key).
    papers = {pid: seal.paper_key(dataset, pid) for pid in data.papers}
    shown_elsewhere = {seal.paper_key(row[0], row[1]) for row in db.execute(
        "SELECT DISTINCT s.suite, json_extract(i.strata, '$.paper_id') FROM study_items i JOIN studies s ON s.id = i.study_id"
        " WHERE s.benchmark = ? AND i.kind = 'practice'", [AIBENCH])}
    keys_shown = {pid for pid, key in papers.items() if key in shown_elsewhere}
    # Papers an annotator saw with their keys in the question review, and questions they answered
    # as practice elsewhere (the key shown after), are in no draw.
    seen = seal.seen_keys(db, annotator_ids)
    left_out = {pid for pid, key in papers.items() if key in seen.papers}
    left_out_questions = {(pid, q.id) for pid, paper in data.papers.items() for q in paper.questions
                          if seal.question_key(dataset, pid, q.id) in seen.practised_questions}
    # Practice and gold show a paper's original figure (and practice its keys): never one of a paper
    # an annotator still answers or judges in another open study, in any copy.
    open_elsewhere = set().union(*(seal.open_papers(db, uid, counted_only=True) for uid in annotator_ids))
    no_original = {pid for pid, key in papers.items() if key in open_elsewhere}
    counted, gold, practice = draw_items(data, int(n_items), practice_items, gold_items, seed, dataset,
                                         keys_shown, left_out, left_out_questions, no_original)
    return insert_study(
        db, {"name": name, "suite": dataset, "seed": seed, "rule_text": rule_text, "benchmark": AIBENCH,
             "show_correctness": int(show_correctness), "created_by": created_by, "gold_pass": gold_pass},
        [(_item_row(item), kind) for items, kind in ((counted, "study"), (gold, "gold"), (practice, "practice"))
         for item in items],
        annotator_ids,
    )


def strata_counts(items: Sequence[dict]) -> Counter:
    """How many items fall in each (level, system, conference) stratum."""
    return Counter(stratum(item) for item in items)


def study_image(db: sqlite_utils.Database, dataset: str, strata: dict, nonce: bytes = b"") -> bytes:
    """The blinded PNG of a study item's image (the member's ``STUDY_IMAGE``: served by
    :func:`structext_core.studio.study.item_image` and ``lead_image``, which check whose item it
    is): the pixels only, padded to a size bucket (no name, path or metadata of the system's file),
    its padding drawn from ``nonce`` (the page gives each viewer and question its own: a file and
    URL of their own)."""
    folder = aibench_store.dataset_path(dataset)
    record = pairwise._image_records(str(folder)).get((strata.get("system"), strata.get("paper_id")))
    if record is None:
        raise StudyError("That image is no longer stored; tell the study lead.")
    return pairwise.pad_png(pairwise.blinded_png(str(folder / record)), fill=pairwise.pad_fill(nonce, "item"))
