"""People from a CSV (``accounts.bulk``) and one-time set-password links (``accounts.password_links``):
issue 45, item 6. Every refusal writes nothing; a link works once, until it expires, and says nothing
about the account when it does not."""

from __future__ import annotations

import pytest

from structext_core.studio import accounts, study
from structext_core.studio.accounts import bulk, password_links
from structext_core.studio.storage import open_db
from structext_core.studio.study import leads
from tests.studio.study.support import grid_samples, make_study

TABLES = ("users", "password_links", "study_annotators", "assignments", "study_leads", "audit_log")


@pytest.fixture
def db(monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    monkeypatch.delenv("STRUCTEXT_PASSWORD_LINK_DAYS", raising=False)
    return open_db(":memory:")


@pytest.fixture
def lab(db):
    """An admin, a lead of 'pilot', an annotator, and three studies: 'pilot' and 'main' open, 'old' closed."""
    admin = accounts.create_user(db, "boss", "password-123", "admin")
    ann = accounts.create_user(db, "ann0", "password-123", "annotator")
    samples = grid_samples()
    ids = {name: make_study(db, samples, [ann], name=name, n_items=4) for name in ("pilot", "main", "old")}
    study.set_study_status(db, ids["old"], "closed")
    db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES ('lea', '!x', 'lead', 0)")
    lead = {"id": db.execute("SELECT id FROM users WHERE username = 'lea'").fetchone()[0], "username": "lea",
            "role": "lead"}
    leads.add_lead(db, ids["pilot"], lead["id"], by=admin)  # she leads 'pilot' alone
    return {"admin": admin, "lead": lead, "ann": ann, "studies": ids}


def counts(db) -> dict:
    return {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES}


ALL = bulk.IMPORT_ROLES


def as_admin(db, lab, text, **kw):
    return bulk.import_people(db, text, by=lab["admin"], allowed_roles=ALL, **kw)


# ------------------------------------------------------------------------------ a good file
def test_a_file_makes_accounts_with_links_and_places_in_one_go(db, lab):
    text = ("\ufeffname,role,studies\r\n"
            "ada,annotator,pilot;Main\r\n"
            '"bob",,"pilot"\r\n'
            "cy,researcher,\r\n"
            "dee,lead,old\r\n"
            "\r\n"
            "eve,ADMIN,\r\n")
    report = as_admin(db, lab, text.encode("utf-8"))
    assert report.ok, report.problem_lines()
    assert [(c.name, c.role, c.studies) for c in report.created] == [
        ("ada", "annotator", ("pilot", "Main")), ("bob", "annotator", ("pilot",)), ("cy", "researcher", ()),
        ("dee", "lead", ("old",)), ("eve", "admin", ())]
    ids = lab["studies"]
    members = {sid: set(study.annotator_names(db, sid)) for sid in ids.values()}
    assert members[ids["pilot"]] == {"ann0", "ada", "bob"} and members[ids["main"]] == {"ann0", "ada"}
    ada = accounts.get_user(db, "ada")
    assert db.execute("SELECT COUNT(*) FROM assignments WHERE user_id = ?", [ada["id"]]).fetchone()[0] == 8
    dee = accounts.get_user(db, "dee")
    assert db.execute("SELECT study_id FROM study_leads WHERE user_id = ?", [dee["id"]]).fetchall() == [(ids["old"],)]
    # No usable password: the hash is the marker, and no password, not even the marker itself, logs in.
    for created in report.created:
        stored = db.execute("SELECT password_hash FROM users WHERE id = ?", [created.user_id]).fetchone()[0]
        assert stored == password_links.LINK_ONLY_HASH
        for guess in ("", password_links.LINK_ONLY_HASH, "set-password-link", "password-123"):
            assert accounts.authenticate(db, created.name, guess) is None
            assert accounts.log_in(db, created.name, guess).user is None
    # Only the tokens' hashes are kept; each token is 43 URL-safe characters.
    kept = {row[0] for row in db.execute("SELECT token_hash FROM password_links")}
    assert len(kept) == 5 and all(len(c.token) == 43 for c in report.created)
    assert not {c.token for c in report.created} & kept
    assert {password_links.token_hash(c.token) for c in report.created} == kept


def test_a_preview_writes_nothing_and_says_what_would_be_made(db, lab):
    before = counts(db)
    plan = bulk.plan_import(db, "name\nada\nbob\n", by=lab["admin"], allowed_roles=ALL)
    assert plan.ok and [(p.line, p.name, p.role) for p in plan.people] == [(2, "ada", "annotator"), (3, "bob", "annotator")]
    assert counts(db) == before


def test_columns_in_any_order_and_a_file_without_role_or_studies(db, lab):
    report = as_admin(db, lab, "Studies , NAME\npilot,ada\n")
    assert report.ok and report.created[0].role == "annotator" and report.created[0].studies == ("pilot",)


# ------------------------------------------------------------------------------ refusals: nothing written
@pytest.mark.parametrize("text, expected", [
    ("name,role\nada,annotator\nAda,annotator\n", ["line 3, name: 'Ada' is on line 2 already"]),
    ("name\nann0\n", ["line 2, name: 'ann0' is already taken by an account"]),
    ("name\nANN0\n", ["line 2, name: 'ANN0' is already taken by an account"]),
    ("name\nbad name\n", ["line 2, name: User name 'bad name' has characters that are not allowed"]),
    ("name\n\n\n   \n", ["the file: it has a header line but no one under it"]),
    ("name\nok1\nzero\u200bwidth\n", ["line 3, name: User name has an invisible character (U+200B ZERO WIDTH SPACE)"]),
    ("name,role\nada,boss\n", ["line 2, role: 'boss' is no role: give one of annotator, researcher, lead, admin"]),
    ("name,studies\nada,pilot;nope\n", ["line 2, studies: no study is named 'nope'"]),
    ("name,studies\nada,old\n", ["line 2, studies: the study 'old' is closed: open it again to add people to it"]),
    ("name,role,studies\nada,researcher,pilot\n", ["line 2, studies: a researcher is given no study"]),
    ("name,role,studies\nada,admin,pilot\n", ["line 2, studies: a admin is given no study"]),
    ("name,email\nada,a@b\n", ["line 1, column 2: 'email' is not a column: the columns are name, role, studies"]),
    ("user,role\nada,annotator\n", ["line 1, column 1: 'user' is not a column", "line 1, name: the header has no name column"]),
    ("name,name\nada,bob\n", ["line 1, name: this column is named twice"]),
    ("name,role\nada,annotator,extra\n", ["line 2: it has 3 fields, the header 2: quote a field that holds a comma"]),
    ('name,role\n"ada,annotator\n', ["line 2: this is not well-formed CSV"]),
    ("", ["the file: it is empty"]),
    ("\r\n\r\n", ["the file: it is empty"]),
    ("name\nab\x00c\n", ["the file: it holds a NUL character"]),
    ("name\ndeleted-user-7\n", ["line 2, name: User names starting with 'deleted-user-' are kept"]),
])
def test_each_refusal_names_line_column_and_why_and_writes_nothing(db, lab, text, expected):
    before = counts(db)
    report = as_admin(db, lab, text)
    assert not report.ok and not report.created
    lines = report.problem_lines()
    assert len(lines) == len(expected), lines
    for line, start in zip(lines, expected):
        assert line.startswith(start), (line, start)
    assert counts(db) == before


def test_every_problem_of_the_file_is_listed_at_once_and_good_lines_are_not_made(db, lab):
    before = counts(db)
    report = as_admin(db, lab, "name,role,studies\ngood1,,pilot\nbad name,,\ngood2,chief,\nann0,,nope\n")
    assert [(p.line, p.column) for p in report.problems] == [(3, "name"), (4, "role"), (5, "name"), (5, "studies")]
    assert report.people == () and counts(db) == before


def test_size_bounds(db, lab):
    big = "name\n" + "x" * bulk.MAX_CSV_BYTES
    assert as_admin(db, lab, big).problem_lines() == [
        "the file: it is larger than 1,000,000 bytes: split it into smaller files"]
    assert as_admin(db, lab, big.encode()).problem_lines()[0].startswith("the file: it is larger than")
    many = "name\n" + "".join(f"p{i}\n" for i in range(bulk.MAX_PEOPLE + 1))
    before = counts(db)
    assert as_admin(db, lab, many).problem_lines() == [
        f"line {bulk.MAX_PEOPLE + 2}: more than 2,000 people in one file: split it"]
    assert counts(db) == before
    exactly = "name\n" + "".join(f"p{i}\n" for i in range(bulk.MAX_PEOPLE))
    assert bulk.plan_import(db, exactly, by=lab["admin"], allowed_roles=ALL).ok
    assert as_admin(db, lab, "name\n" + "a" * (bulk.MAX_FIELD_CHARS + 1) + "\n").problem_lines() == [
        "line 2, name: longer than 2,000 characters"]
    latin1 = "name\nJos\xe9\n".encode("latin-1")
    assert as_admin(db, lab, latin1).problem_lines() == ["the file: it is not UTF-8 text (byte 9): save it as CSV UTF-8"]


def test_quoted_fields_and_a_line_break_inside_quotes_keep_line_numbers_right(db, lab):
    text = 'name,studies\n"ada","pilot;\nmain"\nbad name,\n'
    report = as_admin(db, lab, text)
    assert report.problem_lines() == ["line 4, name: User name 'bad name' has characters that are not allowed: use "
                                      "letters, digits, '.', '_' and '-', starting with a letter or digit."]


# ------------------------------------------------------------------------------ who may bring whom
def test_a_lead_brings_only_annotators_into_the_studies_they_run(db, lab):
    ids = lab["studies"]
    lead = lab["lead"]
    before = counts(db)
    asked = "name,role,studies\nr1,researcher,\nl1,lead,\nm1,,main\n"
    report = bulk.import_people(db, asked, by=lead, allowed_studies={ids["pilot"]}, allowed_roles=ALL)
    assert report.problem_lines() == [
        "line 2, role: you may not make a researcher: you may bring in annotators",
        "line 3, role: you may not make a lead: you may bring in annotators",
        "line 4, studies: no study you run is named 'main'"]  # the same words as for a study that does not exist
    assert counts(db) == before
    report = bulk.import_people(db, "name,studies\nm1,pilot\n", by=lead, allowed_studies={ids["pilot"]})
    assert report.ok and study.annotator_names(db, ids["pilot"]) == ["ann0", "m1"]
    # A lead whose caller gave no studies runs none; a researcher or annotator brings nobody in.
    assert bulk.plan_import(db, "name,studies\nm2,pilot\n", by=lead).problem_lines() == [
        "line 2, studies: no study you run is named 'pilot'"]
    for someone in (lab["ann"], {"id": 99, "username": "r", "role": "researcher"}):
        assert bulk.plan_import(db, "name\nm3\n", by=someone, allowed_roles=ALL).problem_lines() == [
            "the file: your role may not bring people in: ask an admin"]


def test_an_admin_by_default_makes_annotators_only_unless_allowed_more(db, lab):
    assert bulk.plan_import(db, "name,role\nx,admin\n", by=lab["admin"]).problem_lines() == [
        "line 2, role: you may not make a admin: you may bring in annotators"]
    assert bulk.plan_import(db, "name,role\nx,admin\n", by=lab["admin"], allowed_roles=ALL).ok


def test_a_failure_while_writing_leaves_nothing_half_made(db, lab, monkeypatch):
    """A study that refuses the third person (here: a refusal injected in add_annotator) rolls back
    the first two accounts, their links and places too."""
    before = counts(db)
    real = study.store.add_annotator
    calls = []

    def refuse_third(db_, study_id, user_id, *, by_user=None):
        calls.append(user_id)
        if len(calls) == 3:
            raise study.StudyError("That annotator already takes part in this study.")
        return real(db_, study_id, user_id, by_user=by_user)
    monkeypatch.setattr(study.store, "add_annotator", refuse_third)
    report = as_admin(db, lab, "name,studies\na1,pilot\na2,pilot\na3,pilot\n")
    assert report.problem_lines() == ["line 4, studies: That annotator already takes part in this study."]
    assert counts(db) == before and len(calls) == 3


# ------------------------------------------------------------------------------ links
def made(db, lab, names=("ada",)):
    report = as_admin(db, lab, "name\n" + "\n".join(names) + "\n", now=1000.0)
    assert report.ok
    return {c.name: c for c in report.created}


def test_a_link_sets_the_password_once(db, lab):
    ada = made(db, lab)["ada"]
    assert password_links.link_user(db, ada.token, now=1001.0)["username"] == "ada"
    user = password_links.set_password_with_link(db, ada.token, "a good password", now=1001.0)
    assert user == {"id": ada.user_id, "username": "ada", "role": "annotator"}
    assert accounts.log_in(db, "ada", "a good password").user["id"] == ada.user_id
    with pytest.raises(password_links.LinkRefused) as again:
        password_links.set_password_with_link(db, ada.token, "another password", now=1002.0)
    assert str(again.value) == password_links.LINK_REFUSED
    assert accounts.log_in(db, "ada", "a good password").user is not None
    assert db.execute("SELECT used_at FROM password_links").fetchone()[0] == 1001.0


def test_a_short_password_is_refused_and_the_link_stays_usable(db, lab):
    ada = made(db, lab)["ada"]
    with pytest.raises(accounts.AccountError, match="Password is too short: use at least 8 characters"):
        password_links.set_password_with_link(db, ada.token, "short", now=1001.0)
    assert password_links.set_password_with_link(db, ada.token, "long enough", now=1001.0)["username"] == "ada"


def test_expiry_is_seven_days_by_default_and_a_setting(db, lab, monkeypatch):
    ada = made(db, lab)["ada"]
    week = 7 * 86400
    assert password_links.link_user(db, ada.token, now=1000.0 + week - 1)["username"] == "ada"
    with pytest.raises(password_links.LinkRefused):
        password_links.set_password_with_link(db, ada.token, "long enough", now=1000.0 + week)
    monkeypatch.setenv("STRUCTEXT_PASSWORD_LINK_DAYS", "0.5")
    bob = made(db, lab, ("bob",))["bob"]
    with pytest.raises(password_links.LinkRefused):
        password_links.link_user(db, bob.token, now=1000.0 + 43200)
    monkeypatch.setenv("STRUCTEXT_PASSWORD_LINK_DAYS", "365")
    before = counts(db)
    with pytest.raises(accounts.AccountError, match="STRUCTEXT_PASSWORD_LINK_DAYS='365' is not a link lifetime"):
        as_admin(db, lab, "name\ncy\n")
    assert counts(db) == before


@pytest.mark.parametrize("token", ["", "x", "A" * 43, "A" * 5000, None, 12, "ada"])
def test_unknown_tokens_get_the_one_message(db, lab, token):
    made(db, lab)
    with pytest.raises(password_links.LinkRefused) as refused:
        password_links.set_password_with_link(db, token, "long enough", now=1001.0)
    assert str(refused.value) == password_links.LINK_REFUSED
    assert "ada" not in str(refused.value)


def test_a_disabled_account_link_gets_the_same_message(db, lab):
    ada = made(db, lab)["ada"]
    accounts.disable_user(db, ada.user_id, by_user=lab["admin"]["id"])
    with pytest.raises(password_links.LinkRefused) as refused:
        password_links.set_password_with_link(db, ada.token, "long enough", now=1001.0)
    assert str(refused.value) == password_links.LINK_REFUSED


def test_a_new_link_ends_the_old_one_and_setting_a_password_ends_the_others(db, lab):
    ada = made(db, lab)["ada"]
    second = password_links.new_password_link(db, ada.user_id, by=lab["admin"], now=1100.0)
    with pytest.raises(password_links.LinkRefused):
        password_links.link_user(db, ada.token, now=1101.0)
    assert password_links.link_user(db, second, now=1101.0)["id"] == ada.user_id
    third = password_links.new_password_link(db, ada.user_id, by=lab["admin"], now=1200.0)
    # An earlier one still open when a password is set is ended by it.
    db.execute("UPDATE password_links SET expires_at = 9e9 WHERE token_hash = ?", [password_links.token_hash(second)])
    password_links.set_password_with_link(db, third, "long enough", now=1201.0)
    with pytest.raises(password_links.LinkRefused):
        password_links.set_password_with_link(db, second, "other password", now=1202.0)
    actions = [c.action for c in accounts_changes(db, ada.user_id)]
    assert actions.count("account.password_link") == 2 and "account.password_set_by_link" in actions


def test_setting_a_password_by_link_ends_the_accounts_sessions(db, lab):
    ada = made(db, lab)["ada"]
    session = accounts.issue_session(db, ada.user_id)
    password_links.set_password_with_link(db, ada.token, "long enough", now=1001.0)
    assert accounts.verify_session(db, session).reason == "revoked"


def test_no_link_for_a_missing_or_deleted_account(db, lab):
    with pytest.raises(accounts.AccountError, match="There is no account with id 999"):
        password_links.new_password_link(db, 999, by=lab["admin"])
    ada = made(db, lab)["ada"]
    accounts.delete_user(db, ada.user_id, remove_data=False, by_user=lab["admin"]["id"])
    with pytest.raises(accounts.AccountError, match="This account is deleted"):
        password_links.new_password_link(db, ada.user_id, by=lab["admin"])


def test_link_urls_are_built_from_the_apps_address():
    root = password_links.app_root("https://lab.example.org/studio/accounts?x=1#top", "accounts")
    assert root == "https://lab.example.org/studio/"
    assert password_links.app_root("http://127.0.0.1:8501/accounts", "accounts") == "http://127.0.0.1:8501/"
    assert password_links.app_root("http://127.0.0.1:8501/", "accounts") == "http://127.0.0.1:8501/"
    assert password_links.app_root("http://h/my-accounts", "accounts") == "http://h/my-accounts/"
    assert password_links.link_url(root, "abc-_1") == "https://lab.example.org/studio/?set_password=abc-_1"
    assert password_links.link_url("http://h:1", "t") == "http://h:1/?set_password=t"


def accounts_changes(db, user_id):
    from structext_core.studio import changes
    return changes.history(db, f"user:{user_id}")


def test_a_name_taken_between_the_check_and_the_write_refuses_the_whole_file(db, lab, monkeypatch):
    checked = bulk.plan_import(db, "name\nada\nbob\n", by=lab["admin"], allowed_roles=ALL)
    assert checked.ok
    accounts.create_user(db, "bob", "password-123", "annotator")  # another admin, meanwhile
    before = counts(db)
    monkeypatch.setattr(bulk, "plan_import", lambda *a, **k: checked)
    report = as_admin(db, lab, "name\nada\nbob\n")
    assert report.problem_lines() == ["line 3, name: 'bob' is already taken by an account"]
    assert counts(db) == before and accounts.get_user(db, "ada") is None


def test_a_study_that_refuses_the_importer_rolls_everything_back(db, lab, monkeypatch):
    """Should a study refuse who adds people (a permission error), the file is refused as a whole."""
    before = counts(db)

    def not_yours(db_, study_id, user_id, *, by_user=None):
        raise PermissionError("Only an admin or a lead of the study may add an annotator.")
    monkeypatch.setattr(study.store, "add_annotator", not_yours)
    report = as_admin(db, lab, "name,studies\na1,\na2,pilot\n")
    assert report.problem_lines() == ["line 3, studies: Only an admin or a lead of the study may add an annotator."]
    assert counts(db) == before
