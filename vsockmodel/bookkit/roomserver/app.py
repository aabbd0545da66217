"""The room's server: the book's files, the room page, short links, the tally.

What answers which address:

- ``/`` and ``/room``: the room page (when the server has the agendas' presets);
- ``/p/N``: a redirect to preset N of the agenda, a problem's preset with the
  attendee's seed (a cookie the room page or the first short link sets);
- ``POST /tally/answer``: one try at a seeded problem, from the lab;
- ``/instructor/KEY``: the link the server prints at start; it gives this
  browser the instructor's cookie, which ``/instructor/`` (the tally, live,
  and its CSV) and the answer keys need;
- ``/local/NAME``: the command line's wheels;
- anything else: the built book's files (``files.py``: compressed once,
  validators and caching headers, 304 for what a browser already has). No
  folder is ever listed.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import hashlib
import hmac
import http.cookies
import http.server
import itertools
import json
import os
import posixpath
import re
import secrets
import shutil
import sys
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Optional

from . import files, instructor, room
from .tally import Tally, TallyError

MAX_BODY = 4096                 # a tally post is a few hundred bytes
#: The agendas by their length in minutes, as ?agenda= and --agenda name them.
AGENDAS = {"90": "90 minutes", "180": "3 hours"}
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")
_LOOPBACK = re.compile(r"^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$")


@dataclass
class Room:
    """What one server serves, beside the book's files."""

    site: str
    private: Optional[str] = None          # the instructor's files (answer keys), same layout as site/
    local: Optional[str] = None            # the command line's wheels, served under /local/
    presets: dict = field(default_factory=dict)     # agenda name -> presets (bookkit.presets)
    agenda: str = ""
    seeds: int = 30                        # the room's seeds, handed out 1, 2, ... seeds, 1, ...
    address: str = ""                      # http://host:port the room reaches, for the room page's codes
    instructor_key: str = field(default_factory=lambda: secrets.token_urlsafe(9))
    version: str = ""
    tally: Tally = field(default_factory=Tally)
    cache: files.CompressedCache = field(default_factory=files.CompressedCache)
    _next_seed: itertools.count = field(default_factory=lambda: itertools.count(0))
    _seed_lock: threading.Lock = field(default_factory=threading.Lock)

    def next_seed(self) -> int:
        with self._seed_lock:
            return next(self._next_seed) % self.seeds + 1

    def wheels(self) -> list:
        if not self.local or not os.path.isdir(self.local):
            return []
        return sorted(n for n in os.listdir(self.local) if n.endswith(".whl"))


def _inside(root: Optional[str], url_path: str) -> Optional[str]:
    """The file ``url_path`` names under ``root``, or None (nothing outside root, no dot-files)."""
    if not root:
        return None
    parts = [p for p in posixpath.normpath(urllib.parse.unquote(url_path)).split("/") if p]
    if any(p.startswith(".") or os.sep in p or (os.altsep and os.altsep in p) for p in parts):
        return None
    return os.path.join(root, *parts)


