"""The browser lab in headless Chromium, network closed: the model live in the page.

- Parity: the lab's worker (Pyodide, Python 3.14) returns the same
  ``to_dict()`` as CPython for the same seed: integers equal, floats to 1e-9;
  the Python mode's starting examples print what CPython prints.
- The page: sizes set by slider and by typing, run, compare (every metric),
  sweep, the headline, A|B timelines, problems, the Python mode; bad input
  shows the API's message and runs nothing; a long run can be stopped; the
  address round-trips the state and the page follows it.
- No console errors, no request outside localhost; chapter pages never load
  the runtime.

Every test starts from a state it sets itself: the shared page is reset
(``window.vsockLab.reset``: address, settings, storage, and any call still
running) before each test, and tests of what a page does while it loads open
a page of their own. So order, reruns and workers cannot change an outcome.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import shlex
import time

import pytest
from playwright.sync_api import expect

import vsockmodel as vm
from book_support import HTML, ensure_book_built, serve
from browser_support import chromium, offline_page
from vsockmodel import cli
from vsockmodel.lab import examples, headline, metrics, pycode
from vsockmodel.model.units import fmt_size, fmt_size_exact

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
def shared_lab(site, browser):
    """One lab page, loaded once; each test resets it (``lab``)."""
    page, watch = offline_page(browser, site, viewport={"width": 1280, "height": 1600})
    page.goto(site + "book/lab.html")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    yield page, watch
    page.context.close()


def _reset(page, fragment: str = ""):
    """The lab as a fresh page with this fragment has it: settings, mode, storage;
    nothing of an earlier call still running; its settings checked."""
    page.evaluate("(h) => window.vsockLab.reset(h)", fragment)
    page.wait_for_function("window.vsockLab.settled()", timeout=READY_MS)


@pytest.fixture
def lab(shared_lab):
    page, watch = shared_lab
    _reset(page)
    return page, watch


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


def _field(page, name):
    return page.locator(f'.lab-field[data-param="{name}"]')


def _type(page, name, text):
    box = _field(page, name).locator("input.lab-text")
    box.fill(text)
    box.press("Enter")


def _data(page, key):
    return page.evaluate(f"document.getElementById('vsock-lab').dataset.{key}")


def _last_run(page):
    return json.loads(_data(page, "lastRun"))


def _wait_run(page, predicate_js, timeout=30_000):
    page.wait_for_function(
        f"(() => {{ const d = document.getElementById('vsock-lab').dataset.lastRun;"
        f" if (!d) return false; const r = JSON.parse(d); return {predicate_js}; }})()", timeout=timeout)


def _tab(page, mode):
    page.locator(f".lab-tab[data-mode={mode}]").click()


# ---- parity ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", PARITY, ids=[str(i) for i in range(len(PARITY))])
def test_the_browser_runs_the_same_model_as_cpython(shared_lab, config):
    page, _ = shared_lab
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    res = _call(page, "run", config)
    assert res["ok"], res
    _same(json.loads(json.dumps(vm.run(**config).to_dict())), res["result"])


# ---- settings -------------------------------------------------------------------------------------

def test_typing_a_size_runs_it_and_moves_the_slider(lab):
    page, _ = lab
    _type(page, "payload", "2K")
    _wait_run(page, "r.params.payload === 2048")
    slider = _field(page, "payload").locator("input.lab-slider")
    assert slider.get_attribute("aria-valuetext") == "2 KiB"
    assert _last_run(page) == json.loads(json.dumps(vm.run(payload=2048).to_dict()))


def test_keyboard_steps_land_on_round_sizes_and_say_them(lab):
    page, _ = lab
    slider = _field(page, "payload").locator("input.lab-slider")
    slider.focus()
    page.keyboard.press("ArrowRight")                       # from 4K: 6K, not 4277
    _wait_run(page, "r.params.payload === 6144")
    assert _field(page, "payload").locator("input.lab-text").input_value() == "6K"
    assert slider.get_attribute("aria-valuetext") == "6 KiB"
    buffer = _field(page, "buffer").locator("input.lab-slider")
    buffer.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")                        # 256K -> 192K -> 128K
    _wait_run(page, "r.params.buffer === 131072")
    assert buffer.get_attribute("aria-valuetext") == "128 KiB"
    assert _field(page, "buffer").locator("input.lab-text").input_value() == "128K"


def test_a_size_is_said_exactly(lab):
    page, _ = lab
    slider = _field(page, "payload").locator("input.lab-slider")
    for typed, said in (("2049", "2,049 B (2.0 KiB)"), ("1536", "1.5 KiB"), ("2K", "2 KiB")):
        _type(page, "payload", typed)
        _wait_run(page, f"r.params.payload === {vm.parse_size(typed)}")
        assert slider.get_attribute("aria-valuetext") == said == fmt_size_exact(vm.parse_size(typed))


def test_unchecking_a_default_starts_from_exactly_the_value_it_stood_for(lab):
    page, _ = lab
    _type(page, "payload", "2K")
    _wait_run(page, "r.params.payload === 2048")
    tr = _field(page, "transfer")
    default = vm.make_params(payload=2048)[0].transfer_bytes
    tr.locator("input.lab-default").uncheck()
    # the run with the default's value set: the address names it (a run of the default has it too)
    page.wait_for_function("location.hash.includes('transfer=')")
    _wait_run(page, f"r.params.transfer === {default} && r.params.payload === 2048")
    assert vm.parse_size(tr.locator("input.lab-text").input_value()) == default
    tr.locator("input.lab-default").check()
    page.wait_for_function("!location.hash.includes('transfer=')")
    # checked again, the default follows the payload: unchecking shows the new one, not the old text
    _type(page, "payload", "3000")
    tr.locator("input.lab-default").uncheck()       # at once: before the new payload's check returns
    now = vm.make_params(payload=3000)[0].transfer_bytes
    page.wait_for_function("location.hash.includes('transfer=')")
    _wait_run(page, f"r.params.transfer === {now} && r.params.payload === 3000")
    assert vm.parse_size(tr.locator("input.lab-text").input_value()) == now != default


def test_bad_input_shows_the_apis_message_and_runs_nothing(lab):
    page, _ = lab
    _wait_run(page, "r.params.payload === 4096 && r.params.variant === 'baseline'")   # the defaults' run is in
    before = _data(page, "lastRun")
    _type(page, "payload", "banana")
    err = _field(page, "payload").locator(".lab-field-error")
    err.wait_for(state="visible", timeout=15_000)
    with pytest.raises(ValueError) as exc:
        vm.make_params(payload="banana")
    assert err.text_content() == str(exc.value)
    page.wait_for_timeout(500)
    assert _data(page, "lastRun") == before
    assert page.locator(".lab-panel[data-mode=run] .lab-button").first.is_disabled()
    _type(page, "payload", "4K")
    page.wait_for_function("window.vsockLab.settled()")
    assert err.text_content() == ""


def test_a_range_in_an_error_is_in_the_one_format(lab):
    page, _ = lab
    _field(page, "transfer").locator("input.lab-default").uncheck()
    page.wait_for_function("document.querySelector('.lab-field[data-param=transfer] input.lab-text').value !== ''")
    _type(page, "transfer", "4G")
    err = _field(page, "transfer").locator(".lab-field-error")
    err.wait_for(state="visible", timeout=15_000)
    text = err.text_content()
    assert "allowed [1 B, " in text and not re.search(r"(?<![\d,.])\d{5,}(?![\d,])", text), text


def test_knobs_that_do_not_apply_are_disabled_with_the_reason(lab):
    page, _ = lab
    batch = _field(page, "batch_pkts")
    assert batch.locator("input.lab-text").is_disabled()
    assert "lock_sock once per packet" in batch.locator(".lab-why").text_content()
    _field(page, "variant").locator("select").select_option("p1-p3")
    page.wait_for_function("!document.querySelector('.lab-field[data-param=batch_pkts] input.lab-text').disabled")
    _wait_run(page, "r.params.variant === 'p1-p3'")


def test_the_copied_command_reproduces_the_run(lab, capsys):
    page, _ = lab
    _field(page, "variant").locator("select").select_option("p1-p5")
    _type(page, "payload", "3000")
    _wait_run(page, "r.params.payload === 3000 && r.params.variant === 'p1-p5'")
    page.locator(".lab-panel[data-mode=run] .lab-copy").first.click()
    argv = shlex.split(_data(page, "copied"))
    assert argv[:4] == ["python", "-m", "vsockmodel", "run"]
    assert cli.main(argv[3:] + ["--json"]) == 0
    _same(json.loads(capsys.readouterr().out), _last_run(page))


def test_the_page_follows_an_address_edited_by_hand(lab):
    page, _ = lab
    page.evaluate("location.hash = '#payload=16K&variant=p1-p3'")
    _wait_run(page, "r.params.payload === 16384 && r.params.variant === 'p1-p3'")
    assert _field(page, "payload").locator("input.lab-text").input_value() == "16K"
    assert _field(page, "payload").locator("input.lab-slider").get_attribute("aria-valuetext") == "16 KiB"
    page.evaluate("location.hash = '#mode=compare&payload=64'")
    page.wait_for_function("document.querySelector('.lab-tab[data-mode=compare]').getAttribute('aria-selected') === 'true'")
    assert _field(page, "variant").locator("select").input_value() == "baseline"     # not carried over


def test_the_url_holds_the_whole_state(lab, browser, site):
    page, _ = lab
    _field(page, "variant").locator("select").select_option("p1-p5")
    _type(page, "payload", "3000")
    _wait_run(page, "r.params.payload === 3000 && r.params.variant === 'p1-p5'")
    url = page.url
    assert "variant=p1-p5" in url and "payload=3000" in url
    other, watch = offline_page(browser, site)
    other.goto(url)
    other.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    _wait_run(other, "r.params.payload === 3000 && r.params.variant === 'p1-p5'", timeout=60_000)
    assert _last_run(other) == _last_run(page)
    assert other.locator('.lab-field[data-param="payload"] input.lab-text').input_value() == "3000"
    assert watch.errors == [] and watch.external == []
    other.context.close()


def test_a_default_s_placeholder_is_the_summary_s_size(lab):
    page, _ = lab
    _type(page, "payload", "100")
    _wait_run(page, "r.params.payload === 100")
    transfer = vm.make_params(payload=100)[0].transfer_bytes          # 800,000 B: 781.25 KiB, a tie
    page.wait_for_function(f"document.querySelector('.lab-field[data-param=transfer] input.lab-text')"
                           f".placeholder === {json.dumps(fmt_size(transfer))}")
    assert fmt_size(transfer) in page.locator(".lab-summary").text_content()


def test_settings_with_an_error_sweep_nothing_and_cannot_be_used_as_a_or_b(lab):
    page, _ = lab
    _type(page, "payload", "banana")
    _field(page, "payload").locator(".lab-field-error").wait_for(state="visible", timeout=15_000)
    disabled = """() => Object.fromEntries([...document.querySelectorAll('#vsock-lab button.lab-button')]
        .filter(b => ['Run', 'Sweep', 'Use as A', 'Use as B'].includes(b.textContent))
        .map(b => [b.textContent, b.disabled]))"""
    assert page.evaluate(disabled) == {"Run": True, "Sweep": True, "Use as A": True, "Use as B": True}
    _type(page, "payload", "4K")
    page.wait_for_function(f"!Object.values(({disabled})()).some(Boolean)", timeout=15_000)
    page.wait_for_function("!document.querySelector('.lab-status').textContent.startsWith('Not run')",
                           timeout=15_000)


def test_the_modes_are_a_tab_list_the_arrows_move_along(lab):
    page, _ = lab
    page.locator(".lab-tab[data-mode=run]").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator(".lab-tab[data-mode=compare]").get_attribute("aria-selected") == "true"
    assert page.locator("#lab-panel-compare").is_visible() and not page.locator("#lab-panel-run").is_visible()
    page.keyboard.press("ArrowLeft")
    assert page.locator(".lab-tab[data-mode=run]").get_attribute("aria-selected") == "true"


def test_a_stale_long_run_is_cancelled(lab):
    page, _ = lab
    # A run of 400,000 one-byte packets takes many seconds; changing the input
    # must not wait for it: the lab replaces the busy worker.
    _type(page, "payload", "1")
    tr = _field(page, "transfer")
    tr.locator("input.lab-default").uncheck()
    _type(page, "transfer", "399000")
    page.wait_for_function("document.querySelector('.lab-status').textContent.startsWith('Running')", timeout=15_000)
    page.wait_for_timeout(500)
    tr.locator("input.lab-default").check()
    _type(page, "payload", "1K")
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    _wait_run(page, "r.params.payload === 1024 && r.writes < 100000", timeout=READY_MS)
    assert _last_run(page)["params"]["transfer"] != 399000


def test_a_long_run_can_be_stopped_and_the_lab_goes_on(lab):
    page, _ = lab
    _type(page, "payload", "64M")                           # the End of the slider: seconds of work
    stop = page.locator(".lab-status .lab-stop")
    stop.wait_for(state="visible", timeout=15_000)
    t0 = time.perf_counter()
    stop.click()
    page.wait_for_function("document.querySelector('.lab-status').textContent.startsWith('Stopped')", timeout=1_000)
    assert time.perf_counter() - t0 < 1.0
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    # the fresh Python does not start the same long run again by itself
    page.wait_for_function("document.querySelector('.lab-status').textContent.startsWith('Stopped: press Run')",
                           timeout=READY_MS)
    assert page.evaluate("window.vsockLab.pending()") == []
    _type(page, "payload", "2K")
    _wait_run(page, "r.params.payload === 2048", timeout=READY_MS)


# ---- modes -----------------------------------------------------------------------------------------

def _set_sides(page, a: dict, b: dict):
    page.evaluate("([a, b]) => { location.hash = '#mode=compare&a=' + encodeURIComponent(JSON.stringify(a))"
                  " + '&b=' + encodeURIComponent(JSON.stringify(b)); }", [a, b])
    page.wait_for_function("document.querySelector('.lab-ab [data-side=b]').textContent.includes('with A')")


def test_compare_gives_every_metric_with_its_paired_interval(lab):
    page, _ = lab
    _tab(page, "compare")
    _type(page, "payload", "256")
    page.wait_for_function("location.hash.includes('payload=256')")
    page.wait_for_function("window.vsockLab.settled()")
    page.get_by_role("button", name="Use as A").click()
    _field(page, "variant").locator("select").select_option("p1-p5")
    page.wait_for_function("window.vsockLab.settled() && location.hash.includes('variant=p1-p5')")
    page.get_by_role("button", name="Use as B").click()
    page.locator("#lab-pairs").select_option("3")
    compare = page.get_by_role("button", name="Compare", exact=True)
    compare.click()
    # one comparison at a time: the button waits, and clicking it again queues nothing
    assert page.locator(".lab-panel[data-mode=compare] .lab-row .lab-button").last.is_disabled()
    for _ in range(5):
        page.evaluate("document.querySelectorAll('.lab-panel[data-mode=compare] .lab-row .lab-button')[2].click()")
    assert page.evaluate("window.vsockLab.pending()").count("compare_metrics") <= 1
    result = page.locator(".lab-panel[data-mode=compare] .lab-change")
    page.wait_for_function("document.querySelector('.lab-panel[data-mode=compare] .lab-change').dataset.change"
                           " !== undefined", timeout=90_000)
    c = vm.compare("baseline", "p1-p5", replications=3, payload=256)
    assert math.isclose(float(result.get_attribute("data-change")), c.change_pct, rel_tol=1e-9)
    rows = {r["key"]: r for r in metrics.paired_all(c.runs_a.results, c.runs_b.results)}
    assert result.text_content() == rows["throughput_gbps"]["text"]
    page.wait_for_selector(".lab-chart[data-chart=compare] svg", timeout=30_000)
    # any metric, A against B: another one is drawn without running again
    page.locator("#lab-metric").select_option("lock_waits")
    expect(result).to_have_text(rows["lock_waits"]["text"], timeout=30_000)
    page.wait_for_function("JSON.parse(document.querySelector('.lab-chart[data-chart=compare]').dataset.spec)"
                           ".description.startsWith('socket-lock waits')")
    assert page.locator("table.lab-metrics tr[data-key]").count() == len(rows)
    assert "metric=lock_waits" in page.evaluate("location.hash")


def test_on_the_test_bed_compare_shows_the_measured_change_and_how_far_apart(lab):
    page, _ = lab
    _set_sides(page, {"payload": "64"}, {"payload": "64", "variant": "p1-p3"})
    page.locator("#lab-pairs").select_option("2")
    page.get_by_role("button", name="Compare", exact=True).click()
    note = page.locator("[data-note=compare-measured]")
    expect(note).to_contain_text("Measured at 64 B (v1 cover letter, table v1_p1p3_fixed64k): +91.6 %",
                                 timeout=90_000)
    c = vm.compare("baseline", "p1-p3", replications=2, payload=64)
    assert f"The model's {c.change_pct:+.1f} % is {abs(c.change_pct - 91.59):.1f} points" in note.text_content()


def test_a_sweep_draws_point_by_point_with_the_measurements_and_how_to_reproduce_it(lab):
    page, _ = lab
    _field(page, "variant").locator("select").select_option("p1-p5")
    page.wait_for_function("window.vsockLab.settled() && location.hash.includes('variant=p1-p5')")
    _tab(page, "sweep")
    page.get_by_role("button", name="Sweep").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepDone === 'true'", timeout=180_000)
    assert _data(page, "sweepPoints") == "16"
    spec = json.loads(page.locator(".lab-chart[data-chart=sweep]").get_attribute("data-spec"))
    series = {row["series"] for rows in spec["datasets"].values() for row in rows}
    assert "measured, v1" in series                      # p1-p5 on the test bed
    assert page.locator("[data-note=sweep-measured]").text_content().startswith("Against measured, v1: the model is")
    code = page.locator(".lab-panel[data-mode=sweep] .lab-command pre").nth(1).text_content()
    assert code.startswith("import vsockmodel\nfor payload in [64, 128,")
    page.wait_for_selector(".lab-chart[data-chart=sweep] svg", timeout=30_000)


def test_a_stale_sweep_stops_when_the_input_changes(lab):
    page, _ = lab
    _tab(page, "sweep")
    page.get_by_role("button", name="Sweep").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepPoints >= 1", timeout=30_000)
    _type(page, "payload", "512")
    page.wait_for_function("document.getElementById('vsock-lab').dataset.sweepDone === 'stopped'", timeout=30_000)
    assert int(_data(page, "sweepPoints")) < 16
    assert "Sweep stopped" in page.locator(".lab-status").text_content()


def test_the_headline_is_drawn_in_one_click_with_where_model_and_measurement_part(lab):
    page, _ = lab
    _tab(page, "headline")
    page.wait_for_selector(".lab-chart[data-chart=headline] svg", timeout=30_000)
    expected = headline.precompute()
    assert page.locator("[data-note=headline]").text_content() == expected["sentence"]
    assert expected["sentence"].startswith("Model and measurement part most at ")
    spec = json.loads(page.locator(".lab-chart[data-chart=headline]").get_attribute("data-spec"))
    assert {("p1-p5", "measured (v1 cover letter)"), ("p1-p5", "model")} <= {
        (r["variant"], r["kind"]) for r in spec["data"]["values"]}
    # computing it here can be stopped
    page.get_by_role("button", name="Compute it here").click()
    page.locator(".lab-status .lab-stop").click(timeout=15_000)
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    assert not page.get_by_role("button", name="Compute it here").is_disabled()


def test_lock_timelines_of_a_and_b_side_by_side_on_one_scale(lab):
    page, _ = lab
    _set_sides(page, {"payload": "2K"}, {"payload": "2K", "variant": "p1-p3"})
    _tab(page, "timelines")
    page.wait_for_function("document.getElementById('vsock-lab').dataset.timelines === 'drawn'", timeout=90_000)
    specs = [json.loads(page.locator(f".lab-chart[data-chart=timeline-{s}]").get_attribute("data-spec")) for s in "ab"]
    widths = [s["encoding"]["x"]["scale"]["domain"][1] - s["encoding"]["x"]["scale"]["domain"][0] for s in specs]
    assert widths[0] == pytest.approx(widths[1])
    assert [s["encoding"]["x"]["title"] for s in specs] == ["simulated time (µs)"] * 2
    a_view = page.locator("[data-timeline=timeline-a]")
    slider = a_view.locator("input.lab-slider")
    slider.evaluate("(s) => { s.value = '0'; s.dispatchEvent(new Event('input')); }")
    page.wait_for_function("JSON.parse(document.querySelector('.lab-chart[data-chart=timeline-a]').dataset.spec)"
                           ".encoding.x.scale.domain[0] === 0", timeout=30_000)
    b_now = json.loads(page.locator(".lab-chart[data-chart=timeline-b]").get_attribute("data-spec"))
    assert b_now["encoding"]["x"]["scale"]["domain"] == specs[1]["encoding"]["x"]["scale"]["domain"]
    assert page.locator("[data-side=a] h4").text_content() == "A: payload=2K"


def test_the_lock_timeline_comes_from_the_runs_trace_and_its_window_moves(lab):
    page, _ = lab
    page.locator(".lab-timeline summary").click()
    chart = page.locator(".lab-chart[data-chart=timeline]")
    page.wait_for_function("document.querySelector('.lab-chart[data-chart=timeline] svg') !== null", timeout=60_000)
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
    assert d1[1] - d1[0] == pytest.approx(d0[1] - d0[0])
    shown = page.locator(".lab-timeline output").text_content()
    assert shown == slider.get_attribute("aria-valuetext") and shown.startswith(f"{middle:.0f} µs to ")


def test_a_problem_is_the_clis_problem_and_stale_output_is_cleared(lab):
    from vsockmodel.study import quiz

    page, _ = lab
    _tab(page, "problems")
    page.locator("#lab-qchapter").select_option("3")
    page.locator("#lab-qseed").fill("4")
    page.get_by_role("button", name="Show the problem").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.problem", timeout=120_000)
    shown = json.loads(_data(page, "problem"))
    expected = quiz.problem(3, 4)
    _same(json.loads(json.dumps(expected.to_dict(answers=False))), shown, "problem")
    assert "answer" not in shown
    assert page.locator(".lab-question").text_content() == expected.question
    assert "qchapter=3" in page.evaluate("location.hash")
    answer = page.locator("#lab-qanswer")
    verdict = page.locator(".lab-panel[data-mode=problems] .lab-change")
    answer.fill(expected.answer_text)
    page.get_by_role("button", name="Check my answer").click()
    page.wait_for_function("document.querySelector('.lab-panel[data-mode=problems] .lab-change').dataset.correct"
                           " === 'true'", timeout=60_000)
    assert expected.answer_text in verdict.text_content()
    # a bad seed: its error, and nothing of the previous problem beside it
    page.locator("#lab-qseed").fill("-1")
    page.get_by_role("button", name="Show the problem").click()
    page.wait_for_function("document.getElementById('lab-qerror').textContent.includes('seed')", timeout=60_000)
    assert "seed: -1 is out of range" in page.locator("#lab-qerror").text_content()
    assert verdict.text_content() == "" and page.locator(".lab-question").text_content() == ""
    assert page.locator(".lab-panel[data-mode=problems] .lab-command").count() == 0


def test_a_link_carries_the_number_of_pairs(browser, site):
    """The chapters' explorers of AB/BA pairs link with #pairs=N: the compare
    panel's "pairs (seeds)" starts there, and the address keeps it."""
    page, watch = offline_page(browser, site)
    page.goto(site + 'book/lab.html#mode=compare&pairs=8&a={"payload":65536}&b={"variant":"p1-p5","payload":65536}')
    expect(page.locator("#lab-pairs")).to_have_value("8", timeout=30_000)
    assert "pairs=8" in page.evaluate("location.hash")
    page.locator("#lab-pairs").select_option("12")
    page.wait_for_function("location.hash.includes('pairs=12')")
    page.goto("about:blank")                   # a fresh load of a link, not a hash change
    page.goto(site + "book/lab.html#mode=compare&pairs=32")
    note = page.locator(".lab-link-note")
    note.wait_for(state="visible")
    assert "pairs=32: the lab runs 2 to 16 pairs" in note.text_content()
    assert watch.errors == [] and watch.external == []
    page.context.close()


