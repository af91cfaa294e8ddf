"""Who the people are, as data: a study's questionnaire answers (:mod:`.questionnaire` writes them,
one row of ``questionnaire_answers`` per study, person and field; the fields are the lead's list in
``study_crowd.questionnaire``) read back as a frame, and the *axes* the dashboard, Results, the
export and the Inspect log group people by.

- :func:`answers_frame`: one row per person of the study, one column per field in the
  questionnaire's order: a number field as floats, a choice field as an ordered categorical in its
  options' order, a text field as text; a person without an answer has a missing value.
- :func:`axes`: the choice and number fields (a text field is a column of the exports, never an
  axis: free text does not group).
- :func:`people_groups` and :func:`accuracy_by_answers`: each person's group on an axis, and the
  dashboard's accuracy per group with its people and answers.

**How a number field groups** (:func:`number_ranges`): each person counts once (their answer); with
at most :data:`MAX_RANGES` different answers each answer is its own group; otherwise the answers are
cut at their quartiles into at most :data:`MAX_RANGES` ranges holding about as many people each (equal
answers always in one range), and each range is labelled by the smallest and largest answer in it
(``0-2``, ``3-5``, ``6-10``, ``11-40``), so a label says exactly what its people answered. People who
gave no answer are the group :data:`NO_ANSWER`, last. Over several studies (Results) the ranges are
cut once over everyone's answers, so a range means the same on every row.

Nothing here writes, and nothing names a benchmark.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
import sqlite_utils

KINDS = ("choice", "number", "text")
#: The kinds of field people are grouped by.
AXIS_KINDS = ("choice", "number")
#: The most groups a number field is cut into.
MAX_RANGES = 4
#: The group of the people who gave no answer to a field.
NO_ANSWER = "no answer"
#: The prefix of a questionnaire field's column in the exports (``q_expertise``).
EXPORT_PREFIX = "q_"

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


@dataclass(frozen=True)
class Axis:
    """A questionnaire field people are grouped by: its ``name``, the lead's ``label`` (the question)
    and ``kind`` (``choice`` or ``number``)."""

    name: str
    label: str
    kind: str


def fields(db: sqlite_utils.Database, study_id: int) -> list[dict]:
    """The study's questionnaire fields, in the lead's order (each with ``name``, ``label``, ``kind``
    and, for a choice, ``options``); a field of no known shape is left out."""
    row = db.execute("SELECT questionnaire FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()
    try:
        listed = json.loads(row[0]) if row and row[0] else []
    except ValueError:
        return []
    out, seen = [], set()
    for field in listed if isinstance(listed, list) else []:
        if not isinstance(field, dict):
            continue
        name, kind = field.get("name"), field.get("kind")
        if not isinstance(name, str) or not _NAME.match(name) or kind not in KINDS or name in seen:
            continue
        seen.add(name)
        options = [str(o) for o in field.get("options") or []] if kind == "choice" else []
        label = field.get("label")
        out.append({"name": name, "label": label.strip() if isinstance(label, str) and label.strip() else name,
                    "kind": kind, "options": list(dict.fromkeys(options))})
    return out


def _people(db: sqlite_utils.Database, study_id: int) -> list[int]:
    return [row[0] for row in db.execute(
        "SELECT user_id FROM study_annotators WHERE study_id = ?"
        " UNION SELECT user_id FROM questionnaire_answers WHERE study_id = ? ORDER BY 1", [study_id, study_id])]


def _number(value) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def _column(field: dict, values: list) -> pd.Series:
    if field["kind"] == "number":
        return pd.Series([_number(v) if v is not None else math.nan for v in values], dtype=float)
    if field["kind"] == "choice":
        # an answer outside the options (options changed after it was given) is kept, after them
        extra = sorted({v for v in values if v is not None and v not in field["options"]})
        return pd.Series(pd.Categorical(values, categories=[*field["options"], *extra], ordered=True))
    return pd.Series(values, dtype=object)


def answers_frame(db: sqlite_utils.Database, study_id: int) -> pd.DataFrame:
    """One row per person of the study (``user_id``; everyone added to it, and anyone who answered),
    then one column per questionnaire field in the lead's order: number fields as floats, choice
    fields as an ordered ``Categorical`` in the options' order, text as ``str``; missing where a
    person gave no answer (or a number field's answer is no number)."""
    listed = fields(db, study_id)
    people = _people(db, study_id)
    given: dict[tuple[int, str], str] = {
        (user_id, field): value for user_id, field, value in db.execute(
            "SELECT user_id, field, value FROM questionnaire_answers WHERE study_id = ?", [study_id])}
    frame = pd.DataFrame({"user_id": pd.Series(people, dtype="int64")})
    for field in listed:
        frame[field["name"]] = _column(field, [given.get((user_id, field["name"])) for user_id in people])
    return frame


def axes(db: sqlite_utils.Database, study_id: int) -> list[Axis]:
    """The study's fields people are grouped by: its choice and number fields, in the lead's order."""
    return [Axis(f["name"], f["label"], f["kind"]) for f in fields(db, study_id) if f["kind"] in AXIS_KINDS]


def axes_of(db: sqlite_utils.Database, study_ids: Iterable[int]) -> list[Axis]:
    """The axes of several studies (Results shows several at once): each field name once, in order
    of first sight, with its first label; a name that is a choice in one study and a number in
    another is left out (its groups would mean two things)."""
    found: dict[str, Axis] = {}
    mixed: set[str] = set()
    for study_id in study_ids:
        for axis in axes(db, study_id):
            first = found.setdefault(axis.name, axis)
            if first.kind != axis.kind:
                mixed.add(axis.name)
    return [axis for name, axis in found.items() if name not in mixed]


def _plain_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.6g}"


