"""The browser lab in headless Chromium, network closed: the model live in the page.

- Parity: the lab's worker (Pyodide, Python 3.14) returns the same
  ``to_dict()`` as CPython for the same seed: integers equal, floats to 1e-9.
- The page: sizes set by slider and by typing, run, compare, sweep; bad input
  shows the API's message and runs nothing; a stale run is cancelled; the URL
  round-trips the state; the copied command reproduces the run.
- No console errors, no request outside localhost; chapter pages never load
  the runtime.
"""

from __future__ import annotations

import json
import math
import shlex

import pytest
from playwright.sync_api import expect

import vsockmodel as vm
from book_support import HTML, ensure_book_built, serve
from browser_support import chromium, offline_page
from vsockmodel import cli
from vsockmodel.model.units import fmt_size

pytestmark = pytest.mark.browser

READY_MS = 90_000        # a cold start on a loaded 2-core machine; the benchmark measures it

PARITY = [
    {"variant": "baseline", "payload": 2048},
    {"variant": "p1-p5", "payload": "2K", "buffer": "48K", "batch_pkts": 16, "headroom_check": False},
    {"variant": "pre-skb", "payload": 300, "rx_buf_payload": "1K", "seed": 7},
    {"variant": "p1-p3", "payload": 9000, "recv_size": 9000, "vhost_used_batch": True},
    {"variant": "p1-p5", "workload": "pingpong", "payload": 64, "requests": 100},
    {"variant": "baseline", "workload": "pingpong", "payload": 4096, "host_lock": True, "requests": 50},
    {"variant": "p1-p3", "payload": 777, "rx_ring_size": 256, "rcvlowat": 4096},
    {"variant": "p1-p5", "payload": 65536, "batch_bytes": "16K"},
    {"variant": "baseline", "buffer": 1024, "payload": 256},           # a reset
    {"variant": "p1-p5", "payload": 100, "transfer": "200K", "seed": 42},
    {"variant": "pre-skb", "payload": 12288, "recv_size": 1000},
    {"variant": "p1-p3", "payload": 1500, "headroom_check": False, "buffer": "8K", "seed": 3},
    {"variant": "baseline", "payload": 64, "rx_buf_payload": 128, "transfer": "64K", "host_lock": True},
]


@pytest.fixture(scope="module")
def site():
    ensure_book_built()
    with serve(HTML) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def lab(site, browser):
    """One lab page, ready (Pyodide and the model loaded), shared by the tests."""
    page, watch = offline_page(browser, site, viewport={"width": 1280, "height": 1600})
    page.goto(site + "book/lab.html")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    page.wait_for_selector(".lab-provenance[data-live=true]", timeout=60_000)
    yield page, watch
    page.context.close()


def _same(a, b, path="result"):
    """Integers (and everything else) equal; floats equal to 1e-9 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), path
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0), f"{path}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def _call(page, fn, *args):
    return page.evaluate("([fn, args]) => window.vsockLab.call(fn, ...args)", [fn, list(args)])


@pytest.mark.parametrize("config", PARITY, ids=[str(i) for i in range(len(PARITY))])
def test_the_browser_runs_the_same_model_as_cpython(lab, config):
    page, _ = lab
    res = _call(page, "run", config)
    assert res["ok"], res
    _same(json.loads(json.dumps(vm.run(**config).to_dict())), res["result"])


def _field(page, name):
    return page.locator(f'.lab-field[data-param="{name}"]')


def _last_run(page):
    return json.loads(page.evaluate("document.getElementById('vsock-lab').dataset.lastRun"))


def _wait_run(page, predicate_js, timeout=30_000):
    page.wait_for_function(
        f"(() => {{ const d = document.getElementById('vsock-lab').dataset.lastRun;"
        f" if (!d) return false; const r = JSON.parse(d); return {predicate_js}; }})()", timeout=timeout)


def test_typing_a_size_runs_it_and_moves_the_slider(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=run]").click()
    text = _field(page, "payload").locator("input.lab-text")
    text.fill("2K")
    text.press("Enter")
    _wait_run(page, "r.params.payload === 2048")
    slider = _field(page, "payload").locator("input.lab-slider")
    assert slider.get_attribute("aria-valuetext") == "2 KiB"
    assert _last_run(page) == json.loads(json.dumps(vm.run(payload=2048).to_dict()))


def test_the_slider_reaches_sizes_and_says_them(lab):
    page, _ = lab
    slider = _field(page, "buffer").locator("input.lab-slider")
    slider.focus()
    before = _last_run(page)["params"]["buffer"]
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    _wait_run(page, f"r.params.buffer !== {before}")
    buffer = _last_run(page)["params"]["buffer"]
    assert 0 < buffer < before
    text = _field(page, "buffer").locator("input.lab-text").input_value()
    assert vm.parse_size(text) == buffer
    # a screen reader hears the exact size ("240,890 B (235.2 KiB)"), not a rounding of it
    assert slider.get_attribute("aria-valuetext") == _said(buffer)
    # back to the default, typed
    t = _field(page, "buffer").locator("input.lab-text")
    t.fill("256K")
    t.press("Enter")
    _wait_run(page, "r.params.buffer === 262144")


def _said(n: int) -> str:
    """What a size slider says: fmt_size's text where it is exact, else the bytes too."""
    text = fmt_size(n)
    number, unit = text.split()
    exact = float(number) * {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}[unit] == n
    return text if exact else f"{n:,} B ({text})"


