"""StrucText Studio: navigation, log-in and the shared frame.

Run with ``streamlit run app.py``. The shared pages live in ``pages/``, a benchmark's own pages in its
package (``structext_core/<benchmark>/pages/``); the navigation lists every page of the one access
table (:mod:`structext_core.studio.access`). Pages hold UI only.
"""

from pathlib import Path

import streamlit as st

from structext_core import protocol, ui
from structext_core.studio import access, accounts
from structext_core.ui import light_nav, password_link, study_links
from structext_core.ui.frame import ensure_frame

HERE = Path(__file__).parent

ensure_frame()  # a fresh server's first run comes through the legacy pages/ mode: leave it before any widget
# An emoji favicon is drawn in the browser (an inline SVG). Without one the page's :material: icon
# is the favicon, and the browser fetches it from a third party's CDN (the app runs offline and
# tells nobody who opens it); an image of ours would be a /media/ file beside the study's images,
# which must all look alike.
st.set_page_config(page_title="StrucText Studio", page_icon="🌳", layout="wide")


# The run's database connection is closed when the run ends, however it ends (structext_core.ui.run_scope).
with ui.run_scope():
    db = ui.get_db()
    accounts.ensure_admin_from_env(db)
    for benchmark in protocol.names():  # each member's work at start (AT_START): at once, a few file checks later on
        at_start = protocol.view(benchmark, "AT_START")
        if at_start is not None:
            at_start()
    has_admin = accounts.has_admin(db)
    ui.restore_session()  # a reload keeps the log-in (session cookie); a revoked or expired one ends here
    password_link.take_over()  # /?set_password=<token>: the set-password screen alone, listed nowhere
    user = ui.current_user()

    pages = ui.navigation_pages(HERE / "pages", access.role_of(user), access.public_mode(db), user)
    # Routing only: the menu is a light element (ui/light_nav.py), every page a role may open listed.
    page = st.navigation(pages, position="hidden")

    with st.sidebar:
        # A click in the menu switches the page on the next run. Under it, in the same element, the app's
        # name (not a heading: the page's own title is the one heading of that name) and who is logged in.
        light_nav.menu(pages, page, app="StrucText Studio", who=ui.logged_in_as())
        if not has_admin:
            ui.first_run_form()
        elif user is None:
            ui.login_form()
        else:
            ui.keep_cookie()  # changing the password and logging out: the menu's last section

    ui.note_page(page)  # a click in the navigation, told from an address opened (the log-out page)
    study_links.follow_link_at_root(page, pages)  # /?join=<token>&...: the join page, with the link's parameters
    ui.run_page(page)  # errors: an id, no traceback
