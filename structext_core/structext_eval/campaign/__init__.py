"""Real-Test rewrite campaigns: setup, drafts, submission, review, flags and export.

A campaign draws samples from Test stratified by task and depth, gives each its own scenario,
and deals them to annotators; they save drafts and submit rewrites that must pass the checks of
:mod:`structext_core.structext_eval.rewrite`; admins approve or return them; the approved ones export as
Real-Test. The package's modules, each one concept (everything public is re-exported here, so
callers write ``campaign.submit``, ...):

* :mod:`~structext_core.structext_eval.campaign.rules`: the errors, constants, who oversees and who may act;
* :mod:`~structext_core.structext_eval.campaign.setup`: scenarios, the draw, creating, listing, rename, archive, clone;
* :mod:`~structext_core.structext_eval.campaign.items`: a campaign's items and an annotator's queue;
* :mod:`~structext_core.structext_eval.campaign.drafts`: drafts and the workspace's steps;
* :mod:`~structext_core.structext_eval.campaign.submissions`: submit, review, flags;
* :mod:`~structext_core.structext_eval.campaign.export`: progress and the audited Real-Test export.

Every write is one committed transaction (:func:`structext_core.studio.storage.write_transaction`);
a refused action raises :class:`CampaignError` with a message saying what and where,
and writes nothing.
"""

from __future__ import annotations

from structext_core.structext_eval.campaign.drafts import (
    FreeEditsAtRisk,
    get_draft,
    mapped_texts,
    may_accept_exception,
    paste_mapping,
    reset_draft,
    save_draft,
    table_mapping,
    working_copy,
)
from structext_core.structext_eval.campaign.export import (
    ExportResult,
    audited_samples,
    default_export_dir,
    export_audit,
    export_campaign,
    export_jsonl,
    export_samples,
    progress,
    real_test_sample,
    suite_file,
)
from structext_core.structext_eval.campaign.items import (
    campaigns_for,
    done_count,
    first_to_do,
    get_item,
    list_items,
    next_to_do,
    queue,
)
from structext_core.structext_eval.campaign.rules import (
    DONE,
    EDITABLE,
    MAX_SCENARIO_LENGTH,
    PAPER_PER_STRATUM,
    SCENARIO_FILE,
    STATUSES,
    SUITE_NAME,
    CampaignError,
    SubmissionRefused,
    oversees,
)
from structext_core.structext_eval.campaign.setup import (
    add_scenarios,
    clone_campaign,
    create_campaign,
    draw_stratified,
    list_campaigns,
    rename_campaign,
    scenario_catalogue,
    set_campaign_archived,
    shipped_scenarios,
)
from structext_core.structext_eval.campaign.submissions import (
    NOT_REWRITTEN,
    answer_mode,
    check_submission,
    flag_sample,
    latest_review,
    latest_submission,
    list_flags,
    live_check,
    not_rewritten,
    resolve_flag,
    review,
    submission_diff,
    submit,
    submitted_texts,
)

__all__ = [
    "CampaignError",
    "DONE",
    "EDITABLE",
    "ExportResult",
    "FreeEditsAtRisk",
    "MAX_SCENARIO_LENGTH",
    "NOT_REWRITTEN",
    "PAPER_PER_STRATUM",
    "SCENARIO_FILE",
    "STATUSES",
    "SUITE_NAME",
    "SubmissionRefused",
    "add_scenarios",
    "answer_mode",
    "audited_samples",
    "campaigns_for",
    "check_submission",
    "clone_campaign",
    "create_campaign",
    "default_export_dir",
    "done_count",
    "draw_stratified",
    "export_audit",
    "export_campaign",
    "export_jsonl",
    "export_samples",
    "first_to_do",
    "flag_sample",
    "get_draft",
    "get_item",
    "latest_review",
    "latest_submission",
    "list_campaigns",
    "list_flags",
    "list_items",
    "live_check",
    "mapped_texts",
    "may_accept_exception",
    "next_to_do",
    "not_rewritten",
    "oversees",
    "paste_mapping",
    "progress",
    "queue",
    "real_test_sample",
    "rename_campaign",
    "reset_draft",
    "resolve_flag",
    "review",
    "save_draft",
    "scenario_catalogue",
    "set_campaign_archived",
    "shipped_scenarios",
    "submission_diff",
    "submit",
    "submitted_texts",
    "suite_file",
    "table_mapping",
    "working_copy",
]