def test_a_size_is_said_exactly(lab):
    page, _ = lab
    text = _field(page, "payload").locator("input.lab-text")
    slider = _field(page, "payload").locator("input.lab-slider")
    for typed, said in (("2049", "2,049 B (2.0 KiB)"), ("1536", "1.5 KiB"), ("2K", "2 KiB")):
        text.fill(typed)
        text.press("Enter")
        _wait_run(page, f"r.params.payload === {vm.parse_size(typed)}")
        assert slider.get_attribute("aria-valuetext") == said


def test_unchecking_a_default_starts_from_exactly_the_value_it_stood_for(lab):
    page, _ = lab
    tr = _field(page, "transfer")
    default = vm.make_params(payload=2048)[0].transfer_bytes
    tr.locator("input.lab-default").uncheck()
    _wait_run(page, f"r.params.transfer === {default} && r.params.payload === 2048")
    assert vm.parse_size(tr.locator("input.lab-text").input_value()) == default
    tr.locator("input.lab-default").check()
    page.wait_for_function("!location.hash.includes('transfer=')")
    # checked again, the default follows the payload: unchecking shows the new one, not the old text
    text = _field(page, "payload").locator("input.lab-text")
    text.fill("3000")
    text.press("Enter")
    tr.locator("input.lab-default").uncheck()       # at once: before the new payload's check returns
    now = vm.make_params(payload=3000)[0].transfer_bytes
    _wait_run(page, f"r.params.transfer === {now} && r.params.payload === 3000")
    assert vm.parse_size(tr.locator("input.lab-text").input_value()) == now != default
    tr.locator("input.lab-default").check()
    text.fill("2K")
    text.press("Enter")
    page.wait_for_function("!location.hash.includes('transfer=') && location.hash.includes('payload=2K')")


def test_bad_input_shows_the_apis_message_and_runs_nothing(lab):
    page, _ = lab
    before = page.evaluate("document.getElementById('vsock-lab').dataset.lastRun")
    text = _field(page, "payload").locator("input.lab-text")
    text.fill("banana")
    text.press("Enter")
    err = _field(page, "payload").locator(".lab-field-error")
    err.wait_for(state="visible", timeout=15_000)
    with pytest.raises(ValueError) as exc:
        vm.make_params(payload="banana")
    assert err.text_content() == str(exc.value)
    page.wait_for_timeout(800)
    assert page.evaluate("document.getElementById('vsock-lab').dataset.lastRun") == before
    assert page.locator(".lab-panel[data-mode=run] .lab-button").first.is_disabled()
    text.fill("4K")
    text.press("Enter")
    _wait_run(page, "r.params.payload === 4096")
    assert err.text_content() == ""


