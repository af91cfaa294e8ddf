"""What every reader of result files shares: a problem with one line of a file, the error that
lists them all (a file with any problem imports nothing), and the samples a file's results are
matched to, by id or by reference text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one line of an input file (``line`` counts from 1; 0 = the file)."""

    line: int
    message: str

    def describe(self, source: str) -> str:
        """``source:line: message``, the way compilers report."""
        return f"{source}:{self.line}: {self.message}" if self.line else f"{source}: {self.message}"


class ResultsImportError(ValueError):
    """A results file that cannot be imported; ``problems`` lists every line at fault."""

    def __init__(self, source: str, problems: list[Problem]):
        self.source = source
        self.problems = problems
        shown = "\n".join(p.describe(source) for p in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{len(problems)} problem(s) in {source}:\n{shown}{more}")


class SampleIndex:
    """Samples looked up by id, and by reference text (a file that names no id)."""

    def __init__(self, samples: Iterable[Mapping]):
        self.by_id: dict[str, Mapping] = {}
        self.by_reference: dict[str, list[Mapping]] = {}
        for sample in samples:
            self.by_id[str(sample["id"])] = sample
            self.by_reference.setdefault(str(sample.get("reference", "")).strip(), []).append(sample)

    def __len__(self) -> int:
        return len(self.by_id)

    @classmethod
    def of(cls, samples: SampleIndex | Iterable[Mapping]) -> SampleIndex:
        """``samples`` as an index: the index itself when it is one, else one built from them."""
        return samples if isinstance(samples, cls) else cls(samples)
