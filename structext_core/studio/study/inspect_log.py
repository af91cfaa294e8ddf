"""A study's answers as an Inspect AI eval log, written with Inspect's own log API, so that
``inspect view`` and Inspect's data frames (``inspect_ai.analysis.samples_df``) show the people
beside the models' logs. Any benchmark's study, through the protocol (:mod:`structext_core.protocol`).

What the log holds:

- **The model** is the study's people: ``human/<study name>``.
- **One sample per item and person**: the item's id, input, options and key as its benchmark
  reads it in a log (its member's ``log_item``), the person's answer as the sample's output, and
  the answer's score by the benchmark's rule as the study counts it (the *final* score: a lead's
  override in force counts; a give-up scores 0) under the benchmark's scorer name
  (``INSPECT_SCORER``). Each person is one *epoch* (the same person has the same epoch on every
  item; ``metadata.annotator`` names them), so Inspect's per-sample reduction (``mean`` over the
  epochs, written in the log's ``reductions``) and ``samples_df(...).groupby("id")`` mean give each
  item's figure as the dashboard computes it (:func:`structext_core.studio.study.dashboard.item_scores`).
- **Images**: an item whose ``log_item`` gives an image has as input one user message with the text
  and the image (a data URI; Inspect's writer keeps it once per sample as an attachment); beyond
  :data:`MAX_IMAGE_BYTES` in all the samples hold the text only (the log's metadata says so).
- **Time**: ``working_time`` is the active time on the item (the honest clock), ``total_time`` the
  wall time from first showing to submission; the parts (paused, idle, away) are in the metadata,
  with the item's strata, the automatic score and the override.
- **Who the people are**: a person's questionnaire answers (:mod:`structext_core.studio.crowd.profiles`)
  are in each of their samples' metadata (``questionnaire``: field name -> answer, numbers as
  numbers), and the questionnaire with everyone's answers in the log's metadata.
- **The results**: ``mean`` and ``stderr`` over the items' means (Inspect's own convention with
  epochs); the dashboard's pooled figure is the mean over answers: the same when every item has as
  many answers.

Only the counted answers go in (practice and gold answers are not). Inspect AI is an optional
extra of this checkout (``.[inspect]``, which ``bash start.sh`` installs); without it, :class:`LogExportError` says so.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import sqlite_utils

from structext_core import protocol
from structext_core.studio.crowd import profiles
from structext_core.studio.study.dashboard import item_scores, responses_frame
from structext_core.studio.study.kinds import kind_of
from structext_core.studio.study.store import StudyError, get_study

#: The formats Inspect writes: its binary ``.eval`` and its ``.json``.
LOG_SUFFIXES = (".eval", ".json")
#: The most image data (data URIs, every person's samples counted) a log embeds; beyond it the
#: samples hold the questions' text only, and the log's metadata says so.
MAX_IMAGE_BYTES = 200_000_000
#: How to get Inspect AI in this checkout: the README's start command installs the extra itself.
INSTALL_HINT = ("run `bash start.sh` again in the project folder (it installs what is missing), "
                "or `.venv/bin/pip install -e '.[inspect]'` there")


class LogExportError(StudyError):
    """A study's answers that cannot be written as an Inspect log (what and why); nothing was written."""


def _inspect():
    """Inspect's log classes, or a :class:`LogExportError` saying how to install them."""
    try:
        from inspect_ai import log
        from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ContentImage, ContentText, ModelOutput
        from inspect_ai.scorer import Score
    except ImportError:
        raise LogExportError(f"Inspect AI is not installed, so no Inspect log can be written: {INSTALL_HINT}.") from None
    return log, Score, ModelOutput, ChatMessageUser, ChatMessageAssistant, ContentText, ContentImage


def installed() -> bool:
    """Whether Inspect AI can be imported here."""
    return importlib.util.find_spec("inspect_ai") is not None


def log_problem(db: sqlite_utils.Database, study_id: int) -> str | None:
    """Why the study's log cannot be written now (Inspect AI missing, no counted answer), or None;
    cheap, for a page to offer the download only when it can be made."""
    if not installed():
        return f"An Inspect AI log needs Inspect AI, which is not installed: {INSTALL_HINT}."
    counted = db.execute("SELECT 1 FROM responses r JOIN study_items i ON i.id = r.item_id"
                         " WHERE r.study_id = ? AND i.kind = 'study' LIMIT 1", [study_id]).fetchone()
    return None if counted else "The Inspect AI log is offered once the study has a counted answer."


def scorer_name(benchmark: str, stored=()) -> str:
    """The name a study's scores carry in the log: the member's ``INSPECT_SCORER`` (a name, or a
    function of the study's stored items, ``study_items.sample_json``, giving one or None), else
    ``<name>_score``."""
    declared = protocol.option(protocol.get_module(benchmark), "INSPECT_SCORER")
    if callable(declared):
        declared = declared(list(stored))
    return declared or re.sub(r"\W+", "_", benchmark).strip("_") + "_score"


def _iso(seconds) -> str | None:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return None
    return datetime.fromtimestamp(float(seconds), tz=timezone.utc).isoformat()


