"""The study lead's figures as data: responses, progress, accuracy, agreement, time."""


import json
import math
from collections.abc import Sequence
from datetime import datetime, timezone

import pandas as pd
import sqlite_utils

from structext_core.evaluation import aggregate
from structext_core.evaluation.agreement import fleiss_kappa, krippendorff_alpha_nominal, pairwise_agreement
from structext_core.studio.crowd import dealing
from structext_core.studio.study.scores import OVERRIDE_JOIN, _score, score_pending
from structext_core.studio.study.store import FAST_FRACTION_OF_MEDIAN, FAST_MIN_SECONDS, PASS_THRESHOLD

# ---------------------------------------------------------------- dashboard

#: The kinds of study item the baseline counts: the study's own, not practice or gold ones.
COUNTED_KINDS = ("study",)
_NOT_PRACTICE = "SELECT id FROM study_items WHERE study_id = sa.study_id AND kind != 'practice'"


def study_strata(db: sqlite_utils.Database, study_id: int) -> list[str]:
    """The strata of the study's benchmark (its ``STRATA``, in order): the item columns of its frames."""
    from structext_core import protocol
    found = db.execute("SELECT benchmark FROM studies WHERE id = ?", [study_id]).fetchone()
    try:
        return list(protocol.get_module(found[0]).STRATA) if found else []
    except KeyError:  # a benchmark no longer installed: its answers still read, without strata columns
        return []


def study_facets(db: sqlite_utils.Database, study_id: int) -> list[str]:
    """The names of the more fields its items keep (their member's ``item_facets``), in order of first
    sight: columns of the study's frames beside its strata, and axes of its breakdowns."""
    names: list[str] = []
    for (facets,) in db.execute("SELECT json_extract(sample_json, '$.kept.facets') FROM study_items"
                                " WHERE study_id = ? ORDER BY position", [study_id]):
        names.extend(key for key in json.loads(facets or "{}") if key not in names)
    return names


def data_version(db: sqlite_utils.Database, study_id: int) -> tuple:
    """A cheap fingerprint of everything the study's figures are read from (its row and crowd settings,
    its people, items, places, answers, their scores and overrides, its flags, its people's names), for cache keys:
    it changes whenever any of them does. A few aggregate reads, however many people answered."""
    one = lambda sql: tuple(db.execute(sql, [study_id]).fetchone() or ())  # noqa: E731
    names = db.execute("SELECT group_concat(u.username, char(31)) FROM (SELECT u.username FROM study_annotators sa"
                       " JOIN users u ON u.id = sa.user_id WHERE sa.study_id = ? ORDER BY u.id) u",
                       [study_id]).fetchone()[0] or ""
    return (
        one("SELECT * FROM studies WHERE id = ?"),
        one("SELECT * FROM study_crowd WHERE study_id = ?"),
        one("SELECT COUNT(*), MAX(id), TOTAL(id * (kind = 'study')) FROM study_items WHERE study_id = ?"),
        one("SELECT COUNT(*), TOTAL(user_id), TOTAL(rule_accepted_at), TOTAL(consent_at), COUNT(outcome),"
            " TOTAL(length(outcome)), TOTAL(removed_at) FROM study_annotators WHERE study_id = ?"),
        one("SELECT COUNT(*), MAX(id), TOTAL(item_id), TOTAL(seq), TOTAL(first_shown_at), COUNT(first_shown_at)"
            " FROM assignments WHERE study_id = ?"),
        one("SELECT COUNT(*), MAX(id), MAX(submitted_at), MAX(scored_at), COUNT(scored_at) FROM responses"
            " WHERE study_id = ?"),
        one("SELECT COUNT(*), MAX(o.id) FROM score_overrides o JOIN responses r ON r.id = o.response_id"
            " WHERE r.study_id = ?"),
        one("SELECT COUNT(*), MAX(id), COUNT(resolved_at) FROM study_flags WHERE study_id = ?"),
        hash(names),
    )