def test_knobs_that_do_not_apply_are_disabled_with_the_reason(lab):
    page, _ = lab
    variant = _field(page, "variant").locator("select")
    variant.select_option("baseline")
    batch = _field(page, "batch_pkts")
    assert batch.locator("input.lab-text").is_disabled()
    assert "lock_sock once per packet" in batch.locator(".lab-why").text_content()
    variant.select_option("p1-p3")
    page.wait_for_function(
        "!document.querySelector('.lab-field[data-param=batch_pkts] input.lab-text').disabled")
    _wait_run(page, "r.params.variant === 'p1-p3'")
    variant.select_option("baseline")
    _wait_run(page, "r.params.variant === 'baseline'")


def test_the_copied_command_reproduces_the_run(lab, capsys):
    page, _ = lab
    _field(page, "variant").locator("select").select_option("p1-p5")
    t = _field(page, "payload").locator("input.lab-text")
    t.fill("3000")
    t.press("Enter")
    _wait_run(page, "r.params.payload === 3000 && r.params.variant === 'p1-p5'")
    page.locator(".lab-panel[data-mode=run] .lab-copy").first.click()
    command = page.evaluate("document.getElementById('vsock-lab').dataset.copied")
    argv = shlex.split(command)
    assert argv[:4] == ["python", "-m", "vsockmodel", "run"]
    assert cli.main(argv[3:] + ["--json"]) == 0
    _same(json.loads(capsys.readouterr().out), _last_run(page))


def test_the_url_holds_the_whole_state(lab, browser, site):
    page, _ = lab
    page.wait_for_function("location.hash.includes('payload=3000')")
    url = page.url
    assert "variant=p1-p5" in url
    other, watch = offline_page(browser, site)
    other.goto(url)
    other.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    _wait_run(other, "r.params.payload === 3000 && r.params.variant === 'p1-p5'", timeout=60_000)
    assert _last_run(other) == _last_run(page)
    assert other.locator('.lab-field[data-param="payload"] input.lab-text').input_value() == "3000"
    assert watch.errors == [] and watch.external == []
    other.context.close()


def test_a_link_with_bad_values_flags_each_and_shows_no_result_as_its_own(browser, site):
    page, watch = offline_page(browser, site)
    page.goto(site + "book/lab.html#variant=bogus&payload=banana&buffer=1")
    # Before the runtime starts: the precomputed run is the defaults', and says so.
    prov = page.locator(".lab-provenance")
    expect(prov).to_contain_text("not this link's", timeout=30_000)
    expect(page.locator(".lab-link-note")).to_contain_text("variant=bogus: not one of")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    for name, value in (("payload", "banana"), ("buffer", 1)):
        err = _field(page, name).locator(".lab-field-error")
        err.wait_for(state="visible", timeout=30_000)
        with pytest.raises(ValueError) as exc:
            vm.make_params(**{name: value})
        assert err.text_content() == str(exc.value)
    assert page.locator(".lab-stale-note").is_visible()
    assert prov.get_attribute("data-live") == "false"          # nothing ran
    assert watch.errors == [] and watch.external == []
    page.context.close()


def test_a_link_s_unknown_names_repeats_and_bad_switches_are_named(browser, site):
    page, watch = offline_page(browser, site)
    page.goto(site + "book/lab.html#variant=p1-p3&nosuch=1&payload=8K&payload=16K&mode=bogus&host_lock=1&headroom_check=True&a=5")
    note = page.locator(".lab-link-note")
    note.wait_for(state="visible")
    text = note.text_content()
    for part in ("nosuch: not a setting", "payload is given twice; the first value is used",
                 "mode=bogus: no such mode", "host_lock=1: use true or false", "a: not a configuration"):
        assert part in text, (part, text)
    assert "headroom_check=" not in text                       # True is true, in any case
    assert "nosuch" not in page.evaluate("location.hash")     # the address keeps what the lab used
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    _wait_run(page, "r.params.payload === 8192 && r.params.host_lock === false", timeout=60_000)
    assert _last_run(page)["params"]["headroom_check"] is True
    # a setting put back to its default, typed as text, is the default: not "changed", not in the address
    buffer = _field(page, "buffer").locator("input.lab-text")
    buffer.fill("256K")
    buffer.press("Enter")
    page.wait_for_function("!location.hash.includes('buffer')")
    assert "changed" not in page.locator('details[data-group="socket"] summary').text_content()
    assert not page.locator(".lab-link-note").is_visible()      # the address now says what is used
    page.context.close()


