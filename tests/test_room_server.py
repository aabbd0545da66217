"""The room's server (vsockmodel/bookkit/roomserver, the bundle's serve.py), on 127.0.0.1.

- Files: every response carries validators and caching headers, compressed or
  not; a conditional request gets a 304 with no body; a file is compressed
  once however many ask at once, and a ``.gz`` beside it is sent as it is; no
  folder is listed and nothing outside the site is served.
- The load test: twenty clients fetch the lab at once, twice; the second round
  moves almost nothing.
- The tally: twenty clients post answers at once and every one is counted;
  bad posts get one error naming the field; attendees and problems are capped;
  the instructor's pages and the answer keys need the instructor's link; the
  CSV is written only when asked.
- The room page: the address, the seed handed out, the presets in order, each
  a short link (a redirect, with the attendee's seed for a problem) and a QR
  code.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gzip
import http.client
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from book_support import REPO, ensure_book_built
from vsockmodel.bookkit import presets as presets_module
from vsockmodel.bookkit.roomserver import files
from vsockmodel.bookkit.roomserver.app import Room, RoomServer, make_handler
from vsockmodel.bookkit.roomserver.tally import Tally

CLIENTS = 20


@contextlib.contextmanager
def running(room: Room):
    server = RoomServer(("127.0.0.1", 0), make_handler(room))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def fetch(port, path, method="GET", headers=None, body=None):
    """(status, headers as a dict of lower-case names, body bytes as sent)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        res = conn.getresponse()
        data = res.read()
        headers = {}
        for k, v in res.getheaders():                 # Set-Cookie may come twice: one line each
            headers[k.lower()] = headers[k.lower()] + "\n" + v if k.lower() in headers else v
        return res.status, headers, data
    finally:
        conn.close()


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    (root / "book").mkdir(parents=True)
    (root / "index.html").write_text("<!DOCTYPE html><title>book</title>" + "text " * 2000)
    (root / "book" / "lab.html").write_text("<!DOCTYPE html><title>lab</title>" + "lab " * 2000)
    (root / "big.wasm").write_bytes(bytes(range(256)) * 20000 + b"\0" * 3_000_000)
    (root / "pic.png").write_bytes(b"\x89PNG" + os.urandom(5000))
    (root / "folder").mkdir()
    (root / "folder" / "a.txt").write_text("a")
    (tmp_path / "secret.txt").write_text("outside")
    return root


# ---- files ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, gz", [("/index.html", True), ("/index.html", False), ("/big.wasm", True),
                                      ("/pic.png", True), ("/book/lab.html", True)])
def test_every_file_response_has_validators_and_caching_headers_and_a_304_when_asked_again(site, path, gz):
    headers = {"Accept-Encoding": "gzip"} if gz else {}
    with running(Room(site=str(site))) as port:
        status, h, body = fetch(port, path, headers=headers)
        assert status == 200
        assert h["etag"] and h["last-modified"] and h["cache-control"], h
        assert h["vary"] == "Accept-Encoding"
        if gz and not path.endswith(".png"):
            assert h["content-encoding"] == "gzip" and len(body) < (site / path[1:]).stat().st_size
        else:
            assert "content-encoding" not in h and body == (site / path[1:]).read_bytes()
        assert h["cache-control"] == ("no-cache" if path.endswith(".html") else files.ASSET_CACHE)
        again = fetch(port, path, headers={**headers, "If-None-Match": h["etag"]})
        assert again[0] == 304 and again[2] == b"" and again[1]["etag"] == h["etag"]
        since = fetch(port, path, headers={**headers, "If-Modified-Since": h["last-modified"]})
        assert since[0] == 304 and since[2] == b""
        stale = fetch(port, path, headers={**headers, "If-None-Match": '"other"'})
        assert stale[0] == 200 and len(stale[2]) == len(body)


