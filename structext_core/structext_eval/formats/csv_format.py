"""Two CSV tables sharing ``primeKey``: people and their jobs.

As in the original, each table has ``depth`` rows and ignores width; a larger
table is available with ``rows``.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass

from structext_core.structext_eval.formats import NUMBER_RE, Document, Preview, Problem, ReadError, tokens_in
from structext_core.structext_eval.formats.sizes import RowSize
from structext_core.structext_eval.names import node_name
from structext_core.text import limits

LANGUAGE = "csv"
MAX_DEPTH = None
SIZE = RowSize(per_row=57)
PEOPLE_COLUMNS = ["primeKey", "gender", "age", "name", "height", "weight", "color"]
JOBS_COLUMNS = ["primeKey", "status", "salary", "company", "location"]
COLORS = ["swarthy", "olive", "brown", "fair", "tan", "pale", "ruddy", "dark"]
COMPANIES = ["Apple", "NVIDIA", "Google", "Microsoft", "Twitter", "Amazon", "Meta", "Intel", "IBM", "Oracle"]
LOCATIONS = ["CA", "IL", "NY", "GA", "HI", "TX", "WA", "MA", "FL", "OR"]
HEIGHT_RANGE = (120, 220)
SALARY_RANGE = (10000, 999999)


def make_tables(rng: random.Random, rows: int) -> tuple[list[dict], list[dict]]:
    people, jobs = [], []
    for i in range(rows):
        key = node_name(i)
        people.append({
            "primeKey": key,
            "gender": rng.choice(["male", "female"]),
            "age": str(rng.randint(18, 80)),
            "name": rng.choice("abcdefghijklmnopqrstuvwxyz"),
            "height": str(rng.randint(*HEIGHT_RANGE)),
            "weight": str(rng.randint(40, 180)),
            "color": rng.choice(COLORS),
        })
        jobs.append({
            "primeKey": key,
            "status": rng.choice(["employed", "unemployed"]),
            "salary": str(rng.randint(*SALARY_RANGE)),
            "company": rng.choice(COMPANIES),
            "location": rng.choice(LOCATIONS),
        })
    return people, jobs


def render(people: list[dict], jobs: list[dict]) -> str:
    def table(columns: list[str], rows: list[dict]) -> str:
        return "\n".join([",".join(columns)] + [",".join(r[c] for c in columns) for r in rows])

    return table(PEOPLE_COLUMNS, people) + "\n\n" + table(JOBS_COLUMNS, jobs)


def generate(rng: random.Random, depth: int, width: int, col: int, *, inject_errors: bool = False,
             rows: int | None = None) -> Document:
    people, jobs = make_tables(rng, rows or depth)
    return Document(render(people, jobs), None, {"people": people, "jobs": jobs})


def tables(text: str) -> list[tuple[list[str], list[dict]]]:
    """The tables of the reference (separated by blank lines): header and row dicts."""
    limits.check_reference(LANGUAGE, text)
    blocks = [b for b in text.replace("\r\n", "\n").strip().split("\n\n") if b.strip()]
    out = []
    for n, block in enumerate(blocks, 1):
        reader = csv.reader(io.StringIO(block.strip()))
        try:
            rows = list(reader)
        except csv.Error as exc:
            raise ReadError(f"table {n}, row {reader.line_num}: {exc}") from None
        header = [h.strip() for h in rows[0]]
        body = []
        for lineno, row in enumerate(rows[1:], 2):
            if len(row) != len(header):
                raise ReadError(f"table {n}, row {lineno}: {len(row)} cells for {len(header)} columns")
            body.append({h: c.strip() for h, c in zip(header, row)})
        out.append((header, body))
    return out


def table_with(text: str, column: str) -> list[dict]:
    for header, body in tables(text):
        if column in header:
            return body
    raise ReadError(f"no table has a column {column!r}")


def to_number(cell: str, what: str) -> float:
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        raise ReadError(f"{what} {cell!r} is not a number") from None


def preview(reference: str) -> Preview:
    import pandas as pd  # only Explore's preview needs it

    return Preview("tables", [pd.DataFrame(rows, columns=header) for header, rows in tables(reference)])


RESERVED_WORDS = frozenset()
#: Columns whose values the answers compute with: a rewrite keeps them numbers.
NUMERIC_COLUMNS = frozenset({"age", "height", "weight", "salary"})


def rewrite_tokens(reference: str) -> list[tuple[str, str]]:
    """Cells' tokens, each with its column's name as role (``number`` for numeric columns)."""
    out: list[tuple[str, str]] = []
    header: list[str] | None = None
    for line in reference.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            header = None
            continue
        cells = next(csv.reader([line]))
        if header is None:
            header = [c.strip() for c in cells]
            continue
        for i, cell in enumerate(cells):
            column = header[i] if i < len(header) else "cell"
            role = "number" if column in NUMERIC_COLUMNS else column
            out.extend((t, role) for t in tokens_in(cell))
    return out


def value_problem(new: str, kinds: set[str]) -> str | None:
    return "a comma or a quote would split the CSV cell" if ("," in new or '"' in new) else None


@dataclass
class CsvTable:
    header: list[str]
    header_line: int
    rows: list[list[str]]
    row_lines: list[int]


def read_tables(text: str) -> list[CsvTable]:
    """Tables separated by blank lines, with line numbers; raises ReadError saying where."""
    limits.check_reference("csv", text)
    tables_: list[CsvTable] = []
    current: CsvTable | None = None
    for lineno, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        if not line.strip():
            current = None
            continue
        try:
            cells = [c.strip() for c in next(csv.reader([line]))]
        except csv.Error as exc:
            raise ReadError(f"line {lineno}: {exc}") from None
        if current is None:
            current = CsvTable(cells, lineno, [], [])
            tables_.append(current)
            continue
        if len(cells) != len(current.header):
            raise ReadError(f"line {lineno} (table {len(tables_)}): {len(cells)} cells for "
                            f"{len(current.header)} columns")
        current.rows.append(cells)
        current.row_lines.append(lineno)
    if not tables_:
        raise ReadError("no table found")
    return tables_


def parse_error(text: str) -> str | None:
    """What the reader says about ``text`` (None: it reads); ``text`` is within the limits."""
    try:
        read_tables(text)
    except ValueError as exc:
        return str(exc)
    return None


def line_signature(line: str) -> str:
    """A line's shape with the data masked (this format's lines are compared as they are)."""
    return line


# ---- the skeleton, for the rewrite check ----------------------------------------------

def compare_structure(original: str, rewrite: str) -> list[Problem]:
    """Tables, headers, row counts and numeric columns, then the join: rows that shared a
    ``primeKey`` across tables still do."""
    o_tables, r_tables = read_tables(original), read_tables(rewrite)
    if len(o_tables) != len(r_tables):
        return [Problem("structure", "document", f"{len(o_tables)} table(s) in the original, {len(r_tables)} in "
                                                 "the rewrite (tables are separated by one blank line)")]
    problems = [p for n, (o, r) in enumerate(zip(o_tables, r_tables), 1) for p in _compare_table(n, o, r)]
    if not problems and len(r_tables) > 1:
        problems = _join_problems(o_tables, r_tables)
    return problems


def _compare_table(n: int, o: CsvTable, r: CsvTable) -> list[Problem]:
    where = f"table {n} (header on line {r.header_line})"
    if o.header != r.header:
        return [Problem("structure", where, f"the columns are {','.join(r.header)}; they must stay "
                                            f"{','.join(o.header)}")]
    if len(o.rows) != len(r.rows):
        if len(r.rows) > len(o.rows):
            extra = r.row_lines[len(o.rows)]
            detail = f"an extra row starts on line {extra} ({','.join(r.rows[len(o.rows)])})"
        else:
            detail = "a row is missing"
        return [Problem("structure", where, f"{len(o.rows)} row(s) in the original, {len(r.rows)} in the "
                                            f"rewrite: {detail}")]
    return [Problem("structure", f"line {line}, column {name}", f"{cells[col]!r} is not a number; {name} must "
                                                                "stay a number")
            for col, name in enumerate(r.header) if name in NUMERIC_COLUMNS
            for cells, line in zip(r.rows, r.row_lines) if not NUMBER_RE.match(cells[col])]


def _join_problems(original: list[CsvTable], rewrite: list[CsvTable]) -> list[Problem]:
    problems: list[Problem] = []
    o_keys, r_keys = [_keys(t) for t in original], [_keys(t) for t in rewrite]
    first = set(r_keys[0])
    for n in range(1, len(rewrite)):
        if set(o_keys[n]) <= set(o_keys[0]):
            problems.extend(Problem("structure", f"line {line}, column primeKey",
                                    f"primeKey {key!r} has no row in table 1: the tables no longer join")
                            for key, line in zip(r_keys[n], rewrite[n].row_lines) if key not in first)
    for n, keys in enumerate(r_keys, 1):
        if len(set(keys)) != len(keys) and len(set(o_keys[n - 1])) == len(o_keys[n - 1]):
            problems.append(Problem("structure", f"table {n}", "two rows share a primeKey"))
    return problems


def _keys(table: CsvTable) -> list[str]:
    if "primeKey" not in table.header:
        return []
    i = table.header.index("primeKey")
    return [row[i] for row in table.rows]
