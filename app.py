"""StrucText Studio: navigation, log-in and the shared frame.

Run with ``streamlit run app.py``. Pages live in ``pages/`` and hold UI only.
"""

from pathlib import Path

import streamlit as st

from structext_core import accounts, ui

st.set_page_config(page_title="StrucText Studio", page_icon=":material/account_tree:", layout="wide")

HERE = Path(__file__).parent


def page(file: str, title: str, icon: str, default: bool = False):
    """A page of ``pages/``, or None while its file is not there (the app still runs)."""
    path = HERE / "pages" / file
    return st.Page(str(path), title=title, icon=icon, default=default) if path.exists() else None


db = ui.get_db()
accounts.ensure_admin_from_env(db)
has_admin = accounts.has_admin(db)
user = ui.current_user()

with st.sidebar:
    st.markdown("### :material/account_tree: StrucText Studio")
    if not has_admin:
        ui.first_run_form()
    elif user is None:
        ui.login_form()
    else:
        ui.logout_button()

sections = {
    "Benchmark": [page("home.py", "Home", ":material/home:", default=True), page("explore.py", "Explore", ":material/search:"),
                  page("results.py", "Results", ":material/monitoring:")],
}
if user and user["role"] in ("annotator", "admin"):
    sections["Annotate"] = [page("human_baseline.py", "Human baseline", ":material/timer:"),
                            page("rewrite.py", "Real-Test rewriting", ":material/edit_note:")]
if user and user["role"] == "admin":
    sections["Admin"] = [page("study_admin.py", "Studies", ":material/science:"), page("campaign_admin.py", "Rewrite campaigns", ":material/folder_managed:")]

sections = {name: [p for p in pages if p is not None] for name, pages in sections.items()}
st.navigation({name: pages for name, pages in sections.items() if pages}).run()
