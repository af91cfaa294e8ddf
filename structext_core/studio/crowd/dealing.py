"""Places that fill (issue 45): k people answer each item, dealt so that coverage stays balanced.

A study whose crowd settings (:mod:`.settings`) leave ``per_item`` unset works as before: every
annotator gets every item when added, in their own shuffled order
(:func:`structext_core.studio.study.store.annotator_order`). With ``per_item`` = k set:

- **Practice and gold items** are given to everyone when they join, as before (they are not
  counted); gold items keep their own random places among the person's questions.
- **Counted items are dealt one at a time**, when the person needs their next question
  (:func:`deal`, called by :func:`~structext_core.studio.study.answering.open_question`): among
  the items below k places (answers plus questions held now), the one with the fewest, that the
  person has not had; ties are broken by the person's own seeded order. The check and the new
  assignment are one write transaction, so two people racing for an item's last place never make
  k + 1. ``per_person`` caps the counted questions one person is dealt. A dealt question starts its
  clock when dealt (it is shown at once).
- **Held too long.** A dealt question not answered whose person shows no sign of life (no heartbeat,
  input or pause: the honest clock's ``last_beat_at``, ``last_input_at``, ``paused_at``) for more
  than ``hold_seconds`` goes back to the pool (:func:`release_stale`): its assignment, draft and
  pauses are deleted, and the release is recorded in the study's history (``study.release``,
  with the question's clock as it stood: :func:`released_seconds` gives the active time back to
  the person's working day). Releases happen when someone needs a new question and when the lead
  opens the study's places; there is no background thread. A released person is never dealt that
  item again; back, they get another question (:func:`release_notice` tells them why).
- **Queue done** (:func:`queue_done`): nothing left to answer and nothing more may be dealt (the cap
  is reached, or every item they have not had has its k places taken).

No Streamlit here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio import changes, clock
from structext_core.studio.storage import write_transaction
from structext_core.studio.study.store import StaleQuestionError, StudyError, annotator_order, now
from structext_core.text.words import plural

#: The history's name for a question that went back to the pool.
RELEASE_ACTION = "study.release"


@dataclass(frozen=True)
class Places:
    """How a study's places fill: ``per_item`` (k), ``per_person`` (None: no cap), ``hold_seconds``
    (None: a question is held until answered)."""

    per_item: int
    per_person: int | None = None
    hold_seconds: float | None = None


def places(db: sqlite_utils.Database, study_id: int) -> Places | None:
    """The study's places when it deals k per item; None when everyone answers every item."""
    row = db.execute("SELECT per_item, per_person, hold_seconds FROM study_crowd WHERE study_id = ?",
                     [study_id]).fetchone()
    if row is None or row[0] is None:
        return None
    return Places(int(row[0]), None if row[1] is None else int(row[1]), row[2])


# ---------------------------------------------------------------- what a person holds and has had

def _counted_ids(db: sqlite_utils.Database, study_id: int) -> list[int]:
    """The study's counted items in the order of the draw (read from the kind index alone)."""
    return [row[0] for row in db.execute(
        "SELECT id FROM study_items WHERE study_id = ? AND kind = 'study' ORDER BY id", [study_id])]


def _practice_count(db: sqlite_utils.Database, study_id: int) -> int:
    return db.execute("SELECT COUNT(*) FROM study_items WHERE study_id = ? AND kind = 'practice'",
                      [study_id]).fetchone()[0]


def _taken(db: sqlite_utils.Database, study_id: int) -> dict[int, int]:
    """Per counted item: its answers plus the questions held now (dealt, shown, not answered, by a
    person still in the study with no outcome yet)."""
    rows = db.execute(
        """
        SELECT a.item_id, COUNT(*)
        FROM assignments a
        JOIN study_annotators sa ON sa.study_id = a.study_id AND sa.user_id = a.user_id
        LEFT JOIN responses r ON r.assignment_id = a.id
        WHERE a.study_id = ?
          AND a.item_id IN (SELECT id FROM study_items WHERE study_id = ? AND kind = 'study')
          AND (r.id IS NOT NULL
               OR (a.first_shown_at IS NOT NULL AND sa.removed_at IS NULL AND sa.outcome IS NULL))
        GROUP BY a.item_id
        """,
        [study_id, study_id],
    )
    return dict(rows.fetchall())


