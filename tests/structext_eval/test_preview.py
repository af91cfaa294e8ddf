"""Explore's rendered view of a reference: limits first, then each format's ``preview``."""

import pytest

from structext_core.structext_eval import formats, suites
from structext_core.structext_eval.formats import markup
from structext_core.structext_eval.preview import preview


@pytest.mark.parametrize("task_id,kind", [(1, "tables"), (8, "json"), (13, "json"), (18, "json"), (5, "graph"),
                                          (21, "markdown"), (24, "markdown"), (27, "markdown")])
def test_every_format_has_a_rendered_view(task_id, kind):
    sample = suites.generate_sample(task_id, 2, 1, seed=1)
    view = preview(sample["language"], sample["reference"])
    assert view.kind == kind


def markup_as_markdown(language, reference):
    return markup.as_markdown(formats.get_module(language).SYNTAX, reference)


def test_markup_preview_turns_headings_bold_and_images_into_markdown():
    latex = "r\nx \\textbf{b1} \\includegraphics[width=0.5\\textwidth]{f.jpg}\n\\subsection{t}\nz"
    md = markup_as_markdown("latex", latex)
    assert "**b1**" in md and "`f.jpg`" in md and "## t" in md and md.startswith("**r**")
    org = markup_as_markdown("org", "r\n*bold* [[a.png]]\n** s\nx")
    assert "**bold**" in org and "`a.png`" in org and "## s" in org
    assert preview("latex", latex).data == md


def test_broken_reference_explains_itself():
    view = preview("json", '{\n"id":"a",\n"subs":[\n')
    assert view.kind == "none" and "does not parse as json" in view.note


def test_unknown_format_and_text_beyond_a_limit_are_notes():
    assert preview("toml", "a = 1").note == "No rendered view for toml."
    view = preview("json", "[" * 5000 + "]" * 5000)
    assert view.kind == "none" and "too large or too deeply nested" in view.note


def test_large_tree_is_not_drawn():
    sample = suites.generate_sample(5, 3, 3)
    view = preview("tree", sample["reference"])
    assert view.kind == "none" and "too many" in view.note
