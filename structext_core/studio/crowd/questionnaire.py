"""A study's short questionnaire (who the people are) and each person's answers.

The lead defines up to :data:`MAX_FIELDS` fields, kept as a JSON list in ``study_crowd.questionnaire``;
a field is::

    {"name": "expertise", "label": "How expert are you in ...?", "kind": "choice",
     "options": ["novice", "some", "expert"], "required": true}

``kind`` is ``choice`` (``options``: 2 to :data:`MAX_OPTIONS` texts), ``number`` (optional ``min`` and
``max``) or ``text`` (a short text, at most :data:`MAX_TEXT_CHARS` characters). ``name`` matches
``[a-z][a-z0-9_]{0,39}``: it is the column of the exports and the axis of the dashboard.

A person answers it once, after consent and before the study's rule and first question
(:func:`submit`): one row per answered field in ``questionnaire_answers``, every value as text (a
number as its decimal text), and ``study_annotators.questionnaire_at``. A questionnaire changed later
is for people who have not answered yet; answers given stay as they were.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping, Sequence

import sqlite_utils

from structext_core.studio import changes
from structext_core.studio.crowd.settings import ensure_row
from structext_core.studio.errors import StudyError
from structext_core.studio.storage import write_transaction

KINDS = ("choice", "number", "text")
KIND_LABELS = {"choice": "Choice", "number": "Number", "text": "Short text"}
MAX_FIELDS = 20
MAX_LABEL_CHARS = 200
MAX_OPTIONS = 30
MAX_OPTION_CHARS = 100
MAX_TEXT_CHARS = 200
#: Longest number a person may type (characters): a number, not a text smuggled in.
MAX_NUMBER_CHARS = 40
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")
_FIELD_KEYS = {"name", "label", "kind", "options", "min", "max", "required"}


class QuestionnaireError(StudyError):
    """A questionnaire or an answer that cannot be kept; ``field`` names the field (None: the
    whole questionnaire), and the message says what is wrong (safe to show)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _control(text: str) -> str | None:
    return next((ch for ch in text if ord(ch) < 32 or 127 <= ord(ch) < 160), None)


def _one_line(what: str, value, limit: int, field: str | None) -> str:
    if not isinstance(value, str):
        raise QuestionnaireError(f"{what} must be text.", field)
    value = value.strip()
    if not value:
        raise QuestionnaireError(f"{what} is empty.", field)
    if len(value) > limit:
        raise QuestionnaireError(f"{what} is {len(value):,} characters long; the limit is {limit:,}.", field)
    if _control(value) is not None:
        raise QuestionnaireError(f"{what} holds a line break or another control character; write one line.", field)
    return value


