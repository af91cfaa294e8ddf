"""AIBench's own settings, read through :mod:`structext_core.settings` (its rules: an unset or
blank variable takes the default, a bad value is a :class:`~structext_core.settings.SettingError`
naming it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from structext_core import settings
from structext_core.settings import SettingError

DIR_ENV = "STRUCTEXT_AIBENCH_DIR"
SYNTHETIC_ENV = "STRUCTEXT_AIBENCH_SYNTHETIC"


def dataset_dir() -> Path:
    """Where AIBench data sets are stored: ``$STRUCTEXT_AIBENCH_DIR`` or ``annotations/aibench``."""
    return settings.path(DIR_ENV, settings.ANNOTATIONS_DIR / "aibench")


def synthetic_at_start(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the app makes the synthetic AIBench set at start when it is missing:
    ``$STRUCTEXT_AIBENCH_SYNTHETIC`` ``on`` (the default) or ``off``."""
    text = settings.raw(SYNTHETIC_ENV, environ).lower()
    if text in ("", "on"):
        return True
    if text == "off":
        return False
    raise SettingError(f"{SYNTHETIC_ENV}={text[:40]!r} must be 'on' or 'off'")
