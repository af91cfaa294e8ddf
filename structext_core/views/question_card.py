"""A question as Adjudication shows it: its reference (numbered lines, scrolled) beside the question, what
the answer must be and its answer key, as one HTML block (:func:`question_html`).

One block, not two columns of Markdown lines and text blocks: columns are Streamlit's own elements, and
between them a page's light elements cannot be drawn as one (``ui.light_panel``); the question screen was
eleven elements for the browser to draw (issue 46). Every text is escaped and shown exactly as it is (the
question's line breaks kept), never as markup.
"""

from __future__ import annotations

import html

from structext_core.text.safe_text import preformatted_html

_LINE = '<p style="margin:0 0 0.5rem 0;white-space:pre-wrap;overflow-wrap:anywhere">'
_CAPTION = '<p style="margin:0 0 0.5rem 0;font-size:0.875rem;opacity:0.65;white-space:pre-wrap;overflow-wrap:anywhere">'
#: Two columns as ``st.columns([3, 2], gap="large")`` lays them out, one under the other on a narrow screen.
_SIDE_STYLE = ("<style>.sx-side{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:0 3rem}"
               "@media (max-width:640px){.sx-side{grid-template-columns:minmax(0,1fr)}}</style>")
#: A reference taller than this scrolls in its frame.
REFERENCE_HEIGHT = 420


def question_html(question: str, answer: str, *, requirement: str = "", reference: str | None = None,
                  reference_name: str = "") -> str:
    """The question, its ``requirement`` (a caption, when there is one) and its answer key; with a
    ``reference`` (a text, even empty), that reference under "Reference · ``reference_name``" in a column
    to their left."""
    esc = html.escape
    said = f"{_LINE}<strong>Question:</strong> {esc(question)}</p>"
    if requirement:
        said += f"{_CAPTION}{esc(requirement)}</p>"
    said += f"{_LINE}<strong>Answer key</strong></p>{preformatted_html(answer)}"
    if reference is None:
        return f'<div data-testid="sxQuestion">{said}</div>'
    title = "<strong>Reference</strong>" + (f" · {esc(reference_name)}" if reference_name else "")
    shown = preformatted_html(reference, line_numbers=True, wrap=False, max_height=REFERENCE_HEIGHT)
    return (f'{_SIDE_STYLE}<div class="sx-side" data-testid="sxQuestion"><div>{_LINE}{title}</p>{shown}</div>'
            f"<div>{said}</div></div>")