def test_a_link_to_a_chapter_without_problems_is_named(lab):
    page, _ = lab
    _reset(page, "#mode=problems&qchapter=9")
    note = page.locator(".lab-link-note")
    expect(note).to_contain_text("qchapter=9: no problems for that chapter")
    assert page.locator("#lab-qchapter").input_value() == "1"


# ---- the Python mode ---------------------------------------------------------------------------------

def _cpython_output(code: str) -> tuple[str, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        res = json.loads(pycode.run_code(code))
    return out.getvalue(), res


def _run_code(page, code: str | None = None):
    if code is not None:
        page.evaluate("(c) => document.getElementById('vsock-lab').vsockPython.set(c)", code)
    page.get_by_role("button", name="Run the code").click()
    page.wait_for_function("['done', 'error'].includes(document.getElementById('vsock-lab').dataset.python)",
                           timeout=120_000)
    return (page.locator(".lab-output-text").text_content(), page.locator(".lab-traceback").text_content())


def _python_tab(page):
    _tab(page, "python")
    page.wait_for_function("document.getElementById('vsock-lab').vsockPython !== undefined", timeout=30_000)


def test_every_starting_example_prints_what_cpython_prints(lab):
    page, _ = lab
    _python_tab(page)
    assert _data(page, "editor") == "codemirror"
    for example in examples.EXAMPLES:
        page.locator("#lab-example").select_option(example.key)
        page.get_by_role("button", name="Load the example").click()
        printed, error = _run_code(page)
        expected, res = _cpython_output(example.code)
        assert (printed, error) == (expected, ""), example.key
        assert page.locator(".lab-figures .lab-chart").count() == len(res["figures"])


def test_a_link_names_an_example_to_start_from(lab):
    page, _ = lab
    example = examples.BY_KEY["batched-rx/the-batch-limit"]
    _reset(page, "#mode=python&example=" + example.key)
    page.wait_for_function("document.getElementById('vsock-lab').vsockPython !== undefined", timeout=30_000)
    assert page.evaluate("document.getElementById('vsock-lab').vsockPython.get()") == example.code
    assert "example=" not in page.evaluate("location.hash") and "code=" in page.evaluate("location.hash")


def test_a_chapter_s_try_it_in_the_lab_link_opens_its_example_in_python(browser, site):
    """The link under chapter 3's exercises, clicked on the built page, opens the
    lab's Python mode with that example's code in the editor."""
    page, watch = offline_page(browser, site)
    page.goto(site + "chapters/03-batched-rx.html")
    link = page.locator("#exercises .vsock-try-lab a").first
    href = link.get_attribute("href")
    key = dict(p.split("=", 1) for p in href.split("#", 1)[1].split("&"))["example"].replace("%2F", "/")
    link.click()
    page.wait_for_url("**/book/lab.html#*")
    page.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    page.wait_for_function("document.getElementById('vsock-lab').vsockPython !== undefined", timeout=30_000)
    assert page.locator(".lab-tab[data-mode=python]").get_attribute("aria-selected") == "true"
    assert page.evaluate("document.getElementById('vsock-lab').vsockPython.get()") == examples.BY_KEY[key].code
    assert watch.errors == [] and watch.external == []
    page.context.close()


def test_errors_show_their_traceback_and_leave_the_lab_usable(lab):
    page, _ = lab
    _python_tab(page)
    printed, error = _run_code(page, "print('before')\nfor i in range(3)\n    print(i)\n")
    assert printed == "" and 'File "<lab>", line 2' in error and "SyntaxError" in error
    code = "import vsockmodel\nprint('start')\nvsockmodel.run(payload=0)\n"
    printed, error = _run_code(page, code)
    markers = lambda text: [line for line in text.splitlines() if line.strip(" ^~")]   # noqa: E731 (3.11 and 3.14 mark differently)
    assert printed == "start\n" and markers(error) == markers(_cpython_output(code)[1]["error"])
    assert '  File "<lab>", line 3, in <module>' in error
    printed, error = _run_code(page, "print(6 * 7)")
    assert (printed, error) == ("42\n", "")


def test_an_endless_loop_is_stopped_within_a_second(lab):
    page, _ = lab
    _python_tab(page)
    page.evaluate("(c) => document.getElementById('vsock-lab').vsockPython.set(c)", "print('looping')\nwhile True:\n    pass\n")
    page.get_by_role("button", name="Run the code").click()
    expect(page.locator(".lab-output-text")).to_have_text("looping\n", timeout=30_000)
    t0 = time.perf_counter()
    page.locator(".lab-panel[data-mode=python]").get_by_role("button", name="Stop").click()
    page.wait_for_function("document.getElementById('vsock-lab').dataset.python === 'stopped'", timeout=1_000)
    assert time.perf_counter() - t0 < 1.0
    page.wait_for_function("window.vsockLab.ready()", timeout=READY_MS)
    assert _run_code(page, "print('again')") == ("again\n", "")


def test_code_round_trips_through_a_link_and_is_kept_across_a_reload(lab, browser, site):
    page, _ = lab
    _python_tab(page)
    code = "import vsockmodel\n# shared\nprint(vsockmodel.run(payload=64, transfer='64K').writes)\n"
    page.evaluate("(c) => document.getElementById('vsock-lab').vsockPython.set(c)", code)
    page.wait_for_function("location.hash.includes('code=')")
    other, watch = offline_page(browser, site)
    other.goto(page.url)
    other.wait_for_function("window.vsockLab && window.vsockLab.ready()", timeout=READY_MS)
    other.wait_for_function("document.getElementById('vsock-lab').vsockPython !== undefined", timeout=30_000)
    assert other.evaluate("document.getElementById('vsock-lab').vsockPython.get()") == code
    assert _run_code(other, None)[0] == f"{vm.run(payload=64, transfer='64K').writes}\n"
    # kept in this browser: a reload without the code in the address shows it again
    other.evaluate("history.replaceState(null, '', '#mode=python')")
    other.reload()
    other.wait_for_function("document.getElementById('vsock-lab').vsockPython !== undefined", timeout=READY_MS)
    assert other.evaluate("document.getElementById('vsock-lab').vsockPython.get()") == code
    # past the size a link carries: said, and the address does not hold it
    long = "x = 1\n" * 2000
    other.evaluate("(c) => document.getElementById('vsock-lab').vsockPython.set(c)", long)
    expect(other.locator("[data-note=python]")).to_contain_text("more than the 6,000 a link carries")
    assert "code=" not in other.evaluate("location.hash")
    assert watch.errors == [] and watch.external == []
    other.context.close()


def test_the_lab_made_no_error_and_no_request_outside(shared_lab):
    _, watch = shared_lab
    assert watch.errors == []
    assert watch.external == []


# ---- pages of their own: what a page does while it loads ------------------------------------------

def test_a_link_with_bad_values_flags_each_and_shows_no_result_as_its_own(browser, site):
    page, watch = offline_page(browser, site)
    page.goto(site + "book/lab.html#variant=bogus&payload=banana&buffer=1")
    prov = page.locator(".lab-panel[data-mode=run] .lab-provenance")
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
    assert prov.get_attribute("data-live") == "false"
    assert watch.errors == [] and watch.external == []
    page.context.close()


def test_a_link_s_unknown_names_repeats_and_bad_switches_are_named(lab):
    page, _ = lab
    _reset(page, "#variant=p1-p3&nosuch=1&payload=8K&payload=16K&mode=bogus&host_lock=1&headroom_check=True&a=5")
    note = page.locator(".lab-link-note")
    note.wait_for(state="visible")
    text = note.text_content()
    for part in ("nosuch: not a setting", "payload is given twice; the first value is used",
                 "mode=bogus: no such mode", "host_lock=1: use true or false", "a: not a configuration"):
        assert part in text, (part, text)
    assert "headroom_check=" not in text
    assert "nosuch" not in page.evaluate("location.hash")
    _wait_run(page, "r.params.payload === 8192 && r.params.host_lock === false", timeout=60_000)
    assert _last_run(page)["params"]["headroom_check"] is True
    _type(page, "buffer", "256K")
    page.wait_for_function("!location.hash.includes('buffer')")
    assert "changed" not in page.locator('details[data-group="socket"] summary').text_content()
    assert not page.locator(".lab-link-note").is_visible()


def test_before_python_is_ready_sliders_agree_with_their_boxes_and_say_their_value(browser, site):
    page, watch = offline_page(browser, site)
    page.route("**/pyodide.asm.wasm", lambda route: None)      # hold the runtime back
    page.goto(site + "book/lab.html#buffer=16K")
    page.wait_for_selector(".lab-field[data-param=rx_ring_size] input.lab-slider")
    for name, text, said in (("payload", "4K", "4 KiB"), ("buffer", "16K", "16 KiB"),
                             ("rx_ring_size", "128", "128 entries"), ("batch_pkts", "64", "64 packets")):
        field = _field(page, name)
        assert field.locator("input.lab-text").input_value() == text
        slider = field.locator("input.lab-slider")
        assert slider.get_attribute("aria-valuetext") == said, name
        stops = page.evaluate(f"window.VSOCK_LAB_DATA.page.stops[{json.dumps(name)}]")
        assert stops[int(slider.input_value())]["text"] == text
    page.context.close()


def test_the_precomputed_result_shows_before_python_is_ready(browser, site):
    page, watch = offline_page(browser, site)
    page.route("**/pyodide.asm.wasm", lambda route: None)
    page.goto(site + "book/lab.html")
    prov = page.locator(".lab-panel[data-mode=run] .lab-provenance[data-live]")
    prov.wait_for(timeout=10_000)
    assert prov.get_attribute("data-live") == "false" and "Precomputed" in prov.text_content()
    row = page.locator('.lab-headline tr[data-key="throughput_gbps"] td').first.text_content()
    assert row == f"{vm.run(seed=1).throughput_gbps:.3f} Gbit/s"
    page.context.close()


def test_at_laptop_width_the_results_are_on_the_first_screen(browser, site):
    page, watch = offline_page(browser, site, viewport={"width": 1280, "height": 800})
    page.goto(site + "book/lab.html")
    page.wait_for_selector(".lab-panel[data-mode=run] .lab-headline tr")
    tabs = page.evaluate("document.querySelector('#vsock-lab .lab-modes').getBoundingClientRect().top")
    table = page.evaluate("document.querySelector('.lab-panel[data-mode=run] .lab-headline').getBoundingClientRect().top")
    assert tabs < 800 and table < 800, (tabs, table)
    common = page.evaluate("[...document.querySelectorAll('.lab-common [data-param]')].map(f => f.dataset.param)")
    assert common == ["variant", "workload", "payload"]
    page.context.close()


def test_on_a_phone_the_results_are_near_the_top(browser, site):
    page, watch = offline_page(browser, site, viewport={"width": 390, "height": 844})
    page.goto(site + "book/lab.html#host_lock=true")
    page.wait_for_selector(".lab-modes .lab-tab")
    top = page.evaluate("document.querySelector('#vsock-lab .lab-modes').getBoundingClientRect().top"
                        " - document.getElementById('vsock-lab').getBoundingClientRect().top")
    assert top < 1000, top
    opened = page.evaluate("[...document.querySelectorAll('#vsock-lab details.lab-group')]"
                           ".filter(d => d.open).map(d => d.dataset.group)")
    assert opened == ["host"]                               # the link changed a host setting
    assert "1 changed" in page.locator('details[data-group="host"] summary').text_content()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.context.close()


def test_an_advanced_parameter_gets_a_control_in_a_folded_section(browser, site):
    # The schema will gain "advanced" hypothesis switches: any parameter of a kind
    # the lab knows gets a control, and group "advanced" is folded under its title.
    page, watch = offline_page(browser, site)

    def add_parameter(route):
        body = route.fetch().text()
        extra = {"name": "halt_polling", "kind": "bool", "default": False, "help": "a hypothesis", "unit": "",
                 "choices": [], "lo": None, "hi": None, "optional": False, "default_text": "", "power_of_two": False,
                 "log_scale": False, "allowed": "true or false", "group": "advanced", "cli_option": "--halt-polling",
                 "applies": {"variants": [], "workload": "", "reason": ""}}
        body = body.replace('"parameters": [', '"parameters": [' + json.dumps(extra) + ", ", 1)
        route.fulfill(body=body, content_type="text/javascript")

    page.route("**/lab-data.js", add_parameter)
    page.route("**/pyodide.asm.wasm", lambda route: None)
    page.goto(site + "book/lab.html")
    box = page.locator("details.lab-advanced")
    box.wait_for(state="attached", timeout=30_000)
    assert box.locator("summary").text_content().startswith("Advanced: mechanism hypotheses")
    assert box.get_attribute("open") is None
    assert box.locator(".lab-field[data-param=halt_polling] input[type=checkbox]").count() == 1
    page.context.close()


def test_opened_as_a_file_it_says_how_to_serve_it_and_shows_the_precomputed_run(browser):
    ensure_book_built()
    page, _ = offline_page(browser, "file://")
    page.goto((HTML / "book" / "lab.html").as_uri())
    expect(page.locator(".lab-status")).to_contain_text("python3 -m http.server", timeout=30_000)
    assert "file://" in page.locator(".lab-status").text_content()
    assert "Nothing here can be changed or run" in page.locator(".lab-provenance").text_content()
    page.wait_for_selector("#vsock-lab .lab-chart[data-drawn=true] svg", timeout=30_000)
    assert page.locator("#vsock-lab input, #vsock-lab select, #vsock-lab button").count() == 0
    page.context.close()


def test_the_intro_s_lab_link_lands_on_the_headline_drawn(browser, site):
    page, watch = offline_page(browser, site)
    page.goto(site + "book/intro.html")
    link = page.locator(".vsock-explorer a[href*='lab.html#']").locator("visible=true").first
    assert "mode=headline" in link.get_attribute("href")
    link.click()
    page.wait_for_url("**/book/lab.html#*")
    page.wait_for_selector(".lab-chart[data-chart=headline] svg", timeout=30_000)
    assert page.locator(".lab-tab[data-mode=headline]").get_attribute("aria-selected") == "true"
    assert page.locator("[data-note=headline]").text_content().startswith("Model and measurement part most at")
    assert watch.errors == [] and watch.external == []
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
        if k in values:
            assert str(values[k]).lower() == v.lower(), (k, values[k], v)
    _wait_run(page, " && ".join(f"String(r.params[{json.dumps(k)}]).toLowerCase() === {json.dumps(v.lower())}"
                                for k, v in settings.items() if k in values and k != "headroom_check"),
              timeout=60_000)
    assert watch.errors == [] and watch.external == []
    page.context.close()
