"""An annotator's studies as their Home and the question page's chooser list them: each framed, with its name,
its progress bar and a link that opens it (*Start*, *Continue*, or *Open* once finished; on Home, "done, thank
you." then), all in one HTML block (:func:`studies_html`).

One block, not a framed box of columns, Markdown lines, a progress bar and a button for each study: four
elements or more a study for the browser to draw on every visit (issue 46). Each link names its study in the
address (``?study=<id>``, which the question page reads), so it opens that study, and a reload stays on it.
Every name is escaped: shown as it is, never as markup; every link is the app's own page.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from structext_core.studio import study
from structext_core.text.safe_text import FRAME_CSS, LINK_CSS, progress_html

#: The query parameter that names the study a question page opens (read by ``ui/question_screen/studies``).
STUDY_PARAM = "study"

#: A study's frame, as ``st.container(border=True)`` draws one (a hairline that reads in light and dark themes);
#: its link drawn as a button, the first study still open as the primary one.
_STYLE = (f"<style>.sx-study{{{FRAME_CSS};padding:1rem;"
          "margin:0 0 1rem 0}.sx-study-head{display:flex;align-items:center;justify-content:space-between;"
          "gap:1rem;margin:0 0 0.75rem 0}.sx-study-head p{margin:0;overflow-wrap:anywhere}"
          ".sx-study a.sx-go{flex:none;min-width:6rem;text-align:center;padding:0.4rem 0.75rem;"
          "border-radius:0.5rem;border:1px solid rgba(128,132,149,0.4);text-decoration:none;color:inherit}"
          ".sx-study a.sx-go:hover{border-color:var(--st-primary-color,#ff4b4b);color:var(--st-primary-color,#ff4b4b)}"
          ".sx-study a.sx-go:focus-visible{outline:2px solid var(--st-primary-color,#ff4b4b);outline-offset:1px}"
          ".sx-study a.sx-go.sx-first,.sx-study a.sx-go.sx-first:hover{background:var(--st-primary-color,#ff4b4b);"
          "border-color:var(--st-primary-color,#ff4b4b);color:#fff}</style>")


def also_html(pages: Sequence[tuple[str, str]]) -> str:
    """The other pages with work for an annotator under "Also for you": each (its title, its address) a link that
    opens in the same tab (a Markdown link opens a tab of its own), its title escaped."""
    items = "".join(f'<li><a href="{html.escape(link)}">{html.escape(title)}</a></li>' for title, link in pages)
    return (f'<style>.sx-also a{{{LINK_CSS}}}</style><p style="margin:0 0 0.25rem 0"><strong>Also for you</strong></p>'
            f'<ul class="sx-also" data-testid="sxAlso">{items}</ul>')


def verb(item: study.AnnotatorStudy) -> str:
    """What opening ``item`` does for its annotator: *Start* (nothing answered, its rule not yet read),
    *Continue*, or *Open* once every question is answered."""
    if item.finished:
        return "Open"
    return "Start" if not item.answered and item.rule_accepted_at is None else "Continue"


def studies_html(studies: Sequence[study.AnnotatorStudy], link: str, *, open_finished: bool = False) -> str:
    """``studies`` (``study.studies_for_annotator``), each framed: its name in bold, a link to ``link`` (the page
    of the questions) naming the study, and its progress bar with its words. The first study not finished has
    the primary link. A finished study says "done, thank you." unless ``open_finished`` (the question page's
    chooser, where it opens to what the person may see of it)."""
    first = study.first_unfinished(studies) if studies else None
    cards = []
    for index, item in enumerate(studies):
        if item.finished and not open_finished:
            action = "<span>done, thank you.</span>"
        else:
            primary = " sx-first" if index == first and not item.finished else ""
            action = (f'<a class="sx-go{primary}" '
                      f'href="{html.escape(link)}?{STUDY_PARAM}={int(item.id)}">{verb(item)}</a>')
        cards.append(f'<div class="sx-study" data-testid="sxStudy"><div class="sx-study-head"><p><strong>'
                     f"{html.escape(item.name)}</strong></p>{action}</div>"
                     f"{progress_html(item.progress_words, item.answered / max(1, item.n_items))}</div>")
    return _STYLE + "".join(cards)
