"""The tables a page draws as Markdown (``safe_text.markdown_table``), read back as a person reads
them: the tests' one reader, so that a table moved from ``st.table`` to Markdown is still checked
cell by cell."""

import pandas as pd


def _cells(line: str) -> list[str]:
    """A row's cells: split at each ``|`` not escaped, each backslash escape undone."""
    cells, cell, escaped = [], [], False
    for char in line.strip()[1:-1]:
        if escaped:
            cell.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "|":
            cells.append("".join(cell).strip())
            cell = []
        else:
            cell.append(char)
    cells.append("".join(cell).strip())
    return cells


def _number(text: str):
    if text == "":
        return None
    plain = text.replace(",", "")
    return int(plain) if plain.lstrip("-").isdigit() else float(plain)


def markdown_tables(at) -> list[pd.DataFrame]:
    """The run ``at``'s Markdown tables, in order: text as shown, right-aligned columns as numbers."""
    tables = []
    for element in at.markdown:
        lines = element.value.split("\n")
        if len(lines) < 2 or not lines[0].startswith("| ") or not set(lines[1]) <= set("|-:"):
            continue
        header, aligns = _cells(lines[0]), lines[1].strip("|").split("|")
        rows = [_cells(line) for line in lines[2:]]
        frame = pd.DataFrame(rows, columns=header)
        for column, align in zip(header, aligns, strict=True):
            if align.endswith(":"):
                frame[column] = [_number(v) for v in frame[column]]
        tables.append(frame)
    return tables
