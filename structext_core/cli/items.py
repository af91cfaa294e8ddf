"""``structext items score``: any benchmark's replies scored by its own rule, through the protocol.

A benchmark that can read its items from a file (its member's ``load_items(path)``) is scored here
without a line of its own: each reply is matched to its item by the item's id
(``item_id(item)``), scored by ``score_answer(item, reply)``, and the mean is broken down by the
benchmark's axes (``AXES``) that its items carry. Replies are JSON lines
``{"id": ..., "reply": ..., "model": ...}`` (``model`` optional: one name for the file otherwise).

Every problem is named with its file and line and nothing is written: an id that is no item's, an
item answered twice by one model, a line that is not JSON or lacks a field, a line too long.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

from structext_core import protocol
from structext_core.cli.progress import ProgressLine
from structext_core.text import limits
from structext_core.text.words import plural


class ItemsError(Exception):
    """A problem with the items or the replies (what and where); nothing was written."""


def scorable() -> list[str]:
    """The benchmarks whose items can be read from a file (they offer ``load_items``)."""
    return [name for name, member in protocol.members().items() if callable(getattr(member, "load_items", None))]


def read_replies(path: Path) -> list[dict]:
    """The reply lines of ``path``: ``{"id", "reply", "model"?}`` each, checked and bounded."""
    replies = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in limits.read_record_lines(handle):
                where = f"{path}:{number}"
                if line is None:
                    raise ItemsError(f"{where}: {limits.record_too_long()}")
                if not line.strip():
                    continue
                try:
                    record = limits.loads_json(line, f"line {number}")
                except (json.JSONDecodeError, limits.LimitError) as exc:
                    raise ItemsError(f"{where}: not a JSON line ({exc})") from None
                if not isinstance(record, dict):
                    raise ItemsError(f"{where}: a reply line is a JSON object, not {type(record).__name__}")
                for field in ("id", "reply"):
                    if not isinstance(record.get(field), str):
                        raise ItemsError(f"{where}: the field {field!r} is missing or not text")
                model = record.get("model", "")
                if not isinstance(model, str):
                    raise ItemsError(f"{where}: the field 'model' is not text")
                replies.append({"id": record["id"], "reply": record["reply"], "model": model, "line": number})
    except UnicodeDecodeError as exc:
        raise ItemsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ItemsError(f"{path}: cannot be read ({exc.strerror})") from None
    return replies


def score_file(benchmark: str, items_path: Path, replies_path: Path, model: str = "",
               progress: ProgressLine | None = None) -> list[dict]:
    """One row a reply: ``{model, id, score, <axes the items carry>}``, in the replies' order."""
    member = protocol.get_module(benchmark)
    if not callable(getattr(member, "load_items", None)):
        raise ItemsError(f"{member.DISPLAY_NAME} does not read its items from a file; the benchmarks that do: "
                         f"{', '.join(scorable()) or 'none'}")
    items = {member.item_id(item): item for item in member.load_items(items_path)}
    replies = read_replies(replies_path)
    rows, seen = [], {}
    for done, reply in enumerate(replies, 1):
        where = f"{replies_path}:{reply['line']}"
        item = items.get(reply["id"])
        if item is None:
            raise ItemsError(f"{where}: {reply['id'][:80]!r} is no item of {items_path}")
        name = reply["model"] or model or replies_path.stem
        if (name, reply["id"]) in seen:
            raise ItemsError(f"{where}: {name!r} answered {reply['id'][:80]!r} already (line {seen[name, reply['id']]})")
        seen[name, reply["id"]] = reply["line"]
        row = {"model": name, "id": reply["id"], "score": float(member.score_answer(item, reply["reply"]))}
        row.update({axis: item[axis] for axis in member.AXES if axis in item})
        rows.append(row)
        if progress is not None:
            progress(done, len(replies))
    return rows


def summary(rows: list[dict], by: list[str]) -> list[tuple[tuple, int, float, float]]:
    """(group, n, mean, half-width of a normal 95% interval) for each group of ``by``, sorted."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        groups[tuple(row.get(column, "") for column in by)].append(row["score"])
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(v) for v in k)):
        scores = groups[key]
        n, mean = len(scores), sum(scores) / len(scores)
        spread = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1)) if n > 1 else 0.0
        out.append((key, n, mean, 1.96 * spread / math.sqrt(n)))
    return out


def cmd_score(args: argparse.Namespace) -> int:
    from structext_core.cli.main import UsageError
    member = protocol.get_module(args.benchmark)
    by = ["model", *[a for a in (args.by.split(",") if args.by else []) if a]]
    unknown = [a for a in by[1:] if a not in member.AXES]
    if unknown:
        raise UsageError(f"--by {','.join(unknown)}: not an axis of {member.DISPLAY_NAME} "
                         f"(its axes: {', '.join(member.AXES)})")
    out = Path(args.out) if args.out else None
    if out is not None and out.exists():
        raise UsageError(f"--out {out} exists already: choose a new file (nothing is overwritten)")
    progress = ProgressLine("scoring")
    try:
        rows = score_file(args.benchmark, Path(args.items), Path(args.replies), args.model or "", progress)
    except (ItemsError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        progress.close()
    if out is not None:
        out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    print(f"{member.DISPLAY_NAME}: {plural(len(rows), 'reply', 'replies')} scored")
    print("\t".join([*by, "n", "mean", "95% CI"]))
    for key, n, mean, half in summary(rows, by):
        print("\t".join([*(str(k) for k in key), str(n), f"{mean:.3f}", f"±{half:.3f}"]))
    return 0


def register(subparsers) -> None:
    """Add ``items score`` (every benchmark that reads its items from a file)."""
    items = subparsers.add_parser("items", help="score any benchmark's replies by its own rule")
    verbs = items.add_subparsers(dest="items_command", required=True)
    score = verbs.add_parser("score", help="score reply lines against a benchmark's items file",
                             description=__doc__.split("\n\n")[1].replace("``", ""))
    score.add_argument("replies", help='reply lines (.jsonl): {"id": ..., "reply": ..., "model": ...}')
    score.add_argument("--benchmark", required=True, choices=scorable(), help="the benchmark of the items")
    score.add_argument("--items", required=True, help="the benchmark's items file")
    score.add_argument("--by", default="", help="comma-separated axes of the benchmark to break the mean down by")
    score.add_argument("--model", help="the name of the replies' model when their lines do not say")
    score.add_argument("--out", help="write one scored row a reply here (.jsonl; a new file)")
    score.set_defaults(func=cmd_score)
