"""Shared set-up of the rewrite tests: a Test sample, its faithful rewrite, the checks on it."""

from structext_core.structext_eval import rewrite as rw
from structext_core.structext_eval.suites import generate_sample


def sample(task_id, depth=2, index=0):
    return generate_sample(task_id, depth, 1, seed=0, index=index, suite="test")


def rewritten(s, mapping=None):
    return rw.apply_mapping(s, rw.mechanical_mapping(s) if mapping is None else mapping)


def check(s, texts):
    return rw.check_rewrite(s, texts.reference, texts.question, texts.answer)


def edited(s, reference=None, question=None, answer=None, mapping=None):
    """The checks on the faithful rewrite of ``s``, with each part passed through its edit."""
    base = rewritten(s, mapping)
    return rw.check_rewrite(s, reference(base.reference) if reference else base.reference,
                            question(base.question) if question else base.question,
                            answer(base.answer) if answer else base.answer)


def only_structure_problem(report):
    assert not report.structure_ok
    problems = report.parse + report.structure
    assert problems, report
    return problems[0]
