"""The lab's own benchmark's member module (:mod:`structext_core.protocol`).

An item is one question of a lab's set (:func:`structext_core.labset.dataset.load_set`):
``{id, source_id, question, choices, target, format, image, image_sha256, stratum, rule}``; its id is
a hash of its content, so the seal's "same item" holds across sets and renamings. Multiple-choice
questions are scored by their one clear letter, short answers by the set's declared rule
(:mod:`structext_core.labset.scoring`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from structext_core.protocol import LoggedItem, Place, ShownQuestion, StudyKind

NAME = "labset"
DISPLAY_NAME = "The lab's own"
ORDER = 30
CLI_COMMANDS = ("labset",)
SUMMARY = ("Your own multiple-choice or short-answer questions (a JSONL or CSV file, or an Inspect AI dataset), "
           "with optional images and strata, answered by people beside models.")
PLACES = (
    Place("human_baseline", "answer its questions"),
    Place("results", "people's accuracy by format and stratum", True),
)
ITEM_FIELDS = ("id", "source_id", "question", "choices", "target", "format", "image", "image_sha256", "stratum", "rule",
               "permutation", "image_phash")
#: Results break down by these: multiple choice or short answer, then the stratum from metadata.
AXES = ("format", "stratum")
#: A study item's strata: its format (``choice`` or ``short``) and its stratum (a metadata field's value, "" for none).
STRATA = {"format": str, "stratum": str}
#: Twelve questions of general knowledge (eight multiple choice, four short answers) in Inspect's form.
SAMPLE_ITEMS = str(Path(__file__).resolve().parents[1] / "data" / "labset-sample.jsonl")
#: Its sets live in ``<data dir>/labsets`` (``labset import`` puts them there), in any of its file kinds;
#: Results and Explore are the default views over them (:mod:`structext_core.ui.defaults`).
DATA_FOLDER = "labsets"
ITEM_SUFFIXES = (".jsonl", ".csv", ".json", ".parquet", ".arrow")
#: The lead's form that opens a study of a set in the sets folder (:func:`structext_core.labset.study.sets_dir`).
STUDY_SETUP_VIEW = "structext_core.labset.ui.study_setup:labset_setup"
#: A study item's image, served blinded (checked again, re-encoded in a sandbox worker).
STUDY_IMAGE = "structext_core.labset.images:study_image"
#: The seal's "same item": by meaning (text normalised, options in any order, an image by its
#: perceptual hash), :mod:`structext_core.labset.seal`.
SEAL = "structext_core.labset.seal"
SANDBOXED = {"labset_image": "structext_core.labset.images:plain_png",
             "labset_image_check": "structext_core.labset.images:decode_check"}


def register_cli(subparsers, command: str | None = None) -> None:
    """Add ``labset check`` and ``labset import`` (:mod:`structext_core.labset.cli`); left out while
    another benchmark's verb runs (``command``), as loading them costs a ``generate`` a tenth of a second."""
    if command is not None and command not in CLI_COMMANDS:
        return
    from structext_core.labset import cli
    cli.register(subparsers)


def item_id(item: Mapping) -> str:
    """The item's content id (:func:`structext_core.labset.dataset.content_id`)."""
    return item["id"]


def item_names(item: Mapping) -> tuple[str, str]:
    """The ids a file of models' answers may name an item by: the set's own id, or its content id."""
    return item["source_id"], item["id"]


def right_reply(item: Mapping) -> str:
    """A reply its rule scores right: the key's letter, or the first accepted short answer (after
    ``ANSWER:`` for an ``answer(...)`` rule)."""
    from structext_core.labset import scoring  # its modules load when used: `generate` needs none of them
    if not item["choices"] and scoring.parse_rule(item["rule"]).name == "answer":
        return f"ANSWER: {item['target'][0]}"
    return item["target"][0]


def item_facets(item: Mapping) -> dict:
    """Every field of the item's metadata (its answer rule aside), and whether it is asked on an
    image: each an axis of the dashboard and Results beside the format and the stratum."""
    metadata = {key: value for key, value in (item.get("metadata") or {}).items() if key != "answer_rule"}
    return {**metadata, "on an image": "yes" if item.get("image") else "no"}


