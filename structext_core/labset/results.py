"""People beside models on a lab's set, as Results shows them: the people's counted answers of the
studies over the set, and the models' prediction files kept beside it, on the same items, with
intervals and a breakdown by the set's strata (through the shared
:func:`structext_core.views.people_vs_models.people_vs_models_frame`).

**Where models' answers are kept**: ``<sets folder>/predictions/<set file name>/``, each file one
or more models' answers to the set: ``.jsonl`` (:func:`structext_core.labset.predictions.read_predictions`)
or an Inspect AI log, ``.eval`` or ``.json`` (:func:`~structext_core.labset.predictions.read_inspect_log`;
a model's epochs on one item are averaged, so each model answers an item once). A file with any
problem is named with its problems and left out; the others are shown.

**People**: one row per counted answer (study items, not practice or gold) of the unarchived studies
of the set that the viewer may see (:func:`structext_core.studio.access.results_studies`), as model
``human:<annotator>``, scored by the final score (a lead's override in force counts, a give-up 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from structext_core.evaluation.matching import ResultsImportError
from structext_core.labset import predictions
from structext_core.labset.member import NAME
from structext_core.labset.study import sets_dir
from structext_core.views import people_vs_models

#: The most prediction files read for one set.
MAX_FILES = 50
#: The files read as predictions, by suffix.
PREDICTION_SUFFIXES = (".jsonl", ".eval", ".json")
#: How the breakdown may be chosen: label -> the item columns its groups are made of.
BREAKDOWNS = {"Overall": [], "Format": ["format"], "Stratum": ["stratum"], "Format x stratum": ["format", "stratum"]}
COLUMNS = ["model", "sample_id", "format", "stratum", "value"]


def predictions_dir(set_name: str, folder: Path | None = None) -> Path:
    """Where the models' answers to the set ``set_name`` (a file of the sets folder) are kept."""
    return (sets_dir() if folder is None else folder) / "predictions" / set_name


def sets_with_studies(db, visible) -> list[str]:
    """The sets (file names in the sets folder) of the unarchived studies named in ``visible``, in
    the order of their newest study."""
    from structext_core.studio import study
    allowed, names = set(visible), []
    for each in study.list_studies(db, include_archived=False):
        if each.benchmark == NAME and each.name in allowed and each.suite not in names:
            names.append(each.suite)
    return names


def files_signature(set_name: str, folder: Path | None = None) -> tuple:
    """What changes when the set or its models' files change (a cache key): names, sizes, times."""
    path = (sets_dir() if folder is None else folder) / set_name
    where = predictions_dir(set_name, folder)
    files = sorted(where.iterdir()) if where.is_dir() else []
    return tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in [path, *files] if p.is_file())


@dataclass
class Models:
    """The models' rows (:data:`COLUMNS`, ``value`` in percent) and the files left out with why."""

    rows: pd.DataFrame
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def model_rows(set_name: str, items, folder: Path | None = None) -> Models:
    """The models' answers kept beside the set, scored by its rule (see the module notes)."""
    where = predictions_dir(set_name, folder)
    found = sorted(p for p in where.iterdir() if p.suffix.lower() in PREDICTION_SUFFIXES and p.is_file()) \
        if where.is_dir() else []
    out = Models(pd.DataFrame(columns=COLUMNS))
    if len(found) > MAX_FILES:
        out.problems.append(f"{where}: more than {MAX_FILES} files; the first {MAX_FILES} by name are read")
        found = found[:MAX_FILES]
    frames = []
    for path in found:
        read = predictions.read_predictions if path.suffix.lower() == ".jsonl" else predictions.read_inspect_log
        try:
            rows = read(path, items)
        except (ResultsImportError, ValueError, OSError) as error:
            out.problems.append(f"{path.name}: {str(error)[:1000]}")
            continue
        if rows:
            frame = pd.DataFrame(rows)
            frame = frame.groupby(["model", "id", "format", "stratum"], as_index=False)["score"].mean()
            frames.append(frame.rename(columns={"id": "sample_id"}).assign(value=lambda f: 100 * f["score"]))
            out.files.append(path.name)
    if frames:
        out.rows = pd.concat(frames, ignore_index=True)[COLUMNS]
    return out


def people_rows(db, set_name: str, visible) -> pd.DataFrame:
    """The people's counted answers on the set (:data:`COLUMNS`, model ``human:<annotator>``, value
    in percent) of the unarchived studies named in ``visible``."""
    from structext_core.studio import study
    allowed = set(visible)
    frames = []
    for each in study.list_studies(db, include_archived=False):
        if each.benchmark == NAME and each.suite == set_name and each.name in allowed:
            frame = study.responses_frame(db, each.id)
            if len(frame):
                frames.append(pd.DataFrame({"model": "human:" + frame["annotator"].astype(str),
                                            "sample_id": frame["sample_id"].astype(str), "format": frame["format"],
                                            "stratum": frame["stratum"], "value": 100 * frame["score"]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def combined(people: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """People's and models' rows in one frame (what :func:`beside` reads)."""
    parts = [frame for frame in (people, models) if len(frame)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)


def beside(frame: pd.DataFrame, breakdown: str = "Overall", each_person: bool = False,
           n_boot: int = 1000) -> pd.DataFrame:
    """People (pooled as ``human``, or each person) and each model on the items people answered,
    per group of ``breakdown`` (:data:`BREAKDOWNS`): ``model``, ``group`` (people or model),
    ``group_of`` (the group's value, ``all`` overall), ``mean`` (percent), ``n`` (answers), ``ci_low``,
    ``ci_high`` (95% bootstrap), ``items`` (the shared items)."""
    by = BREAKDOWNS[breakdown]
    shown = people_vs_models.people_as(frame, "each" if each_person else "pool")
    keyed = shown.assign(task=shown[by].astype(str).agg(" · ".join, axis=1) if by else "all")
    items = people_vs_models.answered_items(keyed)
    cells = people_vs_models.people_vs_models_frame(keyed, n_boot=n_boot, items=items)
    cells = cells.rename(columns={"task": "group_of"})
    people_first = cells.assign(_p=cells["group"] != "people").sort_values(["_p", "model", "group_of"])
    return people_first[["model", "group", "group_of", "mean", "n", "ci_low", "ci_high", "items"]].reset_index(drop=True)
