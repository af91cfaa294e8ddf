"""Human-baseline studies: setup and storage of studies (store), answering on the honest clock
(:mod:`structext_core.studio.clock`, shared with pairwise voting and question review), scores, the lead's figures as data (dashboard) and the export. This package shows
the public API of all of them, so callers write ``study.X``. Agreement statistics live in
:mod:`structext_core.evaluation.agreement`, the dashboard's charts in
:mod:`structext_core.views.dashboard`, the stratified draw in
:mod:`structext_core.studio.study.draws`.

A *study* is a fixed draw of samples (stratified over format x task x (depth, width)),
copied into the database so it is self-contained, and a list of annotators. Every
annotator answers the same items, each in their own shuffled order, one at a time (unless the study
deals k people per item: :mod:`structext_core.studio.crowd.dealing`).

Timing is server-side only, and counts only while the question is on screen in a
connected tab (the honest clock, below): one tab per annotator and study holds the
question, its heartbeats book active time, a silent gap longer than the grace is away
time, Pause (or an idle auto-pause) is paused time. A reload or a reopened tab finds the
same open item, the same clock and the draft as last typed.

Blinding: :func:`open_question` reads only the reference, question and requirement of
the current item (with ``json_extract``), so ground truth and rule hints never reach
the annotator's page. Correctness feedback (:func:`response_feedback`) exists only when
the study allows it, and only for an answer already committed.

Adjudication (:func:`adjudication_items`, :func:`override_score`): the lead may set a
response's score by hand with a reason; that final score is what the dashboard, the export
and Results count, the automatic score kept beside it.

Quality control (quality): optional *practice* items, answered first with the score and the
answer key shown after each (:func:`practice_feedback`, only for a committed answer), and
*gold* items mixed in at each annotator's own random places (:func:`gold_report`: who is
below the study's gold pass mark); neither is counted in any figure, export of counted rows
or Results (:data:`COUNTED_KINDS`). Annotators flag broken or unclear questions
(:func:`flag_question`); the lead resolves them (:func:`resolve_flag`).

Who runs a study (leads): an admin every study, a lead the studies they lead (:func:`can_run`,
:func:`studies_run_by`, :func:`add_lead`); every study action checks it. A lead previews a study exactly
as an annotator sees it, with nothing written (:func:`preview`).
"""

from structext_core.evaluation.agreement import (  # noqa: F401
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    pairwise_agreement,
)
from structext_core.studio import durations
from structext_core.studio.clock import (  # noqa: F401
    DEFAULT_HEARTBEAT_SECONDS,
    DEFAULT_IDLE_PAUSE_SECONDS,
    GRACE_FACTOR,
    HEARTBEAT_ENV,
    IDLE_PAUSE_ENV,
    MAX_INPUT_AGE,
    PAUSE_REASONS,
    ActivityReport,
    ClockSettings,
    TakenOverError,
    clock_settings,
    shown_seconds,
)
from structext_core.studio.seal import KEY_WITHHELD  # noqa: F401
from structext_core.studio.study.adjudication import (  # noqa: F401
    ITEM_ORDERS,
    MAX_REASON_CHARS,
    AdjudicationError,
    ItemDetail,
    ItemSummary,
    Override,
    ResponseDetail,
    adjudication_item,
    adjudication_items,
    clear_override,
    history_table,
    items_table,
    moment_text,
    override_histories,
    override_history,
    override_score,
)
from structext_core.studio.study.answering import (  # noqa: F401
    ClockStatus,
    QuestionView,
    accept_rule,
    heartbeat,
    open_question,
    pause_question,
    record_activity,
    resume_question,
    take_over,
)
from structext_core.studio.study.dashboard import (  # noqa: F401
    COUNTED_KINDS,
    accuracy_by,
    agreement_summary,
    annotator_summary,
    data_version,
    flag_fast,
    item_scores,
    pass_matrix,
    progress_table,
    responses_frame,
    study_facets,
    study_strata,
    time_summary,
)
from structext_core.studio.study.draws import stratified_draw  # noqa: F401
from structext_core.studio.study.export import (  # noqa: F401
    EXPORT_COLUMNS,
    export_columns,
    export_description,
    export_rows,
    human_results,
    study_export_columns,
    to_csv,
    to_jsonl,
)
from structext_core.studio.study.images import item_image, lead_image  # noqa: F401
from structext_core.studio.study.inspect_log import LogExportError  # noqa: F401
from structext_core.studio.study.inspect_log import build_log as build_inspect_log  # noqa: F401
from structext_core.studio.study.inspect_log import log_bytes as inspect_log_bytes  # noqa: F401
from structext_core.studio.study.inspect_log import log_name as inspect_log_name  # noqa: F401
from structext_core.studio.study.inspect_log import log_problem as inspect_log_problem  # noqa: F401
from structext_core.studio.study.inspect_log import write_log as write_inspect_log  # noqa: F401
from structext_core.studio.study.items_study import create_items_study  # noqa: F401
from structext_core.studio.study.kinds import StudyKind, kind_of, study_benchmarks  # noqa: F401
from structext_core.studio.study.leads import (  # noqa: F401
    Lead,
    add_lead,
    can_run,
    check_runs,
    leads_of,
    only_run,
    remove_lead,
    studies_run_by,
)
from structext_core.studio.study.lifecycle import (  # noqa: F401
    StudyMember,
    clone_study,
    remove_annotator,
    rename_study,
    replace_annotator,
    set_study_archived,
    study_members,
)
from structext_core.studio.study.preview import Preview, preview, preview_image  # noqa: F401
from structext_core.studio.study.progress import OwnProgress, own_progress  # noqa: F401
from structext_core.studio.study.quality import (  # noqa: F401
    FLAG_KINDS,
    GOLD_REPORT_COLUMNS,
    MAX_FLAG_NOTE_CHARS,
    Flag,
    PracticeFeedback,
    flag_question,
    flags,
    gold_report,
    pending_practice_feedback,
    practice_feedback,
    resolve_flag,
)
from structext_core.studio.study.scores import automatic_score, final_score, score_pending  # noqa: F401
from structext_core.studio.study.store import (  # noqa: F401
    DEFAULT_GOLD_PASS,
    FAST_FRACTION_OF_MEDIAN,
    FAST_MIN_SECONDS,
    MAX_PRACTICE_ITEMS,
    MAX_RESPONSE_CHARS,
    PASS_THRESHOLD,
    AnnotatorStudy,
    QuestionCounts,
    StaleQuestionError,
    Study,
    StudyError,
    add_annotator,
    annotator_names,
    annotator_order,
    first_unfinished,
    get_study,
    insert_study,
    list_studies,
    now,
    progress_words,
    set_study_status,
    studies_for_annotator,
    validate_setup,
)
from structext_core.studio.study.submitting import (  # noqa: F401
    AnnotatorProgress,
    Feedback,
    Submission,
    annotator_progress,
    give_up,
    response_feedback,
    submit_answer,
    submit_draft,
)

#: Time spent on a question as a running clock: ``12:05``, ``1:02:03``.
format_duration = durations.clock
