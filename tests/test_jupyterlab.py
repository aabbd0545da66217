"""Chapter 1 in JupyterLab: Run All fills the prose's numbers in.

The prose's numbers are MyST ``{eval}`` expressions. jupyterlab-myst evaluates
them in the notebook's kernel when a markdown cell is run, so after *Run ▸ Run
All Cells* every one shows its value, as in the built book. This test starts
JupyterLab from the repository's ``.venv`` on a free localhost port (no token,
its own settings folder: autosave off, so the notebook on disk is never
rewritten), opens ``chapters/01-skbuff.ipynb``, runs it through the menu,
waits until the kernel is idle and every code cell has run, then checks the
rendered markdown: no raw ``{eval}`` text, no evaluation errors, and numbers
this test computes from the same model. It saves a screenshot to
``_build/screenshots/jupyterlab-ch1.png``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from book_support import BUILD, REPO
from browser_support import chromium

pytestmark = pytest.mark.browser

NOTEBOOK = "chapters/01-skbuff.ipynb"
SCREENSHOT = BUILD / "screenshots" / "jupyterlab-ch1.png"
JUPYTER = REPO / ".venv" / "bin" / "jupyter"
START_S = 90            # server start on a loaded machine
KERNEL_S = 300          # the page, the notebook and its kernel, on a loaded machine
RUN_ALL_S = 600         # the chapter's cells, explorer grid included
QUIET_S = 5             # idle this long after Run All: done

# User settings for this server only (JUPYTERLAB_SETTINGS_DIR): never write the
# notebook back, render every cell (no windowing), no update or news checks.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(base: str) -> dict | None:
    try:
        with urllib.request.urlopen(base + "api/status", timeout=5) as resp:
            return json.load(resp)
    except OSError:
        return None


@contextlib.contextmanager
def jupyterlab():
    """A JupyterLab server on the repository; yields its base URL."""
    if not JUPYTER.exists():
        pytest.skip(f"{JUPYTER} is missing (scripts/build-book creates .venv)")
    home = Path(tempfile.mkdtemp(prefix="book-jupyterlab-"))
    for name, value in SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    port = _free_port()
    args = [str(JUPYTER), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
            "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={REPO}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LanguageServerManager.autodetect=False"]
    if os.geteuid() == 0:
        args.append("--allow-root")
    log = open(home / "server.log", "w", encoding="utf-8")
    proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + START_S
        while _status(base) is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError("JupyterLab did not start:\n"
                                   + (home / "server.log").read_text(encoding="utf-8")[-3000:])
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
        log.close()
        shutil.rmtree(home, ignore_errors=True)


def _unrouted_page(browser, base: str):
    """A page that records every request outside ``base`` instead of aborting it.

    offline_page's request routing (Playwright's context.route) keeps
    JupyterLab from ever starting the notebook's kernel session: with it the
    status bar stays at "No Kernel | Initializing". So this test lets requests
    through and fails afterwards if any left the server.
    """
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    external: list[str] = []
    page.on("request", lambda r: None if r.url.startswith((base, base.replace("http", "ws", 1), "data:", "blob:"))
            else external.append(r.url))
    return page, external


def _expected_numbers() -> list[str]:
    """Numbers chapter 1's prose computes, computed here the same way."""
    from vsockmodel.bookkit.figures import cached_run, gain_pct
    from vsockmodel.model import kernel

    pkt = cached_run(variant="pre-skb", payload=4096).throughput_gbps
    skb_617 = cached_run(variant="baseline", payload=4096).throughput_gbps
    asked_63, _ = kernel.rx_skb_head(kernel.RX_BUF_PAYLOAD_6_3)
    return [f"{gain_pct(pkt, skb_617):+.0f} %",                     # the 6.17 layout at 4 KiB
            f"asks kmalloc for {asked_63} bytes"]


def _kernel_ready(base: str) -> bool:
    """Whether the server has a session for the notebook with an idle kernel."""
    try:
        with urllib.request.urlopen(base + "api/sessions", timeout=5) as resp:
            sessions = json.load(resp)
    except OSError:
        return False
    return any(s.get("path", "").endswith(NOTEBOOK) and s.get("kernel", {}).get("execution_state") == "idle"
               for s in sessions)


