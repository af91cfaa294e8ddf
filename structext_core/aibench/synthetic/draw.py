"""A synthetic paper's method figure in the paper's style (its Fig. A1), drawn with Pillow.

Phases are boxes stacked top to bottom, each with its label; inside a phase the data flows left
to right: modules are rounded rectangles, data are ellipses, arrows carry the flow (a feedback
arrow runs back under its phase's nodes, labelled). The title names the task and the input
modality. 1024 x 1024 pixels, text of 15 px or more, Pillow's built-in font: the same graph
always gives the same bytes (with the same Pillow).
"""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw, ImageFont

from structext_core.aibench.model import LogicGraph

SIZE = 1024
MARGIN = 24
TOP = 64
NODE_W, NODE_H, NODE_GAP = 168, 50, 10
PHASE_COLORS = ("#eef4fb", "#f3f9ee", "#fbf1ee", "#f5effa", "#f9f8e8")
MODULE_FILL, MODULE_LINE = "#d6e6fa", "#1f4e8c"
DATA_FILL, DATA_LINE = "#fff1c2", "#a8650b"
ARROW = "#333333"


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _wrap(text: str, font, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if font.getlength(trial) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    return [*lines, line] if line else lines


def _arrowhead(draw: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float]) -> None:
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    size = 11
    left = (end[0] - size * math.cos(angle - 0.4), end[1] - size * math.sin(angle - 0.4))
    right = (end[0] - size * math.cos(angle + 0.4), end[1] - size * math.sin(angle + 0.4))
    draw.polygon([end, left, right], fill=ARROW)


def _layout(graph: LogicGraph) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float, float, float]]]:
    """Node centres and phase boxes (x0, y0, x1, y1)."""
    order = {n.id: i for i, n in enumerate(graph.nodes)}
    phase_of = {n.id: n.phase_id for n in graph.nodes}
    rows = [p.id for p in graph.phases] or [None]
    row_h = (SIZE - TOP - MARGIN) / len(rows)
    centres: dict[str, tuple[float, float]] = {}
    boxes = {}
    for r, phase_id in enumerate(rows):
        members = [n.id for n in graph.nodes if n.phase_id == phase_id or (phase_id is None)]
        column: dict[str, int] = {}
        for node_id in members:  # in drawing order: forward predecessors come first
            preds = [column[e.source] for e in graph.edges
                     if e.target == node_id and e.source in column and phase_of[e.source] == phase_id
                     and order[e.source] < order[node_id]]
            column[node_id] = 1 + max(preds) if preds else 0
        n_cols = max(column.values(), default=0) + 1
        y0 = TOP + r * row_h
        boxes[phase_id] = (MARGIN, y0 + 4, SIZE - MARGIN, y0 + row_h - 4)
        spacing = (SIZE - 2 * MARGIN) / n_cols
        for c in range(n_cols):
            stack = [m for m in members if column[m] == c]
            mid = y0 + 28 + (row_h - 28 - 26) / 2
            for k, node_id in enumerate(stack):
                offset = (k - (len(stack) - 1) / 2) * (NODE_H + NODE_GAP)
                centres[node_id] = (MARGIN + spacing * (c + 0.5), mid + offset)
    return centres, boxes


def draw_figure(graph: LogicGraph | None) -> Image.Image:
    """The figure of ``graph`` (None: a blank image)."""
    image = Image.new("RGB", (SIZE, SIZE), "white")
    if graph is None:
        return image
    draw = ImageDraw.Draw(image)
    title_font, phase_font, node_font, edge_font = _font(26), _font(18), _font(15), _font(13)
    draw.text((SIZE / 2, 30), graph.title, font=title_font, fill="black", anchor="mm")
    centres, boxes = _layout(graph)
    for i, phase in enumerate(graph.phases):
        box = boxes[phase.id]
        draw.rounded_rectangle(box, radius=12, fill=PHASE_COLORS[i % len(PHASE_COLORS)], outline="#7a7a7a", width=2)
        draw.text((box[0] + 12, box[1] + 6), phase.label, font=phase_font, fill="#333333")
    order = {n.id: i for i, n in enumerate(graph.nodes)}
    phase_of = {n.id: n.phase_id for n in graph.nodes}
    for edge in graph.edges:
        (sx, sy), (tx, ty) = centres[edge.source], centres[edge.target]
        if phase_of[edge.source] == phase_of[edge.target] and (order[edge.target] < order[edge.source] or tx <= sx):
            below = boxes.get(phase_of[edge.source], (0, 0, 0, SIZE - 40))[3] - 14
            points = [(sx, sy + NODE_H / 2), (sx, below), (tx, below), (tx, ty + NODE_H / 2)]
            draw.line(points, fill=ARROW, width=2)
            _arrowhead(draw, points[-2], points[-1])
            if edge.label:
                draw.text(((sx + tx) / 2, below - 2), edge.label, font=edge_font, fill="#7a1f1f", anchor="md")
            continue
        if abs(ty - sy) < 1 or phase_of[edge.source] == phase_of[edge.target]:
            start, end = (sx + NODE_W / 2, sy), (tx - NODE_W / 2, ty)
        elif ty > sy:
            start, end = (sx, sy + NODE_H / 2), (tx, ty - NODE_H / 2)
        else:
            start, end = (sx, sy - NODE_H / 2), (tx, ty + NODE_H / 2)
        draw.line([start, end], fill=ARROW, width=2)
        _arrowhead(draw, start, end)
        if edge.label:
            draw.text(((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 - 4), edge.label, font=edge_font,
                      fill="#7a1f1f", anchor="md")
    for node in graph.nodes:
        x, y = centres[node.id]
        box = (x - NODE_W / 2, y - NODE_H / 2, x + NODE_W / 2, y + NODE_H / 2)
        if node.type == "data":
            draw.ellipse(box, fill=DATA_FILL, outline=DATA_LINE, width=2)
        else:
            draw.rounded_rectangle(box, radius=8, fill=MODULE_FILL, outline=MODULE_LINE, width=2)
        lines = _wrap(node.label, node_font, NODE_W - 16)
        draw.multiline_text((x, y), "\n".join(lines), font=node_font, fill="black", anchor="mm", align="center",
                            spacing=2)
    return image


def figure_png(graph: LogicGraph | None) -> bytes:
    """The figure as PNG bytes (no metadata; the same graph gives the same bytes)."""
    out = io.BytesIO()
    draw_figure(graph).save(out, "PNG", compress_level=1)
    return out.getvalue()
