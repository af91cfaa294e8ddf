"""The study lead's page as data: the dashboard's charts, as Altair objects built from the
study's response frame (:func:`structext_core.studio.study.responses_frame`), and the tables
and figures it shows as text. The page (``pages/study_admin.py``) only places them."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from structext_core.studio import durations
from structext_core.text.words import plural
from structext_core.views import cells

#: Tick positions of the log-seconds axis (1 s to 10,000 s), labelled in seconds.
_LOG_TICKS = [0, 0.699, 1, 1.477, 2, 2.477, 3, 3.477, 4]


def accuracy_chart(table: pd.DataFrame, by: list[str]) -> alt.LayerChart:
    """Bars of the score (%) per group of ``table`` (:func:`study.accuracy_by`), with the 95%
    interval as whiskers."""
    chart_data = table.assign(group=table[by].astype(str).agg(" · ".join, axis=1))
    bars = alt.Chart(chart_data).mark_bar().encode(
        y=alt.Y("group:N", sort=None, title=None),
        x=alt.X("score:Q", scale=alt.Scale(domain=[0, 100]), title="score (%)"),
        tooltip=["group", "n", "score", "score_low", "score_high", "exact_match"],
    )
    whiskers = alt.Chart(chart_data).mark_rule(color="black").encode(y="group:N", x="score_low:Q", x2="score_high:Q")
    return (bars + whiskers).properties(height=60 + 26 * len(chart_data))


def _timed(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(minutes=df["elapsed_seconds"] / 60, log_seconds=np.log10(df["elapsed_seconds"].clip(lower=1)))


def time_histogram(df: pd.DataFrame) -> alt.Chart:
    """Answers per time bin and annotator. Times span seconds to many minutes: binned on a log
    scale, labelled in seconds."""
    return alt.Chart(_timed(df)).mark_bar().encode(
        x=alt.X("log_seconds:Q", bin=alt.Bin(step=0.1), title="seconds per question (log scale)",
                axis=alt.Axis(values=_LOG_TICKS, labelExpr="format(pow(10, datum.value), ',.0f')")),
        y=alt.Y("count():Q", title="answers"),
        color=alt.Color("annotator:N"),
        tooltip=["annotator", "count()"],
    )


def time_by_length(df: pd.DataFrame) -> alt.Chart:
    """Minutes per answer against the reference's length (log), one point per answer."""
    return alt.Chart(_timed(df)).mark_circle(size=40, opacity=0.7).encode(
        x=alt.X("reference_chars:Q", scale=alt.Scale(type="log"), title="reference length (characters, log)"),
        y=alt.Y("minutes:Q", title="minutes"),
        color="annotator:N",
        tooltip=["annotator", "item", "minutes", "reference_chars", "score"],  # the item as its set names it
    )


#: The lead's progress, split in two tables that each fit beside the sidebar (one of all thirteen
#: columns was cut on the right): who is where, and where their time went.
PROGRESS_COLUMNS = ["annotator", "answered", "gave_up", "remaining", "total", "done_pct", "last_answer",
                    "rule_accepted", "removed"]
#: The times of answered questions (the second table), each with what it measures.
TIME_PARTS = {
    "answering": "Active time: the question on screen in the annotator's tab.",
    "paused": "Pause button and idle auto-pauses, until Resume.",
    "idle": "The time without input before each idle auto-pause.",
    "away": "No heartbeat from the page: tab closed or hidden, connection lost, machine asleep.",
}
#: What the progress table says where a person has not answered yet.
NO_ANSWER_YET = "no answer yet"


