"""Audit: solve every sample from its reference and compare with its claimed answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from structext_core.structext_eval import official
from structext_core.structext_eval.formats import ReadError
from structext_core.structext_eval.samples import SampleError, decode_line, validate
from structext_core.structext_eval.tasks import TASKS, answers_agree
from structext_core.text import limits

AGREE, DISAGREE, UNSUPPORTED = "agree", "disagree", "unsupported"


@dataclass
class Verdict:
    """The audit's finding for one sample (or one unreadable file)."""

    source: str
    sample_id: str | None
    status: str
    reason: str = ""
    solver: str | None = None
    claimed: str | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class AuditSummary:
    verdicts: list[Verdict] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(v.status == status for v in self.verdicts)

    @property
    def ok(self) -> bool:
        return self.count(DISAGREE) == 0 and self.count(UNSUPPORTED) == 0

    def line(self) -> str:
        # The command line's contract (DESIGN.md), exactly: "audited N samples: ...", whatever N, so that
        # the tools that read this line keep reading it ("audited 1 samples" stays: it is the contract)
        return (f"audited {len(self.verdicts)} samples: {self.count(AGREE)} agree, "
                f"{self.count(DISAGREE)} disagree, {self.count(UNSUPPORTED)} unsupported")


def audit_sample(sample: dict, source: str) -> Verdict:
    """Solve one sample of our schema from its text."""
    sid = sample.get("id")
    task = TASKS.get(sample.get("task_id"))
    if task is None:
        return Verdict(source, sid, UNSUPPORTED, f"unknown task_id {sample.get('task_id')!r}")
    question = sample.get("_folded_question") or sample["question"]
    try:
        solved = task.solve_text(sample["reference"], question, sample.get("depth") or 0, sample.get("width") or 0)
    except (ReadError, KeyError, IndexError, ValueError) as exc:
        # ReadError: what the solver cannot read, a limit of structext_core.text.limits included;
        # a table without the asked column surfaces as KeyError.
        reason = f"no column {exc}" if isinstance(exc, KeyError) else str(exc)
        return Verdict(source, sid, UNSUPPORTED, f"task {task.task_id} ({task.slug}): {reason}")
    if answers_agree(task, sample["answer"], solved):
        return Verdict(source, sid, AGREE)
    return Verdict(source, sid, DISAGREE, f"task {task.task_id} ({task.slug}): the solver's answer differs from "
                                          "the file's", solved, sample["answer"])


def iter_sources(paths: Iterable[str | Path]) -> Iterator[tuple[str, dict | None, str]]:
    """(source, sample or None, problem) for every sample found under ``paths``."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file())
            if not files:
                yield str(path), None, "the folder holds no .json or .jsonl files"
            for f in files:
                yield from _iter_file(f)
        elif path.exists():
            yield from _iter_file(path)
        else:
            yield str(path), None, "no such file or folder"


def _iter_file(path: Path) -> Iterator[tuple[str, dict | None, str]]:
    if path.suffix == ".jsonl":
        try:
            fh = open(path, encoding="utf-8")
        except OSError as exc:
            yield str(path), None, f"cannot read ({exc.strerror})"
            return
        with fh:
            try:
                for lineno, line in limits.read_record_lines(fh):
                    where = f"{path}:{lineno}"
                    try:
                        row = decode_line(line, where)
                        if row is not None:
                            yield where, validate(row, where), ""
                    except SampleError as exc:
                        yield where, None, str(exc).removeprefix(f"{where}: ")
            except UnicodeDecodeError as exc:
                yield str(path), None, f"not UTF-8 text ({exc.reason})"
    else:
        try:
            yield str(path), official.read_file(path), ""
        except official.OfficialFileError as exc:
            yield str(path), None, str(exc).split(": ", 1)[-1] if str(exc).startswith(str(path)) else str(exc)


def audit(paths: Iterable[str | Path], progress: Callable[[int], None] | None = None) -> AuditSummary:
    """Audit every sample under ``paths``; unreadable inputs count as unsupported."""
    summary = AuditSummary()
    for source, sample, problem in iter_sources(paths):
        if sample is None:
            summary.verdicts.append(Verdict(source, None, UNSUPPORTED, problem))
        else:
            summary.verdicts.append(audit_sample(sample, source))
        if progress is not None:
            progress(len(summary.verdicts))
    return summary
