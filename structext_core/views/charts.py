"""The Results page's Altair charts (heatmaps, facets, interval bars, correlation and paired
charts, the paper's heatmaps) and their PNG/SVG export, built from the frames of
the Results views (:mod:`~structext_core.views.heatmaps`, :mod:`~structext_core.views.leaderboards`,
:mod:`~structext_core.views.comparisons`, :mod:`~structext_core.views.people_vs_models`).

Every heatmap cell of results prints its n under its value and has it in its tooltip; a cell
flagged ``below_min`` (:func:`structext_core.views.heatmaps.flag_small_cells`) is greyed out,
its value and n still printed, so a thin cell is seen as thin rather than missing."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from structext_core.views.heatmaps import axis_order

COLOR_SCHEME = "viridis"
# width / height mean the plotting area; axes, labels and legend come on top. (Streamlit's
# default for a plain chart is "fit", which squeezes all of that into width x height.)
PAD = alt.AutoSizeParams(type="pad", contains="padding")
DIFF_SCHEME = "redblue"


def _label_angle(labels: Sequence[str]) -> int:
    """Column labels upright when short (depths, widths), slanted when long (model names)."""
    return 0 if max((len(str(label)) for label in labels), default=0) <= 4 else -40


def _text_colour(field: str, threshold: float):
    # Viridis is dark at the bottom of the scale: white text there, black above.
    return alt.condition(f"datum['{field}'] < {threshold}", alt.value("white"), alt.value("black"))


CELL_SELECTION = "cell"
GREY = "#e4e4e4"  # a cell below the minimum n
GREY_TEXT = "#555555"
CELL_HEIGHT = 38  # room for the value and, under it, n


def _with_small(data: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """``data`` with ``below_min`` (False where ``cells`` has none) and ``n_label`` (``n=12``)."""
    below = cells["below_min"].astype(bool).to_numpy() if "below_min" in cells.columns else False
    return data.assign(below_min=below, n_label=[f"n={int(n):,}" for n in data["n"]])


def _cell_colour(colour: alt.Color):
    """``colour``, or grey for a cell below the minimum n."""
    return alt.when("datum.below_min").then(alt.value(GREY)).otherwise(colour)


def _value_and_n(base: alt.Chart, text: alt.Text | str, dark_test: str, tooltip, size: int = 11) -> list[alt.Chart]:
    """Two text layers: the cell's value, and its n under it (smaller). White on the dark end
    of the scale (``dark_test``), dark grey on a greyed-out cell."""
    colour = (alt.when("datum.below_min").then(alt.value(GREY_TEXT))
              .when(dark_test).then(alt.value("white")).otherwise(alt.value("black")))
    value = base.mark_text(fontSize=size, dy=-6).encode(text=text, color=colour, tooltip=tooltip)
    n = base.mark_text(fontSize=size - 1, dy=8).encode(text="n_label:N", color=colour, tooltip=tooltip)
    return [value, n]


def _small_tooltip(min_n: int) -> list:
    """The tooltip's line about the minimum n (none when nothing can be below it)."""
    return [alt.Tooltip("below_min:N", title=f"n below {min_n}")] if min_n > 1 else []


def picked_cell(selection: Mapping | None) -> tuple[str, str] | None:
    """(row label, column label) of the cell clicked in a selectable heatmap, from Streamlit's
    selection state (``event.selection``), or None."""
    points = (selection or {}).get(CELL_SELECTION) or []
    if not points:
        return None
    point = points[0]
    if "row_label" not in point or "col_label" not in point:
        return None
    return str(point["row_label"]), str(point["col_label"])


def _selectable(rect: alt.Chart) -> alt.Chart:
    """A rect layer with the cell selection; the picked cell gets a red outline."""
    cell = alt.selection_point(name=CELL_SELECTION, fields=["row_label", "col_label"], clear=False)
    return rect.add_params(cell).encode(
        # empty=False: before any click no cell is outlined
        stroke=alt.condition(cell, alt.value("#ff4b4b"), alt.value("white"), empty=False),
        strokeWidth=alt.condition(cell, alt.value(3), alt.value(0.5), empty=False),
    )


