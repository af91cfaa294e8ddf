"""Questions of the synthetic AIBench, derived by rule with the key known.

Levels 1-3 come from the graph (level 1 asks about drawn labels and, for real "No" questions,
about plausible labels the graph does not hold); level 4 from what the generator chose (the task
and the input modality, shown in the figure's title). Every option list of levels 2-4 has three
options and the "insufficient information" option at a letter chosen at random. The key of every
question is :func:`~structext_core.aibench.synthetic.rules.right_answer` on the undamaged graph,
and only questions that graph answers (never "insufficient") are asked.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from structext_core.aibench.model import INSUFFICIENT, LEVELS, Question
from structext_core.aibench.synthetic import graphs, rules


@dataclass(frozen=True)
class RuledQuestion:
    """A question and the rule its right answer follows on any drawn graph."""

    question: Question
    rule: dict


TEXTS = {
    "exists": 'Is a component labeled "{label}" drawn in the figure?',
    "successor": 'Which component directly receives the output of "{of}"?',
    "predecessor": 'Which component directly feeds into "{of}"?',
    "fan_out": "Which component's output splits into parallel branches?",
    "fan_in": "Which component merges the outputs of parallel branches?",
    "feedback": "Which component feeds its output back to an earlier component (a feedback loop)?",
    "in_phase": 'Which component belongs to the "{phase}" phase?',
    "task": "What task does the pipeline in the figure address?",
    "modality": "What is the modality of the pipeline's input?",
}


def _options(rng: random.Random, right: str, wrong: list[str]) -> tuple[str, ...]:
    options = [right, *rng.sample(wrong, 2)]
    rng.shuffle(options)
    options.insert(rng.randint(0, 3), INSUFFICIENT)
    return tuple(options)


def make_questions(spec: graphs.PaperSpec, seed: int, index: int) -> list[RuledQuestion]:
    """The questions of one synthetic paper (deterministic per seed and index)."""
    rng = random.Random(f"aibench-synthetic-questions|{seed}|{index}")
    g = spec.graph
    labels = [n.label for n in g.nodes]
    made: list[tuple[int, dict, tuple[str, ...]]] = []
    # level 1: drawn labels ("Yes") and absent ones ("No")
    for label in rng.sample(labels, min(len(labels), rng.randint(3, 4))):
        made.append((1, {"kind": "exists", "label": label}, ("No", "Yes")))
    for label in rng.sample(spec.unused_labels, rng.randint(2, 3)):
        made.append((1, {"kind": "exists", "label": label}, ("No", "Yes")))
    # level 2: local topology, one option a neighbour and two that are not
    local = []
    for kind in ("successor", "predecessor"):
        for label in labels:
            rule = {"kind": kind, "of": label}
            near = rules.qualifying_labels(rule, g)
            far = [x for x in labels if x not in near and x != label]
            if near and len(far) >= 2:
                local.append((rule, sorted(near), far))
    rng.shuffle(local)
    for rule, near, far in local[: rng.randint(5, 6)]:
        made.append((2, rule, _options(rng, rng.choice(near), far)))
    # level 3: fan-out, fan-in, feedback, and what a phase holds
    for rule in ({"kind": "fan_out"}, {"kind": "fan_in"}, {"kind": "feedback"}):
        qualifying = sorted(rules.qualifying_labels(rule, g))
        others = [x for x in labels if x not in qualifying]
        if len(qualifying) == 1 and len(others) >= 2:
            made.append((3, rule, _options(rng, qualifying[0], others)))
    for phase in rng.sample(g.phases, rng.randint(1, 2)):
        rule = {"kind": "in_phase", "phase": phase.label}
        members = sorted(rules.qualifying_labels(rule, g))
        others = [x for x in labels if x not in members]
        if members and len(others) >= 2:
            made.append((3, rule, _options(rng, rng.choice(members), others)))
    # level 4: what the generator chose
    made.append((4, {"kind": "task"}, _options(rng, spec.task, [t for t in graphs.TASKS if t != spec.task])))
    made.append((4, {"kind": "modality"},
                 _options(rng, spec.modality, [m for m in graphs.MODALITIES if m != spec.modality])))
    out = []
    counters = dict.fromkeys(LEVELS, 0)
    for level, rule, options in made:
        counters[level] += 1
        key = rules.right_answer(rule, options, g)
        text = TEXTS[rule["kind"]].format(**{k: v for k, v in rule.items() if k != "kind"})
        question = Question(f"L{level}-{counters[level]}", level, text, options, key,
                            f"rule {rule['kind']}")
        out.append(RuledQuestion(question, rule))
    return out
