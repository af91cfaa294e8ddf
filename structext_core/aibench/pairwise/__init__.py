"""Blind pairwise comparison of AIBench systems' images (issue 22, item 3): the study, the
annotator's votes with the honest clock, the blinded images, and the lead's results.

A *pairwise study* is drawn from a stored AIBench data set (:mod:`structext_core.aibench.store`):
pairs of (one paper, two systems' images), a few *practice* pairs first (not counted), and a list
of annotators. Every annotator judges every pair, each in their own seeded order; which system is on
the left is drawn per person and pair from the study's seed and stored. A seeded share of each
person's pairs (``repeat_share``) comes again later with the sides swapped: the consistency check.

Blinding. The annotator's page never gets a system's name or anything that carries it: a task is
named by an opaque random ``token`` (:func:`current_task` returns no name, no paper id, no file
path), and :func:`task_image` returns the pixels re-encoded as a plain PNG (no metadata) padded to
a multiple of :data:`SIZE_BUCKET` bytes, so neither the file name (Streamlit serves media under a
hash of the bytes) nor its size names the system. Names are not shown after a vote either: during
a study an annotator sees no system name at all; the lead sees them on the results.

The clock is the one of :mod:`structext_core.studio.clock` (its settings, its booking of
each gap as active or away, idle auto-pause after the idle limit, Pause/Resume), kept per task,
through the same functions as a study's questions (:data:`_ITEMS`): one browser tab holds a person's pair
(``pairwise_members.active_tab``, as ``study_annotators.active_tab``); a second tab takes it over
(counted in ``takeovers``) and the first learns so at its next heartbeat; the page's input reports
(the activity component) keep the idle auto-pause away and set the last input.

Every lead action (create, add or take off a person, open or close, archive, resolve a flag) is
one transaction with its row in the audit log (:mod:`structext_core.studio.changes`), target
``pairwise:<study id>``.

Votes count by the rules of :mod:`structext_core.aibench.pairwise.ranking`: each person's first vote on
a pair (repeats only measure consistency), ties as half a win each, "both bad" apart.

The package holds one module per concept (common: names and bounds; setup; voting: the
annotator's side and its clock; images: the blinded images; lead: the lead's side) and shows
their public names here, so callers write ``pws.X``.
"""

from structext_core.aibench.pairwise.common import (  # noqa: F401
    CANVAS,
    CHOICES,
    DEFAULT_BOOT,
    FLAG_KINDS,
    LEAD_PAGE,
    MAX_NAME_CHARS,
    MAX_PAIRS,
    MAX_SERVED_WIDTH,
    SIZE_BUCKET,
)
from structext_core.aibench.pairwise.counts import (  # noqa: F401
    PersonCounts,
    annotator_summary,
    counted_votes,
    lead_label,
    person_counts,
    progress_text,
)
from structext_core.aibench.pairwise.images import (  # noqa: F401
    PAD_OVERHEAD,
    _bucket,
    _image_records,
    blinded_png,
    pad_fill,
    pad_png,
    served_pair,
    task_image,
)
from structext_core.aibench.pairwise.lead import (  # noqa: F401
    Results,
    aibench_overall,
    dataset_systems,
    flags_frame,
    image_path_for_lead,
    metric_means,
    progress,
    resolve_flag,
    results,
    votes_csv,
    votes_frame,
    votes_of,
)
from structext_core.aibench.pairwise.setup import (  # noqa: F401
    PairwiseStudy,
    add_annotator,
    create_study,
    draw_pairs,
    get_study,
    history,
    list_studies,
    members,
    remove_annotator,
    reviewed_refusal,
    set_archived,
    set_status,
    studies_for_annotator,
)
from structext_core.aibench.pairwise.voting import (  # noqa: F401
    TaskView,
    current_task,
    flag_pair,
    heartbeat,
    pause,
    record_activity,
    resume,
    take_over,
    vote,
)
from structext_core.studio.clock import ClockSettings, TakenOverError, clock_settings  # noqa: F401
from structext_core.studio.errors import StudyError  # noqa: F401
