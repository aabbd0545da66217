"""The workshop's dry run: the bundle as the room will see it, checked step by step.

``scripts/workshop-dry-run [ARCHIVE]`` (``python -m vsockmodel.bookkit.dryrun``)
unpacks the bundle into a temporary folder, serves it with its own
``serve.py`` (Python with no site-packages: the standard library only), and
drives headless Chromium with every request outside the server refused:

1. the room page, and its "lab ready?" check;
2. every preset of both agendas, through its short link (``/p/N``): the lab
   opens at the preset and gets ready; a problem's preset shows the
   problem of the browser's seed, which is answered with the model's
   answer (computed here, by ``vsockmodel.study.quiz``) and must be marked right;
3. every deck of slides: reveal.js starts and every image loads;
4. every other link of the agendas page (chapter sections, pages, decks).

Each step prints its time. A step fails on a console error, a request that
left the server, or a check that does not hold; the run goes on and exits 1
when any step failed, naming each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qsl, urljoin, urlsplit

from .. import __version__

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
READY_MS = 180_000
_BROWSER: list = []             # the dry run's one browser page, for _step


@dataclass
class Step:
    name: str
    seconds: float = 0.0
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@contextlib.contextmanager
def unpacked(archive: Path):
    with tempfile.TemporaryDirectory(prefix="vsock-dry-run-") as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        [top] = Path(tmp).iterdir()
        yield top


@contextlib.contextmanager
def served(bundle: Path):
    """The bundle's own server on 127.0.0.1; yields its base address."""
    proc = subprocess.Popen([sys.executable, "-I", "-S", "serve.py", "--port", "0"], cwd=bundle,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        for line in proc.stdout:
            m = re.search(r"on this machine:\s+(http://localhost:\d+/)", line)
            if m:
                base = m.group(1).replace("localhost", "127.0.0.1")
                break
        if base is None:
            raise SystemExit("dry run: serve.py printed no address")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Browser:
    """One Chromium page whose requests outside the server are refused and recorded."""

    def __init__(self, browser, base: str):
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.page = self.context.new_page()
        self.errors: list = []
        self.external: list = []
        # A failed resource is reported by its response (with its address), not by the console's line.
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     and not m.text.startswith("Failed to load resource") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("response", lambda r: self.errors.append(f"HTTP {r.status} for {r.url}")
                     if r.status >= 400 else None)
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.base) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def drain(self) -> list:
        """What went wrong since the last call: console errors and requests that left."""
        found = [f"console: {e}" for e in self.errors] + [f"request outside: {u}" for u in self.external]
        self.errors.clear()
        self.external.clear()
        return found


def _wait(b: "Browser", condition: str, timeout_ms: int = READY_MS) -> None:
    """Wait until ``condition`` (JavaScript) holds, or fail at once when the page reports an error."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not b.page.evaluate(f"() => !!({condition})"):
        if b.errors:
            raise RuntimeError(f"the page failed while waiting for {condition}: {b.errors[0]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{condition} did not hold within {timeout_ms / 1000:.0f} s")
        b.page.wait_for_timeout(250)


def _step(name: str, steps: list, fn) -> Step:
    step = Step(name)
    b = _BROWSER[0] if _BROWSER else None
    if b is not None:
        b.drain()                                  # what an earlier step left behind is that step's
    t0 = time.perf_counter()
    try:
        fn(step)
    except Exception as exc:                       # a step's failure is reported, the run goes on
        step.problems.append(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    step.seconds = time.perf_counter() - t0
    steps.append(step)
    mark = "ok  " if step.ok else "FAIL"
    print(f"  {mark} {step.seconds:6.1f} s  {name}" + "".join(f"\n         {p}" for p in step.problems),
          flush=True)
    return step


def _room(b: Browser, step: Step) -> None:
    b.page.goto(b.base)
    b.page.get_by_role("button", name="Check the lab").click()
    _wait(b, "['ok', 'failed'].includes(document.getElementById('room-lab-status').dataset.state)")
    status = b.page.locator("#room-lab-status")
    if status.get_attribute("data-state") != "ok":
        step.problems.append(status.inner_text())
    step.problems += b.drain()


def _preset(b: Browser, step: Step, n: int, agenda: str, preset: dict) -> None:
    from ..study import quiz

    b.page.goto(urljoin(b.base, f"p/{n}?agenda={agenda}"))
    _wait(b, "window.vsockLab && window.vsockLab.ready()")
    if preset["problems"]:
        state = dict(parse_qsl(urlsplit(b.page.url).fragment))
        expected = quiz.problem(state["qchapter"], state["qseed"])
        _wait(b, "document.getElementById('vsock-lab').dataset.problem")
        shown = json.loads(b.page.evaluate("document.getElementById('vsock-lab').dataset.problem"))
        if shown["question"] != expected.question:
            step.problems.append(f"the lab shows another problem than seed {state['qseed']}'s")
        b.page.locator("#lab-qanswer").fill(expected.answer_text)
        b.page.get_by_role("button", name="Check my answer").click()
        _wait(b, "document.querySelector('.lab-change[role=status]').dataset.correct")
        verdict = b.page.evaluate("document.querySelector('.lab-change[role=status]').dataset.correct")
        if verdict != "true":
            step.problems.append(f"the model's answer {expected.answer_text} was not marked right")
    step.problems += b.drain()


def _deck(b: Browser, step: Step, href: str) -> None:
    b.page.goto(urljoin(b.base, href))
    _wait(b, "window.Reveal && Reveal.isReady()", 60_000)
    _wait(b, "[...document.images].every(i => i.complete)", 60_000)
    broken = b.page.evaluate("[...document.images].filter(i => !i.naturalWidth).map(i => i.src.slice(0, 80))")
    step.problems += [f"image does not load: {src}" for src in broken]
    step.problems += b.drain()


def _link(b: Browser, step: Step, url: str) -> None:
    same_page = b.page.url.split("#")[0] == url.split("#")[0]
    response = b.page.goto(url)
    if response is None and not same_page:            # an anchor of the page open already has no response
        step.problems.append("no response")
    elif response is not None and response.status >= 400:
        step.problems.append(f"HTTP {response.status}")
    frag = urlsplit(url).fragment
    if frag and not b.page.evaluate("(id) => !!document.getElementById(id)", frag):
        step.problems.append(f"no #{frag} on the page")
    step.problems += b.drain()


def agenda_links(b: Browser) -> list:
    """The agendas page's links that are not lab presets: chapter sections, pages, decks."""
    page = urljoin(b.base, "book/instructor/agendas.html")
    b.page.goto(page)
    hrefs = b.page.eval_on_selector_all("article a[href]", "as => as.map(a => a.href)")
    seen, out = set(), []
    for h in hrefs:
        if not h.startswith(b.base) or "lab.html" in h or h.split("#")[0] == page or h in seen:
            continue
        seen.add(h)
        out.append(h)
    b.drain()
    return out


