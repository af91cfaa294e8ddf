"""People brought in from a CSV (issue 45, item 6): a lab's own experts, in bulk, each with a one-time
set-password link to hand out (no email is sent by the workbench).

The file has a header line and one line per person; its columns (any order, names case-insensitive):

- ``name``: the user name (the accounts' rules: :func:`~.credentials.validate_username`);
- ``role``: ``annotator`` (the default when empty or absent), ``researcher``, ``lead`` or ``admin``;
- ``studies``: optional, study names separated by ``;``. An annotator is added to each (the study
  must be open; :func:`structext_core.studio.study.store.add_annotator`); a lead leads each
  (``study_leads``); a researcher or an admin is given none (an admin runs every study).

Everything is read as hostile: at most :data:`MAX_CSV_BYTES` bytes and :data:`MAX_PEOPLE` people,
UTF-8 (a byte-order mark is dropped), CRLF or LF line ends, quoted fields. Every line is checked
before anything is written (:func:`plan_import`): malformed or duplicate names within the file,
names already taken, unknown roles and studies, and what the importer may not do (``allowed_roles``;
``allowed_studies``: a lead brings only annotators, into the studies they run; an admin anything).
The report lists each problem with its line, its column and why; then nothing is written. Otherwise
:func:`import_people` writes every account, link and place in one transaction: all or nothing.

Each new account has no usable password (:data:`~.password_links.LINK_ONLY_HASH`) and one link
(:mod:`.password_links`), whose token is in the report once (only its hash is kept).
"""

from __future__ import annotations

import csv
import io
import sqlite3
import time
from dataclasses import dataclass, field

import sqlite_utils

from structext_core.studio import changes
from structext_core.studio.accounts.credentials import AccountError, normal_username, validate_username
from structext_core.studio.accounts.password_links import LINK_ONLY_HASH, _issue, link_lifetime_seconds
from structext_core.studio.accounts.users import get_user
from structext_core.studio.storage import write_transaction

MAX_CSV_BYTES = 1_000_000
MAX_PEOPLE = 2_000
#: At most this many studies on one line, and this many characters in one field.
MAX_STUDIES_PER_LINE = 50
MAX_FIELD_CHARS = 2_000
COLUMNS = ("name", "role", "studies")
IMPORT_ROLES = ("annotator", "researcher", "lead", "admin")
DEFAULT_ROLE = "annotator"
#: Roles that take studies: what taking one means for each.
STUDY_ROLES = {"annotator": "answers it", "lead": "leads it"}


@dataclass(frozen=True)
class Problem:
    """Why a line cannot be imported: its ``line`` in the file (1 is the header; 0: the file as a
    whole), the ``column`` (``""``: the whole line) and ``why``."""

    line: int
    column: str
    why: str

    def text(self) -> str:
        where = "the file" if self.line == 0 else f"line {self.line}"
        return f"{where}{f', {self.column}' if self.column else ''}: {self.why}"


@dataclass(frozen=True)
class Person:
    """One line to import: its line number, the name as it will be stored, the role, the studies
    (their names as the lab wrote them, and their ids)."""

    line: int
    name: str
    role: str
    studies: tuple[str, ...] = ()
    study_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Created:
    """An account made by the import, with its one-time link's token (shown once)."""

    user_id: int
    name: str
    role: str
    studies: tuple[str, ...]
    token: str


