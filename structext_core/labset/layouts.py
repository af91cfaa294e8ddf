"""Which layout a set's records are in, and each record made one Inspect-like sample.

Recognised without a word from the lab (:func:`resolve`):

- **Inspect**'s Sample (an ``input`` field; in a CSV, ``input``, ``target`` and option columns ``A``..``J``);
- **MMLU**'s: ``question``, ``choices`` (a list) and ``answer`` (a letter or an index), or ``question``,
  columns ``A``..``J`` and ``answer``;
- **GPQA**'s: ``Question``, ``Correct Answer``, ``Incorrect Answer 1``..``3``; the options are put in an
  order drawn per item from (seed, the item's id) and recorded on the item (``permutation``);
- **option columns** ``choice_a``.. or ``option_1``.. with one key column ``answer``, ``target`` or ``label``
  holding a letter, an index or the text of one option.

Anything else is read by an explicit :class:`Mapping`. A layout that is unknown or ambiguous (columns
that look like options but are mapped to nothing, two candidate key columns, a key column whose values
read as letters and as texts with different answers) is refused with the columns found, what could not
be decided and the mapping to write: a file is never read as another kind than it is.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import random
import re
from dataclasses import dataclass, field

from structext_core.evaluation.choices import LETTERS
from structext_core.evaluation.matching import Problem

#: How a key column is read: a letter (A first), an index from 0 or from 1, an option's text, or (no
#: options) the accepted short answers.
KEY_KINDS = ("letter", "index", "index1", "text", "answers")
_AUTO_KINDS = ("letter", "index", "index1", "text")
OPTION_COLUMN = re.compile(r"^(choice|option)([ _-]?)([a-j]|[0-9]{1,2})$", re.I)
LOOKS_LIKE_OPTION = re.compile(r"^(?:choices?|options?|opts?|ans|answers?|alternatives?|alts?|distractors?|candidates?"
                               r"|incorrect[ _]?answers?|wrong[ _]?answers?)[ _-]?(?:[a-j]|[0-9]{1,2})$|^[a-j]$", re.I)
KEY_AUTO = ("answer", "target", "label")
KEY_LIKE = {"answer", "target", "label", "answerkey", "answer_key", "correct", "correct_answer", "correct_option",
            "correct_choice", "gold", "gold_index", "key", "solution", "answer_idx", "answer_index", "answer_letter",
            "label_idx"}
GPQA = ("Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
ID_COLUMNS = ("id", "ID", "Id", "Record ID", "question_id", "qid", "uid")
QUESTION_LIKE = ("prompt", "query", "problem", "stem", "instruction")
MAPPING_FIELDS = ("question", "options", "key", "id", "image", "strata", "ignore", "seed")


class MappingError(ValueError):
    """A mapping that cannot be read (what is wrong with it)."""


@dataclass
class Mapping:
    """Which field holds what, for a layout no rule recognises (``--map`` or a JSON ``--mapping`` file)."""

    question: str | None = None
    options: list | str | None = None  # option columns, or one field holding a list
    key: str | None = None
    key_kind: str | None = None  # one of KEY_KINDS; None: decided from the values, when clear
    id: str | None = None
    image: str | None = None
    strata: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    seed: int | None = None

    def maps_fields(self) -> bool:
        return any((self.question, self.options, self.key, self.id, self.image, self.strata, self.ignore))

    def to_json(self) -> dict:
        out = {name: getattr(self, name) for name in MAPPING_FIELDS if getattr(self, name) not in (None, [], "")}
        if self.key and self.key_kind:
            out["key"] = f"{self.key}:{self.key_kind}"
        return out

    def as_args(self) -> str:
        parts = []
        for name, value in self.to_json().items():
            text = ",".join(value) if isinstance(value, list) else str(value)
            parts.append(f"--map '{name}={text}'" if re.search(r"[\s'\"$`\\]", text) else f"--map {name}={text}")
        return " ".join(parts)

    @classmethod
    def from_json(cls, data) -> Mapping:
        if not isinstance(data, dict):
            raise MappingError("a mapping is a JSON object: {\"question\": FIELD, \"options\": [COLUMNS] or FIELD, "
                               "\"key\": \"FIELD:KIND\", ...}")
        unknown = sorted(set(data) - set(MAPPING_FIELDS))
        if unknown:
            raise MappingError(f"no mapping field {', '.join(unknown)}; the fields are {', '.join(MAPPING_FIELDS)}")
        mapping = cls()
        for name in ("question", "id", "image"):
            if data.get(name) is not None:
                mapping.__dict__[name] = _name(data[name], name)
        options = data.get("options")
        if options is not None:
            if isinstance(options, list):
                if len(options) < 2:
                    raise MappingError("options: a list of at least two columns, or one field holding a list")
                mapping.options = [_name(o, "options") for o in options]
            else:
                mapping.options = _name(options, "options")
        key = data.get("key")
        if isinstance(key, dict):
            key = f"{key.get('field')}:{key.get('kind')}" if key.get("kind") else key.get("field")
        if key is not None:
            name, _, kind = _name(key, "key").partition(":")
            if kind and kind not in KEY_KINDS:
                raise MappingError(f"key: {kind!r} is no kind; write key=FIELD:KIND with KIND one of "
                                   f"{', '.join(KEY_KINDS)}")
            mapping.key, mapping.key_kind = name, kind or None
        for name in ("strata", "ignore"):
            value = data.get(name) or []
            mapping.__dict__[name] = [_name(v, name) for v in (value if isinstance(value, list) else [value])]
        if data.get("seed") is not None:
            if isinstance(data["seed"], bool) or not isinstance(data["seed"], int):
                raise MappingError("seed: an integer")
            mapping.seed = data["seed"]
        if mapping.key_kind == "answers" and mapping.options:
            raise MappingError("key: answers are for short answers, a question with no options")
        return mapping

    @classmethod
    def from_args(cls, pairs, base: dict | None = None) -> Mapping:
        """The mapping of ``--map NAME=VALUE`` pairs (a list of columns separated by commas), over ``base``."""
        data = dict(base or {})
        for pair in pairs:
            name, sep, value = pair.partition("=")
            name = name.strip()
            if not sep or name not in MAPPING_FIELDS:
                raise MappingError(f"--map {pair!r}: write NAME=VALUE with NAME one of {', '.join(MAPPING_FIELDS)}")
            if name in ("strata", "ignore") or (name == "options" and "," in value):
                data[name] = [v.strip() for v in value.split(",") if v.strip()]
            elif name == "seed":
                try:
                    data[name] = int(value)
                except ValueError:
                    raise MappingError(f"--map seed={value}: an integer") from None
            else:
                data[name] = value.strip()
        return cls.from_json(data)


def _name(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise MappingError(f"{where}: a field or column name, got {str(value)[:60]!r}")
    return value.strip()


@dataclass
class Layout:
    """How a set's records are read: its name and the fields that hold each part."""

    name: str
    question: str | None = None
    options: list | str | None = None
    key: str | None = None
    key_kind: str | None = None
    id: str | None = None
    image: str | None = None
    strata: list = field(default_factory=list)
    ignore: list = field(default_factory=list)

    def used(self) -> set:
        options = self.options if isinstance(self.options, list) else [self.options]
        return {self.question, self.key, self.id, self.image, *options, *self.ignore} - {None}


