"""The command line's one progress line (stderr): rewritten in place on a terminal, a line
every few seconds otherwise, so the logs of long runs stay short."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from structext_core.studio import durations


class ProgressLine:
    """``label: done/total (pct%){extra}, about T left``; without a total, ``label: done``.

    Call it (or :meth:`update`) with the count done; the finished state (``done >= total``)
    is always shown and ends the line, and :meth:`close` ends a half-written terminal line
    (after an error, an interruption, or a count without a total).
    """

    def __init__(self, label: str, total: int | None = None, stream: TextIO | None = None,
                 min_interval: float | None = None):
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.min_interval = min_interval if min_interval is not None else (0.2 if self.tty else 5.0)
        self.started = time.monotonic()
        self._last = float("-inf")  # the first report is always shown
        self._open = False

    def update(self, done: int, total: int | None = None, extra: str = "") -> None:
        """Report ``done`` of ``total`` (or of the total given at creation)."""
        total = total if total is not None else self.total
        now = time.monotonic()
        final = total is not None and done >= total
        if not final and now - self._last < self.min_interval:
            return
        self._last = now
        elapsed = now - self.started
        if total is None:
            text = f"{self.label}: {done:,}{extra} ({elapsed:.1f}s)"
        else:
            percent = 100.0 * done / total if total else 100.0
            rate = done / elapsed if elapsed > 0 else 0.0
            tail = f", about {durations.words((total - done) / rate, units=2)} left" if not final and rate > 0 \
                else f" ({elapsed:.1f}s)" if final else ""
            text = f"{self.label}: {done:,}/{total:,} ({percent:.0f}%){extra}{tail}"
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self._open = not final
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    __call__ = update

    def close(self) -> None:
        """End a half-written terminal line."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
