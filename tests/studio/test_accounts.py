"""Accounts: hashing, log-in checks, the first admin, and clear errors for bad input."""

import re

import pytest

from structext_core.studio import accounts, storage


@pytest.fixture
def db():
    return storage.open_db(":memory:")


def user_count(db):
    return db.execute("SELECT COUNT(*) FROM users").fetchone()[0]


def test_create_and_authenticate(db):
    created = accounts.create_user(db, "ann1", "correct horse", "annotator")
    assert created == {"id": created["id"], "username": "ann1", "role": "annotator"}
    assert accounts.authenticate(db, "ann1", "correct horse") == created


@pytest.mark.parametrize(
    "username, password",
    [("ann1", "wrong password"), ("nobody", "correct horse"), ("ann1", ""), ("", "")],
)
def test_wrong_credentials_are_refused(db, username, password):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    assert accounts.authenticate(db, username, password) is None


def test_user_names_are_case_insensitive_and_trimmed(db):
    accounts.create_user(db, "Ann1", "correct horse", "annotator")
    assert accounts.authenticate(db, " ann1 ", "correct horse")["username"] == "Ann1"


def test_passwords_are_stored_as_salted_scrypt(db):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    accounts.create_user(db, "ann2", "correct horse", "annotator")
    hashes = [row[0] for row in db.execute("SELECT password_hash FROM users")]
    assert all(h.startswith("scrypt$16384$8$1$") for h in hashes)
    assert hashes[0] != hashes[1]  # same password, different salt
    assert all("correct horse" not in h for h in hashes)
    assert accounts.verify_password("correct horse", hashes[0])
    assert not accounts.verify_password("correct horsE", hashes[0])


@pytest.mark.parametrize("stored", ["", "plain", "bcrypt$1$2$3$4$5", "scrypt$x$8$1$AAAA$BBBB"])
def test_malformed_stored_hash_never_matches(stored):
    assert accounts.verify_password("anything", stored) is False


@pytest.mark.parametrize(
    "username, password, role, message",
    [
        ("", "long enough", "annotator", "User name is empty"),
        ("   ", "long enough", "annotator", "User name is empty"),
        ("has space", "long enough", "annotator", "not allowed"),
        ("x" * 65, "long enough", "annotator", "too long"),
        ("ann2", "short", "annotator", "at least 8 characters"),
        ("ann2", "long enough", "superuser", "Role 'superuser' is unknown"),
        ("ANN1", "long enough", "annotator", "already taken"),
    ],
)
def test_bad_input_raises_a_clear_error_and_changes_nothing(db, username, password, role, message):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    with pytest.raises(accounts.AccountError, match=message):
        accounts.create_user(db, username, password, role)
    assert user_count(db) == 1


def test_account_error_is_a_value_error():
    assert issubclass(accounts.AccountError, ValueError)


def test_has_admin(db):
    assert not accounts.has_admin(db)
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    assert not accounts.has_admin(db)
    accounts.create_user(db, "lead", "correct horse", "admin")
    assert accounts.has_admin(db)


def test_list_users_filters_by_role(db):
    accounts.create_user(db, "zed", "correct horse", "annotator")
    accounts.create_user(db, "amy", "correct horse", "annotator")
    accounts.create_user(db, "lead", "correct horse", "admin")
    assert [u["username"] for u in accounts.list_users(db)] == ["amy", "lead", "zed"]
    assert [u["username"] for u in accounts.list_users(db, role="annotator")] == ["amy", "zed"]
    with pytest.raises(accounts.AccountError):
        accounts.list_users(db, role="boss")


def test_set_password(db):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    accounts.set_password(db, "ann1", "battery staple")
    assert accounts.authenticate(db, "ann1", "correct horse") is None
    assert accounts.authenticate(db, "ann1", "battery staple") is not None
    with pytest.raises(accounts.AccountError, match="at least 8"):
        accounts.set_password(db, "ann1", "short")
    with pytest.raises(accounts.AccountError, match="no user named 'ghost'"):
        accounts.set_password(db, "ghost", "battery staple")
    assert accounts.authenticate(db, "ann1", "battery staple") is not None


