"""The lab's Problems mode in a workshop room (mode-problems.js, room-tally.js), in Chromium.

Served by the room's server (vsockmodel/bookkit/roomserver) with the network
closed: a wrong first answer gets a hint and the direction but not the
answer, and the problem's settings stay closed; the second try shows the
answer and opens them. Each try reaches the room's tally, with the seed the
room gave the browser (its cookie); outside a room (no cookie) nothing is posted.
"""

from __future__ import annotations

import contextlib
import threading

import pytest

from book_support import ensure_book_built
from browser_support import chromium, offline_page
from vsockmodel.bookkit.roomserver.app import Room, RoomServer, make_handler
from vsockmodel.study import quiz

READY_MS = 180_000


@contextlib.contextmanager
def room_server(room: Room):
    server = RoomServer(("127.0.0.1", 0), make_handler(room))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _open_problem(page, base, chapter, seed):
    page.goto(f"{base}book/lab.html#mode=problems&qchapter={chapter}&qseed={seed}")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    page.wait_for_function("document.getElementById('vsock-lab').dataset.problem", timeout=READY_MS)


VERDICT = ".lab-panel[data-mode=problems] .lab-change"


@pytest.mark.browser
def test_a_wrong_answer_gets_a_hint_and_a_second_try_and_the_room_counts_both():
    site = ensure_book_built()
    room = Room(site=str(site))
    p = quiz.problem(3, 7)
    with room_server(room) as base, chromium() as browser:
        page, watch = offline_page(browser, base, viewport={"width": 1280, "height": 900})
        page.context.add_cookies([{"name": "vsock_seed", "value": "7", "url": base}])
        page.goto(f"{base}book/lab.html#mode=problems&qchapter=3")           # no seed in the address
        page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
        assert page.locator("#lab-qseed").input_value() == "7"               # the room's seed
        _open_problem(page, base, 3, 7)
        settings = page.get_by_role("button", name="Open its settings in the lab")
        assert settings.is_hidden()

        page.locator("#lab-qanswer").fill(str(p.answer * 10 + 1000))
        page.get_by_role("button", name="Check my answer").click()
        page.wait_for_function(f"document.querySelector('{VERDICT}').dataset.hint === 'true'", timeout=60_000)
        text = page.locator(VERDICT).text_content()
        assert "lower" in text and p.hint in text and p.answer_text not in text
        assert settings.is_hidden()

        page.locator("#lab-qanswer").fill(p.answer_text)
        page.get_by_role("button", name="Check my answer").click()
        page.wait_for_function(f"document.querySelector('{VERDICT}').dataset.correct === 'true'"
                               f" && !document.querySelector('{VERDICT}').dataset.hint", timeout=60_000)
        assert p.answer_text in page.locator(VERDICT).text_content()
        assert settings.is_visible()
        for _ in range(50):                                                   # the posts are fire-and-forget
            if sum(len(t) for _, _, t in room.tally.entries()) == 2:
                break
            page.wait_for_timeout(100)
        [(_, entry, tries)] = room.tally.entries()
        assert (entry.chapter, entry.seed, entry.kind, entry.answer) == (3, 7, p.kind, p.answer)
        assert [ok for _, ok, _ in tries] == [False, True]
        row = room.tally.summary()["problems"][0]
        assert (row["answered"], row["right_first"], row["right_second"]) == (1, 0, 1)
        assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
        page.context.close()


@pytest.mark.browser
def test_outside_a_room_the_lab_posts_nothing():
    site = ensure_book_built()
    room = Room(site=str(site))
    p = quiz.problem(1, 4)
    with room_server(room) as base, chromium() as browser:
        page, watch = offline_page(browser, base, viewport={"width": 1280, "height": 900})
        _open_problem(page, base, 1, 4)
        page.locator("#lab-qanswer").fill(p.answer_text)
        page.get_by_role("button", name="Check my answer").click()
        page.wait_for_function(f"document.querySelector('{VERDICT}').dataset.correct === 'true'", timeout=60_000)
        page.wait_for_timeout(500)
        assert room.tally.entries() == []
        assert not [u for u in watch.requests if "/tally/" in u]
        assert watch.errors == [], watch.errors
        page.context.close()