def _number(value):
    """A plain float, or None for a missing value."""
    return None if value is None or pd.isna(value) else float(value)


def _logged_items(db: sqlite_utils.Database, study_id: int, benchmark: str,
                  source: str) -> dict[int, protocol.LoggedItem]:
    member = protocol.get_module(benchmark)
    read = protocol.option(member, "log_item") or protocol.plain_log_item
    return {row[0]: read(json.loads(row[1]), json.loads(row[2]), source) for row in db.execute(
        "SELECT id, sample_json, strata FROM study_items WHERE study_id = ? AND kind = 'study'", [study_id])}


def build_log(db: sqlite_utils.Database, study_id: int):
    """The study's counted answers as an ``inspect_ai.log.EvalLog`` (see the module notes).

    Raises :class:`LogExportError` when Inspect AI is not installed or the study has no counted
    answer, :class:`StudyError` when there is no such study."""
    log, Score, ModelOutput, ChatMessageUser, ChatMessageAssistant, ContentText, ContentImage = _inspect()
    chosen = get_study(db, study_id)
    benchmark = chosen.benchmark or protocol.names()[0]
    frame = responses_frame(db, study_id)
    if frame.empty:
        raise LogExportError(f"Study {chosen.name!r} has no counted answer yet: there is nothing to put in an "
                             "Inspect log.")
    items = _logged_items(db, study_id, benchmark, chosen.suite)
    named: dict[str, int] = {}
    for item_id, item in items.items():
        if named.setdefault(item.id, item_id) != item_id:  # Inspect would pool two items' answers as one
            raise LogExportError(f"Two items of study {chosen.name!r} have the id {item.id[:80]!r} in a log "
                                 f"(study items {named[item.id]} and {item_id}): no log is written.")
    scorer = scorer_name(benchmark, (json.loads(row[0]) for row in db.execute(
        "SELECT sample_json FROM study_items WHERE study_id = ? AND kind = 'study'", [study_id])))
    model = f"human/{chosen.name}"
    people = sorted(frame["annotator"].unique())
    counts = frame["item_id"].value_counts()
    image_bytes = sum(len(items[i].image or "") * int(n) for i, n in counts.items())
    with_images = image_bytes <= MAX_IMAGE_BYTES  # each person's sample carries its item's image
    epoch_of = {name: n for n, name in enumerate(people, 1)}
    strata_keys = list(protocol.get_module(benchmark).STRATA)
    answers = profiles.person_answers(db, study_id)  # who the people are: their questionnaire answers
    samples = []
    for row in frame.sort_values(["item_position", "annotator"]).to_dict("records"):
        item = items[row["item_id"]]
        response = "" if row["gave_up"] else str(row["response"] or "")
        override = _number(row["score_override"])
        metadata = {key: row[key] for key in strata_keys if key in row and not pd.isna(row[key])}
        metadata.update({
            "annotator": row["annotator"], "gave_up": bool(row["gave_up"]),
            "active_seconds": _number(row["elapsed_seconds"]), "paused_seconds": _number(row["paused_seconds"]),
            "idle_seconds": _number(row["idle_seconds"]), "away_seconds": _number(row["away_seconds"]),
            "wall_seconds": _number(row["wall_seconds"]), "score_auto": float(row["score_auto"]),
            "score_override": override, "override_reason": row["override_reason"] if override is not None else None,
        })
        if answers.get(row["user_id"]):
            metadata["questionnaire"] = answers[row["user_id"]]
        text = item.input or "(no text)"
        shown = [ContentText(text=text), ContentImage(image=item.image)] if item.image and with_images else text
        messages = [ChatMessageUser(content=shown)]
        if response:
            messages.append(ChatMessageAssistant(content=response, model=model))
        samples.append(log.EvalSample(
            id=item.id, epoch=epoch_of[row["annotator"]], input=text if isinstance(shown, str) else [messages[0]],
            choices=list(item.choices) or None,
            target=list(item.target) if isinstance(item.target, tuple) else item.target,
            messages=messages, output=ModelOutput.from_content(model=model, content=response),
            scores={scorer: Score(value=float(row["score"]), answer=response,
                                  explanation="gave up" if row["gave_up"] else None,
                                  metadata={"rouge_l": float(row["rouge_l"]), "exact_match": float(row["exact_match"])})},
            metadata=metadata, started_at=_iso(row["first_shown_at"]), completed_at=_iso(row["submitted_at"]),
            working_time=_number(row["elapsed_seconds"]), total_time=_number(row["wall_seconds"])))
    per_item = item_scores(frame)
    means = [float(x) for x in per_item["score"]]
    n = len(means)
    mean = sum(means) / n
    stderr = math.sqrt(sum((x - mean) ** 2 for x in means) / (n - 1) / n) if n > 1 else 0.0
    ids = [items[item_id].id for item_id in per_item["item_id"]]
    spec = log.EvalSpec(
        created=datetime.now(timezone.utc).isoformat(), task="human_baseline",
        task_display_name=f"Human baseline: {chosen.name}", solver="human_baseline", model=model,
        dataset=log.EvalDataset(name=chosen.suite, samples=n, sample_ids=ids),
        config=log.EvalConfig(epochs=len(people), epochs_reducer=["mean"]),
        metadata={"study": chosen.name, "study_id": chosen.id, "benchmark": benchmark,
                  "display_name": protocol.display_name(benchmark), "people": epoch_of,
                  "score_note": kind_of(benchmark).score_note,
                  "written_by": "StrucText Studio",
                  "images": "embedded" if with_images else f"left out: more than {MAX_IMAGE_BYTES:,} bytes in all",
                  **_questionnaire_metadata(db, study_id, frame, answers)})
    results = log.EvalResults(total_samples=n, completed_samples=n, scores=[log.EvalScore(
        name=scorer, scorer=scorer, reducer="mean", scored_samples=n, unscored_samples=0,
        metrics={"mean": log.EvalMetric(name="mean", value=mean), "stderr": log.EvalMetric(name="stderr", value=stderr)})])
    stats = log.EvalStats(started_at=_iso(frame["first_shown_at"].min()) or "",
                          completed_at=_iso(frame["submitted_at"].max()) or "")
    built = log.EvalLog(status="success", eval=spec, samples=samples, results=results, stats=stats)
    # set after construction: EvalLog's validator cannot take reductions beside an EvalResults object
    built.reductions = [log.EvalSampleReductions(scorer=scorer, reducer="mean", samples=[
        log.EvalSampleScore(value=value, sample_id=sample_id) for sample_id, value in zip(ids, means)])]
    return built


