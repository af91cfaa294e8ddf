"""LaTeX: ``\\section{}`` headings, ``\\textbf{}`` runs, ``\\includegraphics`` figures."""

from __future__ import annotations

import random
import re
from functools import partial

from structext_core.structext_eval.formats import Document, markup

LANGUAGE = "latex"
COMMANDS = ["section", "subsection", "subsubsection", "paragraph", "subparagraph"]

SYNTAX = markup.Syntax(
    language=LANGUAGE,
    label="LaTeX",
    heading=lambda level, name: f"\\{COMMANDS[level - 1]}{{{name}}}",
    heading_re=re.compile(r"^\\(section|subsection|subsubsection|paragraph|subparagraph)\*?\{(.*)\}\s*$"),
    level_of=lambda command: COMMANDS.index(command) + 1,
    bold=lambda words: f"\\textbf{{{words}}}",
    # An argument ends at the first closing brace and may not open another: each match
    # attempt stops at the next brace, so no line costs quadratic time.
    bold_re=re.compile(r"\\textbf\{([^{}]*+)\}"),
    image=lambda name: f"\\includegraphics[width=0.5\\textwidth]{{{name}}}",
    image_re=re.compile(r"\\includegraphics(?:\[[^\[\]{}]*+\])?\{([^{}]*+)\}"),
    image_noun="figure",
)
MAX_DEPTH = len(COMMANDS)
SIZE = markup.size(per_node=50)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    if depth > MAX_DEPTH:
        raise ValueError(f"LaTeX has heading commands for depth up to {MAX_DEPTH}, got {depth}")
    return markup.generate(SYNTAX, rng, depth, width, col)


RESERVED_WORDS = frozenset({"section", "subsection", "subsubsection", "paragraph", "subparagraph", "textbf",
                            "includegraphics", "width", "0.5", "textwidth"})


# The rest of the format interface is markup's, bound to this syntax.
preview = partial(markup.preview, SYNTAX)
rewrite_tokens = partial(markup.rewrite_tokens, SYNTAX)
substitute = partial(markup.substitute, SYNTAX)
value_problem = markup.value_problem
parse_error = markup.parse_error
line_signature = markup.line_signature
compare_structure = partial(markup.compare_structure, SYNTAX)
