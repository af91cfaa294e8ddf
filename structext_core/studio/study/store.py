"""Studies: setup, the draw, annotators and their order, status; the typed rows the pages read
(:class:`Study`, :class:`AnnotatorStudy`)."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

import sqlite_utils

from structext_core import protocol
from structext_core.benchmark import draws, suites
from structext_core.benchmark import member as structext_eval
from structext_core.evaluation import scoring
from structext_core.studio import accounts, changes, seal
from structext_core.studio.errors import StudyError  # noqa: F401 (the study package's error)
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import kinds
from structext_core.text import limits
from structext_core.text.words import plural

DEFAULT_SUITE = "test-hard"
# The paper's suites, the study default first: ("test-hard", "test").
BUILT_IN_SUITES = (DEFAULT_SUITE, *(name for name in suites.SUITES if name != DEFAULT_SUITE))
DEFAULT_N_ITEMS = 500
PASS_THRESHOLD = scoring.DEFAULT_THRESHOLD
DEFAULT_RULE = (
    "Answer from the reference alone: no tools, no web search, no scripts, no help from "
    "others. Copying text out of the reference is fine. Pause when you take a break."
)
MAX_RESPONSE_CHARS = 200_000
#: Default thresholds for "implausibly fast" answers (see :func:`flag_fast`).
FAST_MIN_SECONDS = 5.0
FAST_FRACTION_OF_MEDIAN = 0.25
STRATUM_KEYS = ("language", "task", "depth", "width")
#: What a StrucText item stores as its strata (``study_items.strata``).
_STRUCTEXT_STRATA = tuple(structext_eval.STRATA)
#: Most practice items a study may have (they come before every annotator's first question).
MAX_PRACTICE_ITEMS = 20
#: A gold answer at most this long, on one line, counts as short (see :func:`gold_draw`).
GOLD_SHORT_ANSWER_CHARS = 40
#: Answers a careless person guesses right half the time: never preferred as gold.
_GUESSABLE_ANSWERS = frozenset({"true", "false", "yes", "no", "0", "1"})
#: A practice question is a warm-up: drawn from samples whose reference and answer are at most
#: this long (characters). Test-Hard has such samples of every task; a suite with too few
#: gets the shortest samples it has (see :func:`practice_draw`).
PRACTICE_MAX_REFERENCE_CHARS = 3_000
PRACTICE_MAX_ANSWER_CHARS = 300
DEFAULT_GOLD_PASS = 0.5


class StaleQuestionError(StudyError):
    """The item was already answered (double click, second tab) or is not open."""


def now() -> float:
    """Server time in seconds since the epoch: the only clock studies use."""
    return time.time()


# ---------------------------------------------------------------- setup


def stratum(sample: dict) -> tuple:
    """The stratum of a sample: (format, task, depth, width)."""
    return tuple(sample[key] for key in STRATUM_KEYS)


def stratified_draw(samples: Sequence[dict], n: int, seed: int = 0, *, stratum_of=stratum,
                    pool_name: str = "the suite") -> list[dict]:
    """Draw ``n`` samples (each with an ``id``), allocated to strata in proportion to their size.

    Strata are ``stratum_of(sample)``: for StrucText (format, task, depth, width); an AIBench
    study passes its own (:func:`structext_core.studio.study.aibench_study.stratum`), and
    ``pool_name`` names what the samples are in messages. Each stratum gets the floor of its share;
    the remaining places go to the strata with the largest remainders (ties broken at
    random). The result is deterministic for (samples, n, seed), whatever the input order
    (:func:`structext_core.benchmark.draws.stratified_draw`, ``proportional``).
    """
    if not samples:
        raise StudyError(f"{pool_name.capitalize()} has no samples: generate or choose another one.")
    if not 1 <= n <= len(samples):
        raise StudyError(
            f"Number of questions must be between 1 and {len(samples):,} "
            f"(the size of {pool_name}), got {n:,}."
        )
    repeated = [sample_id for sample_id, times in Counter(s["id"] for s in samples).items() if times > 1]
    if repeated:
        raise StudyError(
            f"{pool_name.capitalize()} has {len(repeated)} sample id(s) used more than once (e.g. {repeated[0]!r}): "
            "every sample needs its own id."
        )
    return draws.stratified_draw(
        samples, n, stratum=stratum_of, seed=f"structext-study-draw|{seed}|{n}",
        allocation=draws.PROPORTIONAL, order=lambda key: tuple(str(part) for part in key),
    )


def _rest(samples: Sequence[dict], taken: Sequence[dict]) -> list[dict]:
    """The samples that share neither an id nor a reference text with ``taken``."""
    ids = {s["id"] for s in taken}
    references = {s["reference"] for s in taken}
    return [s for s in samples if s["id"] not in ids and s["reference"] not in references]


def _gold_rank(sample: dict) -> tuple[int, int]:
    """Sort key of gold candidates: short one-line answers that cannot be guessed first, then
    the rest by the length of their answer."""
    answer = str(sample.get("answer") or "").strip()
    short = (0 < len(answer) <= GOLD_SHORT_ANSWER_CHARS and "\n" not in answer
             and answer.lower() not in _GUESSABLE_ANSWERS)
    return (0 if short else 1, len(answer))


def gold_draw(samples: Sequence[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` gold items of ``samples`` (which exclude the study's own items), spread over strata.

    Gold items check care, not skill, so they should be items that a careful person answers
    right and that the scores judge without doubt. The preferred ones have a short answer on
    one line (at most :data:`GOLD_SHORT_ANSWER_CHARS` characters): ROUGE-L on such an answer
    is close to exact match, so a miss means a wrong answer, not a disagreement about how much
    of a long answer to copy. Answers a guess gets right half the time (``True``, ``no``,
    ``0``) are not preferred. The draw is stratified over the shortest ``max(3n, n)``
    candidates, so gold items are not all from one task, and deterministic for (samples, n, seed).
    """
    if n == 0:
        return []
    if n > len(samples):
        raise StudyError(f"Not enough samples left for {n} gold items after the study's questions "
                         f"({len(samples)} left): ask for fewer.")
    ranked = sorted(samples, key=lambda s: (*_gold_rank(s), s["id"]))
    pool = ranked[:max(3 * n, n)]
    return draws.stratified_draw(pool, n, stratum=stratum, seed=f"structext-study-gold|{seed}|{n}",
                                 allocation=draws.EVEN, order=lambda key: tuple(str(part) for part in key))