class RoomHandler(http.server.SimpleHTTPRequestHandler):
    room: Room
    quiet = True
    server_version = "vsock-room"
    sys_version = ""

    # ------------------------------------------------------------ plumbing
    def log_message(self, format, *args):  # noqa: A002 - the http.server API's name
        if not self.quiet:
            super().log_message(format, *args)

    def _cookies(self) -> http.cookies.SimpleCookie:
        jar = http.cookies.SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except http.cookies.CookieError:
            pass
        return jar

    def _cookie(self, name: str) -> Optional[str]:
        morsel = self._cookies().get(name)
        return morsel.value if morsel is not None else None

    def _is_instructor(self) -> bool:
        given = self._cookie("vsock_instructor") or ""
        return hmac.compare_digest(given.encode(), self.room.instructor_key.encode())

    def _send(self, status: int, body: bytes, kind: str, cache: str = "no-store", extra: Optional[dict] = None):
        """A generated response, with an ETag so a repeated GET may get a 304."""
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        if status == 200 and self.headers.get("If-None-Match", "") == etag:
            status, body = 304, b""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", cache)
        self.send_header("ETag", etag)
        for k, v in (extra or {}).items():
            for value in v if isinstance(v, list) else [v]:
                self.send_header(k, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status != 304:
            self.wfile.write(body)

    def _html(self, text: str, cache: str = "no-store", extra: Optional[dict] = None):
        self._send(200, text.encode(), "text/html; charset=utf-8", cache, extra)

    def _json(self, status: int, value, extra: Optional[dict] = None):
        self._send(status, json.dumps(value).encode(), "application/json", "no-store", extra)

    def _redirect(self, where: str, extra: Optional[dict] = None):
        self.send_response(302)
        self.send_header("Location", where)
        self.send_header("Cache-Control", "no-store")
        for k, v in (extra or {}).items():
            for value in v if isinstance(v, list) else [v]:
                self.send_header(k, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _not_found(self):
        self._send(404, b"<!DOCTYPE html><title>Not found</title><p>Nothing here. <a href=\"/\">The room page</a></p>",
                   "text/html; charset=utf-8", "no-store")

    # ------------------------------------------------------------ the room
    def _base(self) -> str:
        """The address the room reaches this server at, for the room page and its codes."""
        host = self.headers.get("Host", "")
        if self.room.address and (not host or _LOOPBACK.match(host) or not _HOST.match(host)):
            return self.room.address
        if host and _HOST.match(host):
            return "http://" + host
        return self.room.address or "http://localhost:%d" % self.server.server_address[1]

    def _seed_cookie(self) -> tuple:
        """The attendee's seed, and a Set-Cookie when the server just gave one."""
        given = self._cookie("vsock_seed")
        if given and given.isdigit() and len(given) <= 9:
            return int(given), []
        seed = self.room.next_seed()
        return seed, [f"vsock_seed={seed}; Path=/; Max-Age=86400; SameSite=Lax"]

    def _attendee_cookie(self) -> tuple:
        given = self._cookie("vsock_attendee")
        if given and re.fullmatch(r"[A-Za-z0-9_-]{8,32}", given):
            return given, []
        new = secrets.token_urlsafe(12)
        return new, [f"vsock_attendee={new}; Path=/; Max-Age=86400; SameSite=Lax; HttpOnly"]

    def _agenda(self, query: dict) -> str:
        """The agenda a ?agenda=90 or 180 names, else the server's."""
        asked = AGENDAS.get(query.get("agenda", [""])[0], "")
        return asked if asked in self.room.presets else self.room.agenda

    def _room_page(self, query: dict):
        agenda = self._agenda(query)
        seed, cookies = self._seed_cookie()
        _, more = self._attendee_cookie()
        page = room.render(self._base(), seed, agenda, self.room.presets[agenda],
                           {k: a for k, a in AGENDAS.items() if a in self.room.presets},
                           self.room.wheels(), version=self.room.version, default=self.room.agenda)
        self._html(page, cache="no-cache", extra={"Set-Cookie": cookies + more})

    def _preset(self, n: str, query: dict):
        presets = self.room.presets.get(self._agenda(query), [])
        if not n.isdigit() or not 1 <= int(n) <= len(presets):
            self._not_found()
            return
        p = presets[int(n) - 1]
        seed, cookies = self._seed_cookie()
        address = p["address"]
        if p["problems"]:
            address = re.sub(r"([#&])qseed=\d+", rf"\g<1>qseed={seed}", address)
        # ?preset=N makes each preset its own address, so that a lab already open
        # in the tab loads it afresh instead of only changing its fragment.
        path, _, frag = address.partition("#")
        self._redirect(f"{path}?preset={n}#{frag}", extra={"Set-Cookie": cookies})

    # ------------------------------------------------------------ the instructor
    def _instructor(self, rest: str):
        if rest and rest != "/" and "/" not in rest.strip("/") and rest.strip("/") not in (
                "tally", "tally.json", "tally.csv"):
            if hmac.compare_digest(rest.strip("/").encode(), self.room.instructor_key.encode()):
                self._redirect("/instructor/", extra={"Set-Cookie": (
                    f"vsock_instructor={self.room.instructor_key}; Path=/; SameSite=Strict; HttpOnly")})
                return
        if not self._is_instructor():
            self._not_found()
            return
        what = rest.strip("/")
        if what == "":
            note = ("The server also writes it to " + os.path.basename(self.server.tally_csv)
                    + " when it stops.") if getattr(self.server, "tally_csv", None) else \
                "Nothing is kept after the server stops."
            self._html(instructor.home(bool(self.room.private), note))
        elif what == "tally":
            self._html(instructor.tally_page())
        elif what == "tally.json":
            self._json(200, self.room.tally.summary())
        elif what == "tally.csv":
            self._send(200, self.room.tally.csv().encode(), "text/csv; charset=utf-8", "no-store",
                       {"Content-Disposition": 'attachment; filename="tally.csv"'})
        else:
            self._not_found()

    # ------------------------------------------------------------ files
    def _file(self, url_path: str):
        target = None
        if self.room.private and self._is_instructor():
            private = _inside(self.room.private, url_path)
            if private and os.path.isfile(private):
                target = private
        if target is None:
            target = _inside(self.room.site, url_path)
        if target is None:
            self._not_found()
            return
        if os.path.isdir(target):
            if not url_path.endswith("/"):
                self._redirect(url_path + "/")
                return
            target = os.path.join(target, "index.html")
        if not os.path.isfile(target):
            self._not_found()
            return
        self._send_file(target)

    def _send_file(self, path: str):
        rep = files.representation(path, self.headers.get("Accept-Encoding", ""), self.room.cache)
        fresh = files.not_modified(rep, self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since"))
        self.send_response(304 if fresh else 200)
        self.send_header("ETag", rep.etag)
        self.send_header("Last-Modified", rep.last_modified)
        self.send_header("Cache-Control", rep.cache_control)
        self.send_header("Vary", "Accept-Encoding")
        if fresh:
            self.end_headers()
            return
        self.send_header("Content-Type", rep.content_type)
        if rep.encoding:
            self.send_header("Content-Encoding", rep.encoding)
        self.send_header("Content-Length", str(rep.length))
        self.end_headers()
        if self.command == "HEAD":
            return
        if rep.body is not None:
            self.wfile.write(rep.body)
        else:
            with open(rep.path, "rb") as fh:
                shutil.copyfileobj(fh, self.wfile, 256 * 1024)

    # ------------------------------------------------------------ methods
    def do_GET(self):  # noqa: N802 - the http.server API's name
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if self.room.presets and path in ("/", "/room", "/room/"):
            self._room_page(query)
        elif self.room.presets and path.startswith("/p/"):
            self._preset(path[3:].strip("/"), query)
        elif path == "/instructor" or path.startswith("/instructor/"):
            self._instructor(path[len("/instructor"):])
        elif path.startswith("/local/") and self.room.local:
            target = _inside(self.room.local, path[len("/local/"):])
            if target and os.path.isfile(target):
                self._send_file(target)
            else:
                self._not_found()
        else:
            self._file(path)

    def do_HEAD(self):  # noqa: N802
        self.do_GET()

    def do_POST(self):  # noqa: N802
        if urllib.parse.urlsplit(self.path).path != "/tally/answer":
            self._json(404, {"ok": False, "param": None, "message": "no such address"})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._json(411, {"ok": False, "param": "Content-Length", "message": "Content-Length is required"})
            return
        if not 0 < length <= MAX_BODY:
            self._json(413, {"ok": False, "param": "body",
                             "message": f"body: {length} bytes is out of range; allowed [1, {MAX_BODY}]"})
            return
        raw = self.rfile.read(length)
        attendee, cookies = self._attendee_cookie()
        try:
            payload = json.loads(raw.decode("utf-8"))
            counted = self.room.tally.record(attendee, payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            self._json(400, {"ok": False, "param": "body", "message": "body: expected a JSON object"})
            return
        except TallyError as exc:
            self._json(exc.status, {"ok": False, "param": exc.param, "message": str(exc)})
            return
        self._json(200, {"ok": True, **counted}, extra={"Set-Cookie": cookies})


class RoomServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # A room's laptops connect at once: the default backlog of 5 resets some.
    request_queue_size = 128
    tally_csv: Optional[str] = None

    def handle_error(self, request, client_address):
        # A browser that closes a page mid-response (moving on) is no error.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def make_handler(room_: Room, quiet: bool = True):
    """A handler class serving ``room_``."""

    class Handler(RoomHandler):
        room = room_

        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=room_.site, **kwargs)

    Handler.quiet = quiet
    return Handler


def handler_for(root: str, quiet: bool = True):
    """A handler serving only the built book at ``root`` (the book's tests use it)."""
    return make_handler(Room(site=str(root)), quiet)