def test_the_compressed_and_the_plain_file_have_different_etags(site):
    with running(Room(site=str(site))) as port:
        plain = fetch(port, "/big.wasm")[1]["etag"]
        packed = fetch(port, "/big.wasm", headers={"Accept-Encoding": "gzip"})[1]["etag"]
        assert plain != packed
        assert fetch(port, "/big.wasm", headers={"If-None-Match": packed})[0] == 200


def test_a_head_request_sends_the_headers_and_no_body(site):
    with running(Room(site=str(site))) as port:
        status, h, body = fetch(port, "/index.html", method="HEAD", headers={"Accept-Encoding": "gzip"})
        assert status == 200 and body == b"" and int(h["content-length"]) > 0 and h["etag"]


def test_a_file_is_compressed_once_however_many_ask_at_the_same_time(site):
    room = Room(site=str(site))
    with running(room) as port:
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            bodies = list(pool.map(lambda _: fetch(port, "/big.wasm", headers={"Accept-Encoding": "gzip"})[2],
                                   range(CLIENTS)))
    assert room.cache.compressions == 1
    assert all(gzip.decompress(b) == (site / "big.wasm").read_bytes() for b in bodies)


def test_a_gz_beside_the_file_is_sent_as_it_is(site):
    data = (site / "big.wasm").read_bytes()
    (site / "big.wasm.gz").write_bytes(gzip.compress(data, 9))
    room = Room(site=str(site))
    with running(room) as port:
        status, h, body = fetch(port, "/big.wasm", headers={"Accept-Encoding": "gzip"})
    assert status == 200 and body == (site / "big.wasm.gz").read_bytes() and h["content-encoding"] == "gzip"
    assert room.cache.compressions == 0


def test_an_old_gz_beside_a_newer_file_is_not_sent(site):
    (site / "index.html.gz").write_bytes(gzip.compress(b"old"))
    os.utime(site / "index.html.gz", (1, 1))
    with running(Room(site=str(site))) as port:
        body = fetch(port, "/index.html", headers={"Accept-Encoding": "gzip"})[2]
    assert gzip.decompress(body) == (site / "index.html").read_bytes()


def test_no_folder_is_listed_and_nothing_outside_the_site_or_hidden_is_served(site):
    (site / ".secret").write_text("hidden")
    with running(Room(site=str(site))) as port:
        assert fetch(port, "/folder/")[0] == 404
        assert fetch(port, "/folder")[0] == 302
        for bad in ("/../secret.txt", "/%2e%2e/secret.txt", "/folder/../../secret.txt", "/.secret"):
            status, _, body = fetch(port, bad)
            assert status == 404 and b"outside" not in body and b"hidden" not in body, bad


def test_the_lab_fetched_by_twenty_clients_twice_moves_almost_nothing_the_second_time():
    """The load test of issue 39: each client fetches the lab's page, runtime and
    wheels as a browser does (gzip); the second round asks with the validators
    of the first, as a browser's cache does."""
    html = ensure_book_built()
    lab = ["book/lab.html"] + sorted(
        str(p.relative_to(html)) for folder in ("_static/vendor/pyodide", "_static/vendor/vega", "_static/lab")
        for p in (html / folder).rglob("*") if p.is_file() and not p.name.endswith(".gz"))
    room = Room(site=str(html))

    def client(validators):
        moved, seen = 0, {}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for path in lab:
            headers = {"Accept-Encoding": "gzip, deflate"}
            if validators:
                headers["If-None-Match"] = validators[path]
            conn.request("GET", "/" + path, headers=headers)
            res = conn.getresponse()
            body = res.read()
            assert res.status == (304 if validators else 200), (path, res.status)
            moved += len(body) + sum(len(k) + len(v) + 4 for k, v in res.getheaders())
            seen[path] = res.getheader("ETag")
        conn.close()
        return moved, seen

    with running(room) as port:
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            first = list(pool.map(lambda _: client(None), range(CLIENTS)))
            second = list(pool.map(lambda i: client(first[i][1]), range(CLIENTS)))
    first_bytes = sum(m for m, _ in first)
    second_bytes = sum(m for m, _ in second)
    print(f"lab: {len(lab)} files; first round {first_bytes / 1e6:.1f} MB, second {second_bytes / 1e3:.0f} kB")
    assert first_bytes > CLIENTS * 3e6                    # the runtime came, compressed
    assert second_bytes < 0.01 * first_bytes              # then only headers
    assert room.cache.compressions <= len(lab)            # each file at most once, for 20 clients


