"""The book's files as a room's Wi-Fi wants them: compressed once, and cached.

Every file response carries validators (``ETag``, ``Last-Modified``) and a
``Cache-Control``; a browser that asks again with ``If-None-Match`` or
``If-Modified-Since`` gets ``304 Not Modified`` and no body, so opening the
lab a second time, or a preset link, moves almost nothing.

Text and WebAssembly go out gzip-compressed when the browser accepts it. A
``NAME.gz`` written beside the file (the workshop bundle does this when it is
packed) is sent as it is; otherwise the file is compressed on its first
request, by one thread while concurrent requests for it wait, and the result
is kept for every later one.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import email.utils
import gzip
import os
import threading
from dataclasses import dataclass
from typing import Optional

COMPRESSED = (".html", ".js", ".mjs", ".css", ".svg", ".json", ".txt", ".map", ".inv", ".wasm", ".ipynb")
TYPES = {".mjs": "text/javascript", ".wasm": "application/wasm", ".ipynb": "application/json",
         ".whl": "application/zip", ".js": "text/javascript", ".css": "text/css", ".html": "text/html",
         ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".pdf": "application/pdf",
         ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".txt": "text/plain"}
#: Pages are checked at every open (a 304 costs a few hundred bytes), so an
#: edit shows at once; everything else is kept for a session without asking.
PAGE_CACHE = "no-cache"
ASSET_CACHE = "public, max-age=14400"


@dataclass(frozen=True)
class Representation:
    """What to send for one file: its bytes (or where they are), type, validators."""

    path: str                   # the file on disk to send (the original, or its .gz)
    body: Optional[bytes]       # compressed in memory, when not read from disk
    length: int
    content_type: str
    encoding: Optional[str]     # "gzip" or None
    etag: str
    last_modified: str
    cache_control: str


def content_type(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext in TYPES:
        kind = TYPES[ext]
        return kind + "; charset=utf-8" if kind.startswith("text/") or kind == "application/json" else kind
    import mimetypes

    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def wants_gzip(accept_encoding: str) -> bool:
    """Does an Accept-Encoding header accept gzip (and not with q=0)?"""
    for part in accept_encoding.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            q = params.strip().lower()
            return not (q.startswith("q=") and float(q[2:] or 0) == 0)
    return False


class CompressedCache:
    """Each file compressed once, whatever the number of requests that ask at the same time."""

    def __init__(self) -> None:
        self._done: dict = {}
        self._busy: dict = {}
        self._lock = threading.Lock()
        self.compressions = 0          # how many times a file was compressed (the tests count them)

    def get(self, path: str, stamp: tuple) -> bytes:
        key = (path, stamp)
        with self._lock:
            if key in self._done:
                return self._done[key]
            gate = self._busy.get(key)
            owner = gate is None
            if owner:
                gate = self._busy[key] = threading.Lock()
                gate.acquire()
        if not owner:                  # another thread is compressing it: wait for its result
            with gate:
                pass
            with self._lock:
                if key in self._done:
                    return self._done[key]
            return self.get(path, stamp)
        try:
            with open(path, "rb") as fh:
                body = gzip.compress(fh.read(), compresslevel=6)
            with self._lock:
                self._done = {k: v for k, v in self._done.items() if k[0] != path}   # an older version goes
                self._done[key] = body
                self.compressions += 1
            return body
        finally:
            with self._lock:
                del self._busy[key]
            gate.release()


def _etag(st: os.stat_result, suffix: str = "") -> str:
    return f'"{st.st_size:x}-{st.st_mtime_ns:x}{suffix}"'


def representation(path: str, accept_encoding: str, cache: CompressedCache) -> Representation:
    """What a GET of ``path`` (an existing file) sends."""
    st = os.stat(path)
    kind = content_type(path)
    modified = email.utils.formatdate(st.st_mtime, usegmt=True)
    control = PAGE_CACHE if path.endswith(".html") else ASSET_CACHE
    if path.endswith(COMPRESSED) and wants_gzip(accept_encoding):
        etag = _etag(st, "-gz")
        side = path + ".gz"
        try:
            gz = os.stat(side)
        except OSError:
            gz = None
        if gz is not None and gz.st_mtime_ns >= st.st_mtime_ns:
            return Representation(side, None, gz.st_size, kind, "gzip", etag, modified, control)
        body = cache.get(path, (st.st_size, st.st_mtime_ns))
        return Representation(path, body, len(body), kind, "gzip", etag, modified, control)
    return Representation(path, None, st.st_size, kind, None, _etag(st), modified, control)


def not_modified(rep: Representation, if_none_match: Optional[str], if_modified_since: Optional[str]) -> bool:
    """Does a conditional request already hold this representation? (RFC 9110: If-None-Match
    wins over If-Modified-Since; ETags compare weakly.)"""
    if if_none_match is not None:
        tags = [t.strip() for t in if_none_match.split(",")]
        ours = rep.etag
        return "*" in tags or any((t[2:] if t.startswith("W/") else t) == ours for t in tags)
    if if_modified_since:
        try:
            since = email.utils.parsedate_to_datetime(if_modified_since)
            mine = email.utils.parsedate_to_datetime(rep.last_modified)
        except (TypeError, ValueError, IndexError):
            return False
        if since.tzinfo is None or mine.tzinfo is None:
            return False
        return mine <= since
    return False