def _size(sample: dict) -> int:
    return len(sample["reference"]) + len(str(sample.get("answer") or ""))


def practice_draw(samples: Sequence[dict], n: int, seed: int = 0) -> list[dict]:
    """``n`` practice items of ``samples`` (which exclude the study's and the gold items),
    spread evenly over strata so a short practice round shows several formats and tasks.

    Practice is a warm-up, so only modest samples are drawn: reference at most
    :data:`PRACTICE_MAX_REFERENCE_CHARS` and answer at most :data:`PRACTICE_MAX_ANSWER_CHARS`
    characters. When fewer than ``n`` are that small, the draw is over the ``3n`` smallest."""
    if n == 0:
        return []
    if n > len(samples):
        raise StudyError(f"Not enough samples left for {n} practice items after the study's questions "
                         f"({len(samples)} left): ask for fewer.")
    pool = [s for s in samples if len(s["reference"]) <= PRACTICE_MAX_REFERENCE_CHARS
            and len(str(s.get("answer") or "")) <= PRACTICE_MAX_ANSWER_CHARS]
    if len(pool) < n:
        pool = sorted(samples, key=lambda s: (_size(s), s["id"]))[:3 * n]
    return draws.stratified_draw(pool, n, stratum=stratum, seed=f"structext-study-practice|{seed}|{n}",
                                 allocation=draws.EVEN, order=lambda key: tuple(str(part) for part in key))


def _elsewhere(db: sqlite_utils.Database, suite: str, kinds: Sequence[str]) -> list[dict]:
    """The items of ``kinds`` of every study over ``suite``, as ``{id, reference}``."""
    marks = ", ".join("?" for _ in kinds)
    rows = db.execute(
        "SELECT DISTINCT i.sample_id, json_extract(i.sample_json, '$.reference') FROM study_items i"
        f" JOIN studies s ON s.id = i.study_id WHERE s.suite = ? AND i.kind IN ({marks})", [suite, *kinds],
    ).fetchall()
    return [{"id": row[0], "reference": row[1]} for row in rows]


def _avoiding(samples: Sequence[dict], avoid: Sequence[Sequence[dict]], n: int) -> list[dict]:
    """``samples`` without those of the first of the ``avoid`` lists (by id or reference) that
    leaves at least ``n``; ``samples`` as they are when none does (the seal still withholds
    keys then, see :mod:`structext_core.studio.seal`)."""
    for items in avoid:
        left = _rest(samples, items)
        if len(left) >= n:
            return left
    return list(samples)


def _swap_out(samples: Sequence[dict], drawn: list[dict], avoid: Sequence[dict], seed: int) -> list[dict]:
    """``drawn`` with each item of ``avoid`` (by id or reference) replaced by a sample of the
    same stratum that is neither drawn nor avoided, where there is one (chosen at random,
    deterministically); the draw is unchanged when it holds no such item."""
    if not avoid:
        return drawn
    ids, references = {s["id"] for s in avoid}, {s["reference"] for s in avoid}
    hit = [d for d in drawn if d["id"] in ids or d["reference"] in references]
    if not hit:
        return drawn
    taken_ids, taken_refs = {d["id"] for d in drawn}, {d["reference"] for d in drawn}
    spare: dict[tuple, list[dict]] = {}
    for s in sorted(samples, key=lambda s: s["id"]):
        if not (s["id"] in ids or s["reference"] in references or s["id"] in taken_ids
                or s["reference"] in taken_refs):
            spare.setdefault(stratum(s), []).append(s)
    rng = random.Random(f"structext-study-swap|{seed}")
    out = []
    for d in drawn:
        pool = spare.get(stratum(d)) if d in hit else None
        if pool:
            out.append(pool.pop(rng.randrange(len(pool))))
        else:
            out.append(d)
    return out