def heatmap_chart(
    cells: pd.DataFrame,
    row: str,
    col: str,
    title: str = "",
    value_title: str = "score (%)",
    cell_size: int = 52,
    selectable: bool = False,
    min_n: int = 1,
) -> alt.LayerChart:
    """The heatmap: a cell per (row, col), its mean and n printed in it, colour on a fixed 0-100
    scale; n and the 95 % interval in the tooltip; rows and columns sorted by mean. Cells flagged
    ``below_min`` (n below ``min_n``) are grey, their mean and n still printed.

    ``selectable`` adds a point selection named :data:`CELL_SELECTION` over ``row_label`` and
    ``col_label`` (a click picks a cell; the page drills down into it)."""
    data = cells.assign(
        row_label=cells["row_label"].astype(str), col_label=cells["col_label"].astype(str),
        mean=cells["mean"].astype(float), ci_low=cells["ci_low"].astype(float),
        ci_high=cells["ci_high"].astype(float), n=cells["n"].astype(int),
    )[["row_label", "col_label", "mean", "n", "ci_low", "ci_high"]]
    data = _with_small(data, cells)
    rows, cols = axis_order(cells, "row"), axis_order(cells, "col")
    base = alt.Chart(data).encode(
        x=alt.X("col_label:N", title=col, sort=cols, axis=alt.Axis(labelAngle=_label_angle(cols), labelLimit=160, labelOverlap=False)),
        y=alt.Y("row_label:N", title=row, sort=rows, axis=alt.Axis(labelLimit=220)),
    )
    tooltip = [
        alt.Tooltip("row_label:N", title=row), alt.Tooltip("col_label:N", title=col),
        alt.Tooltip("mean:Q", title=value_title, format=".1f"), alt.Tooltip("n:Q", title="n"),
        alt.Tooltip("ci_low:Q", title="95% CI low", format=".1f"),
        alt.Tooltip("ci_high:Q", title="95% CI high", format=".1f"), *_small_tooltip(min_n),
    ]
    # The legend sits above the cells, across, so its title (the metric, often long) is never cut.
    legend = alt.Legend(orient="top", direction="horizontal", titleLimit=1000, gradientLength=240)
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=_cell_colour(alt.Color("mean:Q", title=value_title, legend=legend,
                                     scale=alt.Scale(domain=[0, 100], scheme=COLOR_SCHEME))),
        tooltip=tooltip,
    )
    if selectable:
        rect = _selectable(rect)
    texts = _value_and_n(base, alt.Text("mean:Q", format=".1f"), "datum.mean < 55", tooltip)
    return alt.layer(rect, *texts).properties(
        autosize=PAD, title=title, width=max(cell_size * len(cols), 120), height=max(CELL_HEIGHT * len(rows), 60),
    )


