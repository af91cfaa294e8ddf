"""The skeleton of a document of objects (JSON, YAML) and how a rewrite's compares.

Each object is an :class:`ObjectShape` in pre-order: its fields' roles (``id``, ``subs`` or
``field``, each with its value's type), how many objects its ``subs`` holds, and its keys.
A faithful rewrite renames keys and values but keeps every role, type and count.
"""

from __future__ import annotations

from dataclasses import dataclass

from structext_core.structext_eval.formats import Problem


@dataclass(frozen=True)
class ObjectShape:
    """One object of a JSON or YAML document, in pre-order."""

    path: str
    line: int
    roles: tuple[str, ...]  # per field in order: "id", "subs" or "field", with the value's type
    children: int
    keys: tuple[str, ...]


def role(key: str) -> str:
    """What a key is in the skeleton: ``id`` and ``subs`` stay themselves, every other is a field."""
    return key if key in ("id", "subs") else "field"


def compare(original: list[ObjectShape], rewrite: list[ObjectShape], noun: str) -> list[Problem]:
    """Duplicate keys of the rewrite, then the first object whose fields or ``subs`` differ,
    then a different number of objects. ``noun`` is what the format calls an object."""
    problems = _duplicate_keys(rewrite, noun)
    for o, r in zip(original, rewrite):
        where = f"{r.path} (line {r.line} of the rewrite, line {o.line} of the original)"
        if o.roles != r.roles:
            return problems + [Problem("structure", where, _fields_differ(o, r))]
        if o.children != r.children:
            return problems + [Problem("structure", where, f"{o.children} object(s) in subs in the original, "
                                                           f"{r.children} in the rewrite")]
    if len(original) != len(rewrite):
        problems.append(Problem("structure", "document", f"{len(original)} {noun}s in the original, {len(rewrite)} "
                                                         "in the rewrite: the nesting differs"))
    return problems


def _duplicate_keys(shapes: list[ObjectShape], noun: str) -> list[Problem]:
    problems: list[Problem] = []
    for shape in shapes:
        seen = set()
        for key in shape.keys:
            if key in seen:
                problems.append(Problem("structure", f"{shape.path} (line {shape.line})",
                                        f"the key {key!r} appears twice in one {noun}"))
            seen.add(key)
    return problems


def _fields_differ(o: ObjectShape, r: ObjectShape) -> str:
    if len(o.roles) != len(r.roles):
        what = "a field is missing" if len(r.roles) < len(o.roles) else "a field was added"
        return (f"{what}: {len(o.roles)} keys in the original ({', '.join(o.keys)}), "
                f"{len(r.roles)} in the rewrite ({', '.join(r.keys)})")
    return "; ".join(f"key {i + 1} ({rk!r}) is {rr.replace(':', ' holding ')}, was {orr.replace(':', ' holding ')}"
                     for i, (orr, rr, rk) in enumerate(zip(o.roles, r.roles, r.keys)) if orr != rr)