def annotator_order(item_ids: Sequence[int], seed: int, study_id: int, user_id: int) -> list[int]:
    """This annotator's own shuffled order of the study's items (deterministic)."""
    order = list(item_ids)
    random.Random(f"structext-study-order|{seed}|{study_id}|{user_id}").shuffle(order)
    return order


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
    if seen := seal.seen_keys(db, annotator_ids):
        kept = [sample for sample in samples if not seen.covers(sample)]
        if len(kept) < len(samples):
            pool_name = (f"the suite without the {plural(len(samples) - len(kept), 'sample')} whose answers "
                         "the annotators have seen")
        samples = kept
    drawn = stratified_draw(samples, int(n_items), seed, pool_name=pool_name)
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
        [(_structext_item_row(sample), kind) for samples_of_kind, kind in
         ((drawn, "study"), (gold, "gold"), (practice, "practice")) for sample in samples_of_kind],
        annotator_ids,
    )


def _structext_item_row(sample: dict) -> dict:
    """The ``study_items`` columns of a StrucText sample."""
    return {"sample_id": sample["id"], "strata": {key: sample[key] for key in _STRUCTEXT_STRATA},
            "reference_chars": len(sample["reference"]), "sample_json": json.dumps(sample, ensure_ascii=False)}


def insert_study(db: sqlite_utils.Database, study: dict, items: Sequence[tuple[dict, str]],
                 annotator_ids: Sequence[int]) -> int:
    """Write a drawn study in one transaction: the ``studies`` row (``study``: its columns but
    ``n_items``, ``practice_items``, ``gold_items`` and ``created_at``, counted here), its items
    in order (``(study_items columns, kind)``: counted ``study``, ``gold``, ``practice``) and each
    annotator with an own order. Every benchmark's study is written here. Returns its id.

    An item's ``strata`` (a mapping) are checked against those its study's benchmark declares
    (:func:`structext_core.protocol.check_strata`) and stored as JSON; a :class:`StudyError`
    names the item and the field otherwise, and nothing is written. The benchmark's name is
    checked against the registry (the schema lists no benchmark)."""
    created = now()
    count = Counter(kind for _row, kind in items)
    row = {**study, "n_items": count["study"], "practice_items": count["practice"], "gold_items": count["gold"],
           "created_at": created}
    with write_transaction(db):
        study_id = db.execute(
            f"INSERT INTO studies ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values()),
        ).lastrowid
        benchmark = db.execute("SELECT benchmark FROM studies WHERE id = ?", [study_id]).fetchone()[0]
        if benchmark not in protocol.names():
            raise StudyError(f"There is no benchmark {benchmark!r}; the benchmarks are {', '.join(protocol.names())}.")
        for position, (item, kind) in enumerate(items, 1):
            try:
                strata = protocol.check_strata(benchmark, item.get("strata", {}))
            except ValueError as error:
                raise StudyError(f"Study item {position} ({item.get('sample_id')}): {error}.") from None
            columns = {"study_id": study_id, "position": position, **item, "kind": kind,
                       "strata": json.dumps(strata, ensure_ascii=False, separators=(",", ":"))}
            db.execute(f"INSERT INTO study_items ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                       list(columns.values()))
        for user_id in dict.fromkeys(annotator_ids):
            _assign(db, study_id, study["seed"], user_id, created)
    return study_id


def _check_quality_setup(practice_items: int, gold_items: int, gold_pass: float,
                         n_items: int) -> tuple[int, int, float]:
    """The numbers of practice and gold items and the gold pass mark, checked."""
    practice_items, gold_items, gold_pass = int(practice_items), int(gold_items), float(gold_pass)
    if not 0 <= practice_items <= MAX_PRACTICE_ITEMS:
        raise StudyError(f"Practice items must be between 0 and {MAX_PRACTICE_ITEMS}, got {practice_items}.")
    if not 0 <= gold_items <= int(n_items):
        raise StudyError(f"Gold items must be between 0 and the number of questions ({int(n_items):,}), "
                         f"got {gold_items:,}.")
    if not 0.0 <= gold_pass <= 1.0:
        raise StudyError(f"The gold pass mark must be between 0 and 100 %, got {gold_pass:.0%}.")
    return practice_items, gold_items, gold_pass


def validate_setup(
    db: sqlite_utils.Database, name: str, rule_text: str, annotator_ids: Sequence[int]
) -> tuple[str, str]:
    """Check a study's name, rule and annotators before anything is loaded or written;
    return the cleaned name and rule. Raises :class:`StudyError` saying what to fix."""
    name = (name or "").strip()
    if not name:
        raise StudyError("Study name is empty: give the study a name, e.g. 'pilot-1'.")
    rule_text = (rule_text or "").strip()
    if not rule_text:
        raise StudyError("The study rule is empty: write what annotators may and may not use.")
    try:
        limits.check_name("study name", name)
        limits.check_length("study rule", rule_text, "MAX_NOTE_CHARS")
    except limits.LimitError as exc:
        raise StudyError(str(exc)) from None
    if not annotator_ids:
        raise StudyError("No annotators chosen: pick at least one annotator for the study.")
    if db.execute("SELECT 1 FROM studies WHERE name = ? COLLATE NOCASE", [name]).fetchone():
        raise StudyError(f"A study named {name!r} already exists: choose another name.")
    _check_annotators(db, annotator_ids)
    return name, rule_text


def available_suites(directory: str | Path) -> list[str]:
    """Suites a study can draw from: Test-Hard and Test (generated on first use), then
    every other ``<name>.jsonl`` in the suites folder."""
    stored = (path.stem for path in suites.suite_files(directory))
    return [*BUILT_IN_SUITES, *(name for name in stored if name not in BUILT_IN_SUITES)]


def _check_annotators(db: sqlite_utils.Database, user_ids: Iterable[int]) -> None:
    for user_id in user_ids:
        row = db.execute("SELECT username, role FROM users WHERE id = ?", [user_id]).fetchone()
        if row is None:
            raise StudyError(f"There is no account with id {user_id}.")
        if row[1] != "annotator":
            raise StudyError(
                f"{row[0]!r} is an {row[1]}, not an annotator: admins see the answers, so they "
                "cannot take part blind. Create an annotator account for them."
            )
        status = accounts.account_status(db, user_id)
        if status != "active":
            raise StudyError(f"{row[0]!r} is a {status} account: it cannot take part in a study.")


def _assign(db: sqlite_utils.Database, study_id: int, seed: int, user_id: int, at: float) -> None:
    """Inside a write transaction: add the annotator and their shuffled item order."""
    db.execute(
        "INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (?, ?, ?)",
        [study_id, user_id, at],
    )
    items = db.execute("SELECT id, kind FROM study_items WHERE study_id = ? ORDER BY position", [study_id]).fetchall()
    # Practice first; gold mixed among the study's items at random places of this annotator's order.
    practice = [item_id for item_id, kind in items if kind == "practice"]
    counted_and_gold = [item_id for item_id, kind in items if kind != "practice"]
    order = [*annotator_order(practice, seed, study_id, user_id),
             *annotator_order(counted_and_gold, seed, study_id, user_id)]
    for seq, item_id in enumerate(order, 1):
        db.execute(
            "INSERT INTO assignments (study_id, user_id, item_id, seq) VALUES (?, ?, ?, ?)",
            [study_id, user_id, item_id, seq],
        )


def add_annotator(db: sqlite_utils.Database, study_id: int, user_id: int, *, by_user: int | None = None) -> None:
    """Add an annotator to an existing study with an own shuffled order of all its items."""
    study = get_study(db, study_id)
    _check_annotators(db, [user_id])
    taken = db.execute(
        "SELECT removed_at FROM study_annotators WHERE study_id = ? AND user_id = ?", [study_id, user_id]
    ).fetchone()
    if taken and taken[0] is not None:
        raise StudyError("That annotator was removed from this study: their answers are kept as removed, "
                         "and they cannot join it again.")
    if taken:
        raise StudyError("That annotator already takes part in this study.")
    with write_transaction(db):
        # Checked in the transaction that adds them: nothing is written when it refuses.
        if (why := seal.seen_refusal(db, study_id, user_id)) is not None:
            raise StudyError(why)
        _assign(db, study_id, study.seed, user_id, now())
        changes.record(db, by_user, "study.add_annotator", f"study:{study_id}", user_id=user_id)


def annotator_names(db: sqlite_utils.Database, study_id: int) -> list[str]:
    """User names of the study's annotators, sorted."""
    return [row[0] for row in db.execute(
        "SELECT u.username FROM study_annotators sa JOIN users u ON u.id = sa.user_id"
        " WHERE sa.study_id = ? ORDER BY u.username COLLATE NOCASE", [study_id],
    )]


@dataclass(frozen=True)
class QuestionCounts:
    """How many questions a study asks, the one source of every page's figures: ``counted`` (the
    baseline's own), ``gold`` (mixed in; to an annotator they are questions like the others) and
    ``practice`` (answered first, with feedback; not counted). With 4 counted, 1 gold and 1
    practice, an annotator is told of 5 questions and a practice one, and answers 6 in all."""

    counted: int
    gold: int = 0
    practice: int = 0

    @property
    def asked(self) -> int:
        """The study's questions as its annotators see them: counted and gold."""
        return self.counted + self.gold

    @property
    def total(self) -> int:
        """Every question an annotator answers, practice included."""
        return self.asked + self.practice

    @property
    def for_annotator(self) -> str:
        """"5 study questions" (gold not told apart)."""
        return plural(self.asked, "study question")

    @property
    def breakdown(self) -> str:
        """For the lead: "5 study questions (4 counted + 1 gold) and 1 practice question first"."""
        text = plural(self.asked, "study question")
        if self.gold:
            text += f" ({self.counted:,} counted + {self.gold:,} gold)"
        if self.practice:
            text += f" and {plural(self.practice, 'practice question')} first"
        return text


def progress_words(done: int, asked: int, practice_done: int = 0, practice: int = 0,
                   gold_done: int | None = None, gold: int = 0) -> str:
    """One person's progress in the words every page uses (sidebar, study chooser, Home, the
    lead's table): "5 of 11 study questions answered · practice 1 of 1". *Study questions* are the
    counted and gold ones (an annotator cannot tell gold apart); practice comes apart. For a lead,
    ``gold_done`` adds how many of them were gold: "(gold 1 of 1 among them)". What the dashboard
    and Results count, *counted answers*, are the study questions answered less the gold."""
    text = f"{done:,} of {plural(asked, 'study question')} answered"
    if gold and gold_done is not None:
        text += f" (gold {gold_done:,} of {gold:,} among them)"
    if practice:
        text += f" · practice {practice_done:,} of {practice:,}"
    return text


@dataclass(frozen=True)
class Study:
    """A study as the lead's pages list it: its row in ``studies`` and its number of annotators."""

    id: int
    name: str
    suite: str
    n_items: int
    seed: int
    rule_text: str
    show_correctness: bool
    status: str
    #: Human results reach the Results page only once the study is closed.
    results_when_closed: bool
    created_by: int | None
    created_at: float
    n_annotators: int
    #: Practice items (answered first, with feedback) and gold items (mixed in); neither is
    #: counted in ``n_items`` or in the baseline. An annotator below ``gold_pass`` (a share
    #: of 0 to 1) on gold is flagged for the lead (:func:`~structext_core.studio.study.gold_report`).
    practice_items: int = 0
    gold_items: int = 0
    gold_pass: float = DEFAULT_GOLD_PASS
    #: When the study was archived (None: not archived). An archived study is hidden from its
    #: annotators and from the default chooser, takes no answers, and is kept whole.
    archived_at: float | None = None
    #: The benchmark (:mod:`structext_core.studio.study.kinds`); an AIBench study's ``suite`` is
    #: the name of its stored data set.
    benchmark: str = "structext-eval"

    @property
    def archived(self) -> bool:
        """True while the study is archived."""
        return self.archived_at is not None

    @classmethod
    def from_row(cls, row: dict) -> Study:
        """The record of a ``studies`` row (with ``n_annotators``); flags become booleans."""
        values = {field.name: row[field.name] for field in fields(cls)}
        return cls(**{**values, "show_correctness": bool(values["show_correctness"]),
                      "results_when_closed": bool(values["results_when_closed"])})

    @property
    def counts(self) -> QuestionCounts:
        """Its questions: ``n_items`` counted, the gold and the practice ones."""
        return QuestionCounts(self.n_items, self.gold_items, self.practice_items)

    @property
    def label(self) -> str:
        """One line naming the study for a chooser: name, suite, size, annotators, status."""
        data = kinds.kind_of(self.benchmark).source_label.format(suite=self.suite)
        return (f"{self.name} · {data} · {self.counts.breakdown} · "
                f"{plural(self.n_annotators, 'annotator')} · {self.status}" + (" · archived" if self.archived else ""))


_STUDY_SQL = """
    SELECT s.*, (SELECT COUNT(*) FROM study_annotators a
                  WHERE a.study_id = s.id AND a.removed_at IS NULL) AS n_annotators
    FROM studies s
"""


def get_study(db: sqlite_utils.Database, study_id: int) -> Study:
    """The study with that id; :class:`StudyError` when there is none."""
    rows = list(db.query(f"{_STUDY_SQL} WHERE s.id = ?", [study_id]))
    if not rows:
        raise StudyError(f"There is no study with id {study_id}.")
    return Study.from_row(rows[0])


def list_studies(db: sqlite_utils.Database, *, include_archived: bool = True) -> list[Study]:
    """Studies, newest first, with the number of annotators (removed ones not counted); the
    archived ones too unless ``include_archived`` is off (the lead's day-to-day chooser)."""
    where = "" if include_archived else "WHERE s.archived_at IS NULL"
    return [Study.from_row(row) for row in db.query(f"{_STUDY_SQL} {where} ORDER BY s.created_at DESC, s.id DESC")]


def set_study_status(db: sqlite_utils.Database, study_id: int, status: str, *, by_user: int | None = None) -> None:
    """Open or close a study (annotators cannot answer in a closed study)."""
    if status not in ("open", "closed"):
        raise StudyError(f"Study status must be 'open' or 'closed', got {status!r}.")
    get_study(db, study_id)
    with write_transaction(db):
        db.execute("UPDATE studies SET status = ? WHERE id = ?", [status, study_id])
        changes.record(db, by_user, f"study.{'open' if status == 'open' else 'close'}", f"study:{study_id}")


@dataclass(frozen=True)
class AnnotatorStudy:
    """An open study as its annotator sees it: the rule, the size and how far they are."""

    id: int
    name: str
    rule_text: str
    show_correctness: bool
    #: Every question this annotator answers, practice ones included.
    n_items: int
    #: When the annotator accepted the study rule (None: not yet).
    rule_accepted_at: float | None
    answered: int
    #: Of ``n_items``, the practice questions that come first.
    practice_items: int = 0
    benchmark: str = "structext-eval"
    #: Of ``answered``, the practice questions.
    practice_answered: int = 0

    @property
    def counts(self) -> QuestionCounts:
        """Its questions as this annotator may know them: gold ones are not told apart (all in
        ``counted``), practice ones are."""
        return QuestionCounts(self.n_items - self.practice_items, 0, self.practice_items)

    @property
    def finished(self) -> bool:
        """True when the annotator has answered (or given up on) every question."""
        return self.answered >= self.n_items

    @property
    def progress_words(self) -> str:
        """"5 of 11 study questions answered · practice 1 of 1" (:func:`progress_words`)."""
        return progress_words(self.answered - self.practice_answered, self.n_items - self.practice_items,
                              self.practice_answered, self.practice_items)

    @property
    def label(self) -> str:
        """The study's name and progress, for a chooser."""
        return f"{self.name} · {self.progress_words}"


def practice_items(study: str) -> str:
    """SQL: the ids of the practice items of the study that ``study`` names (a column or a
    parameter). It reads the index ``study_items_by_kind`` alone: an item's row holds its whole
    sample before ``kind`` (migration 13), so a join that reads ``kind`` from the rows walks
    every sample."""
    return f"SELECT id FROM study_items WHERE study_id = {study} AND kind = 'practice'"


def studies_for_annotator(db: sqlite_utils.Database, user_id: int) -> list[AnnotatorStudy]:
    """Open studies this annotator takes part in, with their progress, oldest first (not the
    archived ones, nor those they were removed from)."""
    rows = db.query(
        f"""
        SELECT s.id, s.name, s.rule_text, s.show_correctness, s.benchmark,
               (SELECT COUNT(*) FROM assignments a
                 WHERE a.study_id = s.id AND a.user_id = sa.user_id) AS n_items,
               sa.rule_accepted_at,
               (SELECT COUNT(*) FROM assignments a
                 WHERE a.study_id = s.id AND a.user_id = sa.user_id
                   AND a.item_id IN ({practice_items("s.id")})) AS practice_items,
               (SELECT COUNT(*) FROM responses r
                 WHERE r.study_id = s.id AND r.user_id = sa.user_id) AS answered,
               (SELECT COUNT(*) FROM responses r JOIN assignments a ON a.id = r.assignment_id
                 WHERE r.study_id = s.id AND r.user_id = sa.user_id
                   AND a.item_id IN ({practice_items("s.id")})) AS practice_answered
        FROM studies s JOIN study_annotators sa ON sa.study_id = s.id
        WHERE sa.user_id = ? AND s.status = 'open' AND s.archived_at IS NULL AND sa.removed_at IS NULL
        ORDER BY s.created_at, s.id
        """,
        [user_id],
    )
    return [AnnotatorStudy(**{**row, "show_correctness": bool(row["show_correctness"])}) for row in rows]


def first_unfinished(studies: Sequence[AnnotatorStudy]) -> int:
    """Index of the first study the annotator has not finished (0 when all are finished)."""
    return next((index for index, item in enumerate(studies) if not item.finished), 0)


# ---------------------------------------------------------------- lifecycle: rename, archive, clone, members
#
# Each change is one write transaction that re-reads what it checks, and writes its record in
# the audit log (structext_core.studio.changes) in the same transaction.


def _check_new_name(db: sqlite_utils.Database, name: str, keep_id: int | None = None) -> str:
    """The cleaned study name, or :class:`StudyError` (empty, too long, taken by another study)."""
    name = (name or "").strip()
    if not name:
        raise StudyError("Study name is empty: give the study a name, e.g. 'pilot-1'.")
    try:
        limits.check_name("study name", name)
    except limits.LimitError as exc:
        raise StudyError(str(exc)) from None
    if db.execute("SELECT 1 FROM studies WHERE name = ? COLLATE NOCASE AND id IS NOT ?", [name, keep_id]).fetchone():
        raise StudyError(f"A study named {name!r} already exists: choose another name.")
    return name


def rename_study(db: sqlite_utils.Database, study_id: int, name: str, *, by_user: int | None) -> str:
    """Give a study a new name (unique, any case); returns the name as stored."""
    with write_transaction(db):
        old = get_study(db, study_id).name
        name = _check_new_name(db, name, keep_id=study_id)
        if name == old:
            raise StudyError(f"The study is called {name!r} already: type another name.")
        try:
            db.execute("UPDATE studies SET name = ? WHERE id = ?", [name, study_id])
        except sqlite3.IntegrityError:  # the unique index, should the check above ever miss
            raise StudyError(f"A study named {name!r} already exists: choose another name.") from None
        changes.record(db, by_user, "study.rename", f"study:{study_id}", old=old, new=name)
    return name


def set_study_archived(db: sqlite_utils.Database, study_id: int, archived: bool, *, by_user: int | None) -> None:
    """Archive a study (hidden from its annotators and from the default chooser, closed for
    answering, kept whole: answers, export and Results are unchanged) or bring it back."""
    with write_transaction(db):
        study = get_study(db, study_id)
        if study.archived == archived:
            raise StudyError(f"Study {study.name!r} is {'archived' if archived else 'not archived'} already.")
        db.execute("UPDATE studies SET archived_at = ? WHERE id = ?", [now() if archived else None, study_id])
        changes.record(db, by_user, "study.archive" if archived else "study.unarchive", f"study:{study_id}")


def clone_study(
    db: sqlite_utils.Database, study_id: int, *, name: str, annotator_ids: Sequence[int] = (),
    by_user: int | None,
) -> int:
    """A new open study with the same suite, settings, rule and items (practice and gold
    included, same positions) as ``study_id``, under a new ``name``; no answers, and only the
    annotators chosen here (none is fine: add them later), each with an own new order.
    Returns its id."""
    with write_transaction(db):
        source = get_study(db, study_id)
        name = _check_new_name(db, name)
        _check_annotators(db, annotator_ids)
        created = now()
        new_id = db.execute(
            "INSERT INTO studies (name, suite, n_items, seed, rule_text, show_correctness, status,"
            " created_by, created_at, results_when_closed, practice_items, gold_items, gold_pass, benchmark)"
            " SELECT ?, suite, n_items, seed, rule_text, show_correctness, 'open', ?, ?,"
            " results_when_closed, practice_items, gold_items, gold_pass, benchmark FROM studies WHERE id = ?",
            [name, by_user, created, study_id],
        ).lastrowid
        db.execute(
            "INSERT INTO study_items (study_id, position, sample_id, strata, reference_chars, sample_json, kind)"
            " SELECT ?, position, sample_id, strata, reference_chars, sample_json, kind FROM study_items"
            " WHERE study_id = ?"
            " ORDER BY position",
            [new_id, study_id],
        )
        for user_id in dict.fromkeys(annotator_ids):
            _assign(db, new_id, source.seed, user_id, created)
        changes.record(db, by_user, "study.clone", f"study:{new_id}", source=study_id,
                       annotators=list(dict.fromkeys(annotator_ids)))
    return new_id


@dataclass(frozen=True)
class StudyMember:
    """An annotator of a study, as the lead manages them: still taking part or removed."""

    user_id: int
    username: str
    added_at: float
    #: When they were removed from the study (None: taking part), and who took their place.
    removed_at: float | None
    replaced_by: str | None
    answered: int
    total: int
    #: Of ``answered`` and ``total``: the practice questions, and the gold ones.
    practice_answered: int = 0
    practice: int = 0
    gold_answered: int = 0
    gold: int = 0

    @property
    def progress_words(self) -> str:
        """The lead's words for their progress: "5 of 11 study questions answered (gold 1 of 1
        among them) · practice 1 of 1" (:func:`progress_words`)."""
        return progress_words(self.answered - self.practice_answered, self.total - self.practice,
                              self.practice_answered, self.practice, self.gold_answered, self.gold)

    @property
    def removed(self) -> bool:
        """True once the annotator was removed from the study."""
        return self.removed_at is not None

    @property
    def status(self) -> str:
        """``taking part``, ``removed`` or ``removed, replaced by <name>``."""
        if not self.removed:
            return "taking part"
        return f"removed, replaced by {self.replaced_by}" if self.replaced_by else "removed"


def study_members(db: sqlite_utils.Database, study_id: int) -> list[StudyMember]:
    """Everyone who takes or took part in the study, by name, with their answers so far."""
    rows = db.query(
        """
        SELECT sa.user_id, u.username, sa.added_at, sa.removed_at, r.username AS replaced_by,
               (SELECT COUNT(*) FROM responses x WHERE x.study_id = sa.study_id AND x.user_id = sa.user_id)
                 AS answered,
               (SELECT COUNT(*) FROM assignments a WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id)
                 AS total,
               (SELECT COUNT(r.id) FROM assignments a JOIN study_items i ON i.id = a.item_id
                  LEFT JOIN responses r ON r.assignment_id = a.id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'practice')
                 AS practice_answered,
               (SELECT COUNT(*) FROM assignments a JOIN study_items i ON i.id = a.item_id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'practice') AS practice,
               (SELECT COUNT(r.id) FROM assignments a JOIN study_items i ON i.id = a.item_id
                  LEFT JOIN responses r ON r.assignment_id = a.id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'gold') AS gold_answered,
               (SELECT COUNT(*) FROM assignments a JOIN study_items i ON i.id = a.item_id
                 WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id AND i.kind = 'gold') AS gold
        FROM study_annotators sa JOIN users u ON u.id = sa.user_id
        LEFT JOIN users r ON r.id = sa.replaced_by
        WHERE sa.study_id = ? ORDER BY u.username COLLATE NOCASE
        """,
        [study_id],
    )
    return [StudyMember(**row) for row in rows]


def _member_to_remove(db: sqlite_utils.Database, study_id: int, user_id: int) -> str:
    row = db.execute(
        "SELECT u.username, sa.removed_at FROM study_annotators sa JOIN users u ON u.id = sa.user_id"
        " WHERE sa.study_id = ? AND sa.user_id = ?", [study_id, user_id],
    ).fetchone()
    if row is None:
        raise StudyError("That account does not take part in this study.")
    if row[1] is not None:
        raise StudyError(f"{row[0]!r} was removed from this study already.")
    return row[0]


def remove_annotator(db: sqlite_utils.Database, study_id: int, user_id: int, *, by_user: int | None) -> int:
    """Take an annotator off a study: they no longer see it or answer in it; their answers so
    far are kept (dashboard, Results, and the export, marked ``annotator_removed``). Returns
    how many answers they keep."""
    with write_transaction(db):
        get_study(db, study_id)
        _member_to_remove(db, study_id, user_id)
        answered = _remove(db, study_id, user_id, None)
        changes.record(db, by_user, "study.remove_annotator", f"study:{study_id}", user_id=user_id,
                       answers_kept=answered)
    return answered


def replace_annotator(
    db: sqlite_utils.Database, study_id: int, user_id: int, replacement_id: int, *, by_user: int | None
) -> int:
    """Remove an annotator (as :func:`remove_annotator`) and give ``replacement_id`` the same
    questions in the same order as they had (practice first, as for everyone). The removed
    person's answers stay theirs; the replacement answers every question afresh, so the
    study keeps a full set of answers per person. Returns how many questions the replacement got."""
    with write_transaction(db):
        get_study(db, study_id)
        _member_to_remove(db, study_id, user_id)
        _check_annotators(db, [replacement_id])
        there = db.execute("SELECT removed_at FROM study_annotators WHERE study_id = ? AND user_id = ?",
                           [study_id, replacement_id]).fetchone()
        if there is not None:
            raise StudyError("The replacement already takes part in this study." if there[0] is None else
                             "The replacement was removed from this study before: choose someone else.")
        answered = _remove(db, study_id, user_id, replacement_id)
        db.execute("INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (?, ?, ?)",
                   [study_id, replacement_id, now()])
        given = db.execute(
            "INSERT INTO assignments (study_id, user_id, item_id, seq)"
            " SELECT study_id, ?, item_id, seq FROM assignments WHERE study_id = ? AND user_id = ? ORDER BY seq",
            [replacement_id, study_id, user_id],
        ).rowcount
        changes.record(db, by_user, "study.replace_annotator", f"study:{study_id}", user_id=user_id,
                       replacement_id=replacement_id, answers_kept=answered, questions_given=given)
    return given


def _remove(db: sqlite_utils.Database, study_id: int, user_id: int, replacement_id: int | None) -> int:
    """Inside a write transaction: mark the membership removed (its tab loses the question)."""
    db.execute(
        "UPDATE study_annotators SET removed_at = ?, replaced_by = ?, active_tab = NULL"
        " WHERE study_id = ? AND user_id = ?", [now(), replacement_id, study_id, user_id],
    )
    return db.execute("SELECT COUNT(*) FROM responses WHERE study_id = ? AND user_id = ?",
                      [study_id, user_id]).fetchone()[0]