@dataclass(frozen=True)
class ImportReport:
    """What an import would do (``people``) or did (``created``), or why it was refused (``problems``:
    then nothing was written)."""

    people: tuple[Person, ...] = ()
    problems: tuple[Problem, ...] = ()
    created: tuple[Created, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem_lines(self) -> list[str]:
        return [problem.text() for problem in self.problems]


def _text_of(data: str | bytes) -> tuple[str | None, Problem | None]:
    """The file's text (byte-order mark dropped), or the problem with the whole file."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) > MAX_CSV_BYTES:
            return None, Problem(0, "", f"it is larger than {MAX_CSV_BYTES:,} bytes: split it into smaller files")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            return None, Problem(0, "", f"it is not UTF-8 text (byte {error.start + 1}): save it as CSV UTF-8")
    elif isinstance(data, str):
        if len(data) > MAX_CSV_BYTES or len(data.encode("utf-8", "surrogatepass")) > MAX_CSV_BYTES:
            return None, Problem(0, "", f"it is larger than {MAX_CSV_BYTES:,} bytes: split it into smaller files")
        text = data
    else:
        return None, Problem(0, "", "it is not text")
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        return None, Problem(0, "", "it holds a NUL character: it is not a CSV text file")
    return text, None


def _rows(text: str) -> tuple[list[tuple[int, list[str]]], Problem | None]:
    """The file's non-empty rows with the line each starts on; or the problem that stopped the reading."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    line = 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append((line, row))
                if len(rows) > MAX_PEOPLE + 1:
                    return rows, Problem(line, "", f"more than {MAX_PEOPLE:,} people in one file: split it")
            line = reader.line_num + 1
    except csv.Error as error:
        return rows, Problem(reader.line_num or line, "", f"this is not well-formed CSV ({error})")
    return rows, None


def _studies(db: sqlite_utils.Database) -> dict[str, tuple[int, str, str]]:
    """Every study by its case-folded name: (id, name, status)."""
    return {str(name).casefold(): (sid, name, status)
            for sid, name, status in db.execute("SELECT id, name, status FROM studies").fetchall()}


def _limits(by: dict, allowed_studies, allowed_roles) -> tuple[set[int] | None, tuple[str, ...]]:
    """What ``by`` may do: an admin what the caller says; a lead at most annotators, in the studies
    given (none when the caller gave none); anyone else nothing."""
    role = (by or {}).get("role")
    roles = tuple(r for r in allowed_roles if r in IMPORT_ROLES)
    if role == "admin":
        return (None if allowed_studies is None else set(allowed_studies)), roles
    if role == "lead":
        return set(allowed_studies or ()), tuple(r for r in roles if r == "annotator")
    return set(), ()


def plan_import(db: sqlite_utils.Database, csv_text: str | bytes, *, by: dict,
                allowed_studies: set[int] | None = None, allowed_roles=(DEFAULT_ROLE,)) -> ImportReport:
    """Read and check the whole file; writes nothing. The report's ``people`` is what
    :func:`import_people` would make, or its ``problems`` say why it would refuse."""
    studies_allowed, roles_allowed = _limits(by, allowed_studies, allowed_roles)
    if not roles_allowed:
        return ImportReport(problems=(Problem(0, "", "your role may not bring people in: ask an admin"),))
    text, problem = _text_of(csv_text)
    if problem is not None:
        return ImportReport(problems=(problem,))
    rows, problem = _rows(text)
    problems: list[Problem] = [] if problem is None else [problem]
    if not rows:
        return ImportReport(problems=tuple(problems) or (Problem(0, "", "it is empty: give a header line "
                                                                        "(name,role,studies) and one line per person"),))
    header_line, header = rows[0]
    columns = [cell.strip().casefold() for cell in header]
    for position, column in enumerate(columns, 1):
        if column not in COLUMNS:
            problems.append(Problem(header_line, f"column {position}",
                                    f"{column[:40]!r} is not a column: the columns are {', '.join(COLUMNS)} "
                                    "(the first line is the header)"))
        elif columns.index(column) != position - 1:
            problems.append(Problem(header_line, column, "this column is named twice"))
    if "name" not in columns:
        problems.append(Problem(header_line, "name", "the header has no name column: the first line must name "
                                                     f"the columns ({', '.join(COLUMNS)})"))
    if problems and any(p.line == header_line for p in problems):
        return ImportReport(problems=tuple(problems))
    if len(rows) == 1 and not problems:
        return ImportReport(problems=(Problem(0, "", "it has a header line but no one under it"),))

    known = _studies(db)
    seen: dict[str, int] = {}
    people: list[Person] = []
    for line, row in rows[1:MAX_PEOPLE + 1]:
        if len(row) > len(columns):
            problems.append(Problem(line, "", f"it has {len(row)} fields, the header {len(columns)}: "
                                              "quote a field that holds a comma"))
            continue
        cells = {column: (row[i] if i < len(row) else "") for i, column in enumerate(columns)}
        too_long = [c for c, v in cells.items() if len(v) > MAX_FIELD_CHARS]
        if too_long:
            problems.extend(Problem(line, c, f"longer than {MAX_FIELD_CHARS:,} characters") for c in too_long)
            continue
        line_problems: list[Problem] = []
        name = None
        try:
            name = validate_username(cells["name"])
        except AccountError as error:
            line_problems.append(Problem(line, "name", str(error)))
        if name is not None:
            normal = normal_username(name)
            if normal in seen:
                line_problems.append(Problem(line, "name", f"{name!r} is on line {seen[normal]} already"))
            else:
                seen[normal] = line
                if get_user(db, name) is not None:
                    line_problems.append(Problem(line, "name", f"{name!r} is already taken by an account"))
        role = cells.get("role", "").strip().casefold() or DEFAULT_ROLE
        if role not in IMPORT_ROLES:
            line_problems.append(Problem(line, "role", f"{cells['role'].strip()[:40]!r} is no role: give one of "
                                                       f"{', '.join(IMPORT_ROLES)} (empty: {DEFAULT_ROLE})"))
        elif role not in roles_allowed:
            line_problems.append(Problem(line, "role", f"you may not make a {role}: you may bring in "
                                                       f"{' or '.join(r + 's' for r in roles_allowed)}"))
        named = [part.strip() for part in cells.get("studies", "").split(";") if part.strip()]
        named = list(dict.fromkeys(named, None))  # the same study twice on one line is once
        study_ids: list[int] = []
        if named and role in IMPORT_ROLES and role not in STUDY_ROLES:
            line_problems.append(Problem(line, "studies", f"a {role} is given no study: only an annotator "
                                                          "answers one and a lead leads one (leave it empty)"))
        elif len(named) > MAX_STUDIES_PER_LINE:
            line_problems.append(Problem(line, "studies", f"more than {MAX_STUDIES_PER_LINE} studies on one line"))
        else:
            for study_name in named:
                found = known.get(study_name.casefold())
                if found is None or (studies_allowed is not None and found[0] not in studies_allowed):
                    whose = "you run " if studies_allowed is not None else ""
                    line_problems.append(Problem(line, "studies", f"no study {whose}is named {study_name[:80]!r}"))
                elif role == "annotator" and found[2] != "open":
                    line_problems.append(Problem(line, "studies", f"the study {found[1]!r} is closed: open it "
                                                                  "again to add people to it"))
                else:
                    study_ids.append(found[0])
        if line_problems:
            problems.extend(line_problems)
        else:
            people.append(Person(line, name, role, tuple(named), tuple(study_ids)))
    return ImportReport(people=tuple(people) if not problems else (), problems=tuple(problems))


def import_people(db: sqlite_utils.Database, csv_text: str | bytes, *, by: dict,
                  allowed_studies: set[int] | None = None, allowed_roles=(DEFAULT_ROLE,),
                  now: float | None = None) -> ImportReport:
    """Make the file's accounts, each with a one-time set-password link, and their places in studies,
    in one transaction; or, when any line is refused (:func:`plan_import`), write nothing and say why."""
    plan = plan_import(db, csv_text, by=by, allowed_studies=allowed_studies, allowed_roles=allowed_roles)
    if not plan.ok:
        return plan
    from structext_core.studio.study import store  # the study layer reads accounts: imported here

    now = time.time() if now is None else now
    lifetime = link_lifetime_seconds()
    by_user = by["id"]
    created: list[Created] = []
    person = None
    try:
        with write_transaction(db, enclosing=True):
            for person in plan.people:
                if get_user(db, person.name) is not None:  # taken since the plan was made
                    raise AccountError(f"{person.name!r} is already taken by an account")
                user_id = db.execute(
                    "INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, ?, ?)",
                    [person.name, LINK_ONLY_HASH, person.role, now]).lastrowid
                changes.record(db, by_user, "account.create", f"user:{user_id}", role=person.role, via="csv")
                token = _issue(db, user_id, by_user, now, lifetime)
                for study_id in person.study_ids:
                    if person.role == "annotator":
                        store.add_annotator(db, study_id, user_id, by_user=by_user)
                    else:
                        db.execute("INSERT INTO study_leads (study_id, user_id, added_by, added_at) VALUES (?, ?, ?, ?)",
                                   [study_id, user_id, by_user, now])
                        changes.record(db, by_user, "study.add_lead", f"study:{study_id}", user_id=user_id)
                created.append(Created(user_id, person.name, person.role, person.studies, token))
    except (AccountError, store.StudyError, PermissionError, sqlite3.IntegrityError) as error:
        # A study's own refusal (or one it may gain: who may add people to it), or a name taken by
        # another session between the check and the write: the whole file is rolled back.
        line = person.line if person is not None else 0
        column = "name" if isinstance(error, (AccountError, sqlite3.IntegrityError)) else "studies"
        if isinstance(error, sqlite3.IntegrityError):
            error = AccountError(f"{person.name!r} is already taken by an account")
        return ImportReport(problems=(Problem(line, column, str(error)),))
    return ImportReport(people=plan.people, created=tuple(created))
