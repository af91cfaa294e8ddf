"""People beside models on one item file of any benchmark, as the default Results section shows them
(:mod:`structext_core.ui.defaults`): the people's counted answers of the studies over that file and
the models' answers kept beside it (:mod:`structext_core.evaluation.item_sets`), on the same items,
with intervals, broken down by the benchmark's strata (one or two at a time), through the shared
:func:`structext_core.views.people_vs_models.people_vs_models_frame`.

**People**: one row per counted answer (study items, not practice or gold) of the unarchived studies
of the file that the viewer may see (``visible``: :func:`structext_core.studio.data_scope.results_studies`),
as model ``human:<annotator>``, scored by the final score (a lead's override in force counts, a
give-up 0). Each answer counts once, whichever study it was given in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from structext_core import protocol
from structext_core.evaluation import item_sets
from structext_core.evaluation.matching import ResultsImportError
from structext_core.studio.crowd import profiles
from structext_core.views import people_vs_models


def columns(name: str, facets=()) -> list[str]:
    """The columns of the rows of :func:`people_rows` and :func:`model_rows`: model, sample_id, the
    benchmark's strata, its items' more fields (``facets``), value (percent)."""
    return ["model", "sample_id", *protocol.get_module(name).STRATA, *facets, "value"]


def item_facets(name: str, items) -> dict[str, dict[str, str]]:
    """Each item's more fields (its member's ``item_facets``, as a study keeps them), by item id."""
    member = protocol.get_module(name)
    return {member.item_id(item): protocol.clean_facets(member, item) for item in items}


def facet_names(frame: pd.DataFrame, name: str) -> list[str]:
    """The columns of ``frame`` (rows of :func:`people_rows` or :func:`model_rows`) that are its
    items' more fields: every column but the fixed ones and the strata."""
    return [c for c in frame.columns if c not in columns(name)]


def files_with_studies(db, name: str, visible) -> list[str]:
    """The item files of the benchmark's unarchived studies named in ``visible``, newest study first."""
    from structext_core.studio import study
    allowed, files = set(visible), []
    for each in study.list_studies(db, include_archived=False):
        if each.benchmark == name and each.name in allowed and each.suite not in files:
            files.append(each.suite)
    return files


@dataclass
class Models:
    """The models' rows (:func:`columns`, ``value`` in percent) and the files left out with why."""

    rows: pd.DataFrame
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: Per model of an Inspect log and item: our score and the log's own (0 to 1), epochs averaged.
    logged: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["model", "sample_id", "ours", "logged"]))


def model_rows(name: str, file_name: str, items) -> Models:
    """The models' answers kept beside the item file, scored by the benchmark's rule; a model's
    epochs on one item averaged, so each model answers an item once."""
    strata = list(protocol.get_module(name).STRATA)
    found, problems = item_sets.prediction_files(name, file_name)
    out = Models(pd.DataFrame(columns=columns(name)), problems=list(problems))
    frames = []
    for path in found:
        read = item_sets.read_predictions if path.suffix.lower() == ".jsonl" else item_sets.read_inspect_log
        try:
            rows = read(name, path, items)
        except (ResultsImportError, ValueError, OSError) as error:
            out.problems.append(f"{path.name}: {str(error)[:1000]}")
            continue
        if rows:
            if "logged" in rows[0]:
                both = pd.DataFrame(rows).dropna(subset=["logged"])
                if len(both):
                    both = both.groupby(["model", "id"], as_index=False)[["score", "logged"]].mean()
                    out.logged = pd.concat([out.logged, both.rename(columns={"id": "sample_id", "score": "ours"})],
                                           ignore_index=True)
            frame = pd.DataFrame(rows).groupby(["model", "id", *strata], as_index=False)["score"].mean()
            frames.append(frame.rename(columns={"id": "sample_id"}).assign(value=lambda f: 100 * f["score"]))
            out.files.append(path.name)
    if frames:
        rows = pd.concat(frames, ignore_index=True)
        facets = item_facets(name, items)
        names = list(dict.fromkeys(key for each in facets.values() for key in each))
        for key in names:
            rows[key] = [facets.get(item_id, {}).get(key, "") for item_id in rows["sample_id"]]
        out.rows = rows[columns(name, names)]
    return out


def logged_beside(name: str, models: Models, items, shown_items=None, most: int = 10) -> pd.DataFrame:
    """Each model of an Inspect log with its log's own score beside ours, on the items people
    answered (``shown_items``; all when None): ``model``, ``items``, ``rescored`` and ``in its log``
    (percent), ``differ`` (how many items the two disagree on) and ``items that differ`` (the first
    ``most``, by the ids the lab knows them by)."""
    member = protocol.get_module(name)
    own_id = {member.item_id(item): item_sets.item_names(member, item)[0] for item in items}
    frame = models.logged if shown_items is None else models.logged[models.logged["sample_id"].isin(shown_items)]
    rows = []
    for model, group in frame.groupby("model", sort=True):
        differ = group[(group["ours"] - group["logged"]).abs() > 1e-9]
        names = [own_id.get(i, i) for i in differ["sample_id"]]
        rows.append({"model": model, "items": len(group), "rescored": round(100 * group["ours"].mean(), 1),
                     "in its log": round(100 * group["logged"].mean(), 1), "differ": len(differ),
                     "items that differ": ", ".join(names[:most]) + (f" (+{len(names) - most})" if len(names) > most
                                                                    else "")})
    return pd.DataFrame(rows, columns=["model", "items", "rescored", "in its log", "differ", "items that differ"])


