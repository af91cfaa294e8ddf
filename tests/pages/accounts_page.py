"""The Accounts page's sections (pages/accounts.py): each is drawn only while it is open, so the
tests that use a section open it as a click does, through its key in the session state."""

#: Every section's key, in the page's order.
SECTIONS = ("ac_list_open", "ac_create_open", "ac_reset_open", "ac_link_open", "ac_import_open", "ac_life_open",
            "ac_locks_open", "ac_public_open")


def open_sections(at, *keys: str):
    """Open ``keys`` (default: every section) on the next run of ``at``; returns ``at``."""
    for key in keys or SECTIONS:
        at.session_state[key] = True
    return at