def test_on_a_phone_the_results_are_near_the_top(browser, site):
    page, watch = offline_page(browser, site, viewport={"width": 390, "height": 844})
    page.goto(site + "book/lab.html#host_lock=true")
    page.wait_for_selector(".lab-modes .lab-tab")
    top = page.evaluate("document.querySelector('#vsock-lab .lab-modes').getBoundingClientRect().top"
                        " - document.getElementById('vsock-lab').getBoundingClientRect().top")
    assert top < 2000, top                    # below the lab's top; was about 3,000 px, every group open
    opened = page.evaluate("[...document.querySelectorAll('#vsock-lab details.lab-group')]"
                           ".filter(d => d.open).map(d => d.dataset.group)")
    assert opened == ["kernel", "workload", "host"]           # the link changed a host setting
    assert "1 changed" in page.locator('details[data-group="host"] summary').text_content()
    page.get_by_role("button", name="Go to the results ↓").click()
    page.wait_for_function("document.querySelector('#vsock-lab .lab-modes').getBoundingClientRect().top < 400")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.context.close()


def test_compare_gives_the_paired_change(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=compare]").click()
    _field(page, "variant").locator("select").select_option("baseline")
    t = _field(page, "payload").locator("input.lab-text")
    t.fill("256")
    t.press("Enter")
    page.wait_for_function("location.hash.includes('payload=256')")
    page.wait_for_timeout(400)
    page.get_by_role("button", name="Use as A").click()
    _field(page, "variant").locator("select").select_option("p1-p5")
    page.wait_for_timeout(400)
    page.get_by_role("button", name="Use as B").click()
    # buffer was typed as "256K" earlier in the module: the default, so neither side names it
    assert "buffer" not in page.locator(".lab-ab").text_content()
    page.locator("#lab-pairs").select_option("3")
    page.get_by_role("button", name="Compare", exact=True).click()
    result = page.locator(".lab-change:not([role=status])")   # the problems pane has its own
    page.wait_for_function("document.querySelector('.lab-change:not([role=status])').dataset.change !== undefined", timeout=60_000)
    expected = vm.compare("baseline", "p1-p5", replications=3, payload=256)
    assert math.isclose(float(result.get_attribute("data-change")), expected.change_pct, rel_tol=1e-9)
    assert "B against A" in result.text_content()
    # drawn by the render worker after the numbers arrive: wait for it, not a moment
    page.wait_for_selector(".lab-chart[data-chart=compare] svg", timeout=30_000)
    assert page.locator(".lab-chart[data-chart=compare] svg").count() == 1


def test_a_sweep_draws_point_by_point_with_the_measurements(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=sweep]").click()
    page.get_by_role("button", name="Sweep").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepPoints >= 1", timeout=30_000)
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepDone === 'true'", timeout=120_000)
    assert page.evaluate("document.getElementById('vsock-lab').dataset.sweepPoints") == "16"
    spec = json.loads(page.locator(".lab-chart[data-chart=sweep]").get_attribute("data-spec"))
    series = {row["series"] for rows in spec["datasets"].values() for row in rows}
    assert "measured, v1" in series                      # p1-p5 on the test bed
    page.wait_for_selector(".lab-chart[data-chart=sweep] svg", timeout=30_000)
    assert page.locator(".lab-chart[data-chart=sweep] svg").count() == 1


def test_a_stale_sweep_stops_when_the_input_changes(lab):
    page, _ = lab
    page.get_by_role("button", name="Sweep").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepPoints >= 1", timeout=30_000)
    t = _field(page, "payload").locator("input.lab-text")
    t.fill("512")
    t.press("Enter")
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepDone === 'stopped'",
                           timeout=30_000)
    assert int(page.evaluate("document.getElementById('vsock-lab').dataset.sweepPoints")) < 16
    assert "Sweep stopped" in page.locator(".lab-status").text_content()   # not "Sweeping…" for ever


