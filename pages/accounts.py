"""Accounts: create accounts and set passwords, people from a CSV with one-time set-password links,
disable, enable or delete accounts, unlock a locked user name, and the public read-only mode (who
sees what). Admins only.

UI only: every rule is in ``structext_core.studio.accounts`` and ``structext_core.studio.access``,
every table from ``structext_core.views.dashboard``.
"""

import streamlit as st

from structext_core import ui
from structext_core.studio import access, accounts
from structext_core.text.words import plural
from structext_core.ui import people_import, widgets
from structext_core.ui.frame import ensure_frame
from structext_core.views import dashboard

ensure_frame()  # a first visit to this URL on a fresh server runs app.py first
user = ui.require_page("accounts")
db = ui.get_db()


section = widgets.lazy_section  # the first view sends no table and no form: what each section holds, how many


def accounts_section() -> None:
    everyone = accounts.list_users(db, include_inactive=True)
    users = [u for u in everyone if u["status"] != "deleted"]
    st.markdown(f"**{dashboard.accounts_summary(everyone, accounts.ROLES)}**")
    if box := section(f"Every account, with its role and status ({len(everyone):,})", "ac_list_open",
                      ":material/group:"):
        box.dataframe(
            dashboard.accounts_table(everyone),
            hide_index=True,
            column_config={"username": "user name", "role": st.column_config.TextColumn("role", width="small"),
                           "status": st.column_config.TextColumn("status", width="small"),
                           "created_at": "created (UTC)"},
        )
    create_col, reset_col = st.columns(2, gap="large")
    with create_col:
        if box := section("Create an account", "ac_create_open", ":material/person_add:"):
            with box:
                create_account_form()
    with reset_col:
        if box := section("Set a new password", "ac_reset_open", ":material/password:"):
            with box:
                reset_password_form(users)
    link_col, import_col = st.columns(2, gap="large")
    with link_col:
        if box := section("New set-password link", "ac_link_open", ":material/link:"):
            with box:
                people_import.new_link_block(db, user, [u for u in users if u["status"] == "active"], heading=False)
    with import_col:
        # Links of an import are shown only once: while they wait, the section says so and stays open.
        waiting = bool(st.session_state.get(people_import.DONE_KEY))
        if waiting:
            st.session_state["ac_import_open"] = True
        if box := section("Import people from CSV" + (": links to hand out" if waiting else ""), "ac_import_open",
                          ":material/upload_file:"):
            with box:
                people_import.import_section(db, user, heading=False)  # an admin: any role, any study
    if box := section("Disable, enable or delete an account", "ac_life_open", ":material/manage_accounts:"):
        with box:
            account_lifecycle_block(users)
    failures = accounts.login_failures(db)
    locked = sum(1 for f in failures if f["locked_seconds"])
    locks_label = ("Failed log-ins and locks: none" if not failures else
                   f"Failed log-ins and locks: {plural(len(failures), 'account')}, {locked:,} locked now")
    locks_col, public_col = st.columns(2, gap="large")
    with locks_col:
        if box := section(locks_label, "ac_locks_open", ":material/lock:"):
            with box:
                login_locks_block(failures)
    with public_col:
        if box := section(f"Public read-only mode: {'on' if access.public_mode(db) else 'off'}", "ac_public_open",
                          ":material/public:"):
            with box:
                public_mode_block()


def create_account_form() -> None:
    with st.form("ac_new_account", clear_on_submit=True):
        username = st.text_input("User name", key="ac_new_username")
        password = st.text_input("Password", type="password", key="ac_new_password",
                                 help=f"At least {accounts.MIN_PASSWORD_LENGTH} characters.")
        role = st.radio("Role", accounts.ROLES, horizontal=True, key="ac_new_role")
        if st.form_submit_button("Create account", type="primary"):
            try:
                created = accounts.create_user(db, username, password, role, by_user=user["id"])
            except accounts.AccountError as error:
                st.error(f"No account was created. {error}")
            else:
                ui.flash("success", f"Account {created['username']!r} ({created['role']}) created.")
                st.rerun()


def reset_password_form(users: list[dict]) -> None:
    with st.form("ac_reset_password", clear_on_submit=True):
        who = st.selectbox("Account", [u["username"] for u in users], key="ac_reset_user")
        new_password = st.text_input("New password", type="password", key="ac_reset_password")
        if st.form_submit_button("Set password"):
            try:
                accounts.set_password(db, who, new_password, by_user=user["id"])
            except accounts.AccountError as error:
                st.error(f"The password was not changed. {error}")
            else:
                ui.flash("success", f"New password set for {who!r}. Their open sessions have ended.")
                st.rerun()


def _md(text: str) -> str:
    """``text`` for st.markdown: names may hold ``_`` and ``*``, which must not turn into emphasis."""
    return text.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {_md(line)}" for line in lines)