def test_admin_from_environment_is_created_once(db, monkeypatch):
    monkeypatch.setenv("STRUCTEXT_ADMIN_USER", "lead")
    monkeypatch.setenv("STRUCTEXT_ADMIN_PASSWORD", "first password")
    accounts.ensure_admin_from_env(db)
    assert accounts.authenticate(db, "lead", "first password")["role"] == "admin"
    # Later start-ups with another password do not overwrite the account.
    monkeypatch.setenv("STRUCTEXT_ADMIN_PASSWORD", "second password")
    accounts.ensure_admin_from_env(db)
    assert user_count(db) == 1
    assert accounts.authenticate(db, "lead", "first password") is not None


def test_no_environment_means_no_admin(db, monkeypatch):
    monkeypatch.delenv("STRUCTEXT_ADMIN_USER", raising=False)
    monkeypatch.delenv("STRUCTEXT_ADMIN_PASSWORD", raising=False)
    accounts.ensure_admin_from_env(db)
    assert not accounts.has_admin(db)


@pytest.mark.parametrize(
    "user, password, message",
    [
        ("lead", None, "STRUCTEXT_ADMIN_PASSWORD is not set"),
        (None, "first password", "STRUCTEXT_ADMIN_USER is not set"),
        ("lead", "short", "STRUCTEXT_ADMIN_USER/STRUCTEXT_ADMIN_PASSWORD: Password is too short"),
        ("bad name", "first password", "not allowed"),
    ],
)
def test_half_or_bad_admin_environment_is_a_clear_error(db, monkeypatch, user, password, message):
    for name, value in (("STRUCTEXT_ADMIN_USER", user), ("STRUCTEXT_ADMIN_PASSWORD", password)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    with pytest.raises(accounts.AccountError, match=message):
        accounts.ensure_admin_from_env(db)
    assert user_count(db) == 0


def test_first_admin_only_while_there_is_none(db):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    admin = accounts.create_first_admin(db, "lead", "correct horse")
    assert admin["role"] == "admin" and accounts.authenticate(db, "lead", "correct horse") == admin
    with pytest.raises(accounts.AccountError, match="admin account exists already"):
        accounts.create_first_admin(db, "second", "correct horse")
    assert user_count(db) == 2


@pytest.mark.parametrize("username, password, message", [
    ("", "correct horse", "User name is empty"),
    ("lead", "short", "at least 8"),
    ("ANN1", "correct horse", "already taken"),
])
def test_first_admin_bad_input(db, username, password, message):
    accounts.create_user(db, "ann1", "correct horse", "annotator")
    with pytest.raises(accounts.AccountError, match=message):
        accounts.create_first_admin(db, username, password)
    assert not accounts.has_admin(db)


def test_user_name_over_the_limit_is_refused_and_at_the_limit_accepted(db):
    """Issue 11: every stored text field is bounded; user names at 64 characters."""
    with pytest.raises(accounts.AccountError, match="User name is too long: at most 64 characters"):
        accounts.create_user(db, "a" * 65, "correct horse", "annotator")
    with pytest.raises(accounts.AccountError, match="too long"):
        accounts.create_user(db, "a" * 30_000_000, "correct horse", "annotator")
    assert user_count(db) == 0
    assert accounts.create_user(db, "a" * 64, "correct horse", "annotator")["username"] == "a" * 64


# ---------------------------------------------------------------- lifecycle: disable, enable, delete

from structext_core.structext_eval import campaign, rewrite  # noqa: E402
from structext_core.structext_eval.suites import SuiteConfig, generate_suite  # noqa: E402
from structext_core.studio import changes, study  # noqa: E402
from tests.studio.study.support import grid_samples, make_study, run_study  # noqa: E402


@pytest.fixture
def team(db, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)  # fast hashing: many accounts below
    return {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("lead", "admin"), ("boss", "admin"), ("ann1", "annotator"),
                               ("ann2", "annotator"), ("ann3", "annotator"))}


def actions(db, target=None):
    return [c.action for c in changes.history(db, target)]


