"""The schema's history: one module per migration, numbered by its file name.

A module ``mNNNN_<what>.py`` is migration ``NNNN``: its docstring says what it changes, ``NAME``
is its line in ``schema_migrations`` and ``migrate(db)`` applies it inside the transaction that
:func:`structext_core.studio.storage.migrate` holds (so a failing migration leaves nothing
behind). :func:`load` finds them in order; the numbers must run 1, 2, 3, ... without a gap.

To change the schema, add the next module; never edit or renumber one that has shipped (a
database records the numbers it has seen, and a changed migration would not run again there).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from typing import NamedTuple

import sqlite_utils

#: A migration module's file name: ``m`` and its number, then what it is about.
FILE_NAME = re.compile(r"^m(\d{4})_\w+$")


class Migration(NamedTuple):
    """One numbered, append-only schema change."""

    version: int
    name: str
    apply: Callable[[sqlite_utils.Database], None]


def run_script(db: sqlite_utils.Database, script: str) -> None:
    """Run ``;``-separated DDL statements inside the current transaction."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def load(package: str = __name__) -> list[Migration]:
    """Every migration module of ``package`` (this one), in order of its number.

    Raises ``RuntimeError`` naming the module when a number repeats, one is missing, or a module
    lacks a docstring, ``NAME`` or ``migrate`` (a packaging mistake: no database is touched)."""
    found: dict[int, Migration] = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        match = FILE_NAME.match(info.name)
        if not match:
            continue
        version = int(match.group(1))
        module = importlib.import_module(f"{package}.{info.name}")
        if not (module.__doc__ or "").strip() or not isinstance(getattr(module, "NAME", None), str) \
                or not callable(getattr(module, "migrate", None)):
            raise RuntimeError(f"migration module {module.__name__} must have a docstring saying what it changes, "
                               "NAME (a str) and migrate(db)")
        if version in found:
            raise RuntimeError(f"migration {version} is defined twice: {module.__name__} and "
                               f"{found[version].apply.__module__}")
        found[version] = Migration(version, module.NAME, module.migrate)
    versions = sorted(found)
    if versions != list(range(1, len(versions) + 1)):
        raise RuntimeError(f"migration numbers must run 1, 2, 3, ... without a gap; found {versions}")
    return [found[version] for version in versions]