def dry_run(bundle: Path, agendas: Optional[list] = None) -> list:
    """Every step on the unpacked ``bundle``; returns the steps."""
    from playwright.sync_api import sync_playwright

    meta = json.loads((bundle / "room" / "room.json").read_text(encoding="utf-8"))
    names = {"90": "90 minutes", "180": "3 hours"}
    chosen = [names[a] for a in agendas] if agendas else list(meta["presets"])
    steps: list = []
    with served(bundle) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            b = Browser(browser, base)
            _BROWSER[:] = [b]
            print(f"Dry run of {bundle.name}, served at {base}", flush=True)
            _step("the room page and its lab check", steps, lambda s: _room(b, s))
            done = set()
            for name in chosen:
                key = {v: k for k, v in names.items()}[name]
                for p in meta["presets"][name]:
                    if (p["address"], p["problems"]) in done:
                        continue                       # the other agenda's same preset: opened once
                    done.add((p["address"], p["problems"]))
                    label = f"preset {p['n']} of {name} ({p['minutes']}): {p['title']}"
                    _step(label, steps, lambda s, p=p, key=key: _preset(b, s, p["n"], key, p))
            decks = sorted(x.name for x in (bundle / "site" / "slides").glob("*.html") if x.name != "index.html")
            for deck in decks:
                _step(f"deck {deck}", steps, lambda s, deck=deck: _deck(b, s, f"slides/{deck}"))
            for url in agenda_links(b):
                _step(f"link {url[len(base):]}", steps, lambda s, url=url: _link(b, s, url))
        finally:
            browser.close()
    return steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/workshop-dry-run", description=__doc__.split("\n")[0])
    ap.add_argument("archive", nargs="?", type=Path,
                    default=Path(__file__).resolve().parents[2] / "dist" / f"vsock-workshop-{__version__}.tar.gz",
                    help="the bundle (default: dist/vsock-workshop-VERSION.tar.gz)")
    ap.add_argument("--agenda", action="append", choices=["90", "180"],
                    help="only this agenda's presets (default: both)")
    args = ap.parse_args(argv)
    if not args.archive.is_file():
        print(f"dry run: archive: no bundle at {args.archive}; make one with scripts/workshop-bundle",
              file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"dry run: {CHROMIUM} is missing (scripts/setup installs Debian's chromium)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    with unpacked(args.archive) as bundle:
        steps = dry_run(bundle, args.agenda)
    failed = [s for s in steps if not s.ok]
    print(f"{len(steps)} steps in {time.perf_counter() - t0:.0f} s: "
          + (f"{len(failed)} failed: " + "; ".join(s.name for s in failed) if failed else "all loaded without an error"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
