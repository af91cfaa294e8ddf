"""An annotator's studies as their Home lists them: each framed, with its name, a link to its questions (or
"done, thank you.") and its progress bar, all in one HTML block (:func:`studies_html`).

One block, not a framed box of a Markdown line and a progress bar for each study: three elements a study for
the browser to draw on every visit of an annotator's Home (issue 46). Every name is escaped: shown as it is,
never as markup; the link is the app's own page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from structext_core.studio import study
from structext_core.text.safe_text import progress_html

#: A study's frame, as ``st.container(border=True)`` draws one (a hairline that reads in light and dark themes).
_STYLE = ("<style>.sx-study{border:1px solid rgba(128,132,149,0.3);border-radius:0.5rem;padding:1rem;"
          "margin:0 0 1rem 0}.sx-study p{margin:0 0 0.75rem 0;overflow-wrap:anywhere}</style>")


def studies_html(studies: Iterable[study.AnnotatorStudy], link: str) -> str:
    """``studies`` (``study.studies_for_annotator``), each framed: its name in bold, a link to ``link`` (the page
    of the questions) or "done, thank you." once finished, and its progress bar with its words."""
    cards = []
    for item in studies:
        said = "done, thank you." if item.finished else f'<a href="{html.escape(link)}">go to the questions</a>'
        cards.append(f'<div class="sx-study" data-testid="sxStudy"><p><strong>{html.escape(item.name)}</strong>: '
                     f"{said}</p>{progress_html(item.progress_words, item.answered / max(1, item.n_items))}</div>")
    return _STYLE + "".join(cards)