def _key_like(name: str) -> bool:
    return name.lower().replace(" ", "_") in KEY_LIKE


def _option_family(columns) -> tuple[list, list]:
    """(the option columns of one family in order, the families found) of ``choice_*``/``option_*`` columns."""
    families: dict[tuple, list] = {}
    for name in columns:
        match = OPTION_COLUMN.match(name)
        if match:
            suffix = match.group(3)
            kind = "letter" if suffix.isalpha() else "digit"
            families.setdefault((match.group(1).lower(), match.group(2), kind), []).append(name)
    if len(families) != 1:
        return [], list(families.values())
    (_, _, kind), names = next(iter(families.items()))
    order = sorted(names, key=lambda n: (OPTION_COLUMN.match(n).group(3).lower() if kind == "letter"
                                         else int(OPTION_COLUMN.match(n).group(3))))
    return order, [order]


def _letters(columns) -> list:
    out = []
    for letter in LETTERS:
        if letter not in columns:
            break
        out.append(letter)
    return out if len(out) >= 2 else []


def detect(columns: list, kind: str, mapping: Mapping | None) -> tuple[Layout | None, list]:
    """(the layout, []) or (None, what could not be decided)."""
    present = set(columns)
    undecided: list[str] = []
    # A mapping that names only strata or fields to ignore (a set imported with its strata field kept)
    # leaves the layout to be recognised, and adds those to it.
    structural = mapping is not None and any((mapping.question, mapping.options, mapping.key, mapping.id, mapping.image))
    if structural:
        layout = Layout("mapped", mapping.question, mapping.options, mapping.key, mapping.key_kind, mapping.id,
                        mapping.image, list(mapping.strata), list(mapping.ignore))
        named = [n for n in (layout.used() | set(layout.strata)) if n not in present]
        if named and kind not in ("jsonl", "json"):
            undecided.append(f"the mapping names {', '.join(sorted(named))}, which are no columns of the file")
        if not layout.question or not layout.key:
            undecided.append("the mapping must name the question and the key")
        if layout.key_kind not in (None, "answers") and not layout.options:
            undecided.append("a key read as a letter, index or text needs the options mapped")
    elif "input" in present:
        layout = Layout("inspect", id="id" if "id" in present else None,
                        image="image" if "image" in present else None)
        if kind == "csv":
            layout.options = _letters(columns)
            layout.key = "target"
        for name in ("question", "Question"):
            if name in present:
                undecided.append(f"two candidate question columns: input and {name}")
    elif all(n in present for n in GPQA):
        layout = Layout("gpqa", "Question", list(GPQA[1:]), None)
    else:
        questions = [n for n in ("question", "Question") if n in present]
        layout = Layout("columns", questions[0] if len(questions) == 1 else None)
        if len(questions) > 1:
            undecided.append("two candidate question columns: question and Question")
        elif not questions:
            found = [n for n in columns if n.lower() in QUESTION_LIKE]
            undecided.append("no question column (question or Question)"
                             + (f"; {', '.join(found)} may hold it" if found else ""))
        family, families = _option_family(columns)
        letters = _letters(columns)
        candidates = ([("choice-columns", f) for f in ([family] if family else families)]
                      + ([("mmlu", letters)] if letters else [])
                      + [("mmlu", n) for n in ("choices", "options") if n in present])
        if len(candidates) == 1:
            layout.name, layout.options = candidates[0]
        elif not candidates:
            undecided.append("no options (a choices list, columns A..J, choice_a.. or option_1..)")
        else:
            undecided.append("several sets of options: " + "; ".join(
                ", ".join(c) if isinstance(c, list) else c for _, c in candidates))
        keys = [n for n in columns if _key_like(n)]
        auto = [n for n in keys if n.lower() in KEY_AUTO]
        if len(keys) > 1:
            undecided.append(f"two candidate key columns: {', '.join(keys)}")
        elif not auto:
            undecided.append("no key column (answer, target or label)"
                             + (f"; {keys[0]} may hold it" if keys else ""))
        else:
            layout.key = auto[0]
    if mapping is not None and not structural:
        layout.strata = list(mapping.strata) or layout.strata
        layout.ignore = [*layout.ignore, *mapping.ignore]
    if layout.id is None and layout.name != "inspect":
        layout.id = next((n for n in ID_COLUMNS if n in present and n not in layout.used()), None)
    if layout.image is None and layout.name != "inspect" and "image" in present and mapping is None:
        layout.image = "image"
    inspect_json = layout.name == "inspect" and kind != "csv"
    used = layout.used() | ({"input", "choices", "target", "metadata", "id", "image", "sandbox", "files", "setup"}
                            if inspect_json else {"input", "target"} if layout.name == "inspect" else set())
    loose = [n for n in columns if n not in used and LOOKS_LIKE_OPTION.match(n)]
    if loose:
        undecided.append(f"{', '.join(loose)} look like options but are mapped to nothing")
    if layout.name == "inspect" or layout.key:
        others = [n for n in columns if n not in used and _key_like(n) and n != layout.key]
        if others:
            undecided.append(f"two candidate key columns: {layout.key or 'target'}, {', '.join(others)}")
    return (None, undecided) if undecided else (layout, [])