def _released_items(db: sqlite_utils.Database, study_id: int, user_id: int | None = None) -> list[dict]:
    """The study's releases (oldest first), of one person or all: the history's details."""
    rows = db.execute(
        "SELECT detail_json, at FROM audit_log WHERE target = ? AND action = ? ORDER BY id",
        [f"study:{study_id}", RELEASE_ACTION],
    ).fetchall()
    found = [{**json.loads(detail), "at": at} for detail, at in rows]
    return [d for d in found if user_id is None or d.get("user_id") == user_id]


@dataclass(frozen=True)
class _Mine:
    """One person's rows in a dealt study."""

    seqs: set[int]
    unanswered_min: int | None
    counted_now: int  # counted questions answered or held
    had: set[int]  # counted items answered, held, or released from them
    legacy: list[int]  # assignment ids of counted questions given before k was set, never shown


def _mine(db: sqlite_utils.Database, study_id: int, user_id: int, counted: set[int]) -> _Mine:
    rows = db.execute(
        "SELECT a.id, a.seq, a.item_id, a.first_shown_at, r.id IS NOT NULL FROM assignments a"
        " LEFT JOIN responses r ON r.assignment_id = a.id WHERE a.study_id = ? AND a.user_id = ?",
        [study_id, user_id],
    ).fetchall()
    legacy = [aid for aid, _seq, item, shown, answered in rows if item in counted and shown is None and not answered]
    kept = [row for row in rows if row[0] not in legacy]
    unanswered = [seq for _aid, seq, _item, _shown, answered in kept if not answered]
    had = {item for _aid, _seq, item, _shown, _answered in kept if item in counted}
    had |= {d["item_id"] for d in _released_items(db, study_id, user_id)}
    return _Mine(seqs={seq for _aid, seq, *_ in kept}, unanswered_min=min(unanswered, default=None),
                 counted_now=sum(item in counted for _aid, _seq, item, *_ in kept), had=had, legacy=legacy)


def _next_slot(seqs: set[int], practice: int) -> int:
    """The smallest free place after the practice questions (gold keeps its own places)."""
    slot = practice + 1
    while slot in seqs:
        slot += 1
    return slot


def _choose(counted: list[int], taken: dict[int, int], mine: _Mine, k: int, order: list[int]) -> int | None:
    rank = {item: index for index, item in enumerate(order)}
    open_items = [item for item in counted if taken.get(item, 0) < k and item not in mine.had]
    return min(open_items, key=lambda item: (taken.get(item, 0), rank[item]), default=None)


def _cap_left(found: Places, n_counted: int, counted_now: int) -> int:
    cap = n_counted if found.per_person is None else min(found.per_person, n_counted)
    return max(0, cap - counted_now)


# ---------------------------------------------------------------- joining, dealing, releasing

def layout(db: sqlite_utils.Database, study_id: int, seed: int, user_id: int, found: Places) -> None:
    """Inside the write transaction that adds the person to a dealt study: their practice questions
    first, and their gold ones at own random places among the counted questions they may be dealt
    (at most ``per_person``); the counted ones come later, one at a time (:func:`deal`)."""
    items = db.execute("SELECT id, kind FROM study_items WHERE study_id = ? ORDER BY position", [study_id]).fetchall()
    practice = [item_id for item_id, kind in items if kind == "practice"]
    gold = [item_id for item_id, kind in items if kind == "gold"]
    n_counted = sum(kind == "study" for _id, kind in items)
    slots = _cap_left(found, n_counted, 0)
    # The person's own order of gold and counted places (counted places are 0, filled when dealt).
    places_order = annotator_order([*gold, *[0] * slots], seed, study_id, user_id)
    seq_of = {item_id: seq for seq, item_id in enumerate(annotator_order(practice, seed, study_id, user_id), 1)}
    seq_of |= {item_id: len(practice) + place for place, item_id in enumerate(places_order, 1) if item_id}
    for item_id, seq in seq_of.items():
        db.execute("INSERT INTO assignments (study_id, user_id, item_id, seq) VALUES (?, ?, ?, ?)",
                   [study_id, user_id, item_id, seq])


