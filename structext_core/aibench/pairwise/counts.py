"""Pairwise studies: the counts, one source for every page (issue 46): the lead's chooser and
progress table, Results, and the annotator's page all say these numbers, in these words."""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from structext_core.text.words import plural


@dataclass(frozen=True)
class PersonCounts:
    """One person's counts in a pairwise study, the one source every page reads them from
    (the lead's chooser and progress table, Results, the annotator's page).

    ``pairs``: the study's counted pairs (each person judges each); ``votes``: their counted votes,
    one per counted pair at most (the first showing's vote: a repeat only measures consistency,
    practice is never counted); ``repeats`` (``repeats_done``): counted pairs shown again with the
    sides swapped; ``practice`` (``practice_done``): practice pairs, shown first, never counted."""

    user_id: int
    annotator: str
    pairs: int
    votes: int
    repeats: int
    repeats_done: int
    practice: int
    practice_done: int
    removed: bool

    @property
    def judgements(self) -> int:
        """What the person judges after practice: each counted pair, and the repeats."""
        return self.pairs + self.repeats

    @property
    def judged(self) -> int:
        return self.votes + self.repeats_done


def person_counts(db: sqlite_utils.Database, study_id: int, user_id: int | None = None) -> list[PersonCounts]:
    """:class:`PersonCounts` of each member of the study (or of ``user_id`` alone), by name."""
    where, params = ("AND m.user_id = ?", [study_id, user_id]) if user_id is not None else ("", [study_id])
    rows = db.execute(
        f"""
        SELECT m.user_id, u.username,
               SUM(p.kind = 'study' AND t.repeat_of IS NULL), SUM(p.kind = 'study' AND t.repeat_of IS NULL AND v.id IS NOT NULL),
               SUM(p.kind = 'study' AND t.repeat_of IS NOT NULL),
               SUM(p.kind = 'study' AND t.repeat_of IS NOT NULL AND v.id IS NOT NULL),
               SUM(p.kind = 'practice'), SUM(p.kind = 'practice' AND v.id IS NOT NULL), m.removed_at IS NOT NULL
        FROM pairwise_members m JOIN users u ON u.id = m.user_id
        LEFT JOIN pairwise_tasks t ON t.study_id = m.study_id AND t.user_id = m.user_id
        LEFT JOIN pairwise_pairs p ON p.id = t.pair_id
        LEFT JOIN pairwise_votes v ON v.task_id = t.id
        WHERE m.study_id = ? {where} GROUP BY m.user_id ORDER BY u.username
        """, params).fetchall()
    return [PersonCounts(r[0], r[1], *(int(x or 0) for x in r[2:8]), bool(r[8])) for r in rows]


def counted_votes(db: sqlite_utils.Database, study_id: int) -> int:
    """The study's counted votes: the sum of every person's :attr:`PersonCounts.votes` (the
    figure Results says, the number of votes its rank rests on)."""
    return sum(c.votes for c in person_counts(db, study_id))


def annotator_summary(counts: PersonCounts) -> str:
    """What a person judges in the study, in one sentence for their page: the study's pairs (the
    number the lead reads), how many come again with the sides swapped, and the practice first."""
    again = (f", {'one' if counts.repeats == 1 else counts.repeats} of them shown a second time with the sides swapped "
             f"({plural(counts.judgements, 'judgement')} in all)" if counts.repeats else "")
    practice = (f", after {plural(counts.practice, 'practice pair')} (not counted)" if counts.practice else "")
    return f"This study has {plural(counts.pairs, 'pair')} to judge{again}{practice}."


def lead_label(name: str, status: str, archived: bool, pairs: int, practice: int, dataset: str) -> str:
    """How the lead's chooser names a study: its counted pairs, and the practice pairs apart."""
    extra = f" + {practice} practice" if practice else ""
    return f"{name} ({status}{', archived' if archived else ''}, {plural(pairs, 'pair')}{extra}, {dataset})"


def progress_text(view, counts: PersonCounts) -> str:
    """The annotator's place (``view``: :class:`voting.TaskView`): ``Practice pair 1 of 2 · not
    counted``, then ``Pair 3 of 6``, or ``Judgement 3 of 7`` where repeats make more judgements than
    the study's pairs (which pair is a repeat is never said)."""
    if view.practice:
        return f"Practice pair {view.position} of {view.total} · not counted"
    word = "Pair" if view.total == counts.pairs else "Judgement"
    return f"{word} {view.position} of {view.total}"