def test_settings_with_an_error_sweep_nothing_and_cannot_be_used_as_a_or_b(lab):
    page, _ = lab
    t = _field(page, "payload").locator("input.lab-text")
    t.fill("banana")
    t.press("Enter")
    _field(page, "payload").locator(".lab-field-error").wait_for(state="visible", timeout=15_000)
    disabled = """() => Object.fromEntries([...document.querySelectorAll('#vsock-lab button.lab-button')]
        .filter(b => ['Run', 'Sweep', 'Use as A', 'Use as B'].includes(b.textContent))
        .map(b => [b.textContent, b.disabled]))"""
    assert page.evaluate(disabled) == {"Run": True, "Sweep": True, "Use as A": True, "Use as B": True}
    t.fill("4K")
    t.press("Enter")
    page.wait_for_function(f"!Object.values(({disabled})()).some(Boolean)", timeout=15_000)
    # in any mode, the error leaves the status line once the settings are right again
    page.wait_for_function("!document.querySelector('.lab-status').textContent.startsWith('Not run')",
                           timeout=15_000)


def test_the_modes_are_a_tab_list_the_arrows_move_along(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=run]").click()
    page.locator(".lab-tab[data-mode=run]").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator(".lab-tab[data-mode=compare]").get_attribute("aria-selected") == "true"
    assert page.locator("#lab-panel-compare").is_visible() and not page.locator("#lab-panel-run").is_visible()
    page.keyboard.press("ArrowLeft")
    assert page.locator(".lab-tab[data-mode=run]").get_attribute("aria-selected") == "true"


def test_a_default_s_placeholder_is_the_summary_s_size(lab):
    page, _ = lab
    text = _field(page, "payload").locator("input.lab-text")
    text.fill("100")
    text.press("Enter")
    _wait_run(page, "r.params.payload === 100")
    transfer = vm.make_params(payload=100)[0].transfer_bytes          # 800,000 B: 781.25 KiB, a tie
    assert _field(page, "transfer").locator("input.lab-text").get_attribute("placeholder") == fmt_size(transfer)
    assert fmt_size(transfer) in page.locator(".lab-summary").text_content()
    text.fill("4K")
    text.press("Enter")
    _wait_run(page, "r.params.payload === 4096")


def test_a_stale_long_run_is_cancelled(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=run]").click()
    # A run of 400,000 one-byte packets takes many seconds; changing the input
    # must not wait for it: the lab replaces the busy worker.
    t = _field(page, "payload").locator("input.lab-text")
    t.fill("1")
    t.press("Enter")
    tr = _field(page, "transfer")
    tr.locator("input.lab-default").uncheck()
    tr.locator("input.lab-text").fill("399000")
    tr.locator("input.lab-text").press("Enter")
    page.wait_for_function("document.querySelector('.lab-status').textContent.startsWith('Running')", timeout=15_000)
    page.wait_for_timeout(500)
    tr.locator("input.lab-default").check()
    t.fill("1K")
    t.press("Enter")
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    _wait_run(page, "r.params.payload === 1024 && r.writes < 100000", timeout=READY_MS)
    assert _last_run(page)["params"]["transfer"] != 399000