def INSPECT_SCORER(stored) -> str | None:  # noqa: N802 (the protocol's declaration, a function here)
    """The scorer name the people's Inspect log gives their scores: the one the lab's own task scored
    its models with, so that Inspect's ``samples_df`` puts people and models in one column. Every
    question multiple choice: Inspect's ``choice``; every short answer by one of Inspect's rules:
    that scorer's name (``match``, ``exact``, ...); else None (``labset_score``)."""
    from structext_core.labset import inspect_rules
    families = set()
    for item in stored:
        split = inspect_rules.split_key(str(item.get("answer", ""))) if not item.get("options") else None
        families.add("choice" if item.get("options") else (split[0].name if split else None))
    ours = {None, "normalised", "verbatim"}
    return families.pop() if len(families) == 1 and not families & ours else None


def load_for_study(path) -> list[dict]:
    """Its items read for a study: each distinct image decoded once in a sandbox worker and hashed for
    the seal (:func:`structext_core.labset.study.load_for_study`)."""
    from structext_core.labset import study
    return study.load_for_study(path)


def load_items(path) -> list[dict]:
    """The checked items of the set at ``path`` (a ``ValueError`` naming each line and field otherwise)."""
    from structext_core.labset import dataset
    return dataset.load_set(path)  # with its mapping, when one is kept beside it


def show_question(item: Mapping) -> ShownQuestion:
    """The question, its options when it has them, its image when it has one."""
    return ShownQuestion(text=item["question"], choices=tuple(item["choices"]), image=item.get("image"))


def score_answer(item: Mapping, reply: str) -> float:
    """1.0 when the reply is right by the item's rule (:func:`structext_core.labset.scoring.score`), else 0.0."""
    from structext_core.labset import scoring
    return scoring.score(item, reply)


def study_answer(item: Mapping) -> str:
    """The key a person's answer is scored against (:func:`structext_core.labset.scoring.study_key`)."""
    from structext_core.labset import scoring
    return scoring.study_key(item)


def study_keep(item: Mapping) -> dict:
    """What a study keeps of an item beside what it shows: the set's own id (its Inspect logs' sample
    id), its image's sha256 (an image changed since the draw is not shown) and, when the study's setup
    decoded it, its perceptual hash (the seal knows the picture by it in any encoding or size,
    :mod:`structext_core.labset.seal`)."""
    kept = {"source_id": item["source_id"], "image_sha256": item.get("image_sha256")}
    if item.get("image_phash"):
        kept["image_phash"] = item["image_phash"]
    if item.get("permutation"):  # the options' seeded order (GPQA-like sets), for exports
        kept["permutation"] = list(item["permutation"])
    return kept


def log_item(stored: Mapping, strata: Mapping, source: str = "") -> LoggedItem:
    """A study item in an Inspect log as the set's own Inspect task names it: the set's id, the
    question, the options, the key's letter or the accepted answers, and its image (read from the set
    ``source`` in the sets folder, when it is still the file the study was drawn with)."""
    from structext_core.labset import images, inspect_rules
    short = None if stored.get("options") else inspect_rules.split_key(str(stored["answer"]))
    return LoggedItem(id=str((stored.get("kept") or {}).get("source_id", stored["id"])), input=stored["question"],
                      choices=tuple(stored.get("options") or ()),
                      target=tuple(short[1]) if short else str(stored["answer"]),
                      image=images.data_uri(source, stored) if stored.get("image") else None)


def describe_rules(items) -> list[str]:
    """How the set's answers are scored, one sentence a rule it uses, as the lead is shown it."""
    from structext_core.labset import scoring
    kinds = {item["format"] for item in items}
    rules = sorted({item["rule"] for item in items if item["format"] == "short"})
    return ([scoring.describe_choice()] if "choice" in kinds else []) + [scoring.describe_rule(r) for r in rules]


def _study_score(answer: str | None, response: str | None, gave_up: bool) -> float:
    from structext_core.labset import scoring
    return 1.0 if not gave_up and bool(answer) and scoring.score_key(str(answer), response or "") else 0.0


#: Scored on the key a study keeps (:func:`study_answer`); the default answer check (a letter, or a
#: text of at most 1,000 characters).
STUDY = StudyKind(
    score=_study_score,
    groupings={"Annotator": ["annotator"], "Format": ["format"], "Stratum": ["stratum"],
               "Format x stratum": ["format", "stratum"]},
    score_note="Score: accuracy in percent: a multiple-choice answer by its one letter, a short answer by the set's "
               "declared rule (a give-up is wrong). Intervals: 95% bootstrap over answers.",
    source_label="Lab set {suite}",
    setup_label="The lab's own (multiple choice and short answers)",
)