def container_wide(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` as wide as the page's container (the cells share the width). Exports keep the
    fixed width: a file has no container."""
    # "fit-x" with the padding counted: the axis labels and titles stay inside the container
    # (with the default "pad" the cells alone took its width and the last column was cut).
    return chart.properties(width="container", autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))


#: Pixels a character of a chart title takes at most (bold, at the size Streamlit's theme draws it).
TITLE_CHAR_PX = 9


def title_lines(title: str, width: int) -> list[str]:
    """``title`` in lines that each fit ``width`` pixels (at :data:`TITLE_CHAR_PX` a character),
    broken between words: a title longer than its chart is shown whole, not cut."""
    return textwrap.wrap(title, max(12, width // TITLE_CHAR_PX), break_long_words=False) or [title]


def _title_text(chart: alt.TopLevelMixin) -> str | list[str]:
    title = chart.title
    if isinstance(title, alt.TitleParams):
        title = title.text
    return title if isinstance(title, (str, list)) else ""


def subtitled(chart: alt.TopLevelMixin, subtitle: str, fit: bool = False) -> alt.TopLevelMixin:
    """``chart`` with ``subtitle`` under its title (how its values are computed), one line per
    ``"; "``-separated part, never cut at the chart's width. With ``fit`` (a chart drawn at its own,
    set width), a part wider than the chart is broken into lines that fit. A title in lines keeps
    its lines."""
    title = _title_text(chart)
    lines = [part for part in subtitle.split("; ") if part]
    if fit and isinstance(chart.width, int):
        lines = [line for part in lines for line in title_lines(part, chart.width)]
    return chart.properties(title=alt.TitleParams(text=title or " ", subtitle=lines if len(lines) > 1 else subtitle,
                                                  anchor="start", limit=2000))


def interval_bars_chart(cells: pd.DataFrame, x: str, offset: str, title: str, value_title: str = "score (%)",
                        x_title: str | None = None) -> alt.LayerChart:
    """Grouped bars (``x``, split by ``offset``) with 95 % interval whiskers, 0-100 axis."""
    data = cells.assign(**{x: cells[x].astype(str), offset: cells[offset].astype(str)})
    data = data.assign(mean=data["mean"].astype(float), ci_low=data["ci_low"].astype(float),
                       ci_high=data["ci_high"].astype(float), n=data["n"].astype(int))
    tooltip = [f"{x}:N", f"{offset}:N", alt.Tooltip("mean:Q", format=".1f", title=value_title), "n:Q",
               alt.Tooltip("ci_low:Q", format=".1f", title="95% CI low"),
               alt.Tooltip("ci_high:Q", format=".1f", title="95% CI high")]
    base = alt.Chart(data).encode(
        x=alt.X(f"{x}:N", title=x_title or x, axis=alt.Axis(labelAngle=-30, labelLimit=180, labelOverlap=False)),  # every group named
        xOffset=alt.XOffset(f"{offset}:N"),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", title=value_title, scale=alt.Scale(domain=[0, 100])),
        color=alt.Color(f"{offset}:N", title=offset, scale=alt.Scale(scheme="tableau10"),
                        legend=alt.Legend(labelLimit=260)),
        tooltip=tooltip,
    )
    # the rule sits at the start of its band unless told to take the middle
    whiskers = base.mark_rule(color="black", strokeWidth=1.5).encode(
        xOffset=alt.XOffset(f"{offset}:N", bandPosition=0.5), y="ci_low:Q", y2="ci_high:Q", tooltip=tooltip)
    # each bar's mean written over its whisker: a bar of 0 reads as 0, not as a group nobody answered
    labels = base.mark_text(baseline="bottom", dy=-3, fontSize=10).encode(
        xOffset=alt.XOffset(f"{offset}:N", bandPosition=0.5), y="ci_high:Q", text=alt.Text("mean:Q", format=".0f"),
        tooltip=tooltip)
    return (bars + whiskers + labels).properties(autosize=PAD, title=title, width=max(70 * data[x].nunique(), 240),
                                                 height=300)


def correlation_chart(corr: pd.DataFrame, title: str) -> alt.LayerChart:
    """Correlation matrix, colour on a fixed -1..1 scale, r printed with three decimals."""
    order = list(dict.fromkeys(corr["metric_a"]))
    data = corr.assign(r=corr["r"].astype(float))
    base = alt.Chart(data).encode(
        x=alt.X("metric_b:N", sort=order, title=None, axis=alt.Axis(labelAngle=-30, labelLimit=200, labelOverlap=False)),
        y=alt.Y("metric_a:N", sort=order, title=None, axis=alt.Axis(labelLimit=200)),
    )
    tooltip = ["metric_a:N", "metric_b:N", alt.Tooltip("r:Q", format=".4f"), "n:Q"]
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("r:Q", scale=alt.Scale(domain=[-1, 1], scheme=DIFF_SCHEME), title="r"), tooltip=tooltip,
    )
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("r:Q", format=".3f"),
        color=alt.condition("abs(datum.r) > 0.8", alt.value("white"), alt.value("black")), tooltip=tooltip,
    )
    return (rect + text).properties(autosize=PAD, title=title, width=90 * len(order), height=40 * len(order))


def paired_chart(cells: pd.DataFrame, row: str, col: str, title: str, selectable: bool = False,
                 min_n: int = 1) -> alt.LayerChart:
    """Paired differences on a fixed -100..100 diverging scale, n (pairs) under each; ``*`` marks
    p < 0.05; grey below ``min_n``. ``selectable``: a click picks a cell (see :func:`heatmap_chart`)."""
    data = cells.assign(
        row_label=cells["row_label"].astype(str), col_label=cells["col_label"].astype(str),
        diff=cells["diff"].astype(float), ci_low=cells["ci_low"].astype(float),
        ci_high=cells["ci_high"].astype(float), n=cells["n"].astype(int), p_value=cells["p_value"].astype(float),
        text=[f"{d:+.1f}{m}" for d, m in zip(cells["diff"], cells["mark"])],
    )[["row_label", "col_label", "diff", "ci_low", "ci_high", "n", "p_value", "text", "mean_a", "mean_b"]]
    data = _with_small(data, cells)
    tooltip = [
        alt.Tooltip("row_label:N", title=row), alt.Tooltip("col_label:N", title=col),
        alt.Tooltip("diff:Q", format="+.1f", title="difference (points)"), alt.Tooltip("n:Q", title="n (pairs)"),
        alt.Tooltip("mean_a:Q", format=".1f", title="mean A"), alt.Tooltip("mean_b:Q", format=".1f", title="mean B"),
        alt.Tooltip("ci_low:Q", format="+.1f", title="95% CI low"),
        alt.Tooltip("ci_high:Q", format="+.1f", title="95% CI high"), alt.Tooltip("p_value:Q", format=".4f"),
        *_small_tooltip(min_n),
    ]
    rows, cols = axis_order(cells, "row"), axis_order(cells, "col")
    base = alt.Chart(data).encode(
        x=alt.X("col_label:N", sort=cols, title=col, axis=alt.Axis(labelAngle=_label_angle(cols), labelLimit=160, labelOverlap=False)),
        y=alt.Y("row_label:N", sort=rows, title=row, axis=alt.Axis(labelLimit=220)),
    )
    rect = base.mark_rect(stroke="white").encode(
        color=_cell_colour(alt.Color("diff:Q", title="A - B (points)",
                                     scale=alt.Scale(domain=[-100, 100], scheme=DIFF_SCHEME))),
        tooltip=tooltip,
    )
    if selectable:
        rect = _selectable(rect)
    texts = _value_and_n(base, "text:N", "abs(datum.diff) > 60", tooltip)
    return alt.layer(rect, *texts).properties(autosize=PAD, title=title, width=max(56 * len(cols), 120),
                                              height=max(CELL_HEIGHT * len(rows), 60))


def paper_heatmap_chart(cells: pd.DataFrame, title: str, row_title: str, col_title: str,
                        value_title: str = "score (%)") -> alt.LayerChart:
    """A paper table drawn as a heatmap in its printed order, each cell showing the printed text."""
    rows, cols = axis_order(cells, "row"), axis_order(cells, "col")
    data = cells[["row_label", "col_label", "mean", "label"]]
    base = alt.Chart(data).encode(
        x=alt.X("col_label:N", sort=cols, title=col_title,
                axis=alt.Axis(labelAngle=-40, labelLimit=160, labelOverlap=False, orient="top")),
        y=alt.Y("row_label:N", sort=rows, title=row_title, axis=alt.Axis(labelLimit=240)),
    )
    tooltip = [alt.Tooltip("row_label:N", title=row_title), alt.Tooltip("col_label:N", title=col_title),
               alt.Tooltip("label:N", title=value_title)]
    rect = base.mark_rect(stroke="white", strokeWidth=0.5).encode(
        color=alt.Color("mean:Q", title=value_title, scale=alt.Scale(domain=[0, 100], scheme=COLOR_SCHEME)),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=11).encode(text="label:N", color=_text_colour("mean", 55), tooltip=tooltip)
    width = max(50 * len(cols), 160)
    # In lines no wider than the cells: a title wider than a narrow table was cut on the page.
    heading = alt.TitleParams(text=title_lines(title, width), anchor="start") if title else title
    return (rect + text).properties(autosize=PAD, title=heading, width=width, height=max(22 * len(rows), 60))


# ------------------------------------------------------------------ export

def chart_png(chart: alt.TopLevelMixin, scale: float = 2.0) -> bytes:
    """The chart as PNG (rendered offline by vl-convert)."""
    import vl_convert

    return vl_convert.vegalite_to_png(chart.to_dict(), scale=scale)


def chart_svg(chart: alt.TopLevelMixin) -> bytes:
    """The chart as SVG (rendered offline by vl-convert)."""
    import vl_convert

    return vl_convert.vegalite_to_svg(chart.to_dict()).encode("utf-8")