def test_the_lock_timeline_comes_from_the_runs_trace_and_its_window_moves(lab):
    page, _ = lab
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    page.locator(".lab-tab[data-mode=run]").click()
    page.locator(".lab-timeline summary").click()
    chart = page.locator(".lab-chart[data-chart=timeline]")
    page.wait_for_function("document.querySelector('.lab-chart[data-chart=timeline] svg') !== null",
                           timeout=60_000)
    assert "Socket lock from" in chart.locator("svg").get_attribute("aria-label")
    first = json.loads(chart.get_attribute("data-spec"))
    slider = page.locator(".lab-timeline input.lab-slider")
    middle = float(slider.get_attribute("max")) / 2
    assert middle > 0
    slider.evaluate(f"(s) => {{ s.value = '{middle}'; s.dispatchEvent(new Event('input')); }}")
    page.wait_for_function(
        "Math.abs(JSON.parse(document.querySelector('.lab-chart[data-chart=timeline]').dataset.spec)"
        f".encoding.x.scale.domain[0] - {middle}) < 1e-6", timeout=30_000)
    moved = json.loads(chart.get_attribute("data-spec"))
    d0, d1 = (s["encoding"]["x"]["scale"]["domain"] for s in (first, moved))
    assert d1[1] - d1[0] == pytest.approx(d0[1] - d0[0])        # the same width, elsewhere
    assert moved["data"]["values"] and "Socket lock from" in page.locator(".lab-timeline .lab-alt").text_content()
    shown = page.locator(".lab-timeline output").text_content()       # the window, in words, beside it
    assert shown == slider.get_attribute("aria-valuetext") and shown.startswith(f"{middle:.0f} µs to ")


def test_a_problem_is_the_clis_problem_and_checking_it_uses_the_models_answer(lab):
    from vsockmodel.study import quiz

    page, _ = lab
    page.locator(".lab-tab[data-mode=problems]").click()
    page.locator("#lab-qchapter").select_option("3")
    page.locator("#lab-qseed").fill("4")
    page.get_by_role("button", name="Show the problem").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.problem", timeout=120_000)
    shown = json.loads(page.evaluate("document.getElementById('vsock-lab').dataset.problem"))
    expected = quiz.problem(3, 4)
    _same(json.loads(json.dumps(expected.to_dict(answers=False))), shown, "problem")
    assert "answer" not in shown                      # the page is not handed the answer before checking
    assert page.locator(".lab-question").text_content() == expected.question
    assert "qchapter=3" in page.evaluate("location.hash")

    answer = page.locator("#lab-qanswer")
    result = page.locator(".lab-change[role=status]")
    answer.fill(("no" if expected.answer else "yes") if expected.yes_no else str(expected.answer * 10 + 1000))
    answer.press("Enter")
    page.wait_for_function("document.querySelector('.lab-change[role=status]').dataset.correct", timeout=60_000)
    assert result.get_attribute("data-correct") == "false"
    answer.fill(expected.answer_text)
    page.get_by_role("button", name="Check my answer").click()
    page.wait_for_function(
        "document.querySelector('.lab-change[role=status]').dataset.correct === 'true'", timeout=60_000)
    assert expected.answer_text in result.text_content()

    page.locator("#lab-qseed").fill("-1")
    page.get_by_role("button", name="Show the problem").click()
    page.wait_for_function("document.getElementById('lab-qerror').textContent.includes('seed')", timeout=60_000)
    assert "seed: -1 is out of range" in page.locator("#lab-qerror").text_content()


def test_the_problems_tab_offers_every_chapter_with_problems(lab):
    from vsockmodel.study import quiz

    page, _ = lab
    options = page.locator("#lab-qchapter option").evaluate_all("os => os.map(o => o.value)")
    assert options == [str(c) for c in quiz.CHAPTERS]
    page.locator(".lab-tab[data-mode=problems]").click()
    page.locator("#lab-qchapter").select_option("5")
    page.locator("#lab-qseed").fill("3")
    page.get_by_role("button", name="Show the problem").click()
    page.wait_for_function("document.querySelector('.lab-question').textContent.length > 0", timeout=120_000)
    assert page.locator(".lab-question").text_content() == quiz.problem(5, 3).question


def test_a_link_carries_the_number_of_pairs(browser, site):
    """The chapters' explorers of AB/BA pairs link with #pairs=N: the compare
    panel's "pairs (seeds)" starts there, and the address keeps it."""
    page, watch = offline_page(browser, site)
    page.goto(site + 'book/lab.html#mode=compare&pairs=8&a={"payload":65536}&b={"variant":"p1-p5","payload":65536}')
    expect(page.locator("#lab-pairs")).to_have_value("8", timeout=30_000)
    assert "pairs=8" in page.evaluate("location.hash")
    page.locator("#lab-pairs").select_option("12")
    page.wait_for_function("location.hash.includes('pairs=12')")
    page.goto(site + "book/lab.html#mode=compare&pairs=32")
    page.reload()
    note = page.locator(".lab-link-note")
    note.wait_for(state="visible")
    assert "pairs=32: the lab runs 2 to 16 pairs" in note.text_content()
    assert watch.errors == [] and watch.external == []
    page.context.close()


