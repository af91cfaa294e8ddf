"""One AIBench paper's JSON, checked field by field into a :class:`~structext_core.aibench.model.Paper`.

The authors' shape is accepted as they write it: ``correct_option`` for the answer, levels as
``"Level 1: Component Existence"`` (or ``1``), options as a list or as ``{"A": ..., "B": ...}``,
the answer as a letter (``"B"``, ``"B."``) or as the option's text. Every problem is reported
with its file and field (:class:`Problem`); a paper with any problem is not returned. Sizes are
bounded before anything is walked: a 50,000-node graph is refused by its count, not read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from structext_core.aibench import limits
from structext_core.aibench.model import LETTERS, LEVELS, NODE_TYPES, Edge, LogicGraph, Node, Paper, Phase, Question

#: Ids used in file names: letters, digits, ``.``, ``_``, ``-``; not starting with a dot.
ID_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
_LEVEL_RE = re.compile(r"^\s*(?:level\s*)?([0-9]+)\s*(?::\s*(.*?))?\s*$", re.IGNORECASE)
_LETTER_RE = re.compile(r"^\s*\(?([A-Z])\)?\s*[.:)]?\s*$")


@dataclass(frozen=True)
class Problem:
    """What is wrong, and where: the file (relative to the import folder) and the field."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}" if self.field else f"{self.file}: {self.message}"


class _Checker:
    """Collects the problems of one file."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def add(self, field: str, message: str) -> None:
        self.problems.append(Problem(self.file, field, message))

    def text(self, obj: dict, key: str, where: str, limit: int, *, required: bool = True, aliases=()) -> str:
        for name in (key, *aliases):
            if name in obj:
                key = name
                break
        else:
            if required:
                self.add(f"{where}{key}", "missing")
            return ""
        value = obj[key]
        if not isinstance(value, str):
            self.add(f"{where}{key}", f"must be text, not {type(value).__name__}")
            return ""
        if len(value) > limit:
            self.add(f"{where}{key}", f"{len(value):,} characters; at most {limit:,}")
            return ""
        if required and not value.strip():
            self.add(f"{where}{key}", "is empty")
        return value

    def identifier(self, obj: dict, key: str, where: str) -> str:
        value = obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value:
            self.add(f"{where}{key}", "missing" if value is None else "must be a non-empty text")
            return ""
        if len(value) > limits.MAX_ID_CHARS or not ID_RE.match(value):
            self.add(f"{where}{key}", f"{value[:60]!r} is not an id (letters, digits, '.', '_', '-'; "
                                      f"at most {limits.MAX_ID_CHARS} characters)")
            return ""
        return value

    def items(self, obj: dict, key: str, where: str, limit: int, noun: str) -> list:
        value = obj.get(key)
        if value is None:
            self.add(f"{where}{key}", "missing")
            return []
        if not isinstance(value, list):
            self.add(f"{where}{key}", f"must be a list, not {type(value).__name__}")
            return []
        if len(value) > limit:
            self.add(f"{where}{key}", f"{len(value):,} {noun}; at most {limit:,} are read")
            return []
        return value


def parse_level(value: object) -> tuple[int | None, str | None]:
    """(level, None) from ``2``, ``"2"`` or ``"Level 2: Local Topology"``; (None, why) otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        number, name = value, None
    elif isinstance(value, str) and len(value) <= 100 and (found := _LEVEL_RE.match(value)):
        number, name = int(found.group(1)), found.group(2)
    else:
        return None, f"{str(value)[:60]!r} is not a level (1-4 or 'Level 1: Component Existence')"
    if number not in LEVELS:
        return None, f"level {number} does not exist (levels are 1-4)"
    if name and name.strip().lower() != LEVELS[number].lower():
        return None, f"'Level {number}: {name}' names level {number} wrongly (it is {LEVELS[number]!r})"
    return number, None