def _range_label(low: float, high: float) -> str:
    if low == high:
        return _plain_number(low)
    joint = " to " if low < 0 or high < 0 else "-"
    return f"{_plain_number(low)}{joint}{_plain_number(high)}"


def number_ranges(values: Sequence[float]) -> list[tuple[float, float, str]]:
    """The ranges a number field groups people into (see the module notes): ``(low, high, label)``
    in increasing order, each range holding the answers from ``low`` to ``high`` (both included);
    ``values`` holds one answer per person (missing ones are ignored)."""
    answers = pd.Series([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    distinct = sorted(answers.unique())
    if len(distinct) <= MAX_RANGES:
        return [(v, v, _range_label(v, v)) for v in distinct]
    cut = pd.qcut(answers, MAX_RANGES, duplicates="drop")
    ranges = []
    for _, members in answers.groupby(cut, observed=True, sort=True):
        low, high = float(members.min()), float(members.max())
        ranges.append((low, high, _range_label(low, high)))
    return ranges


def _group_values(field: dict, values: pd.Series, ranges=None) -> pd.Series:
    """Each value's group as an ordered categorical, :data:`NO_ANSWER` last."""
    if field["kind"] == "number":
        ranges = number_ranges(values) if ranges is None else ranges
        labels = [label for _, _, label in ranges]

        def label_of(value):
            if pd.isna(value):
                return NO_ANSWER
            return next((label for low, high, label in ranges if low <= value <= high), NO_ANSWER)
        out = [label_of(v) for v in values]
    else:
        labels = list(values.cat.categories) if isinstance(values.dtype, pd.CategoricalDtype) else field["options"]
        out = [NO_ANSWER if pd.isna(v) else str(v) for v in values]
    return pd.Series(pd.Categorical(out, categories=[*dict.fromkeys([*labels, NO_ANSWER])], ordered=True),
                     index=values.index)


def _grouping(db: sqlite_utils.Database, study_ids: int | Iterable[int], name: str) -> tuple[dict, list[str]]:
    ids = [study_ids] if isinstance(study_ids, int) else list(study_ids)
    parts, field = [], None
    for study_id in ids:
        found = next((f for f in fields(db, study_id) if f["name"] == name and f["kind"] in AXIS_KINDS), None)
        frame = answers_frame(db, study_id)
        if found is None or (field is not None and found["kind"] != field["kind"]):
            values = pd.Series([None] * len(frame), dtype=object)
        else:
            field = field or found
            if found["kind"] == "choice":  # options of every study, in order of first sight
                field = {**field, "options": list(dict.fromkeys([*field["options"], *found["options"]]))}
            values = frame[name].astype(object).where(frame[name].notna(), None)
        parts.append(pd.DataFrame({"study_id": study_id, "user_id": frame["user_id"], "value": values.to_numpy()}))
    if not parts:
        return {}, []
    every = pd.concat(parts, ignore_index=True)
    if field is None:
        return {(int(s), int(u)): NO_ANSWER for s, u in zip(every["study_id"], every["user_id"])}, [NO_ANSWER]
    if field["kind"] == "number":
        values = pd.to_numeric(every["value"], errors="coerce").astype(float)
    else:
        extra = sorted({str(v) for v in every["value"].dropna()} - set(field["options"]))
        values = pd.Series(pd.Categorical(every["value"], categories=[*field["options"], *extra], ordered=True))
    groups = _group_values(field, values)
    labelled = {(int(s), int(u)): str(g) for s, u, g in zip(every["study_id"], every["user_id"], groups)}
    present = set(labelled.values())
    return labelled, [str(label) for label in groups.cat.categories if label in present]


def people_groups(db: sqlite_utils.Database, study_ids: int | Iterable[int], name: str) -> dict[tuple[int, int], str]:
    """Each person's group on the axis ``name`` over one study or several: ``(study_id, user_id) ->
    label`` (:data:`NO_ANSWER` for a person who gave none, or whose study asks no such field). Over
    several studies, a number field's ranges are cut once over every study's answers."""
    return _grouping(db, study_ids, name)[0]


def group_order(db: sqlite_utils.Database, study_ids: int | Iterable[int], name: str) -> list[str]:
    """The groups of the axis ``name`` in their order (options, or ranges upward; :data:`NO_ANSWER`
    last), those someone is in only."""
    return _grouping(db, study_ids, name)[1]


#: The columns of :func:`accuracy_by_answers` beside the group's.
BREAKDOWN_COLUMNS = ["people", "n", "score", "score_low", "score_high", "exact_match", "em_low", "em_high"]


def accuracy_by_answers(db: sqlite_utils.Database, study_id: int, frame: pd.DataFrame, axis: Axis | str,
                        n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Accuracy per group of people on ``axis`` over ``frame`` (the dashboard's
    :func:`structext_core.studio.study.responses_frame`: the counted answers, each once, with the final
    score): one row per group in the axis' order, with ``people`` (who answered a counted question),
    ``n`` (answers) and the score and exact match in percent with their 95% bootstrap intervals
    (:func:`structext_core.studio.study.accuracy_by`). The group's column is named by the axis."""
    from structext_core.studio.study.dashboard import accuracy_by
    name = axis.name if isinstance(axis, Axis) else axis
    groups, order = _grouping(db, study_id, name)
    if frame.empty:
        return pd.DataFrame(columns=[name, *BREAKDOWN_COLUMNS])
    labelled = frame.assign(**{name: [groups.get((study_id, int(u)), NO_ANSWER) for u in frame["user_id"]]})
    table = accuracy_by(labelled, [name], n_boot=n_boot, seed=seed)
    people = labelled.groupby(name)["user_id"].nunique()
    table.insert(1, "people", table[name].map(people).astype(int))
    rank = {label: n for n, label in enumerate(order)}
    table = table.sort_values(name, key=lambda s: s.map(lambda v: rank.get(v, len(rank))))
    return table[[name, *BREAKDOWN_COLUMNS]].reset_index(drop=True)


def export_values(db: sqlite_utils.Database, study_id: int) -> tuple[list[str], dict[int, dict]]:
    """The export's questionnaire columns (``q_<name>`` in the lead's order; a text field too) and each
    person's values by user id: a number as a number (whole numbers as ints), a choice or text as
    given, None where no answer."""
    frame = answers_frame(db, study_id)
    names = [c for c in frame.columns if c != "user_id"]
    values: dict[int, dict] = {}
    for record in frame.to_dict("records"):
        row = {}
        for name in names:
            value = record[name]
            if value is None or (not isinstance(value, str) and pd.isna(value)):
                value = None
            elif isinstance(value, float):
                value = int(value) if value.is_integer() and abs(value) < 1e15 else value
            row[EXPORT_PREFIX + name] = value
        values[int(record["user_id"])] = row
    return [EXPORT_PREFIX + name for name in names], values


def person_answers(db: sqlite_utils.Database, study_id: int) -> dict[int, dict]:
    """Each person's answers by user id, by field name (as :func:`export_values`, without the prefix),
    only the fields they answered: what the Inspect log keeps in a sample's metadata."""
    _, values = export_values(db, study_id)
    cut = len(EXPORT_PREFIX)
    return {user_id: {key[cut:]: value for key, value in row.items() if value is not None}
            for user_id, row in values.items()}


def _study_ids(db: sqlite_utils.Database, study_names: Iterable[str]) -> dict[str, int]:
    names = list(dict.fromkeys(study_names))
    if not names:
        return {}
    return dict(db.execute(f"SELECT name, id FROM studies WHERE name IN ({','.join('?' * len(names))})", names))


def axes_of_named(db: sqlite_utils.Database, study_names: Iterable[str]) -> list[Axis]:
    """:func:`axes_of` for studies given by name (a view that keeps answers by study name)."""
    return axes_of(db, _study_ids(db, study_names).values())


def split_column(db: sqlite_utils.Database, frame: pd.DataFrame, name: str, study: str = "study",
                 person: str = "annotator") -> tuple[pd.Series, list[str]]:
    """Each row's group on the axis ``name`` for a frame of people's answers that names each row's
    study (column ``study``, by name) and person (``person``, by user name), with the groups in
    order (:func:`group_order`, over the studies of ``frame``)."""
    ids = _study_ids(db, frame[study].astype(str))
    users = dict(db.execute("SELECT username, id FROM users"))
    groups, order = _grouping(db, list(ids.values()), name)
    labels = [groups.get((ids.get(str(s), -1), users.get(str(p), -1)), NO_ANSWER)
              for s, p in zip(frame[study], frame[person])]
    present = set(labels)
    return pd.Series(labels, index=frame.index, dtype=object), [g for g in order if g in present]