def test_the_lab_made_no_error_and_no_request_outside(lab):
    _, watch = lab
    assert watch.errors == []
    assert watch.external == []


def test_the_precomputed_result_shows_before_python_is_ready(browser, site):
    page, watch = offline_page(browser, site)
    page.route("**/pyodide.asm.wasm", lambda route: None)      # hold the runtime back
    page.goto(site + "book/lab.html")
    # The page draws it once its data file has arrived, which may be after "load".
    prov = page.locator(".lab-provenance[data-live]")
    prov.wait_for(timeout=10_000)
    assert prov.get_attribute("data-live") == "false" and "Precomputed" in prov.text_content()
    row = page.locator('.lab-headline tr[data-key="throughput_gbps"] td').text_content()
    assert row == f"{vm.run(seed=1).throughput_gbps:.3f} Gbit/s"
    page.context.close()


def test_opened_as_a_file_it_says_how_to_serve_it(browser):
    ensure_book_built()
    page, _ = offline_page(browser, "file://")
    page.goto((HTML / "book" / "lab.html").as_uri())
    expect(page.locator(".lab-status")).to_contain_text("python3 -m http.server", timeout=30_000)
    assert "file://" in page.locator(".lab-status").text_content()
    page.context.close()


@pytest.mark.parametrize("name", ["chapters/01-skbuff.html", "chapters/03-batched-rx.html", "book/intro.html"])
def test_chapter_pages_do_not_load_the_runtime(browser, site, name):
    page, watch = offline_page(browser, site)
    page.goto(site + name)
    page.wait_for_load_state("load")
    loaded = [u for u in watch.requests if "pyodide" in u or "/_static/lab/" in u or "vega" in u]
    assert loaded == []
    page.context.close()


EXPLORER_PAGES = ["book/intro.html", "chapters/01-skbuff.html", "chapters/02-per-packet-locking.html",
                  "chapters/03-batched-rx.html", "chapters/04-metadata-slots.html",
                  "chapters/05-notification-deferral.html", "chapters/06-measuring.html"]


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_every_explorer_links_its_figure_to_the_lab(browser, site, name):
    page, watch = offline_page(browser, site)
    page.goto(site + name)
    page.wait_for_load_state("load")
    explorers = page.locator(".vsock-explorer")
    page.wait_for_function("document.querySelectorAll('.vsock-explorer').length > 0", timeout=30_000)
    for i in range(explorers.count()):
        links = explorers.nth(i).locator("a[href*='lab.html#']")
        assert links.count() > 0, f"{name}: explorer {i} has no link to the lab"
    page.context.close()


def test_an_explorer_link_opens_the_lab_with_its_values(browser, site):
    page, watch = offline_page(browser, site)
    page.goto(site + "chapters/03-batched-rx.html")
    page.wait_for_function("document.querySelectorAll('.vsock-explorer').length > 0", timeout=30_000)
    link = page.locator(".vsock-explorer a[href*='lab.html#']").locator("visible=true").first
    href = link.get_attribute("href")
    from urllib.parse import parse_qs, urlsplit
    settings = {k: v[0] for k, v in parse_qs(urlsplit(href).fragment).items()}
    link.click()
    page.wait_for_url("**/book/lab.html#*")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    values = json.loads(page.evaluate("JSON.stringify(window.vsockLab.state.values)"))
    for k, v in settings.items():
        assert str(values[k]).lower() == v.lower(), (k, values[k], v)
    _wait_run(page, " && ".join(f"String(r.params[{json.dumps(k)}]).toLowerCase() === {json.dumps(v.lower())}"
                                for k, v in settings.items() if k != "headroom_check"), timeout=60_000)
    assert watch.errors == [] and watch.external == []
    page.context.close()