def _options(check: _Checker, raw: object, where: str) -> tuple[str, ...]:
    if isinstance(raw, dict):
        keys = list(raw)
        expected = list(LETTERS[:len(keys)])
        if [str(k).strip().upper() for k in keys] != expected:
            check.add(where, f"keys {keys[:6]} must be the letters {', '.join(LETTERS)} in order")
            return ()
        raw = list(raw.values())
    if not isinstance(raw, list):
        check.add(where, "missing" if raw is None else f"must be a list, not {type(raw).__name__}")
        return ()
    if not limits.MIN_OPTIONS <= len(raw) <= limits.MAX_OPTIONS:
        check.add(where, f"{len(raw)} options; a question has {limits.MIN_OPTIONS}-{limits.MAX_OPTIONS}")
        return ()
    options = []
    for i, text in enumerate(raw):
        if not isinstance(text, str) or not text.strip() or len(text) > limits.MAX_QUESTION_CHARS:
            check.add(f"{where}[{i}]", "must be a non-empty text of at most "
                                       f"{limits.MAX_QUESTION_CHARS:,} characters")
            return ()
        options.append(text.strip())
    if len(set(options)) != len(options):
        check.add(where, "two options have the same text")
        return ()
    return tuple(options)


def _answer(check: _Checker, raw: object, options: tuple[str, ...], where: str) -> str:
    if not isinstance(raw, str) or len(raw) > limits.MAX_QUESTION_CHARS:
        check.add(where, "missing" if raw is None else "must be an option's letter or text")
        return ""
    letters = LETTERS[:len(options)]
    found = _LETTER_RE.match(raw)
    if found and found.group(1) in letters:
        return found.group(1)
    if raw.strip() in options:
        return letters[options.index(raw.strip())]
    check.add(where, f"{raw[:60]!r} is not among the options ({', '.join(letters)})")
    return ""


def _graph(check: _Checker, raw: object) -> LogicGraph | None:
    if not isinstance(raw, dict):
        check.add("logic_graph", "missing" if raw is None else "must be an object {phases, nodes, edges}")
        return None
    before = len(check.problems)
    phases, nodes, edges = [], [], []
    for i, p in enumerate(check.items(raw, "phases", "logic_graph.", limits.MAX_PHASES, "phases")):
        where = f"logic_graph.phases[{i}]."
        if not isinstance(p, dict):
            check.add(where[:-1], "must be an object {id, label}")
            continue
        phases.append(Phase(check.identifier(p, "id", where), check.text(p, "label", where, limits.MAX_LABEL_CHARS)))
    phase_ids = {p.id for p in phases}
    if len(phase_ids) != len(phases):
        check.add("logic_graph.phases", "two phases have the same id")
    for i, n in enumerate(check.items(raw, "nodes", "logic_graph.", limits.MAX_NODES, "nodes")):
        where = f"logic_graph.nodes[{i}]."
        if not isinstance(n, dict):
            check.add(where[:-1], "must be an object {id, label, phase_id, type}")
            continue
        phase_id = n.get("phase_id")
        if phase_id is not None and (not isinstance(phase_id, str) or phase_id not in phase_ids):
            check.add(f"{where}phase_id", f"{str(phase_id)[:60]!r} is not a phase of this graph")
        node_type = n.get("type")
        if node_type not in NODE_TYPES:
            check.add(f"{where}type", f"{str(node_type)[:60]!r} is not one of {', '.join(NODE_TYPES)}")
        nodes.append(Node(check.identifier(n, "id", where), check.text(n, "label", where, limits.MAX_LABEL_CHARS),
                          phase_id if isinstance(phase_id, str) else None, str(node_type),
                          check.text(n, "icon_hint", where, limits.MAX_LABEL_CHARS, required=False)))
    node_ids = {n.id for n in nodes}
    if len(node_ids) != len(nodes):
        check.add("logic_graph.nodes", "two nodes have the same id")
    for i, e in enumerate(check.items(raw, "edges", "logic_graph.", limits.MAX_EDGES, "edges")):
        where = f"logic_graph.edges[{i}]."
        if not isinstance(e, dict):
            check.add(where[:-1], "must be an object {source, target, label}")
            continue
        ends = {end: str(e[end]) if isinstance(e.get(end), (str, int)) else None for end in ("source", "target")}
        for end, node_id in ends.items():
            if node_id not in node_ids:
                check.add(f"{where}{end}", f"{str(e.get(end))[:60]!r} is not a node of this graph")
        edges.append(Edge(str(ends["source"]), str(ends["target"]),
                          check.text(e, "label", where, limits.MAX_LABEL_CHARS, required=False)))
    if len(check.problems) > before:
        return None
    return LogicGraph(tuple(phases), tuple(nodes), tuple(edges),
                      raw.get("title") if isinstance(raw.get("title"), str) else "",
                      raw.get("layout_direction") if isinstance(raw.get("layout_direction"), str) else "")


