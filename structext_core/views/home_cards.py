"""What Home says of the benchmarks: a framed card each (its name, what it asks, and a link to each page where
its work is done), side by side, as one HTML block (:func:`benchmark_cards_html`).

One block, not a column, a framed box and a Markdown block for each benchmark: three of Streamlit's elements a
benchmark for the browser to draw on every visit of Home (issue 46). Every text is escaped: shown as it is,
never as markup; every link is the app's own page (``access.home_sections``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from structext_core.studio.access import HomeSection
from structext_core.text.safe_text import FRAME_CSS, LINK_CSS

#: The cards side by side (as many columns as fit, each at least 13rem wide), each framed as
#: ``st.container(border=True)`` draws one.
_STYLE = ("<style>.sx-benches{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:1rem;"
          f"margin:0 0 1rem 0}}.sx-bench{{{FRAME_CSS};padding:1rem;overflow-wrap:anywhere}}"
          ".sx-bench h4{font-size:1.25rem;font-weight:600;margin:0 0 0.75rem 0;padding:0;line-height:1.2}"
          ".sx-bench p{margin:0 0 0.75rem 0}.sx-bench ul{margin:0;padding-left:1.25rem}"
          f".sx-bench li{{margin:0 0 0.25rem 0}}.sx-bench a{{{LINK_CSS}}}</style>")


def benchmark_cards_html(sections: Sequence[HomeSection]) -> str:
    """``sections`` (``access.home_sections``), a card each: the benchmark's name, its summary, and its places,
    each the page's title in bold linking to the page, then what is done there."""
    esc = html.escape
    cards = []
    for section in sections:
        places = "".join(f'<li><a href="{esc(place.link)}"><strong>{esc(place.title)}</strong></a>: '
                         f"{esc(place.text)}.</li>" for place in section.places)
        cards.append(f'<div class="sx-bench" data-testid="sxBenchmark"><h4>{esc(section.title)}</h4>'
                     f"<p>{esc(section.summary)}</p>" + (f"<ul>{places}</ul>" if places else "") + "</div>")
    return f'{_STYLE}<div class="sx-benches">{"".join(cards)}</div>'
