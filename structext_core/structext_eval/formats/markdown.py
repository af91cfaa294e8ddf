"""Markdown: ``# x`` headings, ``**bold**`` runs, ``![alt](name.ext "hover text")`` images."""

from __future__ import annotations

import re
from functools import partial

from structext_core.structext_eval.formats import markup

LANGUAGE = "markdown"
SYNTAX = markup.Syntax(
    language=LANGUAGE,
    label="markdown",
    heading=lambda level, name: "#" * level + " " + name,
    heading_re=re.compile(r"^(#{1,6})\s+(.*)$"),
    level_of=len,
    bold=lambda words: f"**{words}**",
    bold_re=re.compile(r"\*\*(.+?)\*\*"),
    image=lambda name: f'![alt]({name} "hover text")',
    # No part may run past a bracket or parenthesis: each match attempt stops at the next
    # image, so a line of many unfinished images costs linear time, not quadratic.
    image_re=re.compile(r"!\[[^\[\]]*+\]\(\s*+([^\s()\[\]]++)(?:\s++\"[^\"\[\]]*+\")?\s*+\)"),
)
MAX_DEPTH = 6  # ###### is the deepest heading
SIZE = markup.size(per_node=25)
generate = partial(markup.generate, SYNTAX)
RESERVED_WORDS = frozenset({"alt", "hover", "text"})


def value_problem(new: str, kinds: set[str]) -> str | None:
    problem = markup.value_problem(new, kinds)
    if problem:
        return problem
    if "![" in new:
        return "'![' starts an image in markdown"
    return None


# The rest of the format interface is markup's, bound to this syntax.
preview = partial(markup.preview, SYNTAX)
rewrite_tokens = partial(markup.rewrite_tokens, SYNTAX)
substitute = partial(markup.substitute, SYNTAX)
parse_error = markup.parse_error
line_signature = markup.line_signature
compare_structure = partial(markup.compare_structure, SYNTAX)
