"""How long making untrusted text safe takes (structext_core/text/safe_text.py).

Printed: the Markdown sanitiser on an ordinary question, on a 1 MB text of openers that never
close (the worst case for a parser that searches forward from each opener; this one makes one
pass), on a 1 MB text of images; the CSV writer on a 100,000-row table with text cells,
beside pandas' own to_csv of the same table (what csv_bytes used before); and a reference as
the question page draws it (a numbered text block, then what ``st.html`` does to a string before
sending it), at the size of Test-Hard's longest (157 KB), beside the way it was drawn before
(each line escaped on its own, then dedented and stripped by ``st.html``).

    .venv/bin/python benchmarks/bench_safe_text.py
"""

from __future__ import annotations

import html
import io
import textwrap
import time

import pandas as pd

from structext_core.text.safe_text import _LINES_STYLE, frame_csv, markdown_text, preformatted_html


def timed(label: str, run, repeat: int = 3) -> None:
    best = min(_once(run) for _ in range(repeat))
    print(f"{label:<58} {best * 1000:10.3f} ms")


def _once(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    question = "What is the value of the field `price` of the object with id 'k' in the list [3]?"
    openers = "![" * 250_000 + "](" * 125_000 + "\\" * 1001
    images = "![p](http://host.example/px.png) " * 30_000
    timed("markdown_text: one question", lambda: markdown_text(question), repeat=50)
    timed(f"markdown_text: {len(openers) / 1e6:.1f} MB of unclosed openers", lambda: markdown_text(openers))
    timed(f"markdown_text: {len(images) / 1e6:.1f} MB of images", lambda: markdown_text(images))
    table = pd.DataFrame({"model": [f"=model {i}" if i % 7 == 0 else f"model {i}" for i in range(100_000)],
                          "mean": [i / 1000 for i in range(100_000)], "n": range(100_000)})
    timed("frame_csv: 100,000 rows (text, float, int)", lambda: frame_csv(table))
    timed("pandas to_csv of the same (no cell made safe)", lambda: table.to_csv(io.StringIO(), index=False))
    reference = "".join(f'    "key_{i}": "<value & {i}>",\n' for i in range(4_700))  # about 157 KB
    timed(f"a {len(reference) / 1e3:.0f} KB reference drawn: numbered, sent as it is",
          lambda: preformatted_html(reference, line_numbers=True, max_height=600), repeat=20)
    timed("the same drawn as before: line by line, dedented by st.html",
          lambda: textwrap.dedent(_per_line(reference)).strip(), repeat=20)


def _per_line(text: str) -> str:
    """preformatted_html's numbered block as it was made before 4 December 2026 (each line escaped)."""
    lines = (line.removesuffix("\r") for line in text.split("\n"))
    body = "".join(f'<span class="sx-l">{html.escape(line, quote=False)}</span>' for line in lines)
    return f'{_LINES_STYLE}<pre class="sx-lines" data-testid="sxPreformatted">{body}</pre>'


if __name__ == "__main__":
    main()