def _questionnaire_metadata(db: sqlite_utils.Database, study_id: int, frame: pd.DataFrame,
                            answers: dict[int, dict]) -> dict:
    """The log's ``questionnaire``: the study's fields (name, label, kind, options) and each person's
    answers by name; nothing when the study asks none."""
    asked = profiles.fields(db, study_id)
    if not asked:
        return {}
    people = dict(zip(frame["user_id"], frame["annotator"]))
    return {"questionnaire": {
        "fields": [{key: field[key] for key in ("name", "label", "kind", "options") if field.get(key)}
                   for field in asked],
        "people": {name: answers.get(int(user_id), {}) for user_id, name in sorted(people.items(), key=lambda p: p[1])},
    }}


#: How Inspect names its logs (a leading ISO time): it lists a ``.json`` log only when so named.
_INSPECT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")


def log_name(study_name: str, fmt: str = "eval", at: datetime | None = None) -> str:
    """A file name for the log as Inspect names its own: ``<time>_human-baseline_<study>.<fmt>``."""
    stamp = (at or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    slug = re.sub(r"[^\w-]+", "-", study_name).strip("-")[:60] or "study"
    return f"{stamp}_human-baseline_{slug}.{fmt}"


def _format_of(path: Path) -> str:
    if path.suffix.lower() not in LOG_SUFFIXES:
        raise LogExportError(f"{path}: an Inspect log is written as .eval or .json; give a file name ending so.")
    if path.suffix.lower() == ".json" and not _INSPECT_NAME.match(path.name):
        raise LogExportError(f"{path}: Inspect lists a .json log only when its name starts with the time, as "
                             f"{log_name('study', 'json')} does; give such a name, or a folder (the name is made), "
                             "or write .eval.")
    return path.suffix.lower()[1:]


def write_log(db: sqlite_utils.Database, study_id: int, path: str | os.PathLike) -> Path:
    """Write the study's log (:func:`build_log`) to ``path`` (``.eval`` or ``.json``), a new file,
    or into the folder ``path`` as :func:`log_name` names it; the file's path. A file already there
    is never overwritten (:class:`LogExportError`); nothing is left half written (the log is written
    beside it, then linked into place only if the name is still free)."""
    path = Path(path)
    if path.is_dir():
        path = path / log_name(get_study(db, study_id).name)
    fmt = _format_of(path)
    if path.exists() or path.is_symlink():
        raise LogExportError(f"{path} exists already: choose a new file (nothing is overwritten).")
    if not path.parent.is_dir():
        raise LogExportError(f"{path}: the folder {path.parent} does not exist.")
    built = build_log(db, study_id)
    log = _inspect()[0]
    handle, temporary = tempfile.mkstemp(prefix=".structext-log-", suffix=path.suffix, dir=path.parent)
    os.close(handle)
    try:
        log.write_eval_log(built, temporary, format=fmt)
        try:
            os.link(temporary, path)  # fails when the name was taken meanwhile: never overwrites
        except FileExistsError:
            raise LogExportError(f"{path} exists already: choose a new file (nothing is overwritten).") from None
    finally:
        os.unlink(temporary)
    return path


def log_bytes(db: sqlite_utils.Database, study_id: int, fmt: str = "eval") -> bytes:
    """The study's log as the bytes of a ``.eval`` (or ``.json``) file, for a download."""
    with tempfile.TemporaryDirectory(prefix="structext-log-") as folder:
        path = write_log(db, study_id, Path(folder) / log_name("study", fmt))
        return path.read_bytes()
