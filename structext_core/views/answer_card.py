"""One person's answer as Adjudication shows it: who answered, what (the option chosen, or the text exactly
as typed), how it was scored and how long it took, whether and how its score was changed by hand, as
HTML for ``st.html``; a page of answers as one block (:func:`answers_html`).

One block, not a framed box of a markdown line, a text block, a score line, a caption, a note, a
closed box for its form and one for its history each: twenty answers drawn as elements cost a page's
first view about 0.3 s in the browser (issue 46). Every text a person typed is escaped: it is shown
exactly as it is, never as markup.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from structext_core.evaluation import choices
from structext_core.studio import durations, study
from structext_core.text.safe_text import FRAME_CSS, html_table, preformatted_html
from structext_core.text.words import plural

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


#: A page of answers: each framed as ``st.container(border=True)`` frames (a hairline that reads in light and
#: dark themes), a note of a score set by hand tinted as ``st.info`` is, a history folded under its title.
_CARDS_STYLE = (f"<style>.sx-card{{{FRAME_CSS};padding:1rem 1rem 0.5rem;"
                "margin:0 0 1rem 0}.sx-note{margin:0 0 0.5rem 0;padding:0.5rem 0.75rem;border-radius:0.5rem;"
                "background:rgba(28,131,225,0.1)}.sx-card details{margin:0 0 0.5rem 0}"
                ".sx-card summary{cursor:pointer;font-size:0.875rem}</style>")


def override_note(override: study.Override) -> str:
    """The words under an answer whose score was set by hand: to what, by whom, when and why."""
    return (f"Set by hand to {override.score:g} by {override.by or '(deleted account)'} on "
            f"{study.moment_text(override.at)}: {override.reason}")


def card_html(response: study.ResponseDetail, history: Sequence[study.Override], options: tuple[str, ...] = (),
              score_label: str | None = None) -> str:
    """One answer framed: :func:`answer_html`, the note of its score set by hand (when it is), and its
    ``history`` of changes (newest first) folded under "History of this score (n changes)"."""
    note = "" if response.override is None else f'<p class="sx-note">{html.escape(override_note(response.override))}</p>'
    folded = ""
    if history:
        folded = (f"<details><summary>History of this score ({plural(len(history), 'change')})</summary>"
                  f"{html_table(study.history_table(history))}</details>")
    return (f'<div class="sx-card">{answer_html(response, options, score_label, changed_by_hand=bool(history))}'
            f"{note}{folded}</div>")


def answers_html(cards: Sequence[tuple[study.ResponseDetail, Sequence[study.Override]]], options: tuple[str, ...] = (),
                 score_label: str | None = None) -> str:
    """A page of answers, each ``(response, its override history)``, as one HTML block of framed cards
    (:func:`card_html`)."""
    return _CARDS_STYLE + "".join(card_html(response, history, options, score_label) for response, history in cards)


def answer_label(response: study.ResponseDetail, options: tuple[str, ...] = ()) -> str:
    """An answer as a chooser lists it (plain text, one line): who, what they answered (the letter chosen,
    "gave up", or the start of the text typed) and the final score."""
    if response.gave_up:
        said = "gave up"
    elif options:
        said = f"chose {response.response}"
    else:
        text = " ".join(str(response.response or "").split())
        said = f"“{text[:40]}…”" if len(text) > 40 else f"“{text}”"
    return f"{response.annotator} · {said} · final score {response.score:.2f}"