def _questions(check: _Checker, raw: dict) -> tuple[Question, ...]:
    questions = []
    for i, q in enumerate(check.items(raw, "questions", "", limits.MAX_QUESTIONS, "questions")):
        where = f"questions[{i}]."
        if not isinstance(q, dict):
            check.add(where[:-1], "must be an object {id, level, question, options, answer}")
            continue
        before = len(check.problems)
        qid = check.identifier(q, "id", where)
        level, why = parse_level(q.get("level"))
        if why:
            check.add(f"{where}level", why if q.get("level") is not None else "missing")
        text = check.text(q, "question", where, limits.MAX_QUESTION_CHARS)
        options = _options(check, q.get("options"), f"{where}options")
        key = "correct_option" if "correct_option" in q else "answer"
        answer = _answer(check, q.get(key), options, f"{where}{key}") if options else ""
        rationale = check.text(q, "rationale", where, limits.MAX_QUESTION_CHARS, required=False)
        if len(check.problems) == before:
            questions.append(Question(qid, level, text, options, answer, rationale))
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        check.add("questions", "two questions have the same id")
    return tuple(questions)


def parse_paper(data: bytes, file: str) -> tuple[Paper | None, list[Problem]]:
    """The paper in ``data`` (one JSON file, named ``file`` in messages) and its problems.

    The paper is None whenever there is a problem."""
    check = _Checker(file)
    if len(data) > limits.MAX_PAPER_FILE_BYTES:
        check.add("", f"{len(data):,} bytes; a paper's file holds at most {limits.MAX_PAPER_FILE_BYTES:,}")
        return None, check.problems
    try:
        raw = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        check.add("", f"not UTF-8 text (byte {error.start})")
        return None, check.problems
    except json.JSONDecodeError as error:
        check.add("", f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}")
        return None, check.problems
    except RecursionError:
        check.add("", "nested too deeply to read")
        return None, check.problems
    if not isinstance(raw, dict):
        check.add("", "must hold one JSON object (a paper)")
        return None, check.problems
    paper_id = check.identifier(raw, "id", "")
    conference = check.text(raw, "conference", "", limits.MAX_LABEL_CHARS)
    year = raw.get("year")
    if isinstance(year, str) and year.isdigit() and len(year) == 4:
        year = int(year)
    if not isinstance(year, int) or isinstance(year, bool) or not 1900 <= year <= 2100:
        check.add("year", "missing" if year is None else f"{str(year)[:20]!r} is not a year")
    method_text = check.text(raw, "method_text", "", limits.MAX_METHOD_TEXT_CHARS, aliases=("method",))
    figure = check.text(raw, "original_figure", "", limits.MAX_LABEL_CHARS, required=False)
    graph = _graph(check, raw.get("logic_graph", raw.get("graph")))
    questions = _questions(check, raw)
    if check.problems:
        return None, check.problems
    return Paper(paper_id, conference, year, method_text, figure, graph, questions), []


def paper_to_dict(paper: Paper) -> dict:
    """The paper in our stored shape (the authors' field names; ``answer`` as a letter)."""
    g = paper.graph
    return {
        "id": paper.id, "conference": paper.conference, "year": paper.year, "method_text": paper.method_text,
        "original_figure": paper.original_figure,
        "logic_graph": {
            "title": g.title, "layout_direction": g.layout_direction,
            "phases": [{"id": p.id, "label": p.label} for p in g.phases],
            "nodes": [{"id": n.id, "label": n.label, "phase_id": n.phase_id, "type": n.type,
                       "icon_hint": n.icon_hint} for n in g.nodes],
            "edges": [{"source": e.source, "target": e.target, "label": e.label} for e in g.edges],
        },
        "questions": [{"id": q.id, "level": q.level, "question": q.question, "options": list(q.options),
                       "answer": q.answer, "rationale": q.rationale} for q in paper.questions],
    }
