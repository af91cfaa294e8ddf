"""Studies: setup, the draw, annotators and their order, status; the typed rows the pages read
(:class:`Study`, :class:`AnnotatorStudy`). Renaming, archiving, cloning and the members of a study
once it runs: :mod:`structext_core.studio.study.lifecycle`."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import sqlite_utils

from structext_core import protocol
from structext_core.studio import accounts, changes, seal
from structext_core.studio.errors import StudyError  # noqa: F401 (the study package's error)
from structext_core.studio.storage import write_transaction
from structext_core.studio.study import kinds, leads
from structext_core.text import limits
from structext_core.text.words import plural

#: The score from which an answer counts as right (the result schema's default threshold, kept
#: equal to it by a test).
PASS_THRESHOLD = 0.75
MAX_RESPONSE_CHARS = 200_000
#: Default thresholds for "implausibly fast" answers (see :func:`flag_fast`).
FAST_MIN_SECONDS = 5.0
FAST_FRACTION_OF_MEDIAN = 0.25
#: Most practice items a study may have (they come before every annotator's first question).
MAX_PRACTICE_ITEMS = 20
DEFAULT_GOLD_PASS = 0.5


class StaleQuestionError(StudyError):
    """The item was already answered (double click, second tab) or is not open."""


def now() -> float:
    """Server time in seconds since the epoch: the only clock studies use."""
    return time.time()


# ---------------------------------------------------------------- setup


def annotator_order(item_ids: Sequence[int], seed: int, study_id: int, user_id: int) -> list[int]:
    """This annotator's own shuffled order of the study's items (deterministic)."""
    order = list(item_ids)
    random.Random(f"structext-study-order|{seed}|{study_id}|{user_id}").shuffle(order)
    return order


def insert_study(db: sqlite_utils.Database, study: dict, items: Sequence[tuple[dict, str]],
                 annotator_ids: Sequence[int]) -> int:
    """Write a drawn study in one transaction: the ``studies`` row (``study``: its columns but
    ``n_items``, ``practice_items``, ``gold_items`` and ``created_at``, counted here), its items
    in order (``(study_items columns, kind)``: counted ``study``, ``gold``, ``practice``) and each
    annotator with their own order. Every benchmark's study is written here. Returns its id.

    An item's ``strata`` (a mapping) are checked against those its study's benchmark declares
    (:func:`structext_core.protocol.check_strata`) and stored as JSON; a :class:`StudyError`
    names the item and the field otherwise, and nothing is written. The benchmark's name is
    checked against the registry (the schema lists no benchmark). A study set up by a lead
    (``created_by``) is led by them (:mod:`structext_core.studio.study.leads`); one set up by someone
    who runs no studies is refused."""
    leads.check_sets_up(db, study.get("created_by"))
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
        leads.add_creator(db, study_id, study.get("created_by"), created)
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
    # No annotator yet is allowed: a crowd's people arrive by a study link, a lab's by CSV or one by one later.
    if db.execute("SELECT 1 FROM studies WHERE name = ? COLLATE NOCASE", [name]).fetchone():
        raise StudyError(f"A study named {name!r} already exists: choose another name.")
    _check_annotators(db, annotator_ids)
    return name, rule_text


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
    """Inside a write transaction: add the annotator and their shuffled item order (in a study that
    deals k people per item, their practice and gold questions: the counted ones are dealt one at a
    time, :mod:`structext_core.studio.crowd.dealing`)."""
    db.execute(
        "INSERT INTO study_annotators (study_id, user_id, added_at) VALUES (?, ?, ?)",
        [study_id, user_id, at],
    )
    from structext_core.studio.crowd import dealing  # it reads this module

    if (found := dealing.places(db, study_id)) is not None:
        dealing.layout(db, study_id, seed, user_id, found)
        return
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
    """Add an annotator to an existing study with their own shuffled order of all its items (``by_user``:
    an admin or a lead of the study; None: the workbench itself, e.g. an enrolment by a study link)."""
    study = get_study(db, study_id)
    leads.check_runs(db, by_user, study_id, "add an annotator")
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

    def progress_terms(self, name: str) -> str:
        """For the lead's progress figures: what study ``name`` asks each annotator and what those figures and the
        baseline count. "pilot asks each annotator 5 study questions (4 counted + 1 gold) and 1 practice question
        first. Progress counts the 5 study questions (gold included, practice apart); the baseline counts the 4
        counted ones." With neither gold nor practice, one sentence."""
        said = f"{name} asks each annotator {self.breakdown}."
        if not self.gold and not self.practice:
            return said[:-1] + (", all counted in the baseline." if self.asked > 1 else ", counted in the baseline.")
        apart = "gold included, practice apart" if self.gold and self.practice else (
            "gold included" if self.gold else "practice apart")
        counted = (f"the {self.counted:,} counted ones" if self.gold else
                   "them all" if self.counted > 1 else "it")
        return (f"{said} Progress counts the {plural(self.asked, 'study question')} ({apart}); "
                f"the baseline counts {counted}.")


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
    #: The benchmark (:mod:`structext_core.studio.study.kinds`); ``suite`` is the name of the data
    #: set its items were drawn from.
    benchmark: str = ""

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
    """Open or close a study (annotators cannot answer in a closed study); by an admin or a lead of it."""
    if status not in ("open", "closed"):
        raise StudyError(f"Study status must be 'open' or 'closed', got {status!r}.")
    get_study(db, study_id)
    leads.check_runs(db, by_user, study_id, "close or reopen the study")
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
    benchmark: str = ""
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
    from structext_core.studio.crowd import dealing  # it reads this module

    out = []
    for row in rows:
        # A study that deals k per item: the questions still to be dealt to them count too.
        if (plan := dealing.plan(db, row["id"], user_id)) is not None:
            row["n_items"] += plan.counted_left
        out.append(AnnotatorStudy(**{**row, "show_correctness": bool(row["show_correctness"])}))
    return out


def has_open_study(db: sqlite_utils.Database, user: dict) -> bool:
    """Whether ``user`` takes part in a study :func:`studies_for_annotator` lists (the navigation lists the
    question page only then)."""
    return db.execute(
        "SELECT 1 FROM studies s JOIN study_annotators sa ON sa.study_id = s.id WHERE sa.user_id = ?"
        " AND s.status = 'open' AND s.archived_at IS NULL AND sa.removed_at IS NULL LIMIT 1", [user["id"]]
    ).fetchone() is not None


def first_unfinished(studies: Sequence[AnnotatorStudy]) -> int:
    """Index of the first study the annotator has not finished (0 when all are finished)."""
    return next((index for index, item in enumerate(studies) if not item.finished), 0)


def seal_view(row) -> dict:
    """What the seal reads of a study item (:func:`structext_core.studio.seal.key_withheld`): its
    strata, id, data set, reference, question and options, from a row with the columns
    ``strata``, ``sample_id``, ``suite``, ``reference``, ``question`` and ``options`` (JSON), and the
    stored item (``sample_json``) when the row has it (a benchmark's part may compare more of it)."""
    view = {**json.loads(row["strata"] or "{}"), "id": row["sample_id"], "reference": row["reference"],
            "suite": row["suite"], "question": row["question"],
            "options": json.loads(row["options"]) if row["options"] else []}
    if "sample_json" in row.keys() and row["sample_json"]:  # the stored item whole, for a part that reads more
        view["sample_json"] = row["sample_json"]
    return view
