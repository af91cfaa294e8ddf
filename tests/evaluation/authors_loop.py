"""The authors' evaluation loop, run the way their script runs it, for the tests.

Not their code: a re-statement of what ``Evaluation/get_evaluation_result.py`` (with
``calculate_rouge_l`` from ``Evaluation/call_api.py``) does with one results file, calling the
real pltrdy ``rouge`` 1.0.1 at the same stack depth (``python get_evaluation_result.py`` through
fire: the library is called from frame number 7) and under the same recursion limit, so it
raises exactly where theirs does. Run as a script in a fresh interpreter:

    python authors_loop.py judge RESULTS.jsonl [LIMIT] [DEPTH]  -> one JSON object on stdout
    python authors_loop.py raises [LIMIT] [DEPTH] < pairs.json  -> one outcome per (answer, response)

The rules of the loop: every line is scored first and a line whose scoring raises is skipped
(``except: continue``); the first scorable line of an index registers it with 0; a ``<JUMP>``
line then keeps what is there; any other line sets the index to its score, 0 below 0.75. An
index whose every line raises is in no mean. The file's figure is the mean over indices without
a rule hint (split by few-shot count, as their ``FewShotNum``).
"""

from __future__ import annotations

import json
import sys

DEPTH = 7  # the frame of calculate_rouge_l in their script
LIMIT = 1000


def _depth() -> int:
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def calculate_rouge_l(rouge, answer: str, response: str, depth: int) -> float:
    here = _depth()
    if here != depth:
        raise AssertionError(f"calculate_rouge_l at frame {here}, not {depth}")
    return rouge.get_scores(answer, response)[0]["rouge-l"]["f"]


def _judge_lines(rouge, lines: list[str], depth: int) -> dict:
    index_dict: dict = {}
    for line in lines:
        try:
            row = json.loads(line)
            index = row["index"]
            result = calculate_rouge_l(rouge, row["a"], row["r"], depth)  # judge_detail's call
            info = row["info"]
            if index not in index_dict:
                index_dict[index] = [0, info["rule_hint"], info["few_shot_num"]]
            if row["r"] == "<JUMP>":
                continue
            if result < 0.75:
                result = 0
            index_dict[index] = [result, info["rule_hint"], info["few_shot_num"]]
        except AssertionError:
            raise
        except Exception:  # their bare except: the line is skipped
            continue
    return index_dict


def _at_depth(frame: int, function, *args):
    """Call ``function`` from frame number ``frame - 1``, so that its own frame is ``frame``."""
    def descend():
        if _depth() < frame - 1:  # _depth() is this frame's number
            return descend()
        return function(*args)
    return descend()


def judge(path: str, limit: int, depth: int) -> dict:
    from rouge import Rouge

    rouge = Rouge()
    with open(path, encoding="utf-8") as handle:
        lines = handle.readlines()
    sys.setrecursionlimit(limit)
    # _judge_lines (their judge) calls judge_detail's line inline: the library is called from depth
    index_dict = _at_depth(depth - 1, _judge_lines, rouge, lines, depth)
    sys.setrecursionlimit(1000 if limit < 1000 else limit)
    naive = [value for value, hint, shots in index_dict.values() if not hint]
    hint = [value for value, hint, shots in index_dict.values() if hint]
    return {"indices": {str(k): v[0] for k, v in index_dict.items()}, "n": len(naive),
            "mean": sum(naive) / len(naive) if naive else None,
            "hint_n": len(hint), "hint_mean": sum(hint) / len(hint) if hint else None}


def raises(pairs: list[list[str]], limit: int, depth: int) -> list[str]:
    from rouge import Rouge

    rouge = Rouge()

    def outcomes():
        found = []
        for answer, response in pairs:
            try:
                calculate_rouge_l(rouge, answer, response, depth)
                found.append("ok")
            except RecursionError:
                found.append("RecursionError")
            except ValueError as exc:
                found.append(f"ValueError: {exc}")
        return found

    sys.setrecursionlimit(limit)
    try:
        return _at_depth(depth - 1, outcomes)
    finally:
        sys.setrecursionlimit(1000)


def main() -> None:
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "judge":
        limit = int(rest[1]) if len(rest) > 1 else LIMIT
        depth = int(rest[2]) if len(rest) > 2 else DEPTH
        print(json.dumps(judge(rest[0], limit, depth)))
    else:
        limit = int(rest[0]) if rest else LIMIT
        depth = int(rest[1]) if len(rest) > 1 else DEPTH
        print(json.dumps(raises(json.load(sys.stdin), limit, depth)))


if __name__ == "__main__":
    main()
