"""A study's crowd settings: one row of ``study_crowd`` (migration 15), defaults when it has none.

The row is written by :func:`save_settings` only (the lead's *Crowd* settings on Studies); every
other module reads :func:`crowd_settings`.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass

import sqlite_utils

from structext_core.studio.storage import write_transaction

#: Longest code or address the lead may set (a platform's code is about 8 characters, an address a few hundred).
MAX_CODE_CHARS = 64
MAX_URL_CHARS = 2000
CURRENCIES = ("GBP", "USD", "EUR")


class CrowdSettingsError(ValueError):
    """A setting the lead gave that cannot be kept; the message names it and what it must be."""


@dataclass(frozen=True)
class CrowdSettings:
    """What a study does with the people it takes. ``None`` means "not set" (no code, no budget,
    no time-out, everyone answers every item, a question is held until answered). ``timeout_seconds``:
    how long after arriving by a study link a person may take to finish (the platform's "maximum time
    allowed"; :func:`structext_core.studio.crowd.outcomes.time_out_overdue`)."""

    study_id: int
    consent_version: int | None = None
    questionnaire: tuple[dict, ...] = ()
    completion_code: str | None = None
    completion_url: str | None = None
    screenout_code: str | None = None
    screenout_url: str | None = None
    no_consent_code: str | None = None
    no_consent_url: str | None = None
    time_budget_seconds: float | None = None
    bonus_per_correct: float = 0.0
    bonus_cap: float | None = None
    currency: str = "GBP"
    per_item: int | None = None
    per_person: int | None = None
    hold_seconds: float | None = None
    timeout_seconds: float | None = None


#: The columns :func:`save_settings` may change (``consent_version`` and ``questionnaire`` are kept by
#: :mod:`.consent` and :mod:`.questionnaire`, which validate them).
EDITABLE = tuple(f.name for f in dataclasses.fields(CrowdSettings)
                 if f.name not in ("study_id", "consent_version", "questionnaire"))
_COLUMNS = tuple(f.name for f in dataclasses.fields(CrowdSettings))


def crowd_settings(db: sqlite_utils.Database, study_id: int) -> CrowdSettings:
    """The study's settings; the defaults when the lead set none."""
    row = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM study_crowd WHERE study_id = ?", [study_id]).fetchone()
    if row is None:
        return CrowdSettings(study_id=study_id)
    values = dict(zip(_COLUMNS, row, strict=True))
    values["questionnaire"] = tuple(json.loads(values["questionnaire"] or "[]"))
    return CrowdSettings(**values)


def _text(name: str, value, limit: int) -> str | None:
    if value is None:
        return None
    value = str(value).strip()
    if not value:
        return None
    if len(value) > limit or any(ch in value for ch in "\r\n\t"):
        raise CrowdSettingsError(f"{name.replace('_', ' ')} must be one line of at most {limit} characters.")
    return value


def _url(name: str, value) -> str | None:
    value = _text(name, value, MAX_URL_CHARS)
    if value is not None and not value.lower().startswith(("https://", "http://")):
        raise CrowdSettingsError(f"{name.replace('_', ' ')} must be a web address starting with https:// "
                                 f"(or http://); got {value[:60]!r}.")
    return value


def _positive(name: str, value, *, whole: bool = False, zero: bool = False):
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise CrowdSettingsError(f"{name.replace('_', ' ')} must be a number; got {value!r}.") from None
    if number != number or number in (float("inf"), float("-inf")) or number < 0 or (number == 0 and not zero):
        raise CrowdSettingsError(f"{name.replace('_', ' ')} must be a number above 0; got {value!r}.")
    if whole:
        if number != int(number):
            raise CrowdSettingsError(f"{name.replace('_', ' ')} must be a whole number; got {value!r}.")
        return int(number)
    return number


def checked(changes: dict) -> dict:
    """``changes`` with each value checked and normalised; :class:`CrowdSettingsError` for the first bad one."""
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise CrowdSettingsError(f"Unknown crowd setting(s): {', '.join(unknown)}.")
    out = {}
    for name, value in changes.items():
        if name.endswith("_code"):
            out[name] = _text(name, value, MAX_CODE_CHARS)
        elif name.endswith("_url"):
            out[name] = _url(name, value)
        elif name in ("per_item", "per_person"):
            out[name] = _positive(name, value, whole=True)
        elif name in ("time_budget_seconds", "hold_seconds", "timeout_seconds", "bonus_cap"):
            out[name] = _positive(name, value, zero=name == "bonus_cap")
        elif name == "bonus_per_correct":
            out[name] = _positive(name, value, zero=True) or 0.0
        elif name == "currency":
            if value not in CURRENCIES:
                raise CrowdSettingsError(f"currency must be one of {', '.join(CURRENCIES)}; got {value!r}.")
            out[name] = value
    return out


def ensure_row(db: sqlite_utils.Database, study_id: int, by: int | None) -> None:
    """Make the study's row (with its defaults) when it has none; inside the caller's transaction."""
    db.execute("INSERT OR IGNORE INTO study_crowd (study_id, updated_by, updated_at) VALUES (?, ?, ?)",
               [study_id, by, time.time()])


def copy_settings(db: sqlite_utils.Database, source_id: int, copy_id: int, by: int | None, at: float) -> None:
    """Give the study ``copy_id`` (a copy being made: :func:`structext_core.studio.study.clone_study`) every
    crowd setting of ``source_id`` but its consent text (:func:`.consent.copy_consent` gives that): the
    questionnaire, the platform's codes and addresses, the time budget and time-out, the bonus and the dealing. Inside
    the caller's transaction; a source with no settings gives none."""
    kept = [name for name in _COLUMNS if name not in ("study_id", "consent_version")]
    db.execute(f"INSERT INTO study_crowd (study_id, {', '.join(kept)}, updated_by, updated_at)"
               f" SELECT ?, {', '.join(kept)}, ?, ? FROM study_crowd WHERE study_id = ?", [copy_id, by, at, source_id])


def save_settings(db: sqlite_utils.Database, study_id: int, by: int | None, **changes) -> CrowdSettings:
    """Change some of the study's settings (the others stay); every value is checked before any is written."""
    values = checked(changes)
    if db.execute("SELECT 1 FROM studies WHERE id = ?", [study_id]).fetchone() is None:
        raise CrowdSettingsError(f"There is no study with id {study_id}.")
    from structext_core.studio.study import leads  # here: the study package imports this module

    leads.check_runs(db, by, study_id, "change the study's crowd settings")  # an admin or a lead of the study
    with write_transaction(db):
        ensure_row(db, study_id, by)
        if values:
            assignments = ", ".join(f"{name} = ?" for name in values)
            db.execute(f"UPDATE study_crowd SET {assignments}, updated_by = ?, updated_at = ? WHERE study_id = ?",
                       [*values.values(), by, time.time(), study_id])
    return crowd_settings(db, study_id)
