"""What an AIBench item is: a paper with its logic graph and questions, and how a question is
put to a vision-language model (the paper's prompt) and how its reply is read.

A :class:`Paper` holds a :class:`LogicGraph` (phases, nodes, edges; cycles allowed) and its
:class:`Question` list. Each question has a level 1-4, 2-4 options and one answer among them;
options are lettered A, B, C, D in their order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# how a reply names a letter is the rule of every multiple-choice question, AIBench's among them
from structext_core.evaluation import choices
from structext_core.evaluation.choices import named_letters, parse_letter  # noqa: F401

#: The four levels: number -> the paper's name.
LEVELS: dict[int, str] = {
    1: "Component Existence",
    2: "Local Topology",
    3: "Phase Architecture",
    4: "Global Semantics",
}
#: The short column names of the paper's tables (C, T, P, S; A for aesthetics, O for overall).
LEVEL_COLUMNS: dict[int, str] = {1: "C", 2: "T", 3: "P", 4: "S"}
LETTERS = "ABCD"
#: The option levels 2-4 always include (at a varying letter).
INSUFFICIENT = ("The image does not contain sufficient information to answer or none of the other "
                "options are correct.")
NODE_TYPES = ("model", "data", "process", "decision")
SYSTEM_PROMPT = "You are a helpful assistant."
#: The paper's user prompt (Sec. 4); ``option_text`` is one ``A. text`` line per option.
USER_PROMPT = ("Question: {question}\nOptions:\n{option_text}\n\n"
               "Based on the given image only, answer with the option's letter from the given choices directly.")
#: The "system" that is the paper's own figure.
ORIGINAL_SYSTEM = "Original Image"


@dataclass(frozen=True)
class Phase:
    id: str
    label: str


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    phase_id: str | None
    type: str
    icon_hint: str = ""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str = ""


@dataclass(frozen=True)
class LogicGraph:
    """G = (V, E, P) as the authors write it; edges may form cycles."""

    phases: tuple[Phase, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    title: str = ""
    layout_direction: str = ""

    def node(self, node_id: str) -> Node:
        """The node with this id (KeyError when there is none)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)


@dataclass(frozen=True)
class Question:
    """One multiple-choice question: ``answer`` is the letter of the right option."""

    id: str
    level: int
    question: str
    options: tuple[str, ...]
    answer: str
    rationale: str = ""

    @property
    def chance(self) -> float:
        """The accuracy of guessing uniformly among the options, in [0, 1]."""
        return 1.0 / len(self.options)

    def option_text(self) -> str:
        """The options as the paper's prompt lists them, one ``A. text`` a line."""
        return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(self.options))


@dataclass(frozen=True)
class Paper:
    """One paper: its method text, original figure (a path relative to the import folder), graph
    and questions."""

    id: str
    conference: str
    year: int
    method_text: str
    original_figure: str
    graph: LogicGraph
    questions: tuple[Question, ...] = field(default=())


def solver_prompt(question: Question) -> str:
    """The paper's user prompt for ``question`` (the image is attached beside it)."""
    return USER_PROMPT.format(question=question.question, option_text=question.option_text())


def absent_option_notes(n_options: int) -> dict[str, str]:
    """The notes of the keys A to D a question of ``n_options`` options does not offer
    (:func:`structext_core.evaluation.choices.absent_option_notes`)."""
    return choices.absent_option_notes(n_options, LETTERS)