def account_lifecycle_block(users: list[dict]) -> None:
    by_id = {u["id"]: u for u in users}
    # No account is chosen for the admin: a button must never act on whichever came first.
    picked = st.selectbox(
        "Account to change", list(by_id), key="ac_life_user", index=None, placeholder="Choose an account",
        format_func=lambda i: f"{by_id[i]['username']} ({by_id[i]['role']}, {by_id[i]['status']})",
    )
    if picked is None:
        st.caption("Choose the account to disable, enable or delete.")
        return
    account = by_id[picked]
    name = account["username"]
    disable_col, delete_col = st.columns(2, gap="large")
    with disable_col:
        if account["status"] == "active":
            st.caption("A disabled account cannot log in, and its open sessions end at once. Its answers, "
                       "rewrites and studies stay as they are; enable it again at any time.")
            disable_with_confirmation(picked, name)
        else:
            st.caption("Disabled: this account cannot log in. Enabled again, it logs in with its old password.")
            if st.button("Enable account", key="ac_enable"):
                try:
                    accounts.enable_user(db, picked, by_user=user["id"])
                except accounts.AccountError as error:
                    st.error(f"{name!r} was not enabled. {error}")
                else:
                    ui.flash("success", f"{name!r} is enabled: it can log in again.")
                    st.rerun()
    with delete_col:
        delete_account_block(account)


def disable_with_confirmation(account_id: int, name: str) -> None:
    """"Disable account…", then a confirmation naming the account: nothing happens in one click."""
    if st.session_state.get("ac_disable_pending") != account_id:
        if st.button("Disable account…", key="ac_disable"):
            st.session_state["ac_disable_pending"] = account_id
            st.rerun()
        return
    st.warning(f"Disable {name!r}? It can no longer log in, and its open sessions end now.")
    yes_col, no_col = st.columns(2)
    if yes_col.button(f"Yes, disable {name}", key="ac_disable_yes", type="primary"):
        st.session_state.pop("ac_disable_pending", None)
        try:
            ended = accounts.disable_user(db, account_id, by_user=user["id"])
        except accounts.AccountError as error:
            st.error(f"{name!r} was not disabled. {error}")
            return
        ui.flash("success", f"{name!r} is disabled: it cannot log in, and {plural(ended, 'open session')} ended.")
        st.rerun()
    if no_col.button("Cancel", key="ac_disable_no"):
        st.session_state.pop("ac_disable_pending", None)
        st.rerun()


DELETE_MODES = {"keep": "keep their data (under an anonymous name)", "remove": "remove their data"}


def delete_account_block(account: dict) -> None:
    plan = accounts.deletion_plan(db, account["id"])
    name = account["username"]
    mode = st.radio("Delete the account and", list(DELETE_MODES), format_func=DELETE_MODES.get,
                    key="ac_delete_mode")
    if mode == "keep":
        st.markdown(_bullets(plan.keep))
    else:
        st.markdown(_bullets([f"The account is renamed {plan.new_name!r} and can no longer log in; the name "
                              f"{name!r} is free again. Its open sessions end."]))
        st.markdown("**Removed:**\n" + _bullets(plan.removed))
        st.markdown("**Kept, as it cannot be removed:**\n" + _bullets(plan.kept_anyway))
    if st.session_state.get("ac_delete_pending") != [account["id"], mode]:
        if st.button("Delete account…", key="ac_delete"):
            st.session_state["ac_delete_pending"] = [account["id"], mode]
            st.rerun()
        return
    st.warning(f"Delete {name!r} and {DELETE_MODES[mode].split(' (')[0]}? This cannot be undone.")
    yes_col, no_col = st.columns(2)
    if yes_col.button(f"Yes, delete {name}", key="ac_delete_yes", type="primary"):
        st.session_state.pop("ac_delete_pending", None)
        try:
            done = accounts.delete_user(db, account["id"], remove_data=mode == "remove", by_user=user["id"])
        except accounts.AccountError as error:
            st.error(f"{name!r} was not deleted. {error}")
            return
        kept = "their data is kept under that name" if mode == "keep" else "their data is removed as listed"
        ui.flash("success", f"Account {name!r} is deleted: it is now {done.new_name!r}, and {kept}.")
        st.rerun()
    if no_col.button("Cancel", key="ac_delete_no"):
        st.session_state.pop("ac_delete_pending", None)
        st.rerun()


def login_locks_block(failures: list[dict]) -> None:
    if not failures:
        st.caption(f"No account has failed log-ins on record. After {accounts.MAX_FAILED_LOGINS} failed "
                   "attempts a user name is locked for a minute, then longer with each further failure.")
        return
    st.dataframe(
        dashboard.login_failures_table(failures),
        hide_index=True,
    )
    with st.form("ac_unlock"):
        who = st.selectbox("Account to unlock", [f["username"] for f in failures], key="ac_unlock_user")
        if st.form_submit_button("Unlock"):
            accounts.unlock_login(db, who, by_user=user["id"])
            ui.flash("success", f"{who!r} is unlocked: their failed log-ins are cleared.")
            st.rerun()


def on_public_mode() -> None:
    on = bool(st.session_state["ac_public_mode"])
    access.set_public_mode(ui.get_db(), on, user)
    ui.flash("success", f"Public read-only mode is {'on' if on else 'off'}.")
    st.session_state["ac_public_open"] = True  # its label changes with the mode: the section stays open


def public_mode_block() -> None:
    st.toggle(
        "Let visitors and annotators browse Explore and the model results of suites in no open study",
        value=access.public_mode(db), key="ac_public_mode", on_change=on_public_mode,
        help="Off by default. Even when on, no sample of an open study and no human result is shown to them.",
    )


# ---------------------------------------------------------------- the page

st.title("Accounts")
ui.show_flash()
accounts_section()