def _studies_of(db, name: str, file_name: str, visible) -> list:
    """The unarchived studies of the benchmark over the item file that are named in ``visible``."""
    from structext_core.studio import study
    allowed = set(visible)
    return [each for each in study.list_studies(db, include_archived=False)
            if each.benchmark == name and each.suite == file_name and each.name in allowed]


def people_axes(db, name: str, file_name: str, visible) -> list[profiles.Axis]:
    """What the people of the studies :func:`people_rows` reads may be split by: their questionnaires'
    choice and number fields (:func:`structext_core.studio.crowd.profiles.axes_of`)."""
    return profiles.axes_of(db, [each.id for each in _studies_of(db, name, file_name, visible)])


def split_model(axis: str, group: str) -> str:
    """The model name of the people of one group of a questionnaire field: ``human:expertise = expert``
    (a person's name has no space, so it never reads as one)."""
    return f"human:{axis} = {group}"


def split_order(db, name: str, file_name: str, visible, split_by: str) -> list[str]:
    """The model names of the groups of ``split_by`` (:func:`split_model`) in the field's order: its
    options, or its ranges upward; people who gave no answer last."""
    ids = [each.id for each in _studies_of(db, name, file_name, visible)]
    return [split_model(split_by, group) for group in profiles.group_order(db, ids, split_by)]


def people_rows(db, name: str, file_name: str, visible, split_by: str | None = None) -> pd.DataFrame:
    """The people's counted answers on the item file (:func:`columns`, model ``human:<annotator>``,
    value in percent) of the unarchived studies named in ``visible``. With ``split_by`` (a field of
    :func:`people_axes`), the model is the person's group on it instead (:func:`split_model`;
    number ranges cut once over the studies read), so each group is a row beside the models."""
    from structext_core.studio import study
    strata = list(protocol.get_module(name).STRATA)
    shown, frames = _studies_of(db, name, file_name, visible), []
    groups = profiles.people_groups(db, [each.id for each in shown], split_by) if split_by else {}
    for each in shown:
        frame = study.responses_frame(db, each.id)
        if len(frame):
            facets = study.study_facets(db, each.id)
            who = ("human:" + frame["annotator"].astype(str) if not split_by else
                   [split_model(split_by, groups.get((each.id, int(u)), profiles.NO_ANSWER))
                    for u in frame["user_id"]])
            frames.append(pd.DataFrame({"model": who,
                                        "sample_id": frame["sample_id"].astype(str),
                                        **{key: frame[key] for key in [*strata, *facets]},
                                        "value": 100 * frame["score"]}))
    if not frames:
        return pd.DataFrame(columns=columns(name))
    return pd.concat(frames, ignore_index=True).fillna({c: "" for c in set().union(*(f.columns for f in frames))
                                                        if c not in ("value",)})


def combined(people: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """People's and models' rows in one frame (what :func:`beside` reads)."""
    parts = [frame for frame in (people, models) if len(frame)]
    return pd.concat(parts, ignore_index=True) if parts else people.iloc[:0]


def breakdowns(name: str) -> dict[str, list[str]]:
    """How Results may break the benchmark down by its strata: label -> columns (overall, each
    stratum, and each pair of strata in the declared order); its items' more fields come beside
    them (:func:`facet_names`)."""
    strata = list(protocol.get_module(name).STRATA)
    out: dict[str, list[str]] = {"Overall": []}
    out.update({protocol.stratum_label(key): [key] for key in strata})
    for i, first in enumerate(strata):
        for second in strata[i + 1:]:
            out[f"{protocol.stratum_label(first)} x {second.replace('_', ' ')}"] = [first, second]
    return out


def beside(frame: pd.DataFrame, by: list[str] = (), each_person: bool = False, n_boot: int = 1000,
           people_order: Sequence[str] = ()) -> pd.DataFrame:
    """People (pooled as ``human``, or each person) and each model on the items people answered,
    per group of the columns ``by``: ``model``, ``group`` (people or model), ``group_of`` (the
    group's value, ``all`` overall), ``mean`` (percent), ``n`` (answers), ``ci_low``, ``ci_high``
    (95% bootstrap), ``items`` (the shared items). People's rows come first, in ``people_order``
    where it names them (the groups of a split, :func:`split_order`), else by name."""
    by = list(by)
    shown = people_vs_models.people_as(frame, "each" if each_person else "pool")
    keyed = shown.assign(group_of=shown[by].astype(str).agg(" · ".join, axis=1) if by else "all")
    items = people_vs_models.answered_items(keyed)
    cells = people_vs_models.people_vs_models_frame(keyed, "group_of", n_boot=n_boot, items=items)
    rank = {model: n for n, model in enumerate(people_order)}
    people_first = cells.assign(_p=cells["group"] != "people", _rank=cells["model"].map(rank).fillna(len(rank)))
    people_first = people_first.sort_values(["_p", "_rank", "model", "group_of"])
    return people_first[["model", "group", "group_of", "mean", "n", "ci_low", "ci_high", "items"]].reset_index(drop=True)