def responses_frame(db: sqlite_utils.Database, study_id: int, kinds: Sequence[str] = COUNTED_KINDS) -> pd.DataFrame:
    """One row per committed response, with item metadata, timing and scores.

    Only the responses to items of ``kinds`` (``kind`` column): by default the study's own
    items, the ones the baseline counts; practice and gold items are read on request.

    Columns include ``annotator``, ``sample_id`` (our id of the item), ``item`` (the id the data set
    gives it, as people read it: the lab's own where ours is a content hash), one column per stratum of the study's benchmark
    (its ``STRATA``, in order), ``reference_chars``, ``response``, ``answer`` (ground truth; admin only),
    ``gave_up``, ``elapsed_seconds`` (active time), ``paused_seconds``, ``idle_seconds``,
    ``away_seconds``, ``wall_seconds``, ``rouge_l``, ``score_auto`` (paper rule),
    ``score_override``, ``override_reason``, ``override_by``, ``override_at`` (the lead's
    override in force, else None), ``score`` (the score that counts: the override, else
    ``score_auto``), ``passed`` (``score`` at or above the pass threshold), ``exact_match``.
    Answers are scored when committed; a row without a score (committed by older code, or
    read half way) is scored here, so a read never fails on it.
    """
    score_pending(db, study_id)
    rows = list(
        db.query(
            f"""
            SELECT r.id AS response_id, s.name AS study, s.suite, u.username AS annotator,
                   r.user_id, a.seq, i.id AS item_id, i.position AS item_position,
                   i.sample_id, COALESCE(json_extract(i.sample_json, '$.kept.name'), i.sample_id) AS item, i.strata,
                   i.reference_chars, json_extract(i.sample_json, '$.answer') AS answer,
                   json_extract(i.sample_json, '$.kept.item') AS kept_item,
                   json_extract(i.sample_json, '$.kept.facets') AS facets,
                   s.benchmark,
                   r.response, r.gave_up, a.first_shown_at, r.submitted_at,
                   r.elapsed_seconds, r.paused_seconds, r.idle_seconds, r.away_seconds,
                   r.wall_seconds, a.pause_count, r.idle_pauses, r.takeovers,
                   r.rouge_l, r.exact_match, i.kind, o.score AS score_override, o.reason AS override_reason,
                   ou.username AS override_by, o.at AS override_at
            FROM responses r
            JOIN assignments a ON a.id = r.assignment_id
            JOIN study_items i ON i.id = r.item_id
            JOIN studies s ON s.id = r.study_id
            JOIN users u ON u.id = r.user_id
            {OVERRIDE_JOIN}
            WHERE r.study_id = ? AND i.kind IN ({",".join("?" * len(kinds))})
            ORDER BY u.username, a.seq
            """,
            [study_id, *kinds],
        )
    )
    strata_keys = study_strata(db, study_id)
    facet_keys: list[str] = []  # more fields of the items (its member's item_facets), in order of first sight
    for row in rows:
        row.update(json.loads(row.pop("strata")))  # the item's strata, as its benchmark declares them
        facets = json.loads(row.pop("facets") or "{}")
        facet_keys.extend(key for key in facets if key not in facet_keys)
        row["_facets"] = facets
        kept_item = row.pop("kept_item")
        if row["rouge_l"] is None or row["exact_match"] is None:
            row["rouge_l"], row["exact_match"] = _score(row["answer"], row["response"], bool(row["gave_up"]),
                                                        row["benchmark"], kept_item)
    columns = [
        "response_id", "study", "suite", "annotator", "user_id", "seq", "item_id", "item_position",
        "sample_id", "item", *strata_keys, *facet_keys, "reference_chars", "answer",
        "response", "gave_up", "first_shown_at", "submitted_at", "elapsed_seconds",
        "paused_seconds", "idle_seconds", "away_seconds", "wall_seconds", "pause_count",
        "idle_pauses", "takeovers", "rouge_l", "exact_match", "kind", "score_override", "override_reason",
        "override_by", "override_at",
    ]
    for row in rows:
        facets = row.pop("_facets")
        row.update({key: facets.get(key, "") for key in facet_keys})
    df = pd.DataFrame(rows, columns=columns)
    df["gave_up"] = df["gave_up"].astype(bool)
    for column in ("rouge_l", "elapsed_seconds", "paused_seconds", "idle_seconds", "away_seconds",
                   "wall_seconds"):
        df[column] = df[column].astype(float)
    df["score_auto"] = df["rouge_l"].where(df["rouge_l"] >= PASS_THRESHOLD, 0.0).astype(float)
    df["score_override"] = df["score_override"].astype(float)
    df["score"] = df["score_override"].where(df["score_override"].notna(), df["score_auto"])  # what counts
    df["passed"] = df["score"] >= PASS_THRESHOLD
    df["exact_match"] = df["exact_match"].astype(float)
    return df


