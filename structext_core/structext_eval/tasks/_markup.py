"""Tasks 21-29: Markdown, LaTeX and Org, the same three tasks (bold texts, a section's content,
included images) on documents of headings."""

from __future__ import annotations

import random

from structext_core.structext_eval.formats import Document, latex, markdown, markup, org
from structext_core.structext_eval.tasks._common import no_params
from structext_core.structext_eval.tasks._registry import Task, register

_MARKUP_HINTS = {
    "markdown": ("Bold text stands between a pair of double stars, **like this**; list each run's text.",
                 "Headings start with #, ## and ### for section, subsection and subsubsection. Count the # headings "
                 "to the asked section, then the ## headings below it, and so on; the content runs from that heading "
                 "to the next heading of the same or a higher level.",
                 'An image is written ![alt](FILE "hover text"); list each FILE.'),
    "latex": ("Bold text is the argument of \\textbf{...}: everything up to the first closing brace.",
              "Headings are \\section{}, \\subsection{} and \\subsubsection{}. Count the sections to the asked one, "
              "then the subsections below it, and so on; the content runs from that heading to the next heading of "
              "the same or a higher level.",
              "A figure is written \\includegraphics[options]{FILE}; list each FILE."),
    "org": ("Bold text stands between a pair of single stars, *like this*, inside the text (a star at the start of "
            "a line followed by a space is a heading instead).",
            "Headings start with *, ** and *** and a space for section, subsection and subsubsection. Count the * "
            "headings to the asked one, then the ** headings below it, and so on; the content runs from that heading "
            "to the next heading of the same or a higher level.",
            "An image is written [[FILE]]; list each FILE."),
}


def _pathwalk_sample(rng: random.Random, doc: Document) -> dict:
    level = rng.randint(1, min(doc.tree.height(), len(markup.LEVEL_NAMES)))
    node = rng.choice([n for n in doc.tree.walk() if n.level == level])
    return {"positions": [n.child_position() + 1 for n in node.path()[1:]]}


def _pathwalk_expected(doc: Document, p: dict) -> str:
    node = doc.tree
    for pos in p["positions"]:
        node = node.children[pos - 1]
    return markup.expected_section(doc, node)


def empty_list_answer(noun: str) -> str:
    """The original generator's answer when a document has none of the asked items."""
    if noun == "bold text":
        return "No bold texts presented in file."
    return f"No {noun} is included in the file."


def _list_answer(items: list[str], noun: str) -> str:
    return "\n".join(items) if items else empty_list_answer(noun)


def _markup_tasks(module, first_id: int) -> None:
    syntax = module.SYNTAX
    image_noun = f"{syntax.image_noun} file"
    bold_hint, section_hint, image_hint = _MARKUP_HINTS[module.LANGUAGE]
    register(Task(
        first_id, module.LANGUAGE, "TextRetrieval", f"{module.LANGUAGE}-bold-texts", 0,
        requirement="Print the raw texts one per line, in the order they appear.",
        rule_hint=bold_hint,
        sample=lambda rng, doc: {},
        question=lambda p: "Extract all bold texts.",
        expected=lambda doc, p: _list_answer(markup.expected_list(doc, "bolds"), "bold text"),
        parse=no_params,
        solve=lambda ref, p, d, w: _list_answer(markup.extract(syntax.bold_re, ref, syntax), "bold text"),
        answer_kind="lines",
    ))
    register(Task(
        first_id + 1, module.LANGUAGE, "PathWalk", f"{module.LANGUAGE}-section-content", 1,
        requirement=f"The content should be an excerpt as it appears in the {syntax.label} file, including the "
                    "heading line and any sub-section.",
        rule_hint=section_hint,
        sample=_pathwalk_sample,
        question=lambda p: f"What is the content of {markup.describe_positions(p['positions'])}?",
        expected=_pathwalk_expected,
        parse=lambda q: {"positions": markup.parse_positions(q)},
        solve=lambda ref, p, d, w: markup.section_content(syntax, ref, p["positions"], d, w),
    ))
    register(Task(
        first_id + 2, module.LANGUAGE, "TextRetrieval", f"{module.LANGUAGE}-included-{syntax.image_noun}s", 2,
        requirement="Print the file names one per line, in the order they appear.",
        rule_hint=image_hint,
        sample=lambda rng, doc: {},
        question=lambda p: f"Extract all included {syntax.image_noun} files.",
        expected=lambda doc, p: _list_answer(markup.expected_list(doc, "images"), image_noun),
        parse=no_params,
        solve=lambda ref, p, d, w: _list_answer(markup.extract(syntax.image_re, ref, language=syntax.language),
                                                image_noun),
        answer_kind="lines",
    ))


_markup_tasks(markdown, 21)
_markup_tasks(latex, 24)
_markup_tasks(org, 27)
