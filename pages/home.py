"""Home: what StrucText Studio is (every benchmark, and where to go for each), the user's open
studies, and each benchmark's own section (its ``HOME_VIEW``: for one, its data on disk)."""

import streamlit as st

from structext_core import protocol, ui
from structext_core.studio import access, study
from structext_core.text.safe_text import markdown_text
from structext_core.ui.frame import ensure_frame

ensure_frame()
user = ui.require_page("home")

st.title("StrucText Studio")
role = access.role_of(user)
show_paths = access.can(role, "server_paths")  # a server's folders are the admin's business
# One section a benchmark of the registry, with only the pages this role may open.
sections = access.home_sections(role, access.public_mode(ui.get_db()))
st.markdown(f"A workbench for {' and '.join(f'**{s.title}**' for s in sections)}: one set of accounts, "
            "studies and answer keys kept sealed serves them all.")
for column, section in zip(st.columns(len(sections)), sections):
    with column.container(border=True, key=f"home_benchmark_{section.title}"):
        st.subheader(section.title)
        st.markdown(section.summary)
        st.markdown("\n".join(f"- {line}" for line in section.places))
if user is None:
    st.caption("Annotators, researchers and admins: log in (sidebar) for the pages of your role.")
if access.can_open(role, "human_baseline"):
    own = study.studies_for_annotator(ui.get_db(), user["id"])
    if own:
        st.subheader("Your open studies")
        link = access.page("human_baseline").url_path
        for item in own:
            with st.container(border=True):
                st.markdown(f"**{markdown_text(item.name)}**: "
                            + ("done, thank you." if item.finished else f"[go to the questions]({link})"))
                st.progress(min(1.0, item.answered / max(1, item.n_items)), text=item.progress_words)

for benchmark in protocol.names():  # each benchmark's own section (its HOME_VIEW), in the app's order
    own_section = protocol.view(benchmark, "HOME_VIEW")
    if own_section is not None:
        own_section(ui.get_db(), user)