def suggestion(columns: list, records: list) -> Mapping:
    """The mapping to write for ``columns``, as far as they tell (a starting point the lab checks)."""
    lower = {n.lower(): n for n in columns}
    question = next((lower[n] for n in ("question", "input", *QUESTION_LIKE) if n in lower), "QUESTION")
    options = [n for n in columns if LOOKS_LIKE_OPTION.match(n) or OPTION_COLUMN.match(n)]
    key = next((n for n in columns if _key_like(n)), "KEY")
    kind = None
    if options and key in columns:
        values = [(r.get(key), [r.get(o) for o in options]) for _, r in records if isinstance(r, dict)]
        kinds = [k for k in _AUTO_KINDS if values and all(_read_key(v, opts, k) is not None for v, opts in values)]
        kind = kinds[0] if kinds else "text"
    id_ = next((n for n in ID_COLUMNS if n in columns), None)
    strata = [n for n in columns if n.lower() in ("subject", "category", "domain", "difficulty", "topic")]
    return Mapping(question, options or None, key, kind or ("answers" if not options else "letter"), id_,
                   "image" if "image" in columns else None, strata)


#: The refusal's line that gives the mapping as JSON starts so (:func:`suggested_mapping` reads it back).
MAPPING_JSON_LEAD = "or in a JSON file for --mapping: "


