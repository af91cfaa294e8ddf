"""Real-Test rewriting: value mapping and the two checks that keep a rewrite honest.

A rewrite replaces the abstract values of a sample (``"k"``, ``"zy"``, ``banana``,
``vq.png``, ``180``) with real-world ones while keeping the structure and the answer.
This package is pure (no Streamlit, no database); its API is re-exported here:

- ``tokens``: :func:`extract_tokens` lists every abstract token of a sample (ids, keys,
  values, words, file names, table cells, numbers, question parameters) with its roles;
- ``mapping``: :func:`validate_mapping` and :func:`apply_mapping` replace whole tokens
  consistently in reference, question and answer (the question is re-worded through the
  task's own template, so its frame is never touched);
- ``checks``: :func:`check_rewrite` runs the live checks: the rewrite reads in its format as
  the original does, its skeleton equals the original's (per format), and the answer the
  core's solver derives from the rewritten reference equals the rewritten answer;
- ``diff``: :func:`diff_texts` shows a reviewer what a rewrite changed, line by line (bounded).

What depends on the format (where its data is, what a value may hold, how it reads, its
skeleton) is the format module's (:mod:`structext_core.structext_eval.formats`). Every problem is
a :class:`Problem` that says which check, where, and what differs.
"""

from __future__ import annotations

from structext_core.structext_eval.formats import NUMBER_RE, Problem
from structext_core.structext_eval.formats.csv_format import NUMERIC_COLUMNS, CsvTable
from structext_core.structext_eval.formats.csv_format import read_tables as read_csv_tables
from structext_core.structext_eval.formats.markup import Block
from structext_core.structext_eval.formats.shapes import ObjectShape
from structext_core.structext_eval.formats.xml_format import ElementShape
from structext_core.structext_eval.rewrite.checks import (
    ANSWER_AFTER_STRUCTURE,
    ANSWER_AFTER_STRUCTURE_NOTE,
    ANSWER_ALWAYS,
    ANSWER_WITHHELD,
    CheckReport,
    check_answer,
    check_rewrite,
    check_structure,
)
from structext_core.structext_eval.rewrite.diff import TextDiff, diff_text, diff_texts
from structext_core.structext_eval.rewrite.mapping import (
    FILE_NAME_RE,
    FIXED_ANSWER_CATEGORIES,
    FIXED_ANSWER_TASKS,
    GUIDELINES,
    IDENTIFIER_KINDS,
    MappingError,
    Texts,
    apply_mapping,
    clean_mapping,
    has_free_edits,
    original_texts,
    parse_mapping_text,
    rewrite_question,
    substitute,
    validate_mapping,
)
from structext_core.structext_eval.rewrite.tokens import (
    MAPPABLE_PARAMS,
    NUMERIC_PARAMS,
    RESERVED,
    Token,
    extract_tokens,
    mechanical_mapping,
    question_params,
)

__all__ = [
    "ANSWER_AFTER_STRUCTURE", "ANSWER_AFTER_STRUCTURE_NOTE", "ANSWER_ALWAYS", "ANSWER_WITHHELD",
    "FILE_NAME_RE", "FIXED_ANSWER_CATEGORIES", "FIXED_ANSWER_TASKS", "GUIDELINES", "IDENTIFIER_KINDS",
    "MAPPABLE_PARAMS", "NUMBER_RE", "NUMERIC_COLUMNS", "NUMERIC_PARAMS", "RESERVED",
    "Block", "CheckReport", "CsvTable", "ElementShape", "MappingError", "ObjectShape", "Problem", "TextDiff", "Texts",
    "Token", "apply_mapping", "check_answer", "check_rewrite", "check_structure", "clean_mapping", "diff_text",
    "diff_texts", "extract_tokens",
    "has_free_edits", "mechanical_mapping", "original_texts", "parse_mapping_text", "question_params",
    "read_csv_tables", "rewrite_question", "substitute", "validate_mapping",
]