def _bound(what: str, value, field: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise QuestionnaireError(f"{what} must be a number.", field)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise QuestionnaireError(f"{what} must be a number; got {str(value)[:40]!r}.", field) from None
    if not math.isfinite(number):
        raise QuestionnaireError(f"{what} must be a finite number.", field)
    return int(number) if number.is_integer() and abs(number) < 1e15 else number


def check_field(field: Mapping) -> dict:
    """One field as it is kept (texts trimmed, ``required`` a boolean, only the keys of its kind);
    :class:`QuestionnaireError` naming the field and what is wrong."""
    if not isinstance(field, Mapping):
        raise QuestionnaireError("Each field of the questionnaire must be an object with a name, a label and a kind.")
    name = field.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise QuestionnaireError(
            f"Field name {str(name)[:60]!r} is not usable: start with a lower-case letter, then up to 39 lower-case "
            "letters, digits or _ (it names the column in the exports), e.g. years_experience.", None)
    unknown = sorted(set(field) - _FIELD_KEYS)
    if unknown:
        raise QuestionnaireError(f"Field {name}: unknown key(s) {', '.join(map(str, unknown))[:100]}.", name)
    label = _one_line(f"Field {name}: the question", field.get("label"), MAX_LABEL_CHARS, name)
    kind = field.get("kind")
    if kind not in KINDS:
        raise QuestionnaireError(f"Field {name}: the kind must be one of {', '.join(KINDS)}; got {str(kind)[:40]!r}.",
                                 name)
    required = field.get("required", True)
    if not isinstance(required, bool):
        raise QuestionnaireError(f"Field {name}: required must be true or false.", name)
    out = {"name": name, "label": label, "kind": kind}
    if kind != "choice" and field.get("options"):
        raise QuestionnaireError(f"Field {name}: only a choice has options.", name)
    if kind != "number" and (field.get("min") is not None or field.get("max") is not None):
        raise QuestionnaireError(f"Field {name}: only a number has a smallest and a largest value.", name)
    if kind == "choice":
        options = field.get("options")
        if not isinstance(options, Sequence) or isinstance(options, str) or not 2 <= len(options) <= MAX_OPTIONS:
            raise QuestionnaireError(f"Field {name}: a choice needs 2 to {MAX_OPTIONS} options.", name)
        kept = [_one_line(f"Field {name}: option {index}", option, MAX_OPTION_CHARS, name)
                for index, option in enumerate(options, 1)]
        if len(set(kept)) != len(kept):
            raise QuestionnaireError(f"Field {name}: two options are the same; make each one different.", name)
        out["options"] = kept
    elif kind == "number":
        low, high = _bound(f"Field {name}: the smallest value", field.get("min"), name), \
            _bound(f"Field {name}: the largest value", field.get("max"), name)
        if low is not None and high is not None and low > high:
            raise QuestionnaireError(f"Field {name}: the smallest value ({low}) is above the largest ({high}).", name)
        if low is not None:
            out["min"] = low
        if high is not None:
            out["max"] = high
    out["required"] = required
    return out


def check_fields(fields: Sequence[Mapping]) -> list[dict]:
    """The questionnaire as it is kept: each field checked (:func:`check_field`), at most
    :data:`MAX_FIELDS`, names unique. An empty list is no questionnaire."""
    if isinstance(fields, (str, bytes, Mapping)) or not isinstance(fields, Sequence):
        raise QuestionnaireError("The questionnaire must be a list of fields.")
    if len(fields) > MAX_FIELDS:
        raise QuestionnaireError(f"The questionnaire has {len(fields)} fields; the limit is {MAX_FIELDS}: keep it short.")
    kept = [check_field(field) for field in fields]
    names = [field["name"] for field in kept]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise QuestionnaireError(f"Two fields are called {twice[0]}: give each field its own name.", twice[0])
    return kept


def make_field(name: str, label: str, kind: str, *, options: str = "", minimum: str | float | None = None,
               maximum: str | float | None = None, required: bool = True) -> dict:
    """A field from the lead's form: ``options`` one per line (blank lines left out), ``minimum`` and
    ``maximum`` as typed (blank: none); checked as :func:`check_field` does."""
    field: dict = {"name": (name or "").strip(), "label": label, "kind": kind, "required": bool(required)}
    if kind == "choice":
        field["options"] = [line.strip() for line in (options or "").splitlines() if line.strip()]
    if kind == "number":
        field["min"] = None if minimum in (None, "") else minimum
        field["max"] = None if maximum in (None, "") else maximum
    return check_field({key: value for key, value in field.items() if value is not None})


def set_questionnaire(db: sqlite_utils.Database, study_id: int, fields: Sequence[Mapping], *, by: int | None) -> list[dict]:
    """Keep ``fields`` as the study's questionnaire (an empty list: none) and return them as kept.
    Every field is checked before anything is written; :class:`QuestionnaireError` otherwise.
    People who answered an earlier questionnaire keep their answers and are not asked again."""
    kept = check_fields(fields)
    if db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone() is None:
        raise QuestionnaireError(f"There is no study with id {study_id}.")
    from structext_core.studio.study import leads  # here: the study package imports this module

    leads.check_runs(db, by, study_id, "change the study's questionnaire")  # an admin or a lead of the study
    with write_transaction(db):
        ensure_row(db, study_id, by)
        db.execute("UPDATE study_crowd SET questionnaire = ?, updated_by = ?, updated_at = ? WHERE study_id = ?",
                   [json.dumps(kept, ensure_ascii=False), by, time.time(), study_id])
        changes.record(db, by, "study.questionnaire", f"study:{study_id}", fields=[f["name"] for f in kept])
    return kept


def add_field(db: sqlite_utils.Database, study_id: int, field: Mapping, *, by: int | None) -> list[dict]:
    """The questionnaire with ``field`` added at its end (:func:`set_questionnaire`)."""
    return set_questionnaire(db, study_id, [*questionnaire(db, study_id), field], by=by)


def remove_field(db: sqlite_utils.Database, study_id: int, name: str, *, by: int | None) -> list[dict]:
    """The questionnaire without the field ``name`` (answers already given to it are kept)."""
    fields = questionnaire(db, study_id)
    if name not in [field["name"] for field in fields]:
        raise QuestionnaireError(f"The questionnaire has no field {str(name)[:60]!r}.", None)
    return set_questionnaire(db, study_id, [field for field in fields if field["name"] != name], by=by)


def questionnaire(db: sqlite_utils.Database, study_id: int) -> list[dict]:
    """The study's questionnaire, in order (empty: none)."""
    row = db.execute("SELECT questionnaire FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()
    return json.loads(row[0]) if row and row[0] else []


def has_fields(stored: str | None) -> bool:
    """Whether a stored questionnaire (the column's JSON text) asks anything."""
    return bool(stored) and stored.strip() not in ("", "[]") and bool(json.loads(stored))


def needs_questionnaire(db: sqlite_utils.Database, study_id: int, user_id: int) -> bool:
    """True when the study has a questionnaire and the person (in the study) has not answered it."""
    row = db.execute(
        "SELECT sa.questionnaire_at, c.questionnaire FROM study_annotators sa"
        " LEFT JOIN study_crowd c ON c.study_id = sa.study_id WHERE sa.study_id = ? AND sa.user_id = ?",
        [study_id, user_id]).fetchone()
    return row is not None and row[0] is None and has_fields(row[1])


def number_text(number: float) -> str:
    """A number as the decimal text it is kept as: ``7``, ``2.5``."""
    return str(int(number)) if float(number).is_integer() and abs(number) < 1e15 else repr(float(number))


def _blank(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def check_answer(field: dict, value) -> str | None:
    """One answer as the text it is kept as (None: left blank, allowed when the field is not
    required); :class:`QuestionnaireError` naming the field's question otherwise."""
    name, label = field["name"], field["label"]
    if _blank(value):
        if field.get("required", True):
            raise QuestionnaireError(f"Please answer \u201c{label}\u201d: it is required.", name)
        return None
    if field["kind"] == "choice":
        if not isinstance(value, str) or value not in field["options"]:
            raise QuestionnaireError(f"\u201c{label}\u201d: choose one of the options given.", name)
        return value
    if field["kind"] == "number":
        if isinstance(value, bool) or (isinstance(value, str) and len(value) > MAX_NUMBER_CHARS):
            raise QuestionnaireError(f"\u201c{label}\u201d: write a number.", name)
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            raise QuestionnaireError(f"\u201c{label}\u201d: write a number.", name) from None
        if not math.isfinite(number):
            raise QuestionnaireError(f"\u201c{label}\u201d: write a number.", name)
        low, high = field.get("min"), field.get("max")
        if (low is not None and number < low) or (high is not None and number > high):
            span = (f"between {number_text(low)} and {number_text(high)}" if low is not None and high is not None
                    else f"at least {number_text(low)}" if low is not None else f"at most {number_text(high)}")
            raise QuestionnaireError(f"\u201c{label}\u201d: give a number {span}.", name)
        return number_text(number)
    if not isinstance(value, str):
        raise QuestionnaireError(f"\u201c{label}\u201d: write a short text.", name)
    text = value.strip()
    if len(text) > MAX_TEXT_CHARS:
        raise QuestionnaireError(f"\u201c{label}\u201d: your answer is {len(text):,} characters long; keep it to "
                                 f"{MAX_TEXT_CHARS} characters.", name)
    if _control(text) is not None:
        raise QuestionnaireError(f"\u201c{label}\u201d: write one line, without line breaks or control characters.",
                                 name)
    return text


def submit(db: sqlite_utils.Database, study_id: int, user_id: int, answers: Mapping[str, object]) -> None:
    """Keep the person's answers to the study's questionnaire, once, and stamp ``questionnaire_at``.

    ``answers`` maps a field's name to the value given (a choice's option, a number or its text, a
    text; None or blank: not answered). Every answer is checked before anything is written:
    :class:`QuestionnaireError` names the first field that is wrong, and refuses answers for
    someone not in the study, taken off it, whose visit ended, who must consent first or answered
    already, or for a field the questionnaire does not have."""
    from structext_core.studio.crowd import consent  # consent asks this module whether a questionnaire waits

    if not isinstance(answers, Mapping):
        raise QuestionnaireError("The answers must be given field by field.")
    with write_transaction(db):
        person = consent.person_state(db, study_id, user_id)
        if person is None or person["removed_at"] is not None:
            raise QuestionnaireError("You do not take part in this study.")
        if person["declined_at"] is not None or person["outcome"] is not None:
            raise QuestionnaireError("Your part in this study has ended.")
        if consent.must_consent(person):
            raise QuestionnaireError("Read and accept the study's consent text first.")
        if person["questionnaire_at"] is not None:
            raise QuestionnaireError("You have answered the questionnaire already.")
        fields = json.loads(person["questionnaire"] or "[]")
        if not fields:
            raise QuestionnaireError("This study has no questionnaire.")
        unknown = sorted(set(map(str, answers)) - {field["name"] for field in fields})
        if unknown:
            raise QuestionnaireError(f"The questionnaire has no field {unknown[0][:60]!r}.", None)
        kept = {field["name"]: check_answer(field, answers.get(field["name"])) for field in fields}
        at = time.time()
        for name, value in kept.items():
            if value is not None:
                db.execute("INSERT OR REPLACE INTO questionnaire_answers (study_id, user_id, field, value, answered_at)"
                           " VALUES (?, ?, ?, ?, ?)", [study_id, user_id, name, value, at])
        db.execute("UPDATE study_annotators SET questionnaire_at = ? WHERE study_id = ? AND user_id = ?",
                   [at, study_id, user_id])


def answers_of(db: sqlite_utils.Database, study_id: int, user_id: int) -> dict[str, str]:
    """The person's answers as kept (field name to text); empty when they have not answered."""
    return dict(db.execute("SELECT field, value FROM questionnaire_answers WHERE study_id = ? AND user_id = ?"
                           " ORDER BY field", [study_id, user_id]).fetchall())