def suggested_mapping(message: str) -> dict | None:
    """The mapping (as JSON) a refusal of :func:`refusal` suggests, read back from its text; None if none."""
    for line in message.splitlines():
        head, found, rest = line.partition(MAPPING_JSON_LEAD)
        if found and not head.strip():
            try:
                return json.loads(rest)
            except ValueError:
                return None
    return None


def refusal(columns: list, undecided: list, records: list) -> str:
    suggested = suggestion(columns, records)
    return ("its layout is unknown or ambiguous, so it is not read (nothing is guessed).\n"
            f"  columns found: {', '.join(columns) or 'none'}\n"
            + "".join(f"  undecided: {u}\n" for u in undecided)
            + f"  write the mapping: {suggested.as_args()}\n"
            f"  {MAPPING_JSON_LEAD}{json.dumps(suggested.to_json(), ensure_ascii=False)}\n"
            "  (key kinds: letter, index from 0, index1 from 1, text of an option, answers for short answers;"
            " a column that is no option: --map ignore=COLUMN)")


def _read_key(value, options, kind: str) -> int | None:
    """The index of the option ``value`` names when read as ``kind``, or None."""
    n = len(options)
    if kind == "letter":
        if isinstance(value, str) and len(value.strip()) == 1 and value.strip().upper() in LETTERS[:n]:
            return LETTERS.index(value.strip().upper())
        return None
    if kind in ("index", "index1"):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str) and re.fullmatch(r"\s*[0-9]{1,3}\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        at = value - (kind == "index1")
        return at if 0 <= at < n else None
    if isinstance(value, str):
        found = [i for i, option in enumerate(options) if isinstance(option, str) and option.strip() == value.strip()]
        return found[0] if len(found) == 1 else None
    return None


def _option_text(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _json_safe(value, depth: int = 0):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (datetime.date, datetime.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, dict) and depth < 8:
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and depth < 8:
        return [_json_safe(v, depth + 1) for v in value]
    raise TypeError(type(value).__name__)


def permutation(seed: int, item_id: str, n: int) -> list[int]:
    """The order an item's options are shown in (position -> its index as the file gives it), drawn
    from (seed, the item's id) alone: the same for people and for models' prompts."""
    digest = hashlib.sha256(f"{seed}\x00{item_id}".encode("utf-8", "surrogatepass")).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:16], "big")).shuffle(order)
    return order


def _options(layout: Layout, record: dict, line: int, problems: list):
    if isinstance(layout.options, str):
        value = record.get(layout.options)
        if not isinstance(value, list):
            problems.append(Problem(line, f"field {layout.options!r}: must be a list of options, got "
                                          f"{str(value)[:60]!r}"))
            return None, None
        return [_option_text(v) for v in value], [f"{layout.options}[{n}]" for n in range(len(value))]
    names = list(layout.options)
    values = [_option_text(record.get(n)) for n in names]
    while values and values[-1] in (None, ""):  # fewer options on this line: the last columns empty
        values.pop()
        names.pop()
    gap = [n for n, v in zip(names, values) if v in (None, "")]
    if gap:
        problems.append(Problem(line, f"field {gap[0]!r}: an empty option before a filled one (the letters would "
                                      "move)"))
        return None, None
    return values, names


