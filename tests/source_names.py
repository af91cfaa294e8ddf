"""What the name and layer tests read of a benchmark's member and of a module's source.

A member may live anywhere: a package under ``structext_core/`` (the built-in ones), another
installed package (``numeric_bench.member``) or a top-level module (``numeric_member``). Only a
member whose package is under ``structext_core/`` has a folder there that the tests leave out.

A module's source is read as Python tokens (:mod:`tokenize`), so that a word in prose (a comment,
a docstring's sentence, a message) is not a use of a name: names are matched as identifiers, as
module paths and as string values.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from types import ModuleType

CORE_PACKAGE = "structext_core"


def member_package(module: ModuleType) -> str:
    """The import name of the package a member module belongs to: ``structext_core.<folder>`` for
    a built-in one, the package for a member module inside another package, the module itself for
    a top-level module."""
    parts = module.__name__.split(".")
    if parts[0] == CORE_PACKAGE and len(parts) > 1:
        return ".".join(parts[:2])
    if hasattr(module, "__path__") or len(parts) == 1:  # a package, or a top-level module
        return module.__name__
    return ".".join(parts[:-1])


def core_folder(module: ModuleType) -> str | None:
    """The member's folder under ``structext_core/`` (None: it lives outside it)."""
    parts = member_package(module).split(".")
    return parts[1] if parts[0] == CORE_PACKAGE and len(parts) > 1 else None


def _literal(token: str) -> str | None:
    """The text of a STRING token (an f-string's literal text, its fields left as written)."""
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        match = re.match(r"(?is)^[rbuf]*('''|\"\"\"|'|\")(.*)\1$", token)
        return match.group(2) if match else None
    return value if isinstance(value, str) else None


#: A value quoted inside a string (SQL's ``'aibench'``, JSON's ``"$.paper_id"``), on one line.
_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")


def string_values(token: tokenize.TokenInfo) -> Iterator[tuple[int, str]]:
    """(line, value) of each value a STRING token holds: its whole text, and each value quoted
    inside it (on the line where that value stands)."""
    text = _literal(token.string)
    if text is None:
        return
    yield token.start[0], text
    for match in _QUOTED.finditer(text):
        yield token.start[0] + text.count("\n", 0, match.start()), match.group(1) or match.group(2) or ""


def pieces(value: str) -> list[str]:
    """The parts of a value written without blanks (a module path ``a.b:c``, a file path, a JSON
    path ``$.paper_id``, a URL's query); none for a value with blanks (a sentence)."""
    value = value.strip()
    if not value or re.search(r"\s", value):
        return []
    return [p for p in re.split(r"[^\w-]+", value) if p]


def tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def fstring_attributes(token: tokenize.TokenInfo) -> Iterator[tuple[int, str]]:
    """(line, name) of each attribute read in an f-string's fields (``f"{item.language}"``)."""
    prefix = re.match(r"(?i)[rbuf]*", token.string).group(0)
    if "f" not in prefix.lower():
        return
    for field in re.finditer(r"\{([^{}]*)\}", token.string):
        for attribute in re.finditer(r"\.\s*([A-Za-z_]\w*)", field.group(1)):  # ``{x:.3f}``: no name
            yield token.start[0] + token.string.count("\n", 0, field.start()), attribute.group(1)


def _char_col(lines: list[str], lineno: int, byte_col: int) -> int:
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def function_locals(source: str) -> set[tuple[int, int]]:
    """(line, column) of every use of a function's own local name (an argument or a name the
    function assigns): a word the function chose for its variable, not a reference to a module."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    lines = source.splitlines()
    found: set[tuple[int, int]] = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        nodes = list(ast.walk(function))
        bound = {n.arg for n in nodes if isinstance(n, ast.arg)}
        bound |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in bound:
                found.add((node.lineno, _char_col(lines, node.lineno, node.col_offset)))
            elif isinstance(node, ast.arg):
                found.add((node.lineno, _char_col(lines, node.lineno, node.col_offset)))
    return found


def dotted_names(toks: list[tokenize.TokenInfo]) -> Iterator[tuple[int, str]]:
    """(line, name) of each dotted name in the code (``a.b.c``, as an import or an attribute path)."""
    i = 0
    while i < len(toks):
        if toks[i].type == tokenize.NAME:
            parts, j = [toks[i].string], i + 1
            while (j + 1 < len(toks) and toks[j].type == tokenize.OP and toks[j].string == "."
                   and toks[j + 1].type == tokenize.NAME):
                parts.append(toks[j + 1].string)
                j += 2
            yield toks[i].start[0], ".".join(parts)
            i = j
        else:
            i += 1
