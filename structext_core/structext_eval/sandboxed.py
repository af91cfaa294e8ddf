"""StrucText-Eval's checks of untrusted text, run in the check workers (:mod:`structext_core.studio.sandbox`).

The member module lets the workers run :func:`structext_core.structext_eval.rewrite.check_rewrite`
and :func:`structext_core.structext_eval.preview.preview` (``SANDBOXED``); these are the calls the
campaigns and Explore make, each returning what the plain function would, or why it could not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from structext_core.studio import sandbox
from structext_core.studio.sandbox import Unchecked

if TYPE_CHECKING:
    from structext_core.structext_eval.formats import Preview
    from structext_core.structext_eval.rewrite import CheckReport


def check_rewrite(sample: dict, reference: str, question: str, answer: str, answer_mode: str = "always",
                  withheld_note: str = "") -> CheckReport | Unchecked:
    """:func:`structext_core.structext_eval.rewrite.check_rewrite` in a worker, or why it could not run.

    Who may see the answer check (``answer_mode``) is decided by the caller, from
    :mod:`structext_core.studio.seal` (see :func:`structext_core.structext_eval.campaign.live_check`)."""
    return sandbox.run("check_rewrite", sample, reference, question, answer, answer_mode, withheld_note)


def preview(language: str, reference: str) -> Preview:
    """:func:`structext_core.structext_eval.preview.preview` in a worker; a reference that cannot be previewed
    gets a ``none`` preview whose note says why."""
    from structext_core.structext_eval.formats import Preview

    result = sandbox.run("preview", language, reference)
    if isinstance(result, Unchecked):
        return Preview("none", note=result.describe("preview"))
    return result