def test_a_disabled_account_cannot_log_in_and_its_sessions_end(db, team):
    ann1 = team["ann1"]
    token = accounts.issue_session(db, ann1["id"])
    assert accounts.disable_user(db, ann1["id"], by_user=team["lead"]["id"]) == 1
    assert accounts.verify_session(db, token) == accounts.SessionCheck(None, "disabled")
    # Told only to whoever knows the password; a wrong one reads as any failed log-in.
    assert accounts.log_in(db, "ann1", "password-123") == accounts.LoginOutcome(None, accounts.DISABLED_MESSAGE)
    assert accounts.log_in(db, "ann1", "wrong one").message == accounts.WRONG_LOGIN_MESSAGE
    assert "ann1" not in [u["username"] for u in accounts.list_users(db)]  # not offered for new work
    listed = {u["username"]: u["status"] for u in accounts.list_users(db, include_inactive=True)}
    assert listed["ann1"] == "disabled" and listed["ann2"] == "active"
    change = changes.history(db, f"user:{ann1['id']}")[0]
    assert (change.action, change.by, change.detail) == ("account.disable", "lead", {"sessions_ended": 1})
    accounts.enable_user(db, ann1["id"], by_user=team["lead"]["id"])
    assert accounts.log_in(db, "ann1", "password-123").user == ann1
    assert accounts.verify_session(db, token).reason == "revoked"  # enabling brings no old session back
    assert actions(db, f"user:{ann1['id']}")[:2] == ["account.enable", "account.disable"]


@pytest.mark.parametrize("act, setup, message", [
    ("disable", "disable", "is disabled already"),
    ("enable", None, "is not disabled"),
    ("disable", "self", "cannot disable your own account"),
    ("delete", "self", "cannot delete your own account"),
    ("enable", "delete", "deleted account: it cannot be enabled"),
    ("disable", "delete", "is deleted already"),
    ("delete", "delete", "is deleted already"),
])
def test_refused_account_changes_say_why_and_change_nothing(db, team, act, setup, message):
    lead, target = team["lead"]["id"], team["ann1"]["id"]
    if setup == "disable":
        accounts.disable_user(db, target, by_user=lead)
    elif setup == "delete":
        accounts.delete_user(db, target, remove_data=False, by_user=lead)
    elif setup == "self":
        target = lead
    before = (list(db.query("SELECT * FROM users ORDER BY id")), len(changes.history(db)))
    call = {"disable": lambda: accounts.disable_user(db, target, by_user=lead),
            "enable": lambda: accounts.enable_user(db, target, by_user=lead),
            "delete": lambda: accounts.delete_user(db, target, remove_data=True, by_user=lead)}[act]
    with pytest.raises(accounts.AccountError, match=message):
        call()
    assert (list(db.query("SELECT * FROM users ORDER BY id")), len(changes.history(db))) == before


def test_unknown_account_is_a_clear_error(db, team):
    for call in (lambda: accounts.disable_user(db, 999, by_user=None), lambda: accounts.deletion_plan(db, 999),
                 lambda: accounts.delete_user(db, 999, remove_data=False, by_user=None)):
        with pytest.raises(accounts.AccountError, match="no account with id 999"):
            call()


def test_the_last_enabled_admin_can_be_neither_disabled_nor_deleted(db, team):
    lead, boss = team["lead"]["id"], team["boss"]["id"]
    ann1 = team["ann1"]["id"]
    accounts.disable_user(db, boss, by_user=lead)  # two admins: one may go
    for call, verb in ((lambda: accounts.disable_user(db, lead, by_user=ann1), "disabled"),
                       (lambda: accounts.delete_user(db, lead, remove_data=False, by_user=ann1), "deleted")):
        with pytest.raises(accounts.AccountError, match=f"'lead' is the last enabled admin: it cannot be {verb}"):
            call()
    assert accounts.account_status(db, lead) == "active"
    # A disabled admin is no enabled admin: deleting it leaves the last one as it is.
    accounts.delete_user(db, boss, remove_data=False, by_user=lead)
    accounts.create_user(db, "boss", "password-123", "admin")  # the name is free again
    accounts.disable_user(db, lead, by_user=accounts.get_user(db, "boss")["id"])