def progress_table(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """Per annotator: answered, gave up, remaining, share done, time spent, last answer.

    Hours of answered questions: ``hours_answering`` (active), ``hours_paused`` (Pause and
    idle auto-pauses), ``hours_idle`` (active time re-booked before an idle auto-pause)
    and ``hours_away`` (no heartbeat: tab closed, connection lost, tab hidden).
    Practice questions are left out; gold ones are in (to the annotator they are questions). In a
    study that deals k people per item, ``total`` counts the questions a person had and those that
    may still be dealt to them now.
    The same four times unrounded in seconds: ``seconds_answering``, ``seconds_paused``,
    ``seconds_idle``, ``seconds_away`` (a page shows them in the unit that fits their size).
    ``removed``: taken off the study by a lead (their answers stay counted).
    """
    rows = list(
        db.query(
            f"""
            SELECT sa.user_id, u.username AS annotator, sa.rule_accepted_at, sa.removed_at IS NOT NULL AS removed,
                   (SELECT COUNT(*) FROM assignments a
                     WHERE a.study_id = sa.study_id AND a.user_id = sa.user_id
                       AND a.item_id IN ({_NOT_PRACTICE})) AS total,
                   COUNT(r.id) AS answered,
                   COALESCE(SUM(r.gave_up), 0) AS gave_up,
                   COALESCE(SUM(r.elapsed_seconds), 0) AS answer_seconds,
                   COALESCE(SUM(r.paused_seconds), 0) AS paused_seconds,
                   COALESCE(SUM(r.idle_seconds), 0) AS idle_seconds,
                   COALESCE(SUM(r.away_seconds), 0) AS away_seconds,
                   MAX(r.submitted_at) AS last_submitted_at
            FROM study_annotators sa
            JOIN users u ON u.id = sa.user_id
            LEFT JOIN responses r ON r.study_id = sa.study_id AND r.user_id = sa.user_id
                AND r.item_id IN ({_NOT_PRACTICE})
            WHERE sa.study_id = ?
            GROUP BY sa.user_id
            ORDER BY u.username
            """,
            [study_id],
        )
    )
    df = pd.DataFrame(
        rows,
        columns=["user_id", "annotator", "rule_accepted_at", "removed", "total", "answered", "gave_up",
                 "answer_seconds", "paused_seconds", "idle_seconds", "away_seconds", "last_submitted_at"],
    )
    if plans := dealing.plans(db, study_id):  # dealt one at a time: what may still be dealt counts too
        df["total"] = df["total"] + df["user_id"].map(lambda user_id: plans[user_id].counted_left)
    df["remaining"] = df["total"] - df["answered"]
    df["done_pct"] = (100 * df["answered"] / df["total"].where(df["total"] > 0)).round(1)
    for name, column in (("answering", "answer_seconds"), ("paused", "paused_seconds"),
                         ("idle", "idle_seconds"), ("away", "away_seconds")):
        df[f"hours_{name}"] = (df[column].astype(float) / 3600).round(2)
    df["last_answer"] = df["last_submitted_at"].map(
        lambda t: None if pd.isna(t) else datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
    )
    df["rule_accepted"] = df["rule_accepted_at"].notna()
    df["removed"] = df["removed"].astype(bool)
    for name, column in (("answering", "answer_seconds"), ("paused", "paused_seconds"),
                         ("idle", "idle_seconds"), ("away", "away_seconds")):
        df[f"seconds_{name}"] = df[column].astype(float)
    return df[["annotator", "answered", "gave_up", "remaining", "total", "done_pct",
               "hours_answering", "hours_paused", "hours_idle", "hours_away", "last_answer",
               "rule_accepted", "removed", "seconds_answering", "seconds_paused", "seconds_idle", "seconds_away"]]


def accuracy_by(df: pd.DataFrame, by: Sequence[str], n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Score (paper rule) and exact match in percent per group, with n and 95 % bootstrap CIs.

    ``by`` may be empty for one overall row. Columns: ``by``, ``n``, ``score``,
    ``score_low``, ``score_high``, ``exact_match``, ``em_low``, ``em_high``.
    """
    by = list(by)
    score = aggregate.aggregate(df, by, value="score", n_boot=n_boot, seed=seed)
    exact = aggregate.aggregate(df, by, value="exact_match", n_boot=n_boot, seed=seed)
    out = score[by].copy() if by else pd.DataFrame(index=score.index)
    out["n"] = score["n"]
    for prefix, frame, name in (("score", score, "score"), ("em", exact, "exact_match")):
        out[name] = (100 * frame["mean"]).round(1)
        out[f"{prefix}_low"] = (100 * frame["ci_low"]).round(1)
        out[f"{prefix}_high"] = (100 * frame["ci_high"]).round(1)
    return out


def item_scores(df: pd.DataFrame) -> pd.DataFrame:
    """Each item's figure: the mean of its answers' final scores (an override in force counts, a
    give-up scores 0), as adjudication lists it. Columns ``item_id``, ``sample_id``, ``n``, ``score``
    (0 to 1), in the order of the draw."""
    if df.empty:
        return pd.DataFrame({"item_id": [], "sample_id": [], "n": [], "score": []})
    grouped = df.groupby(["item_position", "item_id", "sample_id"], sort=True)["score"]
    out = grouped.agg(n="size", score="mean").reset_index()
    return out[["item_id", "sample_id", "n", "score"]]


def annotator_summary(df: pd.DataFrame) -> dict:
    """The paper's headline: mean of the annotators' scores, the best annotator, the pool.

    ``{"per_annotator": DataFrame, "mean_annotator": float, "best_annotator": str | None,
    "best_score": float, "pool": DataFrame}``; scores in percent.
    """
    per = accuracy_by(df, ["annotator"])
    if per.empty:
        return {"per_annotator": per, "mean_annotator": float("nan"), "best_annotator": None,
                "best_score": float("nan"), "pool": accuracy_by(df, [])}
    best = per.loc[per["score"].idxmax()]
    return {
        "per_annotator": per,
        "mean_annotator": round(float(per["score"].mean()), 1),
        "best_annotator": best["annotator"],
        "best_score": float(best["score"]),
        "pool": accuracy_by(df, []),
    }


def pass_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Items x annotators, True/False for pass (ROUGE-L >= 0.75), NaN where not answered."""
    if df.empty:
        return pd.DataFrame()
    return df.pivot_table(index="item_id", columns="annotator", values="passed", aggfunc="first")



def agreement_summary(df: pd.DataFrame, pairwise: bool = True) -> dict:
    """Agreement on pass/fail: pairwise table, Fleiss' kappa and Krippendorff's alpha.

    Fleiss' kappa needs the same number of answers on every item it uses, not the same people: it
    uses the items every annotator answered (``fleiss_items``; ``fleiss_basis`` ``"everyone"``);
    when there are none because people answered different items (a study dealing k people per
    item), the items with the most common number of answers, at least two (``fleiss_basis``
    ``"same number"``, that number in ``fleiss_raters``). Krippendorff's alpha uses every item with
    at least two answers (``alpha_items``). The pairwise table lists the pairs who answered an item
    in common (all pairs when everyone answered the same items); without ``pairwise``, an empty
    table (the pairs of hundreds of people are tens of thousands: a page asks for them when shown).
    """
    matrix = pass_matrix(df)
    pairs = pairwise_agreement(matrix if pairwise else matrix.iloc[:, :0], shared_only=True)  # empty under 2
    if matrix.shape[1] < 2:
        return {"pairwise": pairs, "fleiss_kappa": float("nan"),
                "fleiss_items": 0, "fleiss_raters": 0, "fleiss_basis": "everyone",
                "krippendorff_alpha": float("nan"), "alpha_items": 0}
    complete = matrix.dropna().astype(bool)
    basis, raters = "everyone", matrix.shape[1]
    if complete.empty:
        # People answered different items: Fleiss over the items with one same number of answers.
        per_item = matrix.notna().sum(axis=1)
        common = per_item[per_item >= 2].value_counts()
        if not common.empty:
            raters = int(max(common.index, key=lambda n: (common[n], n)))
            basis = "same number"
            complete = matrix[per_item == raters]
    counts = [[int((row == True).sum()), int((row == False).sum())]  # noqa: E712 (NaN is neither)
              for _, row in complete.iterrows()]
    units = [[bool(v) for v in row if not pd.isna(v)] for row in matrix.itertuples(index=False)]
    return {
        "pairwise": pairs,
        "fleiss_kappa": fleiss_kappa(counts) if counts else float("nan"),
        "fleiss_items": len(counts),
        "fleiss_raters": raters if counts else 0,
        "fleiss_basis": basis,
        "krippendorff_alpha": krippendorff_alpha_nominal(units),
        "alpha_items": sum(len(u) >= 2 for u in units),
    }


def flag_fast(
    df: pd.DataFrame,
    min_seconds: float = FAST_MIN_SECONDS,
    fraction_of_median: float = FAST_FRACTION_OF_MEDIAN,
) -> pd.DataFrame:
    """Responses submitted implausibly fast, with the reason, for a person to review.

    A response is flagged when it took less than ``min_seconds``, or less than
    ``fraction_of_median`` of the median time the *other* annotators needed for the same
    item. Returns the flagged rows with a ``reason`` column.
    """
    if df.empty:
        return df.assign(reason=pd.Series(dtype=str), others_median=pd.Series(dtype=float))
    out = df.assign(
        others_median=df.groupby("item_id")["elapsed_seconds"].transform(_median_of_others)
    )
    reasons = []
    for elapsed, median in zip(out["elapsed_seconds"], out["others_median"]):
        why = []
        if elapsed < min_seconds:
            why.append(f"under {min_seconds:g} s")
        if not math.isnan(median) and elapsed < fraction_of_median * median:
            why.append(f"under {fraction_of_median:.0%} of the others' median ({median:.0f} s)")
        reasons.append("; ".join(why))
    out["reason"] = reasons
    return out[out["reason"] != ""]


def _median_of_others(seconds: pd.Series) -> pd.Series:
    """For each value, the median of the other values of its group (NaN if alone)."""
    values = seconds.tolist()
    medians = [
        float(pd.Series(values[:i] + values[i + 1:]).median()) if len(values) > 1 else float("nan")
        for i in range(len(values))
    ]
    return pd.Series(medians, index=seconds.index)


def time_summary(df: pd.DataFrame, cells: Sequence[str]) -> dict:
    """Time per question: per annotator and per cell (``cells``: the strata the study's kind
    times by: its kind's ``time_cells``) medians, and the rank correlation of time with
    reference length (Spearman; NaN where every length is the same)."""
    if df.empty:
        return {"per_annotator": pd.DataFrame(), "per_cell": pd.DataFrame(), "spearman_length": float("nan")}

    def stats(group: pd.DataFrame) -> pd.Series:
        seconds = group["elapsed_seconds"]
        return pd.Series({
            "n": len(group),
            "median_s": round(float(seconds.median()), 1),
            "p10_s": round(float(seconds.quantile(0.1)), 1),
            "p90_s": round(float(seconds.quantile(0.9)), 1),
            "total_h": round(float(seconds.sum()) / 3600, 2),
        })

    per_annotator = df.groupby("annotator").apply(stats, include_groups=False).reset_index()
    per_cell = df.groupby(list(cells)).apply(stats, include_groups=False).reset_index()
    # Spearman's rho is Pearson's r of the ranks (pandas' method="spearman" needs scipy).
    rho = df["elapsed_seconds"].rank().corr(df["reference_chars"].rank()) if len(df) > 2 else float("nan")
    return {"per_annotator": per_annotator, "per_cell": per_cell, "spearman_length": float(rho)}
