"""Org: ``* x`` headings, ``*bold*`` runs, ``[[name.ext]]`` images."""

from __future__ import annotations

import re
from functools import partial

from structext_core.structext_eval.formats import markup

LANGUAGE = "org"
SYNTAX = markup.Syntax(
    language=LANGUAGE,
    label="org",
    heading=lambda level, name: "*" * level + " " + name,
    heading_re=re.compile(r"^(\*+)\s+(.*)$"),
    level_of=len,
    bold=lambda words: f"*{words}*",
    bold_re=re.compile(r"(?<!\*)\*([^*\s](?:[^*]*?[^*\s])?)\*(?!\*)"),
    image=lambda name: f"[[{name}]]",
    image_re=re.compile(r"\[\[([^\[\]]++)\]\]"),  # stops at the next bracket: linear on any line
)
MAX_DEPTH = None
SIZE = markup.size(per_node=16)
generate = partial(markup.generate, SYNTAX)
RESERVED_WORDS = frozenset()


# The rest of the format interface is markup's, bound to this syntax.
preview = partial(markup.preview, SYNTAX)
rewrite_tokens = partial(markup.rewrite_tokens, SYNTAX)
substitute = partial(markup.substitute, SYNTAX)
value_problem = markup.value_problem
parse_error = markup.parse_error
line_signature = markup.line_signature
compare_structure = partial(markup.compare_structure, SYNTAX)