def test_user_names_of_deleted_accounts_are_reserved(db):
    with pytest.raises(accounts.AccountError, match="kept for deleted accounts"):
        accounts.create_user(db, "Deleted-User-7", "correct horse", "annotator")


@pytest.fixture
def busy_ann1(db, team):
    """ann1 and ann2 answer 4 questions of a study (ann1 flags one, the lead overrides one score),
    and ann1 has three rewrite items: one approved, one submitted, one with a draft."""
    samples = grid_samples()
    annotators = [team["ann1"], team["ann2"]]
    study_id = run_study(db, samples, annotators, lambda name, index, answer: answer, n_items=4)
    second = make_study(db, samples, [team["ann1"]], name="second", n_items=3)
    study.accept_rule(db, second, team["ann1"]["id"])
    view = study.open_question(db, second, team["ann1"]["id"])
    study.record_activity(db, team["ann1"]["id"], view.assignment_id, None, draft="half an answer")
    ann1_response = db.execute("SELECT id, item_id FROM responses WHERE user_id = ? ORDER BY id",
                               [team["ann1"]["id"]]).fetchone()
    with storage.write_transaction(db):
        db.execute("INSERT INTO study_flags (study_id, item_id, user_id, kind, note, created_at)"
                   " VALUES (?, ?, ?, 'unclear', 'which node?', 1.0)", [study_id, ann1_response[1], team["ann1"]["id"]])
        db.execute("INSERT INTO score_overrides (response_id, score, reason, by_user, at) VALUES (?, 1, 'ok', ?, 1)",
                   [ann1_response[0], team["lead"]["id"]])
    suite = generate_suite(SuiteConfig("test", depths=(1,), widths=(1,), per_cell=1))
    cid = campaign.create_campaign(db, "Pilot", suite, 3, [team["ann1"]["id"]], team["lead"])
    items = [row["id"] for row in campaign.list_items(db, cid)]
    for item_id in items:
        sample = campaign.get_item(db, item_id)["sample"]
        campaign.save_draft(db, item_id, team["ann1"], rewrite.original_texts(sample), {})
    with storage.write_transaction(db):  # the checks run in worker processes: write the outcome directly
        for item_id, status in zip(items[:2], ("approved", "submitted")):
            submission = db.execute(
                "INSERT INTO rewrite_submissions (item_id, reference, question, answer, structure_ok, answer_ok,"
                " submitted_by, submitted_at) VALUES (?, 'r', 'q', 'a', 1, 1, ?, 1)", [item_id, team["ann1"]["id"]],
            ).lastrowid
            if status == "approved":
                db.execute("INSERT INTO rewrite_reviews (item_id, submission_id, reviewer_id, decision, reviewed_at)"
                           " VALUES (?, ?, ?, 'approved', 1)", [item_id, submission, team["lead"]["id"]])
            db.execute("UPDATE rewrite_items SET status = ? WHERE id = ?", [status, item_id])
    campaign.flag_sample(db, items[2], team["ann1"], "The sample names a missing node.")
    return {"study": study_id, "second": second, "campaign": cid, "items": items}


def count_of(db, sql, *args):
    return db.execute(sql, args).fetchone()[0]


def test_the_deletion_plan_counts_what_each_choice_does(db, team, busy_ann1):
    plan = accounts.deletion_plan(db, team["ann1"]["id"])
    assert (plan.username, plan.new_name) == ("ann1", f"deleted-user-{team['ann1']['id']}")
    assert (plan.studies, plan.study_answers, plan.unanswered, plan.study_flags) == (2, 4, 3, 1)
    assert (plan.rewrite_items, plan.rewrite_drafts, plan.rewrite_submissions, plan.approved_rewrites,
            plan.rewrite_flags, plan.reviews_written) == (3, 2, 1, 1, 1, 0)
    assert "4 study answers with their timing and any score override" in plan.removed
    assert any(line.startswith("1 approved rewrite:") for line in plan.kept_anyway)  # it said "1 approved rewrite(s)"
    assert any(f"renamed {plan.new_name!r}" in line and "'ann1' is free again" in line for line in plan.keep)
    assert count_of(db, "SELECT COUNT(*) FROM audit_log WHERE action = 'account.delete'") == 0  # a plan writes nothing


