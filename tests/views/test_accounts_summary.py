"""The Accounts page's first line (issue 46: its table of every account is a section opened on demand,
so the line must say at once who has an account)."""

import pytest

from structext_core.studio import accounts, storage
from structext_core.views import dashboard


def test_the_line_counts_active_accounts_by_role_then_the_disabled_and_deleted(tmp_path):
    db = storage.open_db(tmp_path / "s.db")
    made = {name: accounts.create_user(db, name, "password-123", role)
            for name, role in (("boss", "admin"), ("ann1", "annotator"), ("ann2", "annotator"), ("ann3", "annotator"),
                               ("reader", "researcher"), ("gone", "lead"))}
    accounts.disable_user(db, made["ann3"]["id"], by_user=made["boss"]["id"])
    accounts.delete_user(db, made["gone"]["id"], remove_data=False, by_user=made["boss"]["id"])
    everyone = accounts.list_users(db, include_inactive=True)
    line = dashboard.accounts_summary(everyone, accounts.ROLES)
    assert line == "4 active accounts: 2 annotators, 1 researcher, 1 admin · 1 disabled · 1 deleted"


@pytest.mark.parametrize("users, line", [
    ([], "0 active accounts"),
    ([{"role": "admin", "status": "active"}], "1 active account: 1 admin"),
    ([{"role": "curator", "status": "active"}], "1 active account: 1 curator"),  # a role not listed still counts
])
def test_the_line_leaves_no_account_out(users, line):
    assert dashboard.accounts_summary(users, ("annotator", "admin")) == line
