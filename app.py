"""StrucText Studio: navigation, log-in and the shared frame.

Run with ``streamlit run app.py``. Pages live in ``pages/`` and hold UI only.
"""

from pathlib import Path

import streamlit as st

from pages import ui
from pages.ui.frame import ensure_frame
from structext_core import settings
from structext_core.studio import access, accounts, aibench_store

HERE = Path(__file__).parent

ensure_frame()  # a fresh server's first run comes through the legacy pages/ mode: leave it before any widget
# The icon is a file of ours: a :material: icon or an emoji here is fetched by the browser from
# a third party's CDN (the app runs offline and tells nobody who opens it).
st.set_page_config(page_title="StrucText Studio", page_icon=str(HERE / "assets" / "favicon.png"), layout="wide")


def navigation_pages(role: str, public_mode_on: bool) -> dict[str, list]:
    """Every page of ``access.PAGES`` by section; the ones ``role`` may not open are hidden
    from the menu but keep their URL, where the page's own guard says why it is refused."""
    sections: dict[str, list] = {}
    for info in access.PAGES:
        path = HERE / "pages" / info.file
        if not path.exists():  # a page still being written: the app runs without it
            continue
        visible = access.can_open(role, info.key, public_mode_on)
        sections.setdefault(info.section, []).append(st.Page(
            str(path), title=info.title, icon=info.icon, default=info.default,
            url_path=info.url_path or None, visibility="visible" if visible else "hidden"))
    return sections


# The run's database connection is closed when the run ends, however it ends (pages.ui.run_scope).
with ui.run_scope():
    db = ui.get_db()
    accounts.ensure_admin_from_env(db)
    if settings.aibench_synthetic_at_start():
        aibench_store.start_synthetic()  # first start: made in a background thread; a few file checks later on
    has_admin = accounts.has_admin(db)
    ui.restore_session()  # a reload keeps the log-in (session cookie); a revoked or expired one ends here
    user = ui.current_user()

    with st.sidebar:
        st.markdown("### StrucText Studio")  # no :material: icon in markdown: the browser would fetch it from a CDN
        if not has_admin:
            ui.first_run_form()
        elif user is None:
            ui.login_form()
        else:
            ui.logout_button()
            ui.account_box()

    ui.run_page(st.navigation(navigation_pages(access.role_of(user), access.public_mode(db))))  # errors: an id, no traceback
