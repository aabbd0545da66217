"""Helpers shared by the tests of the built book (links, browser).

* ``ensure_book_built()`` runs ``scripts/build-book`` when ``_build/html`` is
  missing or older than any source of the book.
* ``book_pages()`` lists the pages of the table of contents (plus Sphinx's
  search and index pages) as paths relative to ``_build/html``.
* ``serve(root)`` serves a folder on 127.0.0.1 from a thread, with the handler
  of the workshop bundle's serve.py (gzip when the browser asks for it).
"""

from __future__ import annotations

import contextlib
import http.server
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import yaml

from vsockmodel.bookkit.serve import handler_for

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "_build"
HTML = BUILD / "html"
STAMP = HTML / ".book-stamp"

_SOURCE_GLOBS = [
    "_config.yml",
    "_toc.yml",
    "book/**/*",
    "_assets/**/*",
    "chapters/**/*",
    "vsockmodel/**/*.py",
    "vsockmodel/**/data/*",
    "vsockmodel/lab/static/*",
    "vsockmodel/bookkit/printed/*",
    "scripts/setup",
    "requirements.txt",
    "package-lock.json",
    "pyproject.toml",
    "CITATION.cff",
    "NOTICE.md",
]


def _newest_source_mtime() -> float:
    newest = 0.0
    for pattern in _SOURCE_GLOBS:
        for path in REPO.glob(pattern):
            if path.is_file() and ".ipynb_checkpoints" not in path.parts:
                newest = max(newest, path.stat().st_mtime)
    return newest


def book_is_stale() -> bool:
    if not STAMP.exists():
        return True
    return _newest_source_mtime() > STAMP.stat().st_mtime


def ensure_book_built() -> Path:
    """Build the book with scripts/build-book if it is missing or stale."""
    if book_is_stale():
        proc = subprocess.run(
            [str(REPO / "scripts" / "build-book")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError("scripts/build-book failed:\n" + proc.stdout[-6000:])
    return HTML


def toc_docnames() -> list[str]:
    """Docnames in table-of-contents order, read from _toc.yml."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [str(Path(n).with_suffix("")) for n in names]


def book_pages() -> list[str]:
    return [f"{name}.html" for name in toc_docnames()] + ["genindex.html", "search.html"]


class _QuietServer(http.server.ThreadingHTTPServer):
    """A browser that closes a page mid-response (a test moving on) is no error."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (random port), as the workshop bundle's
    serve.py does (vsockmodel.bookkit.serve); yields the base URL."""
    Handler = handler_for(root)
    server = _QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
