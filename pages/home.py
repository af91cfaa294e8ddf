"""Home: for an annotator, their studies first (with their progress) and the other pages with work for
them, the benchmarks below; for everyone else, what StrucText Studio is (every benchmark, and where to go
for each) and each benchmark's own section (its ``HOME_VIEW``: for one, its data on disk)."""

import streamlit as st

from structext_core import protocol, ui
from structext_core.studio import access, study
from structext_core.text.safe_text import markdown_text
from structext_core.text.words import series
from structext_core.ui import light_html, widgets
from structext_core.ui.frame import ensure_frame
from structext_core.views import home_cards, your_studies

ensure_frame()
# its blocks as light elements: the cards' and the studies' links are to the app's own pages, which a light
# block keeps (ui/light_html.py), where st.html made the browser load its code and DOMPurify on every visit
light_html.page_draws_light()
user = ui.require_page("home")

st.title("StrucText Studio")
db = ui.get_db()
role = access.role_of(user)
# One section a benchmark of the registry, with only the pages this role may open.
sections = access.home_sections(role, access.public_mode(db))


def benchmark_blurbs() -> None:
    st.markdown(f"A workbench for {series(f'**{markdown_text(s.title)}**' for s in sections)}: one set of "
                "accounts, studies and answer keys kept sealed serves them all.")
    # every benchmark's card in one block (views/home_cards.py): a column, a frame and a Markdown block each
    # cost the browser a few ms on every visit
    widgets.html_block(home_cards.benchmark_cards_html(sections))


def your_work() -> None:
    """An annotator's work first: their studies with their progress, then the other pages with work for them."""
    own = study.studies_for_annotator(db, user["id"])
    link = access.page("human_baseline").url_path
    st.subheader("Your studies")
    if own:  # every study in one block: a frame, a link and a progress bar each (views/your_studies.py)
        widgets.html_block(your_studies.studies_html(own, link))
    others = [p for p in access.pages() if p.section == access.page("human_baseline").section
              and p.key != "human_baseline" and p.listed and access.can_open(role, p.key) and access.has_work(p.key, db, user)]
    if others:  # links in the same tab (a Markdown link opens a tab of its own)
        widgets.html_block(your_studies.also_html([(p.title, p.url_path) for p in others]))
    if not own and not others:
        st.info("Nothing for you yet: the study lead adds you to a study, and it shows here.")


if role == access.ANNOTATOR:  # the people who take part: their work first, the benchmarks below
    your_work()
    about = widgets.lazy_section("About the benchmarks", key="home_about_open")  # drawn when opened
    if about is not None:
        with about:
            benchmark_blurbs()
    st.stop()

benchmark_blurbs()
if user is None:
    st.caption("Annotators, researchers, leads and admins: log in (sidebar) for the pages of your role.")

for benchmark in protocol.names():  # each benchmark's own section (its HOME_VIEW), in the app's order
    own_section = protocol.view(benchmark, "HOME_VIEW")
    if own_section is not None:
        own_section(db, user)