def test_delete_keeping_the_data_renames_and_keeps_everything(db, team, busy_ann1):
    ann1 = team["ann1"]["id"]
    token = accounts.issue_session(db, ann1)
    before = {table: count_of(db, f"SELECT COUNT(*) FROM {table}") for table in (
        "responses", "assignments", "study_flags", "score_overrides", "rewrite_drafts", "rewrite_submissions")}
    plan = accounts.delete_user(db, ann1, remove_data=False, by_user=team["lead"]["id"])
    name = plan.new_name
    assert {table: count_of(db, f"SELECT COUNT(*) FROM {table}") for table in before} == before
    assert accounts.verify_session(db, token).reason == "unknown"  # its sessions are gone
    assert accounts.log_in(db, "ann1", "password-123").user is None
    assert accounts.log_in(db, name, "password-123").user is None  # the anonymous name has no password
    assert accounts.account_status(db, ann1) == "deleted" and accounts.get_user(db, "ann1") is None
    assert accounts.create_user(db, "ann1", "password-123", "annotator")["id"] != ann1  # the name is free
    rows = study.export_rows(db, busy_ann1["study"])
    assert {(r["annotator"], r["annotator_removed"]) for r in rows} == {(name, True), ("ann2", False)}
    assert study.studies_for_annotator(db, ann1) == []
    assert {i["annotator"] for i in campaign.list_items(db, busy_ann1["campaign"])} == {name}
    change = changes.history(db, f"user:{ann1}")[0]
    assert change.action == "account.delete" and change.detail["data"] == "kept"
    assert "ann1" not in repr(change.detail)  # the record names no one by the old name


