"""User accounts: annotators, researchers, leads and admins; how they log in and how an account ends.

The package's modules, each one concept (everything public is re-exported here, so callers
write ``accounts.create_user``, ``accounts.log_in``, ...):

* :mod:`~structext_core.studio.accounts.credentials`: user-name and password rules, scrypt
  hashing, roles and statuses (and the scrypt cost, which tests lower on that module);
* :mod:`~structext_core.studio.accounts.users`: creating, finding, authenticating and listing
  accounts, the admin from the environment, an admin's password reset;
* :mod:`~structext_core.studio.accounts.sessions`: signed log-in session tokens and session passes;
* :mod:`~structext_core.studio.accounts.logins`: the throttled log-in, locks, changing one's own password;
* :mod:`~structext_core.studio.accounts.lifecycle`: disabling, enabling and deleting an account.

An account is *active*, *disabled* or *deleted*; the last enabled admin can be neither disabled
nor deleted. Every change an admin makes is written to the audit log
(:mod:`structext_core.studio.changes`) in the same transaction as the change.
"""

from __future__ import annotations

from structext_core.studio.accounts.credentials import (
    ADMIN_PASSWORD_ENV,
    ADMIN_USER_ENV,
    DELETED_NAME_PREFIX,
    DELETED_PASSWORD_HASH,
    MAX_NAME_INPUT,
    MAX_USERNAME_LENGTH,
    MIN_PASSWORD_LENGTH,
    ROLES,
    STATUSES,
    USERNAME_PATTERN,
    AccountError,
    has_password,
    hash_password,
    normal_username,
    validate_password,
    validate_username,
    verify_password,
)
from structext_core.studio.accounts.lifecycle import (
    DeletionPlan,
    delete_user,
    deletion_plan,
    disable_user,
    enable_user,
)
from structext_core.studio.accounts.logins import (
    DISABLED_MESSAGE,
    FAILURE_MEMORY_SECONDS,
    FIRST_LOCK_SECONDS,
    MAX_FAILED_LOGINS,
    MAX_LOCK_SECONDS,
    WRONG_CURRENT_PASSWORD,
    WRONG_LOGIN_MESSAGE,
    LoginOutcome,
    change_own_password,
    format_duration,
    lock_seconds,
    locked_message,
    log_in,
    login_failures,
    unlock_login,
)
from structext_core.studio.accounts.sessions import (
    DEFAULT_SESSION_HOURS,
    MAX_SESSION_HOURS,
    MAX_TOKEN_LENGTH,
    MIN_SECRET_LENGTH,
    PASS_VERSION,
    SESSION_HOURS_ENV,
    SESSION_ROWS_KEPT_SECONDS,
    SESSION_SECRET_ENV,
    TOKEN_VERSION,
    SessionCheck,
    check_session_pass,
    issue_session,
    revoke_user_sessions,
    session_lifetime_seconds,
    session_pass,
    verify_session,
)
from structext_core.studio.accounts.users import (
    account_status,
    authenticate,
    create_first_admin,
    create_user,
    ensure_admin_from_env,
    get_user,
    has_admin,
    list_users,
    set_password,
)

__all__ = [
    "ADMIN_PASSWORD_ENV", "ADMIN_USER_ENV", "DEFAULT_SESSION_HOURS", "DELETED_NAME_PREFIX",
    "DELETED_PASSWORD_HASH", "DISABLED_MESSAGE", "FAILURE_MEMORY_SECONDS", "FIRST_LOCK_SECONDS",
    "MAX_FAILED_LOGINS", "MAX_LOCK_SECONDS", "MAX_NAME_INPUT", "MAX_SESSION_HOURS", "MAX_TOKEN_LENGTH",
    "MAX_USERNAME_LENGTH", "MIN_PASSWORD_LENGTH", "MIN_SECRET_LENGTH", "PASS_VERSION", "ROLES",
    "SESSION_HOURS_ENV", "SESSION_ROWS_KEPT_SECONDS", "SESSION_SECRET_ENV", "STATUSES", "TOKEN_VERSION",
    "USERNAME_PATTERN", "WRONG_CURRENT_PASSWORD", "WRONG_LOGIN_MESSAGE",
    "AccountError", "DeletionPlan", "LoginOutcome", "SessionCheck",
    "account_status", "authenticate", "change_own_password", "check_session_pass", "create_first_admin",
    "create_user", "delete_user", "deletion_plan", "disable_user", "enable_user", "ensure_admin_from_env",
    "format_duration", "get_user", "has_admin", "has_password", "hash_password", "issue_session", "list_users",
    "lock_seconds", "locked_message", "log_in", "login_failures", "normal_username", "revoke_user_sessions",
    "session_lifetime_seconds", "session_pass", "set_password", "unlock_login", "validate_password",
    "validate_username", "verify_password", "verify_session",
]
