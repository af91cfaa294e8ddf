"""What a page's first view sends that the browser must load an element of its own for (issue 46:
an st.dataframe or a chart costs it half a second or more, each further widget kind about 0.1 s)."""

#: AppTest's names of those elements (st.dataframe is "dataframe", st.vega_lite_chart/st.altair_chart
#: "vega_lite_chart", st.table "table"; st.code "code" loads the 1.5 MB code highlighter).
HEAVY = ("dataframe", "vega_lite_chart", "table", "code", "selectbox", "multiselect", "text_input", "number_input",
         "text_area", "file_uploader", "radio", "toggle", "metric")


def heavy(at, kinds=HEAVY) -> dict[str, int]:
    """How many of each of ``kinds`` the run ``at`` drew (only those it drew)."""
    return {kind: len(at.get(kind)) for kind in kinds if at.get(kind)}
