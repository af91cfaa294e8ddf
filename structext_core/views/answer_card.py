"""One person's answer as Adjudication shows it: who answered, what (the option chosen, or the text exactly
as typed), how it was scored and how long it took, as one HTML block for ``st.html``.

One block, not a markdown line, a text block, a score line and a caption each: twenty answers drawn as
six elements each cost a page's first view about 0.3 s in the browser, as one block each about 0.17 s
(issue 46). Every text a person typed is escaped: it is shown exactly as it is, never as markup.
"""

from __future__ import annotations

import html

from structext_core.evaluation import choices
from structext_core.studio import durations, study
from structext_core.text.safe_text import preformatted_html

#: A paragraph of the block, and a caption's (Streamlit's caption: smaller, fainter; light and dark themes).
_LINE = '<p style="margin:0 0 0.5rem 0">'
_CAPTION = '<p style="margin:0 0 0.5rem 0;font-size:0.875rem;opacity:0.65">'


def _seconds(value: float | None) -> str:
    return "–" if value is None else durations.clock(value)


def score_line(response: study.ResponseDetail, options: tuple[str, ...] = (), score_label: str | None = None) -> str:
    """How ``response`` was scored, in words: right or wrong by its rule (a choice, or a benchmark whose free
    texts are not graded: ``score_label`` None), or its graded score; then the final score that counts."""
    if options or score_label is None:
        return (f"{'correct' if response.exact_match else 'not correct'} (automatic score "
                f"{response.score_auto:.0f}) · final score {response.score:.2f}")
    return (f"{score_label} {response.rouge_l:.3f} · exact match {response.exact_match} · automatic score "
            f"{response.score_auto:.2f} · final score {response.score:.2f}")


def times_line(response: study.ResponseDetail) -> str:
    """The answer's times: active, paused, idle, away, wall, and when it was submitted."""
    return (f"Time: active {_seconds(response.elapsed_seconds)} · paused {_seconds(response.paused_seconds)} · idle "
            f"{_seconds(response.idle_seconds)} · away {_seconds(response.away_seconds)} · wall "
            f"{_seconds(response.wall_seconds)} · submitted {study.moment_text(response.submitted_at)}")


def answer_html(response: study.ResponseDetail, options: tuple[str, ...] = (), score_label: str | None = None,
                changed_by_hand: bool = True) -> str:
    """``response`` as one HTML block: its annotator (and "gave up"), the option chosen (letter and text) or
    the text as typed, its score line with the final score in bold, its times, and "Never changed by hand."
    when its score never was (``changed_by_hand`` False)."""
    esc = html.escape
    head = f"{_LINE}<strong>{esc(response.annotator)}</strong>{' · gave up' if response.gave_up else ''}</p>"
    if response.gave_up:
        said = ""
    elif options:
        index = choices.LETTERS.find(response.response) if response.response else -1
        chosen = options[index] if 0 <= index < len(options) else ""
        said = f"{_LINE}Chose <strong>{esc(response.response)}</strong> · {esc(chosen)}</p>"
    else:
        said = preformatted_html(response.response)
    scored, final = score_line(response, options, score_label).rsplit(" · ", 1)
    return (f'<div data-testid="sxAnswer">{head}{said}{_LINE}{esc(scored)} · <strong>{esc(final)}</strong></p>'
            f"{_CAPTION}{esc(times_line(response))}</p>"
            f"{'' if changed_by_hand else _CAPTION + 'Never changed by hand.</p>'}</div>")
