"""The one HTTP client of structext_core: every request it makes to a model endpoint (``run``,
``aibench run``, ``aibench draw``) and to its own processes (``crowd``'s health checks) goes
through :func:`fetch`.

* **A deadline for the whole request.** ``timeout`` bounds everything: connecting, sending, the
  status line and headers, and reading the body, which is read in chunks while a monotonic
  deadline is checked; every socket operation waits at most the time left. An endpoint that
  drips one byte a second cannot hold a request past it. On expiry: a retryable
  :class:`EndpointError` saying the whole request took longer than ``timeout``.
* **Redirects stay on the endpoint's origin.** A redirect to another origin (scheme, host or
  port) is never followed, so the Authorization header (an API key) and the request body never
  reach a host nobody chose; it fails with a non-retryable :class:`EndpointError` naming that
  origin. A redirect on the same origin is followed, at most :data:`MAX_REDIRECTS` times: 301,
  302, 307 and 308 repeat the request as it was (method and body), 303 asks with a GET.
* **A bounded reply.** At most ``max_bytes`` of a body are read; a longer one is refused.

No message names the request's headers (the API key is sent only as a header).
"""

from __future__ import annotations

import functools
import http.client
import io
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping

#: Status codes whose reply is worth asking again for (with 5xx).
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: Redirects followed (same origin only) before giving up.
MAX_REDIRECTS = 5
#: Status codes followed as redirects; 303 asks the new place with a GET.
REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: How much of a body is read at a time (the deadline is checked between reads).
CHUNK_BYTES = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


class EndpointError(Exception):
    """A request that failed; ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, retryable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class _DeadlinePassed(TimeoutError):
    """The request's deadline passed (raised by a read that has no time left)."""


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the port made explicit), for comparing and naming origins;
    a URL whose port cannot be read gives its scheme and host only (equal to no real origin)."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return f"{scheme}://{host}:?"
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _DeadlinePassed("the deadline passed")
    return left


class _DeadlineRaw(io.RawIOBase):
    """A socket's reader whose every read waits at most the time left before ``deadline``."""

    def __init__(self, raw, sock, deadline: float):
        super().__init__()
        self._raw, self._sock, self._deadline = raw, sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _DeadlineResponse(http.client.HTTPResponse):
    """An HTTP response whose status line, headers and body are read before ``deadline``."""

    def __init__(self, sock, *args, deadline: float, **kwargs):
        super().__init__(sock, *args, **kwargs)
        self.fp = io.BufferedReader(_DeadlineRaw(self.fp.detach(), sock, deadline))


def _deadline_connection(base: type[http.client.HTTPConnection], deadline: float) -> type:
    """``base`` (HTTP or HTTPS) connecting, sending and reading within ``deadline``."""

    class DeadlineConnection(base):
        response_class = functools.partial(_DeadlineResponse, deadline=deadline)

        def connect(self) -> None:
            self.timeout = _time_left(deadline)
            super().connect()
            self.sock.settimeout(_time_left(deadline))  # sending the request, body included

    return DeadlineConnection


class _DeadlineHTTP(urllib.request.HTTPHandler):
    def __init__(self, deadline: float):
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class, request, **kwargs):
        return super().do_open(_deadline_connection(http_class, self.deadline), request, **kwargs)


class _DeadlineHTTPS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: float):
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class, request, **kwargs):
        return super().do_open(_deadline_connection(http_class, self.deadline), request, **kwargs)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Follows nothing: a 3xx reaches :func:`fetch` as an HTTPError, and fetch decides."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _read_body(response, max_bytes: int, deadline: float) -> bytes:
    """At most ``max_bytes + 1`` bytes of ``response``'s body, in chunks, before ``deadline``."""
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        _time_left(deadline)
        chunk = response.read(min(CHUNK_BYTES, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _said(url: str, first: str) -> str:
    """``url``, and where the request was first sent when a redirect led there."""
    return url if url == first else f"{url} (redirected from {first})"


def _http_error(exc: urllib.error.HTTPError, url: str, first: str, deadline: float) -> EndpointError:
    try:
        _time_left(deadline)
        detail = exc.read(500).decode("utf-8", "replace").strip()
    except (OSError, http.client.HTTPException, ValueError):
        detail = ""
    finally:
        exc.close()
    return EndpointError(
        f"HTTP {exc.code} from {_said(url, first)}" + (f": {detail}" if detail else ""),
        retryable=exc.code in RETRYABLE_STATUS or exc.code >= 500,
        retry_after=_retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None),
    )


def _redirect_target(exc: urllib.error.HTTPError, url: str, first: str, hops: int) -> str:
    """Where a redirect of ``url`` leads, when it may be followed; else the :class:`EndpointError` to raise."""
    location = exc.headers.get("Location") if exc.headers else None
    exc.close()
    if not location:
        raise EndpointError(f"HTTP {exc.code} from {_said(url, first)} with no Location to go to", retryable=False)
    target = urllib.parse.urljoin(url, location.strip())
    if origin(target) != origin(first):
        raise EndpointError(f"the endpoint {_said(url, first)} redirected (HTTP {exc.code}) to another origin "
                            f"{origin(target)}: the request was not sent there", retryable=False)
    if hops >= MAX_REDIRECTS:
        raise EndpointError(f"the endpoint {first} redirected more than {MAX_REDIRECTS} times (last to {target}): "
                            "not followed further", retryable=False)
    return target


def fetch(url: str, *, data: bytes | None = None, headers: Mapping[str, str] | None = None,
          method: str | None = None, timeout: float, max_bytes: int) -> tuple[str, bytes]:
    """Send one request to ``url`` (``method``, default POST with ``data`` and GET without) and read
    its reply: (the URL that answered, after same-origin redirects; the body, at most ``max_bytes``).

    ``timeout`` (seconds) is the whole request's deadline, redirects and the body included. Raises
    :class:`EndpointError` (``retryable``, and the server's Retry-After) on an HTTP error status, an
    unreachable server, a passed deadline, a redirect to another origin or too many redirects, or a
    body over ``max_bytes`` (not read further)."""
    deadline = time.monotonic() + timeout
    opener = urllib.request.build_opener(_NoRedirects(), _DeadlineHTTP(deadline), _DeadlineHTTPS(deadline))
    headers = dict(headers or {})
    method = method or ("POST" if data is not None else "GET")
    first = url
    hops = 0
    while True:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with opener.open(request, timeout=_time_left(deadline)) as response:
                payload = _read_body(response, max_bytes, deadline)
            break
        except urllib.error.HTTPError as exc:
            if exc.code not in REDIRECTS:
                raise _http_error(exc, url, first, deadline) from None
            url = _redirect_target(exc, url, first, hops)
            hops += 1
            if exc.code == 303:  # "see other": the answer is there, asked with a GET
                method, data = "GET", None
                headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError) or time.monotonic() >= deadline:
                raise EndpointError(f"no complete answer from {_said(url, first)}: the whole request took longer "
                                    f"than {timeout:g} s", retryable=True) from None
            raise EndpointError(f"cannot reach {_said(url, first)}: {reason}", retryable=True) from None
    if len(payload) > max_bytes:
        raise EndpointError(f"the answer from {_said(url, first)} is over {max_bytes:,} bytes: not read",
                            retryable=False)
    return url, payload