# ---- the tally -------------------------------------------------------------------------------

def _answer(seed=1, chapter=3, given=42.0, correct=True, **kw):
    return {"chapter": chapter, "seed": seed, "kind": "the series' gain", "given": given, "correct": correct,
            "answer": 40.0, "tolerance": 8.0, "unit": "%", **kw}


def post(port, payload, cookie=None):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    status, h, data = fetch(port, "/tally/answer", "POST", headers, body)
    return status, h, json.loads(data)


def _instructor_cookie(port, room):
    status, h, _ = fetch(port, f"/instructor/{room.instructor_key}")
    assert status == 302 and h["location"] == "/instructor/"
    return h["set-cookie"].split(";")[0]


def test_twenty_attendees_answering_at_once_are_all_counted_and_shown_live(site):
    room = Room(site=str(site), presets={})
    with running(room) as port:
        def attendee(i):
            first = post(port, _answer(seed=i, given=10.0 if i % 2 else 41.0, correct=not i % 2))
            cookie = first[1]["set-cookie"].split(";")[0]
            assert first[0] == 200 and first[2]["counted"], first
            if i % 2:                                # wrong: a second try, right
                second = post(port, _answer(seed=i, given=40.0), cookie)
                assert second[2] == {"ok": True, "counted": True, "tries": 2}
            third = post(port, _answer(seed=i, given=0.0, correct=False), cookie)
            assert third[2]["counted"] is False      # settled: no more tries counted
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            list(pool.map(attendee, range(1, CLIENTS + 1)))
        assert fetch(port, "/instructor/tally.json")[0] == 404       # not without the instructor's link
        cookie = _instructor_cookie(port, room)
        status, _, data = fetch(port, "/instructor/tally.json", headers={"Cookie": cookie})
        summary = json.loads(data)
        assert summary["attendees"] == CLIENTS
        [row] = summary["problems"]
        assert (row["chapter"], row["kind"], row["answered"]) == (3, "the series' gain", CLIENTS)
        assert (row["right_first"], row["right_second"]) == (CLIENTS // 2, CLIENTS // 2)
        assert row["spread"] == {"right": CLIENTS}
        page = fetch(port, "/instructor/tally", headers={"Cookie": cookie})[2].decode()
        assert "/instructor/tally.json" in page and "setInterval(refresh" in page


def test_the_spread_tells_near_from_far_answers():
    t = Tally()
    for who, given in (("a", 45.0), ("b", 30.0), ("c", 200.0), ("d", 5.0), ("e", 40.0)):
        t.record(who, _answer(given=given, correct=given == 40.0))
    [row] = t.summary()["problems"]
    assert row["spread"] == {"high": 1, "low": 1, "far high": 1, "far low": 1, "right": 1}


@pytest.mark.parametrize("payload, param", [
    (_answer(chapter=9), "chapter"), (_answer(seed=-1), "seed"), (_answer(seed=2**31), "seed"),
    (_answer(seed="x"), "seed"), (_answer(kind=""), "kind"), (_answer(kind="k" * 81), "kind"),
    (_answer(given=None), "given"), (_answer(correct="yes"), "correct"), (_answer(tolerance=-1), "tolerance"),
    ([1, 2], "answer"), (b"{not json", "body"), (b"\xff\xfe", "body"),
])
def test_a_bad_post_is_one_error_naming_the_field(site, payload, param):
    with running(Room(site=str(site))) as port:
        status, _, res = post(port, payload)
    assert status == 400 and res["ok"] is False and res["param"] == param, res
    assert res["message"].startswith(param + ":")


def test_a_post_too_large_is_refused_before_it_is_read(site):
    with running(Room(site=str(site))) as port:
        status, _, res = post(port, b"{" + b" " * 5000 + b"}")
    assert status == 413 and res["param"] == "body" and "allowed [1, 4096]" in res["message"]


def test_attendees_and_problems_are_capped():
    t = Tally(max_attendees=2, max_problems=2)
    t.record("a", _answer(seed=1))
    t.record("a", _answer(seed=2))
    with pytest.raises(ValueError, match="seed: at most 2 problems per attendee"):
        t.record("a", _answer(seed=3))
    t.record("b", _answer())
    with pytest.raises(ValueError, match="attendee: the tally is full: at most 2 attendees"):
        t.record("c", _answer())


def test_the_csv_is_written_only_when_asked(tmp_path, site):
    bundle = tmp_path / "bundle"
    (bundle / "site").mkdir(parents=True)
    for f in site.iterdir():
        if f.is_file():
            (bundle / "site" / f.name).write_bytes(f.read_bytes())
    serve = REPO / "vsockmodel" / "bookkit" / "serve.py"
    csv_file = tmp_path / "room.csv"
    for extra in ([], ["--tally-csv", str(csv_file)]):
        proc = subprocess.Popen([sys.executable, "-m", "vsockmodel.bookkit.serve", "--port", "0",
                                 "--site", str(bundle / "site"), *extra], cwd=bundle,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            port = None
            for line in proc.stdout:
                m = re.search(r"on this machine:\s+http://localhost:(\d+)/", line)
                if m:
                    port = int(m.group(1))
                    break
            assert port and post(port, _answer())[0] == 200
        finally:
            proc.send_signal(2)                  # Ctrl-C
            proc.wait(timeout=20)
    assert serve.is_file()
    assert sorted(p.name for p in bundle.iterdir()) == ["site"]          # nothing written unasked
    rows = csv_file.read_text().splitlines()
    assert rows[0].startswith("attendee,chapter,seed,kind") and len(rows) == 2 and ",3,1,the series' gain," in rows[1]


def test_the_server_listens_on_this_machine_only_unless_told(site):
    from vsockmodel.bookkit.roomserver import cli

    args = cli._parser().parse_args([])
    assert args.bind == "127.0.0.1" and not args.room
    with pytest.raises(SystemExit):
        cli._parser().parse_args(["--port", "70000"])
    with pytest.raises(SystemExit):
        cli._parser().parse_args(["--room", "--bind", "0.0.0.0"])


def test_bad_options_are_one_error_naming_the_option_and_its_range(capsys):
    from vsockmodel.bookkit.roomserver import cli

    for argv, text in ((["--port", "70000"], "port: 70000 is out of range; allowed [0, 65535]"),
                       (["--seeds", "0"], "seeds: 0 is out of range; allowed [1, 1000]"),
                       (["--port", "x"], "port: 'x' is not a whole number; allowed [0, 65535]")):
        with pytest.raises(SystemExit):
            cli._parser().parse_args(argv)
        assert text in capsys.readouterr().err


# ---- the room page and the instructor's files ---------------------------------------------------

PRESETS = {"90 minutes": [
    {"n": 1, "minutes": "0–5", "block": "The question", "title": "sweep p1-p5",
     "address": "/book/lab.html#variant=p1-p5&mode=sweep", "problems": False},
    {"n": 2, "minutes": "15–20", "block": "Chapter 1", "title": "ch. 1, packets per write",
     "address": "/book/lab.html#mode=problems&qchapter=1&qseed=3", "problems": True}],
    "3 hours": [{"n": 1, "minutes": "5–10", "block": "The question", "title": "sweep",
                 "address": "/book/lab.html#mode=sweep", "problems": False}]}


def test_the_room_page_gives_the_address_a_seed_and_each_preset_as_a_short_link_and_a_qr_code(site):
    room = Room(site=str(site), presets=PRESETS, agenda="90 minutes", address="http://192.0.2.7:8000")
    with running(room) as port:
        status, h, body = fetch(port, "/")                         # Host: 127.0.0.1 -> the room's address
        page = body.decode()
        assert status == 200 and "192.0.2.7:8000/" in page
        assert re.search(r"vsock_seed=1;", h["set-cookie"])
        assert page.count('<svg role="img"') == 1 + len(PRESETS["90 minutes"])
        assert '<a href="/room?agenda=180">3 hours</a>' in page and "/p/1?agenda" not in page
        assert "192.0.2.7:8000/p/1" in page and "192.0.2.7:8000/p/2" in page
        second = fetch(port, "/room", headers={"Host": "198.51.100.4:8000"})
        assert "198.51.100.4:8000/p/2" in second[2].decode()
        assert re.search(r"vsock_seed=2;", second[1]["set-cookie"])     # seeds handed out in turn
        status, h, _ = fetch(port, "/p/2", headers={"Cookie": "vsock_seed=17"})
        assert status == 302 and h["location"] == "/book/lab.html?preset=2#mode=problems&qchapter=1&qseed=17"
        status, h, _ = fetch(port, "/p/1", headers={"Cookie": "vsock_seed=17"})
        assert h["location"] == "/book/lab.html?preset=1#variant=p1-p5&mode=sweep"
        assert fetch(port, "/p/3")[0] == 404 and fetch(port, "/p/x")[0] == 404
        other = fetch(port, "/room?agenda=180")[2].decode()           # the other agenda: its links say so
        assert "/p/1?agenda=180" in other and '<a href="/room?agenda=90">90 minutes</a>' in other
        assert fetch(port, "/p/1?agenda=180")[1]["location"] == "/book/lab.html?preset=1#mode=sweep"
        assert fetch(port, "/book/lab.html?preset=2")[0] == 200


def test_the_answer_keys_are_served_only_to_the_instructors_browser(site, tmp_path):
    private = tmp_path / "instructor"
    (private / "book" / "instructor").mkdir(parents=True)
    (private / "book" / "instructor" / "answer-keys.html").write_text("the keys")
    room = Room(site=str(site), private=str(private))
    with running(room) as port:
        assert fetch(port, "/book/instructor/answer-keys.html")[0] == 404
        assert fetch(port, "/instructor/")[0] == 404
        assert fetch(port, "/instructor/wrong-key")[0] == 404
        cookie = _instructor_cookie(port, room)
        status, _, body = fetch(port, "/book/instructor/answer-keys.html", headers={"Cookie": cookie})
        assert status == 200 and body == b"the keys"
        assert b"answer-keys.html" in fetch(port, "/instructor/", headers={"Cookie": cookie})[2]


def test_the_presets_are_the_agendas_lab_links_in_order():
    found = presets_module.presets()
    assert set(found) == {"90 minutes", "3 hours"}
    text = presets_module.AGENDAS.read_text(encoding="utf-8")
    for name, key in (("90 minutes", "90-minute"), ("3 hours", "3-hour")):
        section = re.search(rf"^## [^\n]*{key}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S).group(1)
        links = re.findall(r'href="\.\./lab\.html(#[^"]*)"', section)
        assert [p["address"] for p in found[name]] == ["/book/lab.html" + l.replace("&amp;", "&") for l in links]
        assert [p["n"] for p in found[name]] == list(range(1, len(links) + 1))
        assert all(p["title"] and p["minutes"] and p["block"] for p in found[name])
        assert any(p["problems"] for p in found[name])