def progress_tables(progress: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`structext_core.studio.study.progress_table` as two narrower tables: the counts
    (:data:`PROGRESS_COLUMNS`; ``last_answer`` :data:`NO_ANSWER_YET` before a first answer) and the
    times (``annotator`` and one column per :data:`TIME_PARTS`, named with the unit that fits the
    largest of them, e.g. ``answering (min)``: seconds, minutes or hours, :func:`cells.duration_unit`)."""
    where = progress[PROGRESS_COLUMNS].copy()
    where["last_answer"] = [NO_ANSWER_YET if cells.missing(v) else v for v in where["last_answer"]]
    where["done_pct"] = where["done_pct"].fillna(0.0)
    seconds = {part: progress[f"seconds_{part}"] for part in TIME_PARTS}
    unit = cells.duration_unit(value for column in seconds.values() for value in column)
    times = pd.DataFrame({"annotator": progress["annotator"]})
    for part, column in seconds.items():
        times[time_column(part, unit)] = cells.in_unit(list(column), unit)
    return where, times


def progress_summary(where: pd.DataFrame) -> dict[str, int]:
    """The first of :func:`progress_tables` in a few counts: ``people`` in the study (``removed``: taken
    off), of them ``done`` (every question they were given answered), ``answering`` (some) and
    ``not_started`` (none); ``answered`` of ``total``: the questions answered of those given, every row
    summed (people taken off too: their answers count)."""
    active = where[~where["removed"].astype(bool)]
    done = (active["total"] > 0) & (active["remaining"] <= 0)
    return {"people": len(active), "removed": len(where) - len(active), "done": int(done.sum()),
            "answering": int(((active["answered"] > 0) & ~done).sum()),
            "not_started": int((active["answered"] == 0).sum()),
            "answered": int(where["answered"].sum()), "total": int(where["total"].sum())}


def time_column(part: str, unit: tuple[str, str, float]) -> str:
    """The name of a time column of :func:`progress_tables`: ``answering (min)``."""
    return f"{part} ({unit[1]})"


def fast_table(flagged: pd.DataFrame) -> pd.DataFrame:
    """The answers :func:`structext_core.studio.study.flag_fast` flags, as the dashboard lists them:
    who, which question (the item's own id), the seconds it took and the others' median
    (:data:`cells.DASH` where no one else answered it), why, and the answer."""
    table = pd.DataFrame({
        "annotator": flagged["annotator"], "seq": flagged["seq"], "item": flagged["item"],
        "seconds": flagged["elapsed_seconds"].astype(float),
        "others' median (s)": [cells.DASH if cells.missing(m) else f"{m:.0f}" for m in flagged["others_median"]],
        "reason": flagged["reason"], "gave up": flagged["gave_up"].astype(bool),
        "score (0-1)": flagged["score"].astype(float), "response": flagged["response"].fillna("")})
    return table.reset_index(drop=True)


def statistic_text(value: float) -> str:
    """An agreement statistic to three decimals, :data:`cells.DASH` where it is undefined (NaN): the
    one wording of every page for a figure the data cannot give (the page says why beside it)."""
    return cells.DASH if cells.missing(value) else f"{value:.3f}"


def agreement_table(pairwise: pd.DataFrame) -> pd.DataFrame:
    """The pairs of annotators' agreement (``agreement_summary``'s ``pairwise``) with Cohen's kappa
    as text (:func:`statistic_text`: a dash where both gave one verdict only, so it is undefined)."""
    return pairwise.assign(cohen_kappa=[statistic_text(v) for v in pairwise["cohen_kappa"]])


def accounts_table(users: Sequence[dict]) -> pd.DataFrame:
    """Accounts (:func:`structext_core.studio.accounts.list_users`) with their status (active,
    disabled, deleted) and creation time as ``YYYY-MM-DD HH:MM`` (UTC)."""
    table = pd.DataFrame(list(users), columns=["username", "role", "status", "created_at"])
    table["created_at"] = pd.to_datetime(table["created_at"], unit="s").dt.strftime("%Y-%m-%d %H:%M")
    return table


def accounts_summary(users: Sequence[dict], roles: Sequence[str]) -> str:
    """One line over the accounts (:func:`structext_core.studio.accounts.list_users` with the inactive
    ones): the active ones by role (in the order of ``roles``, none left out of the total), then how many
    are disabled and deleted. ``3 active accounts: 2 annotators, 1 admin · 1 disabled · 1 deleted``."""
    active = [u for u in users if u["status"] == "active"]
    by_role = [(role, sum(u["role"] == role for u in active)) for role in roles]
    by_role += [(role, sum(u["role"] == role for u in active)) for role in sorted({u["role"] for u in active} - set(roles))]
    line = f"{plural(len(active), 'active account')}"
    if active:
        line += ": " + ", ".join(plural(n, role) for role, n in by_role if n)
    for status in ("disabled", "deleted"):
        n = sum(u["status"] == status for u in users)
        if n:
            line += f" · {n:,} {status}"
    return line


def login_failures_table(failures: Sequence[dict]) -> pd.DataFrame:
    """Failed log-ins (:func:`structext_core.studio.accounts.login_failures`): user name,
    attempts, and the lock left in words (``not locked`` when none)."""
    return pd.DataFrame(
        [{"user name": f["username"], "failed attempts": f["failures"],
          "locked for": durations.words(f["locked_seconds"]) if f["locked_seconds"] else "not locked"}
         for f in failures],
        columns=["user name", "failed attempts", "locked for"],
    )


def _utc_minutes(seconds: float | None) -> str | None:
    return None if seconds is None else pd.Timestamp(seconds, unit="s").strftime("%Y-%m-%d %H:%M")


#: The text a gold report's ``check`` shows: a lead reads a word, not True.
CHECK_WORK = "check this person's work"


def gold_table(report: pd.DataFrame) -> pd.DataFrame:
    """The gold report (:func:`structext_core.studio.study.gold_report`) as the dashboard shows
    it: ``check`` as :data:`CHECK_WORK` or ``ok``, those to check first."""
    below = report["check"].astype(bool)
    table = report.assign(check=below.map({True: CHECK_WORK, False: "ok"}), _ok=~below)
    return table.sort_values(["_ok", "annotator"]).drop(columns="_ok").reset_index(drop=True)


#: Who flagged a question, where the account was deleted since.
DELETED_ACCOUNT = "(deleted account)"
FLAG_COLUMNS = ["flag", "question", "item", "annotator", "kind", "note", "flagged", "resolved_by",
                "resolved", "resolution"]


def flags_table(flags: Sequence) -> pd.DataFrame:
    """Flags on questions (:func:`structext_core.studio.study.flags`) as rows: the flag's id,
    the question's position in the study's draw, the item's own id (the lab's, not our content hash),
    who flagged it and why, times in UTC; :data:`cells.DASH` for what an open flag has not yet."""
    return pd.DataFrame(
        [{"flag": f.id, "question": f.position, "item": f.name or f.sample_id,
          "annotator": f.username or DELETED_ACCOUNT, "kind": f.kind, "note": f.note,
          "flagged": _utc_minutes(f.created_at), "resolved_by": f.resolved_by or cells.DASH,
          "resolved": _utc_minutes(f.resolved_at) or cells.DASH, "resolution": f.resolution or cells.DASH}
         for f in flags],
        columns=FLAG_COLUMNS,
    )
