"""The one plural helper every page text uses (issue 19: "1 practice items", "Exported 1 samples")."""

import re
from pathlib import Path

import pytest

from structext_core.text.words import noun, plural, plural_of


@pytest.mark.parametrize("n, singular, expected", [
    (0, "sample", "0 samples"), (1, "sample", "1 sample"), (2, "sample", "2 samples"),
    (1, "practice item", "1 practice item"), (3, "practice item", "3 practice items"),
    (1, "study", "1 study"), (2, "study", "2 studies"), (7626, "line", "7,626 lines"),
    (2, "match", "2 matches"), (1, "gold question", "1 gold question"),
])
def test_plural(n, singular, expected):
    assert plural(n, singular) == expected


def test_an_irregular_plural_can_be_given():
    assert plural(2, "criterion", "criteria") == "2 criteria" and noun(1, "criterion", "criteria") == "criterion"
    assert plural_of("person") == "people"


ROOT = Path(__file__).resolve().parent.parent
# A count written straight before a plural noun: "{n} samples" says "1 samples" for one.
_BARE_COUNT = re.compile(r"\{(?![A-Z_]+[:}])[^{}]*\}\*{0,2} (people|samples)\b")


#: Lines whose words are a contract other tools read (DESIGN.md): they stay word for word.
CONTRACTS = {("audit.py", 'return (f"audited {len(self.verdicts)} samples: {self.count(AGREE)} agree, "')}


def test_no_text_puts_a_bare_count_before_samples_or_people():
    """Regression (issue item 9b): "1 samples", "by 1 people" on the pages; counts go through plural()."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted([*(ROOT / "pages").rglob("*.py"), *(ROOT / "structext_core").rglob("*.py")])
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _BARE_COUNT.search(line) and (path.name, line.strip()) not in CONTRACTS]
    assert not found, "write plural(n, 'sample') / plural(n, 'person'):\n" + "\n".join(found)


def test_a_list_reads_as_a_phrase():
    from structext_core.text.words import series
    assert [series([]), series(["A"]), series(["A", "B"]), series(iter(["A", "B", "C"]))] == ["", "A", "A and B", "A, B and C"]