def convert(layout: Layout, records: list, kind: str, seed: int, problems: list) -> list:
    """Each record as an Inspect-like sample ``{input, choices, target, id, image, metadata, permutation,
    names}`` (``names``: the file's field of each part, for messages); problems noted."""
    out = []
    pending = []  # (index in out, raw key, options) of the keys read at the end, by one kind for the file
    for line, record in records:
        if not isinstance(record, dict):
            problems.append(Problem(line, f"must be a JSON object, got {type(record).__name__}"))
            continue
        if layout.name == "inspect" and kind != "csv":
            out.append((line, {**record, "names": {}}))
            continue
        sample: dict = {"names": {"input": layout.question or "input", "target": layout.key or "target"}}
        used = layout.used()
        if layout.name == "inspect":
            sample["input"] = record.get("input")
            sample["target"] = [t.strip() for t in str(record.get("target", "")).split(" | ")]
            used = used | {"input", "target"}
        else:
            sample["input"] = record.get(layout.question)
        sample["id"] = record.get(layout.id) if layout.id else None
        if layout.image and record.get(layout.image) not in (None, ""):
            sample["image"] = record.get(layout.image)
            sample["names"]["image"] = layout.image
        before = len(problems)
        try:
            sample["metadata"] = {k: _json_safe(v) for k, v in record.items() if k not in used}
        except TypeError as error:
            problems.append(Problem(line, f"a metadata field holds {error} data (embedded bytes are not read)"))
        key_read = None
        if layout.options:
            choices, names = _options(layout, record, line, problems)
            if choices is not None and layout.name == "inspect":
                sample["choices"] = choices or None
                sample["names"]["choices"] = names
            elif choices is not None:
                sample["choices"], sample["names"]["choices"] = choices, names
                key_read = (record.get(layout.key) if layout.key else None, choices, line)
        elif layout.name == "mapped":
            value = record.get(layout.key)
            sample["target"] = value if isinstance(value, list) else (
                [t.strip() for t in value.split(" | ")] if kind == "csv" and isinstance(value, str) else [value])
        if len(problems) == before:
            if key_read:
                pending.append((len(out), *key_read))
            out.append((line, sample))
    if pending:
        _resolve_keys(layout, out, pending, seed, problems)
    return out


def _resolve_keys(layout: Layout, out: list, pending: list, seed: int, problems: list) -> None:
    """The key of each multiple-choice record as its letter, the key column read by one kind for the file."""
    if layout.name == "gpqa":
        kinds = None
    elif layout.key_kind:
        kinds = [layout.key_kind]
    else:
        viable = [k for k in _AUTO_KINDS if all(_read_key(v, opts, k) is not None for _, v, opts, _ in pending)]
        agree = [k for k in viable if all(_read_key(v, o, k) == _read_key(v, o, viable[0]) for _, v, o, _ in pending)]
        if len(viable) > 1 and len(agree) != len(viable):
            example = next((line, v) for _, v, o, line in pending
                           if len({_read_key(v, o, k) for k in viable}) > 1)
            problems.append(Problem(0, f"the key column {layout.key!r} reads as {' or '.join(viable)} with different "
                                       f"answers (line {example[0]}: {example[1]!r}); say which: --map "
                                       f"key={layout.key}:KIND with the other columns mapped too"))
            return
        kinds = viable[:1] or list(_AUTO_KINDS)
    for at, value, options, line in pending:
        line_sample = out[at][1]
        if layout.name == "gpqa":
            order = permutation(seed, str(line if line_sample["id"] is None else line_sample["id"]), len(options))
            line_sample["choices"] = [options[i] for i in order]
            line_sample["names"]["choices"] = [layout.options[i] for i in order]
            line_sample["permutation"] = order
            line_sample["target"] = [LETTERS[order.index(0)]]
            continue
        found = next((i for i in (_read_key(value, options, k) for k in kinds) if i is not None), None)
        if found is None:
            how = {"letter": f"a letter A to {LETTERS[len(options) - 1]}", "index": f"an index 0 to {len(options) - 1}",
                   "index1": f"an index 1 to {len(options)}", "text": "the text of one option"}
            problems.append(Problem(line, f"field {layout.key!r}: the key {str(value)[:60]!r} is no option of the "
                                          f"question (not {', '.join(how[k] for k in kinds)})"))
            line_sample["target"] = None
        else:
            line_sample["target"] = [LETTERS[found]]
    out[:] = [(line, s) for line, s in out if s.get("target", "") is not None]
