"""Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by
Playwright (its own browser download does not work offline), with every
request that leaves localhost aborted and recorded."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# Documented harmless noise (sphinx-thebe is disabled, kept in case it returns).
IGNORED_CONSOLE = [re.compile(r"Identifier 'THEBE_JS_URL' has already been declared")]


def require_browser() -> bool:
    return bool(os.environ.get("BOOK_REQUIRE_BROWSER") or os.environ.get("CI"))


@contextlib.contextmanager
def chromium():
    """A Chromium browser, or a skip (a failure under scripts/run-tests) if there is none."""
    if not Path(CHROMIUM).exists():
        msg = f"{CHROMIUM} is missing (scripts/run-tests installs Debian's chromium)"
        if require_browser():
            pytest.fail(msg)
        pytest.skip(msg)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Watch:
    """What a page did that a test checks: console errors, requests that left localhost."""

    errors: list = field(default_factory=list)
    external: list = field(default_factory=list)
    requests: list = field(default_factory=list)


def offline_page(browser, base: str, **context):
    """A new page whose requests outside ``base`` are aborted; returns (page, watch)."""
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    watch = Watch()

    def on_console(msg):
        if msg.type == "error" and not any(p.search(msg.text) for p in IGNORED_CONSOLE):
            watch.errors.append(msg.text)

    def route(r):
        watch.requests.append(r.request.url)
        if r.request.url.startswith(base) or r.request.url.startswith("data:") or r.request.url.startswith("blob:"):
            r.continue_()
        else:
            watch.external.append(r.request.url)
            r.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda exc: watch.errors.append(str(exc)))
    ctx.route("**/*", route)
    return page, watch