def _markdown(page) -> str:
    """The rendered text of every markdown cell (jupyterlab-myst renders into .myst)."""
    return page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell .myst')]
        .map(r => r.textContent).join('\\n')""")


def _kernel_busy(page) -> bool:
    """Whether any code cell is queued or running ("[*]"), or the kernel is not idle."""
    return page.evaluate("""() => {
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
        const running = prompts.some(p => p.textContent.includes('*'));
        const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
        const idle = !status || !status.dataset.status || status.dataset.status === 'idle';
        return running || !idle;
    }""")


@pytest.mark.timeout(START_S + KERNEL_S + RUN_ALL_S + 120)
def test_run_all_renders_the_prose_numbers():
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    expected = _expected_numbers()
    with chromium() as browser, jupyterlab() as base:
        page, external = _unrouted_page(browser, base)
        page.goto(base + "lab/tree/" + NOTEBOOK)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=KERNEL_S * 1000)
        # Run All before the kernel is connected would run nothing: wait until the
        # server has an idle kernel for the notebook and the status bar says so.
        deadline = time.monotonic() + KERNEL_S
        while not _kernel_ready(base):
            assert time.monotonic() < deadline, "no kernel for the notebook"
            time.sleep(0.5)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]"
            ".some(e => /\\|\\s*Idle/.test(e.textContent))", timeout=KERNEL_S * 1000)

        # Run ▸ Run All Cells, through the menu as a reader would.
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-item:visible .lm-Menu-itemLabel", has_text="Run All Cells").first.click()

        # Done when the kernel has stayed idle for a while, no cell is queued or
        # running ("[*]"), and every {eval} expression has a value: one not yet
        # evaluated shows as its code, f"{...}".
        deadline = time.monotonic() + RUN_ALL_S
        quiet_since = None
        while True:
            done = not _kernel_busy(page) and 'f"{' not in _markdown(page)
            if done:
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > QUIET_S:
                    break
            else:
                quiet_since = None
            assert time.monotonic() < deadline, "Run All did not finish"
            time.sleep(0.5)
        prompts = page.evaluate("""() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
            .map(p => p.textContent.trim()).filter(Boolean)""")
        assert prompts and all(re.fullmatch(r"\[\d+\]:", p) for p in prompts), prompts

        failed = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
        assert failed.count() == 0, "a code cell raised"
        bad_expressions = page.locator(".jp-MarkdownCell [data-mime-type='application/vnd.jupyter.stderr']")
        assert bad_expressions.count() == 0, "an {eval} expression failed"
        markdown = " ".join(_markdown(page).split())      # source line breaks are spaces
        assert "Per packet, the" in markdown, "the markdown cells were rendered"
        assert "{eval}" not in markdown, "a raw {eval} role is left in the prose"
        for number in expected:
            assert number in markdown, f"{number!r} is not in the rendered prose"

        # The explorer's lab link: the served book's lab, in a new tab, with how to serve it.
        links = page.evaluate("""() => [...document.querySelectorAll('.jp-OutputArea a')]
            .filter(a => a.textContent.includes('Open these settings in the lab'))
            .map(a => ({href: a.getAttribute('href'), target: a.getAttribute('target'),
                        note: a.parentElement.textContent}))""")
        assert links, "no explorer links to the lab"
        for link in links:
            assert link["href"].startswith("http://localhost:8000/book/lab.html#") and link["target"] == "_blank", link
            assert "python3 -m http.server --directory _build/html 8000" in link["note"], link

        # A screenshot of a paragraph with computed numbers.
        page.locator(".jp-MarkdownCell", has_text="Per packet, the").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOT))
        page.context.close()
        assert not external, f"requests outside the server: {external[:5]}"


NOTEBOOKS = sorted(str(p.relative_to(REPO)) for p in
                   [*REPO.glob("chapters/*.ipynb"), REPO / "book" / "intro.ipynb",
                    REPO / "book" / "instructor" / "answer-keys.ipynb"])


@pytest.mark.timeout(START_S + KERNEL_S + 60 * len(NOTEBOOKS))
def test_links_between_pages_work_in_jupyterlab():
    """Each notebook as JupyterLab renders it, without running it: no "Cross
    reference target was not found" warning, no link that goes nowhere
    (href="#"), and a link to another page names that page's file."""
    with chromium() as browser, jupyterlab() as base:
        page, external = _unrouted_page(browser, base)
        messages: list[str] = []
        page.on("console", lambda m: messages.append(m.text))
        problems = []
        for notebook in NOTEBOOKS:
            messages.clear()
            page.goto(base + "lab/tree/" + notebook)
            cells = json.loads((REPO / notebook).read_text(encoding="utf-8"))["cells"]
            markdown = sum(c["cell_type"] == "markdown" for c in cells)
            page.wait_for_function(
                f"() => document.querySelectorAll('.jp-MarkdownCell .myst').length >= {markdown}",
                timeout=KERNEL_S * 1000)
            page.wait_for_timeout(1500)              # cross-references resolve after the first draw
            unresolved = [m for m in messages if "Cross reference target was not found" in m]
            if unresolved:
                problems.append(f"{notebook}: {len(unresolved)} unresolved, e.g. {unresolved[0][:120]}")
            dead = page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell a')]
                .filter(a => a.getAttribute('href') === '#' || a.getAttribute('href') === '')
                .map(a => a.textContent.trim()).slice(0, 5)""")
            if dead:
                problems.append(f"{notebook}: links to nowhere: {dead}")
        page.context.close()
        assert not problems, "\n".join(problems)
        assert not external, f"requests outside the server: {external[:5]}"
