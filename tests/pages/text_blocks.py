"""What a page shows in text blocks (``widgets.text_block``, drawn with ``st.html`` or as a light element) and code blocks
(``st.code``), as a person reads them: the tests' one reader of both, so that a text moved from one
kind of block to the other is still found (and a key that must not be sent is still looked for)."""

import html
import re

from tests.pages.html_tables import html_blocks

_BLOCK = re.compile(r'<pre[^>]*data-testid="sxPreformatted"[^>]*>(.*?)</pre>', re.S)
_LINE = re.compile(r'<span class="sx-l">(.*?)</span>', re.S)


def text_blocks(at) -> list[str]:
    """The texts of the run ``at``'s text blocks, in order (a numbered block: its lines joined)."""
    texts = []
    for block in html_blocks(at):
        for body in _BLOCK.findall(block):
            lines = _LINE.findall(body)
            texts.append("\n".join(html.unescape(line) for line in lines) if lines else html.unescape(body))
    return texts


def shown_texts(at) -> list[str]:
    """The texts of the run ``at``'s code blocks, then of its text blocks."""
    return [c.value for c in at.code] + text_blocks(at)
