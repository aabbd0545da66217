"""Serve the built book to a room: ``python3 serve.py`` in the workshop bundle.

The standard library only, so it runs from the unpacked bundle on any machine
with Python 3.8 or newer and nothing installed. It differs from
``python3 -m http.server`` in three ways that matter in a room:

- the lab's files get the types browsers insist on (``.mjs`` as JavaScript,
  ``.wasm`` as WebAssembly), which older Pythons do not know;
- text and WebAssembly are sent gzip-compressed (compressed once, then kept),
  which cuts what each attendee downloads by about two thirds;
- it listens on every interface and prints the addresses to give the room.

The book's tests serve the built book with the same handler (tests/book_support.py).
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import mimetypes
import os
import socket
import sys
import threading

COMPRESSED = (".html", ".js", ".mjs", ".css", ".svg", ".json", ".txt", ".map", ".inv", ".wasm", ".ipynb")
TYPES = {".mjs": "text/javascript", ".wasm": "application/wasm", ".ipynb": "application/json",
         ".whl": "application/zip"}


class BookHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, with the lab's types and gzip for what compresses."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    quiet = True
    _cache: dict = {}
    _lock = threading.Lock()

    def log_message(self, format, *args):  # noqa: A002 - the http.server API's name
        if not self.quiet:
            super().log_message(format, *args)

    def guess_type(self, path):
        ext = os.path.splitext(path)[1].lower()
        return TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"

    def do_GET(self):  # noqa: N802 - the http.server API's name
        path = self.translate_path(self.path)
        if "gzip" in self.headers.get("Accept-Encoding", "") and os.path.isfile(path) \
                and path.endswith(COMPRESSED):
            body = self._compressed(path)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def _compressed(self, path: str) -> bytes:
        key = (path, os.stat(path).st_mtime_ns)
        with self._lock:
            body = self._cache.get(key)
        if body is None:
            with open(path, "rb") as fh:
                body = gzip.compress(fh.read(), compresslevel=6)
            with self._lock:
                self._cache[key] = body
        return body


def handler_for(root: str, quiet: bool = True):
    """A handler class serving ``root`` (with its own cache of compressed files)."""

    class Handler(BookHandler):
        _cache: dict = {}

        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

    Handler.quiet = quiet
    return Handler


def room_addresses() -> list:
    """This machine's addresses on the local network (no packet is sent)."""
    found = []
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect((probe, 1))
                addr = s.getsockname()[0]
            except OSError:
                continue
        if addr not in found and not addr.startswith("127."):
            found.append(addr)
    return found


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(prog="python3 serve.py", description="Serve the book to a room.")
    ap.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    ap.add_argument("--bind", default="0.0.0.0", help="the address to listen on (default: every interface)")
    ap.add_argument("--site", default=os.path.join(here, "site"), help="the built book (default: ./site)")
    ap.add_argument("--log", action="store_true", help="print each request")
    args = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(args.site, "index.html")):
        print(f"serve.py: no index.html in {args.site}: give the built book with --site", file=sys.stderr)
        return 2
    try:
        server = http.server.ThreadingHTTPServer((args.bind, args.port), handler_for(args.site, not args.log))
    except OSError as exc:
        print(f"serve.py: cannot listen on {args.bind}:{args.port} ({exc.strerror}); try --port 8080",
              file=sys.stderr)
        return 2
    server.daemon_threads = True
    port = server.server_address[1]
    print(f"Serving the book from {args.site}")
    print(f"  on this machine:  http://localhost:{port}/")
    for addr in room_addresses() if args.bind in ("0.0.0.0", "") else [args.bind]:
        print(f"  for the room:     http://{addr}:{port}/   (the lab: http://{addr}:{port}/book/lab.html)")
    print("Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
