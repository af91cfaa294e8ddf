"""AIBench's expert review of questions: a review campaign over the papers of a stored data set.

What the paper did by hand (seven experts, about 20 minutes a paper), with what the Real-Test
rewriting campaigns (:mod:`structext_core.studio.campaign`) have: the lead creates a campaign over
a stored AIBench set and its reviewers; each paper goes to one reviewer, a seeded share of the
papers to two (independently: neither sees the other's work). A reviewer takes one paper at a
time and decides per question: ``accept``, ``edit`` (text, options, answer, level; with a
reason) or ``remove`` (with a reason), and may add questions. Every decision is a draft saved as
it is made; submitting needs a decision on every question and every edited or added question to
pass :func:`structext_core.aibench.review_checks.check_question` (warnings where the logic graph
disagrees do not block). The lead approves or sends back with a comment, resolves flags,
adjudicates the questions two reviewers disagree on, and exports the curated set in the import
format with each question's provenance and the review log.

Agreement: Cohen's kappa (:func:`structext_core.evaluation.agreement.cohen_kappa`) on
accept / edit / remove over the generated questions of double-reviewed papers that both
reviewers submitted, overall and per level, with n.

Time per paper: the honest clock of the studies (:mod:`structext_core.studio.clock`), kept
per item in the same columns: active, away, idle (re-booked before an idle auto-pause) and paused
seconds, from the heartbeats of the page.

Who is the lead is read from the one role table: whoever may open the review-campaign admin page
(:data:`LEAD_PAGE`). Every write is one transaction; a refused action raises
:class:`ReviewError` saying what and where, and writes nothing. Lead actions go to the audit log.

The package holds one module per concept (common: names, error, who leads; papers; campaigns;
drafts: the decisions; timing: the clock; reviewing: submit, review, flags; adjudication:
progress, agreement, adjudication; curation: the curated set and its export; sent_back:
questions sent back from Results) and shows their public names here, so callers write ``qr.X``.
"""

from structext_core.aibench.model import ORIGINAL_SYSTEM  # noqa: F401 (the page writes qr.ORIGINAL_SYSTEM)
from structext_core.aibench.question_review.adjudication import (  # noqa: F401
    adjudicate,
    agreement,
    disagreements,
    latest_adjudication,
    progress,
)
from structext_core.aibench.question_review.campaigns import (  # noqa: F401
    campaign,
    campaign_reviewers,
    copy_campaign,
    create_campaign,
    deal,
    default_double_share,
    get_item,
    history,
    list_campaigns,
    list_items,
    next_item,
    set_archived,
)
from structext_core.aibench.question_review.common import (  # noqa: F401
    ACTIONS,
    ADDED,
    ADDED_PREFIX,
    DEFAULT_DOUBLE_SHARE,
    EDITABLE,
    GENERATED,
    LEAD_PAGE,
    MAX_ADDED,
    MAX_NAME_CHARS,
    MAX_REASON_CHARS,
    REMOVED,
    REVIEW_PAGE,
    REVISED,
    STATUSES,
    ReviewError,
    oversees,
)
from structext_core.aibench.question_review.curation import (  # noqa: F401
    Curated,
    ExportResult,
    curated,
    export,
    review_log,
    zip_folder,
)
from structext_core.aibench.question_review.drafts import (  # noqa: F401
    Decision,
    Row,
    accept_remaining,
    add_question,
    blocking,
    decisions,
    delete_added,
    question_from,
    question_json,
    review_rows,
    save_decision,
    undecided,
)
from structext_core.aibench.question_review.papers import (  # noqa: F401
    SEALED_PAPER,
    figure_path,
    load_dataset,
    paper_for,
    paper_of,
    sealed_for,
)
from structext_core.aibench.question_review.reviewing import (  # noqa: F401
    flag,
    latest_review,
    latest_submission,
    list_flags,
    resolve_flag,
    review,
    submission_rows,
    submit,
)
from structext_core.aibench.question_review.sent_back import (  # noqa: F401
    EVIDENCE_KEYS,
    MAX_EVIDENCE_CHARS,
    describe_evidence,
    move_send_back,
    open_campaigns,
    send_back,
    sendbacks,
    sendbacks_for_item,
    withdraw_send_back,
)
from structext_core.aibench.question_review.timing import (  # noqa: F401
    clock_of,
    heartbeat,
    pause,
    record_activity,
    resume,
)