def deal(db: sqlite_utils.Database, study_id: int, user_id: int, at: float | None = None) -> int | None:
    """Give the person their next counted question when they need one (they hold none before their
    next gold place); returns the new assignment's id, None when none was dealt (not needed, or
    nothing left for them). Questions held too long go back to the pool first."""
    found = places(db, study_id)
    if found is None:
        return None
    at = now() if at is None else at
    counted_list = _counted_ids(db, study_id)
    counted = set(counted_list)
    practice = _practice_count(db, study_id)
    mine = _mine(db, study_id, user_id, counted)
    slot = _next_slot(mine.seqs, practice)
    needs = mine.unanswered_min is None or slot < mine.unanswered_min
    if not mine.legacy and (not needs or not _cap_left(found, len(counted), mine.counted_now)):
        return None
    if needs:
        release_stale(db, study_id, at)
    seed = db.execute("SELECT seed FROM studies WHERE id = ?", [study_id]).fetchone()[0]
    order = annotator_order(counted_list, seed, study_id, user_id)
    if not mine.legacy and _choose(counted_list, _taken(db, study_id), mine, found.per_item, order) is None:
        return None  # nothing left for them (read without the write lock: a finished person's page runs)
    with write_transaction(db):
        # Everything read again inside the transaction: another person may have taken the place.
        mine = _mine(db, study_id, user_id, counted)
        if mine.legacy:
            marks = ", ".join("?" for _ in mine.legacy)
            db.execute(f"DELETE FROM assignments WHERE id IN ({marks})", mine.legacy)
        slot = _next_slot(mine.seqs, practice)
        if mine.unanswered_min is not None and mine.unanswered_min < slot:
            return None
        if not _cap_left(found, len(counted), mine.counted_now):
            return None
        item = _choose(counted_list, _taken(db, study_id), mine, found.per_item, order)
        if item is None:
            return None
        columns = {"study_id": study_id, "user_id": user_id, "item_id": item, "seq": slot, **clock.start_columns(at)}
        return db.execute(f"INSERT INTO assignments ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                          list(columns.values())).lastrowid


_STALE_SQL = """
    SELECT a.id, a.user_id, a.item_id, a.seq, a.first_shown_at, a.active_seconds, a.away_seconds,
           a.idle_seconds, a.paused_seconds, a.pause_count, a.paused_at,
           MAX(COALESCE(a.last_beat_at, 0), COALESCE(a.last_input_at, 0), COALESCE(a.paused_at, 0),
               COALESCE(a.first_shown_at, 0)) AS last_seen
    FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id
    WHERE a.study_id = ? AND r.id IS NULL AND a.first_shown_at IS NOT NULL
      AND a.item_id IN (SELECT id FROM study_items WHERE study_id = ? AND kind = 'study')
      AND MAX(COALESCE(a.last_beat_at, 0), COALESCE(a.last_input_at, 0), COALESCE(a.paused_at, 0),
              COALESCE(a.first_shown_at, 0)) < ?
"""


@dataclass(frozen=True)
class Release:
    """A question that went back to the pool: whose, which item, after how long without a sign of life."""

    assignment_id: int
    user_id: int
    item_id: int
    away_seconds: float
    active_seconds: float


def release_stale(db: sqlite_utils.Database, study_id: int, at: float | None = None, *,
                  by: int | None = None) -> list[Release]:
    """Send back to the pool every dealt question of the study held past its hold time (nothing when
    the study has none); each release recorded in the study's history with the question's clock.
    ``by``: the lead who asked (None: the workbench, when someone needed a question)."""
    found = places(db, study_id)
    if found is None or found.hold_seconds is None:
        return []
    at = now() if at is None else at
    limit = at - found.hold_seconds
    if db.execute(f"SELECT EXISTS ({_STALE_SQL})", [study_id, study_id, limit]).fetchone()[0] == 0:
        return []
    released = []
    with write_transaction(db):
        for row in db.query(_STALE_SQL, [study_id, study_id, limit]):
            paused = row["paused_seconds"] + (max(0.0, at - row["paused_at"]) if row["paused_at"] is not None else 0.0)
            away = max(0.0, at - row["last_seen"])
            db.execute("DELETE FROM assignments WHERE id = ?", [row["id"]])  # its pauses go with it
            changes.record(db, by, RELEASE_ACTION, f"study:{study_id}", user_id=row["user_id"],
                           item_id=row["item_id"], assignment_id=row["id"], seq=row["seq"],
                           first_shown_at=row["first_shown_at"], last_seen=row["last_seen"],
                           released_at=at, away_for=round(away, 3), active_seconds=row["active_seconds"],
                           away_seconds=row["away_seconds"], idle_seconds=row["idle_seconds"],
                           paused_seconds=paused, pause_count=row["pause_count"])
            released.append(Release(row["id"], row["user_id"], row["item_id"], away, row["active_seconds"]))
    return released


# ---------------------------------------------------------------- what the person and the pages read

class ReleasedError(StaleQuestionError):
    """The question went back to the pool while its person was away."""


def _minutes(seconds: float) -> str:
    return plural(max(1, round(seconds / 60)), "minute")


def released_question(db: sqlite_utils.Database, user_id: int, assignment_id: int) -> ReleasedError | None:
    """The error to raise for an assignment of the person that went back to the pool (None: it did not)."""
    row = db.execute(
        "SELECT detail_json FROM audit_log WHERE action = ? AND json_extract(detail_json, '$.assignment_id') = ?"
        " AND json_extract(detail_json, '$.user_id') = ? ORDER BY id DESC LIMIT 1",
        [RELEASE_ACTION, assignment_id, user_id],
    ).fetchone()
    if row is None:
        return None
    detail = json.loads(row[0])
    return ReleasedError(f"Your previous question went back to the pool after {_minutes(detail['away_for'])} "
                         "away; here is your next one.")


def release_notice(db: sqlite_utils.Database, study_id: int, user_id: int) -> str | None:
    """What the person is told when they come back after their question went back to the pool
    (until they answer their next question); None otherwise."""
    mine = _released_items(db, study_id, user_id)
    if not mine:
        return None
    last = mine[-1]
    answered_since = db.execute(
        "SELECT EXISTS (SELECT 1 FROM responses WHERE study_id = ? AND user_id = ? AND submitted_at > ?)",
        [study_id, user_id, last.get("released_at", last["at"])],
    ).fetchone()[0]
    if answered_since:
        return None
    return f"Your previous question went back to the pool after {_minutes(last['away_for'])} away."


def released_seconds(db: sqlite_utils.Database, study_id: int) -> dict[int, dict[str, float]]:
    """Per person: the clock of their questions that went back to the pool (``active_seconds``,
    ``away_seconds``, ``idle_seconds``, ``paused_seconds``, ``pause_count``, ``released``): time of
    their working day that no answer carries."""
    out: dict[int, dict[str, float]] = {}
    for detail in _released_items(db, study_id):
        mine = out.setdefault(detail["user_id"], {"active_seconds": 0.0, "away_seconds": 0.0, "idle_seconds": 0.0,
                                                  "paused_seconds": 0.0, "pause_count": 0, "released": 0})
        for key in ("active_seconds", "away_seconds", "idle_seconds", "paused_seconds", "pause_count"):
            mine[key] += detail.get(key) or 0
        mine["released"] += 1
    return out


@dataclass(frozen=True)
class Plan:
    """A person's questions in a dealt study: counted ones had (answered or held) and how many more
    may still be dealt to them now (the cap, and the items with a place left they have not had)."""

    counted_had: int
    counted_left: int


@dataclass(frozen=True)
class _Study:
    """What every person's plan reads of a dealt study, read once."""

    places: Places
    counted: list[int]
    taken: dict[int, int]

    @classmethod
    def read(cls, db: sqlite_utils.Database, study_id: int) -> _Study | None:
        found = places(db, study_id)
        if found is None:
            return None
        return cls(found, _counted_ids(db, study_id), _taken(db, study_id))

    def plan(self, db: sqlite_utils.Database, study_id: int, user_id: int) -> tuple[Plan, _Mine]:
        mine = _mine(db, study_id, user_id, set(self.counted))
        available = sum(self.taken.get(item, 0) < self.places.per_item and item not in mine.had
                        for item in self.counted)
        return Plan(mine.counted_now, min(available, _cap_left(self.places, len(self.counted), mine.counted_now))), mine


def plan(db: sqlite_utils.Database, study_id: int, user_id: int) -> Plan | None:
    """The person's :class:`Plan`; None when the study does not deal (everyone answers every item)."""
    dealt = _Study.read(db, study_id)
    return None if dealt is None else dealt.plan(db, study_id, user_id)[0]


def plans(db: sqlite_utils.Database, study_id: int) -> dict[int, Plan]:
    """Every member's :class:`Plan` (empty when the study does not deal)."""
    dealt = _Study.read(db, study_id)
    if dealt is None:
        return {}
    users = [row[0] for row in db.execute("SELECT user_id FROM study_annotators WHERE study_id = ?", [study_id])]
    return {user_id: dealt.plan(db, study_id, user_id)[0] for user_id in users}


def queue_done(db: sqlite_utils.Database, study_id: int, user_id: int) -> bool:
    """Whether the person has nothing left to answer in the study and nothing more can be dealt to
    them (in a study that does not deal: every question they were given is answered). False for
    someone who does not take part."""
    return queues_done(db, study_id, [user_id])[user_id]


def queues_done(db: sqlite_utils.Database, study_id: int, user_ids: list[int]) -> dict[int, bool]:
    """:func:`queue_done` of several people of the study, the study read once."""
    members = {row[0] for row in db.execute("SELECT user_id FROM study_annotators WHERE study_id = ?", [study_id])}
    dealt = _Study.read(db, study_id)
    out = {}
    for user_id in user_ids:
        if user_id not in members:
            out[user_id] = False
        elif dealt is None:
            out[user_id] = not db.execute(
                "SELECT EXISTS (SELECT 1 FROM assignments a LEFT JOIN responses r ON r.assignment_id = a.id"
                " WHERE a.study_id = ? AND a.user_id = ? AND r.id IS NULL)", [study_id, user_id]).fetchone()[0]
        else:
            found_plan, mine = dealt.plan(db, study_id, user_id)
            out[user_id] = mine.unanswered_min is None and found_plan.counted_left == 0
    return out


def position(db: sqlite_utils.Database, study_id: int, user_id: int, seq: int) -> int:
    """Where the question at ``seq`` comes among the person's study questions (practice apart):
    the study questions before it, plus one."""
    return 1 + db.execute(
        "SELECT COUNT(*) FROM assignments WHERE study_id = ? AND user_id = ? AND seq < ?"
        " AND item_id NOT IN (SELECT id FROM study_items WHERE study_id = ? AND kind = 'practice')",
        [study_id, user_id, seq, study_id],
    ).fetchone()[0]


def _someone_dealt(db: sqlite_utils.Database, study_id: int) -> bool:
    """Whether some member of the study lacks a counted item (they joined, or were dealt, under k)."""
    return bool(db.execute(
        """
        SELECT EXISTS (
          SELECT 1 FROM study_annotators sa
          WHERE sa.study_id = :study AND
            (SELECT COUNT(*) FROM assignments a WHERE a.study_id = :study AND a.user_id = sa.user_id
               AND a.item_id IN (SELECT id FROM study_items WHERE study_id = :study AND kind = 'study'))
            < (SELECT COUNT(*) FROM study_items WHERE study_id = :study AND kind = 'study'))
        """, {"study": study_id}).fetchone()[0])


def check_change(db: sqlite_utils.Database, study_id: int, per_item: int | None) -> str | None:
    """Refuse switching k off once people were dealt questions one at a time; otherwise say what a
    change of k does (None when it changes nothing worth saying)."""
    before = places(db, study_id)
    if per_item is None:
        if before is not None and _someone_dealt(db, study_id):
            raise StudyError("k cannot be switched off: people joined while it was set, so they were not given "
                             "every item. Set k to the number of people instead.")
        return None
    if before is not None and per_item < before.per_item:
        return (f"k lowered from {before.per_item} to {per_item}: every answer given is kept; items that already "
                f"have more than {per_item} answers keep them and get no more.")
    return None