def test_delete_removing_the_data_removes_exactly_what_the_plan_says(db, team, busy_ann1):
    ann1, ann2 = team["ann1"]["id"], team["ann2"]["id"]
    plan = accounts.deletion_plan(db, ann1)
    ann2_answers = count_of(db, "SELECT COUNT(*) FROM responses WHERE user_id = ?", ann2)
    done = accounts.delete_user(db, ann1, remove_data=True, by_user=team["lead"]["id"])
    assert done == plan
    for table, column in (("responses", "user_id"), ("assignments", "user_id"), ("study_annotators", "user_id"),
                          ("study_flags", "user_id"), ("rewrite_flags", "user_id")):
        assert count_of(db, f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", ann1) == 0, table
    assert count_of(db, "SELECT COUNT(*) FROM score_overrides") == 0
    assert count_of(db, "SELECT COUNT(*) FROM pauses p JOIN assignments a ON a.id = p.assignment_id") == \
        count_of(db, "SELECT COUNT(*) FROM pauses")  # no pause left without its question
    assert count_of(db, "SELECT COUNT(*) FROM responses WHERE user_id = ?", ann2) == ann2_answers
    approved, submitted, drafted = busy_ann1["items"]
    statuses = {i["id"]: i["status"] for i in campaign.list_items(db, busy_ann1["campaign"])}
    assert statuses == {approved: "approved", submitted: "todo", drafted: "todo"}
    assert campaign.latest_submission(db, approved) is not None and campaign.latest_review(db, approved) is not None
    assert campaign.get_draft(db, approved) is not None  # the approved rewrite is kept whole
    assert campaign.latest_submission(db, submitted) is None and campaign.get_draft(db, drafted) is None
    assert study.get_study(db, busy_ann1["study"]).n_annotators == 1  # the study itself stays
    assert changes.history(db, f"user:{ann1}")[0].detail["data"] == "removed"


def test_a_deletion_that_fails_half_way_changes_nothing(db, team, busy_ann1, monkeypatch):
    ann1 = team["ann1"]["id"]
    snapshot = {table: list(db.query(f"SELECT * FROM {table}")) for table in (
        "users", "responses", "assignments", "study_annotators", "rewrite_items", "rewrite_drafts", "audit_log")}

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(changes, "record", broken)  # the last write of the transaction fails
    with pytest.raises(RuntimeError, match="disk full"):
        accounts.delete_user(db, ann1, remove_data=True, by_user=team["lead"]["id"])
    assert {table: list(db.query(f"SELECT * FROM {table}")) for table in snapshot} == snapshot


# ---------------------------------------------------------------- one's own password


def test_changing_ones_own_password_keeps_this_session_and_ends_the_others(db, team):
    ann1 = team["ann1"]["id"]
    here, elsewhere = accounts.issue_session(db, ann1), accounts.issue_session(db, ann1)
    other_person = accounts.issue_session(db, team["ann2"]["id"])
    assert accounts.change_own_password(db, ann1, "password-123", "a brand new one", keep_token=here) == 1
    assert accounts.verify_session(db, here).user == team["ann1"]
    assert accounts.verify_session(db, elsewhere).reason == "revoked"
    assert accounts.verify_session(db, other_person).user == team["ann2"]
    assert accounts.log_in(db, "ann1", "a brand new one").user == team["ann1"]
    assert actions(db, f"user:{ann1}") == ["account.password_change", "account.create"]


@pytest.mark.parametrize("current, new, message", [
    ("password-123", "short", "Password is too short"),
    ("wrong one", "a brand new one", "The current password is wrong: your password was not changed."),
    ("password-123", "password-123", "same as the current one"),
])
def test_a_refused_password_change_says_why_and_changes_nothing(db, team, current, new, message):
    ann1 = team["ann1"]["id"]
    token = accounts.issue_session(db, ann1)
    with pytest.raises(accounts.AccountError, match=message):
        accounts.change_own_password(db, ann1, current, new, keep_token=token)
    assert accounts.log_in(db, "ann1", "password-123").user == team["ann1"]
    assert accounts.verify_session(db, token).user == team["ann1"]
    assert actions(db, f"user:{ann1}") == ["account.create"]


def test_wrong_current_passwords_count_on_the_log_in_throttle(db, team):
    ann1 = team["ann1"]["id"]
    messages = []
    for _ in range(accounts.MAX_FAILED_LOGINS):
        with pytest.raises(accounts.AccountError) as refused:
            accounts.change_own_password(db, ann1, "wrong one", "a brand new one")
        messages.append(str(refused.value))
    assert "2 more failed attempts lock this user name" in messages[2]
    assert "After 5 failed attempts this user name is locked for 1 min" in messages[-1]
    # Locked: neither the right current password nor a log-in gets through.
    with pytest.raises(accounts.AccountError, match="Too many failed log-ins for this user name"):
        accounts.change_own_password(db, ann1, "password-123", "a brand new one")
    assert accounts.log_in(db, "ann1", "password-123").locked_seconds > 0
    assert accounts.login_failures(db)[0]["username"] == "ann1"


def test_a_disabled_account_cannot_change_its_password(db, team):
    accounts.disable_user(db, team["ann1"]["id"], by_user=team["lead"]["id"])
    with pytest.raises(accounts.AccountError, match="disabled or deleted"):
        accounts.change_own_password(db, team["ann1"]["id"], "password-123", "a brand new one")


def test_admin_changes_are_recorded(db, team):
    lead = team["lead"]["id"]
    created = accounts.create_user(db, "ann9", "password-123", "annotator", by_user=lead)
    accounts.set_password(db, "ann9", "another password", by_user=lead)
    accounts.log_in(db, "ann9", "wrong")
    accounts.unlock_login(db, "ann9", by_user=lead)
    history = changes.history(db, f"user:{created['id']}")
    assert [(c.action, c.by) for c in history] == [
        ("account.unlock", "lead"), ("account.password_reset", "lead"), ("account.create", "lead")]


# ---------------------------------------------------------------- one normal form of a user name (issue 19, item 7)


@pytest.fixture
def thr2(db, monkeypatch):
    monkeypatch.setattr(accounts.credentials, "SCRYPT_N", 2**4)
    return accounts.create_user(db, "thr2", "right password", "annotator")


def lock(db, name="thr2", now=1000.0):
    for _ in range(accounts.MAX_FAILED_LOGINS):
        assert accounts.log_in(db, name, "wrong password", now=now).user is None


@pytest.mark.parametrize("padded", [" " * 1100 + "thr2", " " * 200 + "thr2", "THR2", "ｔｈｒ２", "\u00a0thr2\t"])
def test_a_padded_or_refolded_name_cannot_pass_the_lock(db, thr2, padded):
    lock(db)
    outcome = accounts.log_in(db, padded, "right password", now=1001.0)
    assert outcome.user is None
    assert "locked" in outcome.message or outcome.message.startswith(accounts.WRONG_LOGIN_MESSAGE)


def test_cycling_padded_names_gives_no_more_guesses(db, thr2):
    """Each padding counts on the one lock of 'thr2': the sixth guess is refused unchecked."""
    for spaces in range(accounts.MAX_FAILED_LOGINS):
        assert accounts.log_in(db, " " * spaces * 50 + "thr2", "wrong password", now=1000.0).user is None
    guesses = 0
    for spaces in range(1, 25):
        outcome = accounts.log_in(db, " " * spaces + "thr2", "right password", now=1001.0)
        assert outcome.user is None
        guesses += "locked" not in outcome.message
    assert guesses == 0


def test_the_name_is_bounded_before_it_is_normalised(db, thr2):
    assert accounts.normal_username(" " * 1100 + "thr2") == ""
    assert accounts.normal_username(" " * 10 + "THR2 ") == "thr2"
    assert accounts.log_in(db, " " * 1100 + "thr2", "right password").user is None
    assert accounts.log_in(db, "  ThR2 ", "right password").user["id"] == thr2["id"]


def test_lookup_creation_and_lock_use_one_normal_form(db, thr2):
    assert accounts.get_user(db, "ＴＨＲ２")["id"] == thr2["id"]  # fullwidth: NFKC
    assert accounts.authenticate(db, "ＴＨＲ２", "right password")["id"] == thr2["id"]
    with pytest.raises(accounts.AccountError, match="already taken"):
        accounts.create_user(db, "ｔｈｒ２", "another password", "annotator")
    assert accounts.logins._name_key("ｔｈｒ２") == accounts.logins._name_key(" THR2") == accounts.logins._name_key("thr2")
    assert user_count(db) == 1


@pytest.mark.parametrize("name, label", [
    ("thr\u200b2", "U+200B ZERO WIDTH SPACE"), ("thr2\u2060", "U+2060 WORD JOINER"),
    ("th\u00adr2", "U+00AD SOFT HYPHEN"), ("thr\x072", "U+0007"), ("\ufeffthr2", "U+FEFF"),
])
def test_names_differing_only_by_invisible_characters_are_refused(db, thr2, name, label):
    with pytest.raises(accounts.AccountError, match=re.escape(f"invisible character ({label}") + ".*position"):
        accounts.create_user(db, name, "another password", "annotator")
    assert user_count(db) == 1


@pytest.mark.parametrize("forged", [True, 12, ["thr2"], {"a": 1}])
def test_a_user_name_that_is_not_text_is_a_clear_refusal(db, thr2, forged):
    outcome = accounts.log_in(db, forged, "right password")
    assert outcome.user is None and "user name must be text" in outcome.message
    with pytest.raises(accounts.AccountError, match="must be text"):
        accounts.create_user(db, forged, "right password", "annotator")
    assert accounts.log_in(db, "thr2", forged).user is None  # a forged password: a failed log-in
    with pytest.raises(accounts.AccountError, match="password must be text"):
        accounts.create_user(db, "thr3", forged, "annotator")


def test_names_stored_before_the_normal_form_are_found_by_it(db, thr2):
    """Stored names were ASCII from the first schema: a row written by older code (case kept) is
    found, locked and refused as a duplicate by its normal form."""
    db.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES (?, ?, 'annotator', 0)",
               ["Old.Name-1", accounts.hash_password("old password")])
    assert accounts.log_in(db, "  OLD.NAME-1", "old password").user["username"] == "Old.Name-1"
    with pytest.raises(accounts.AccountError, match="already taken"):
        accounts.create_user(db, "ｏｌｄ.ｎａｍｅ-1", "another password", "annotator")
