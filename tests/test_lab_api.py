"""The browser lab's Python side (vsockmodel.lab), under CPython.

The lab's worker calls these same functions in Pyodide; tests/test_lab_browser.py
checks that it gets the same answers there.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

import vsockmodel as vm
from vsockmodel import cli
from vsockmodel.lab import api, charts
from vsockmodel.model import schema

CONFIG = {"variant": "p1-p5", "payload": "2K", "buffer": "48K", "batch_pkts": 16, "headroom_check": False}


def test_the_schema_has_every_parameter_of_run_with_its_range_and_help():
    doc = json.loads(api.describe())
    names = [p["name"] for p in doc["parameters"]]
    assert names == [f for f in vm.Params.__dataclass_fields__]
    for p in doc["parameters"]:
        assert p["help"] and p["allowed"] and p["cli_option"].startswith("--")
        if p["kind"] in ("size", "int"):
            assert p["lo"] is not None
    assert doc["sweep_payloads"][0] == 64 and doc["sweep_payloads"][-1] == 65536


def test_check_gives_the_apis_own_message_naming_the_parameter():
    bad = json.loads(api.check({"payload": "banana"}))
    assert bad == {"ok": False, "param": "payload", "message": _api_error(payload="banana"),
                   "fields": [{"param": "payload", "message": _api_error(payload="banana")}]}
    bad = json.loads(api.check({"variant": "baseline", "batch_pkts": 8}))
    assert bad["param"] == "batch_pkts" and "applies to p1-p3 and p1-p5" in bad["message"]
    bad = json.loads(api.check({"nonsense": 1}))
    assert bad["param"] is None and bad["message"].startswith("unknown parameter")
    good = json.loads(api.check(CONFIG))
    assert good["ok"] and good["params"]["buffer"] == 49152 and good["params"]["headroom_check"] is False


def test_check_flags_every_bad_field_not_only_the_first():
    bad = json.loads(api.check({"payload": "banana", "buffer": 1, "seed": -1, "batch_pkts": 8}))
    assert bad["param"] == "payload"                       # the first, as run() says
    # each value wrong on its own, then a rule among the rest (batch_pkts on a per-packet variant)
    assert [f["param"] for f in bad["fields"]] == ["payload", "buffer", "seed", "batch_pkts"]
    assert all(f["message"] == _api_error(**{f["param"]: v}) for f, v in zip(bad["fields"], ("banana", 1, -1)))
    assert bad["fields"][3]["message"] == _api_error(batch_pkts=8)
    cross = json.loads(api.check({"payload": "banana", "rcvlowat": "300K"}))       # above the buffer
    assert [f["param"] for f in cross["fields"]] == ["payload", "rcvlowat"]


def test_an_out_of_range_size_quotes_what_was_typed():
    assert json.loads(api.check({"payload": "65M"}))["message"] == (
        "payload: 65M (68,157,440 bytes) is out of range; allowed [1 B, 64 MiB]")
    assert json.loads(api.check({"payload": 2049}))["derived"]["summary"].startswith("Each 2,049 B (2.0 KiB) send()")


def test_a_ping_pong_sweep_beside_the_measurements_says_the_level_is_not_the_model_s_claim():
    reply = json.loads(api.sweep_chart({"workload": "pingpong"}, [{"payload": 64, "value": 45.0}]))
    assert "measured" in reply["spec"]["datasets"] and "rather than its level" in reply["note"]
    stream = json.loads(api.sweep_chart({}, [{"payload": 64, "value": 0.1}]))
    assert stream["note"] == ""


def _api_error(**kwargs) -> str:
    with pytest.raises(ValueError) as exc:
        vm.make_params(**kwargs)
    return str(exc.value)


def test_a_run_is_exactly_the_apis_result():
    res = json.loads(api.run(CONFIG))
    assert res["ok"]
    assert res["result"] == json.loads(json.dumps(vm.run(**CONFIG).to_dict()))
    keys = [row["key"] for row in res["headline"]]
    assert "throughput_gbps" in keys and "rtt_us" not in keys       # a stream has no RTT
    assert set(res["worker_time"]) == {"busy", "lock_wait", "idle"}


@pytest.mark.parametrize("config", [CONFIG, {"workload": "pingpong", "payload": 64, "requests": 40},
                                    {"variant": "pre-skb", "payload": 300, "rx_buf_payload": "1K",
                                     "transfer": "300K", "seed": 7},
                                    {"variant": "p1-p3", "vhost_used_batch": True, "host_lock": True,
                                     "rx_ring_size": 256, "rcvlowat": "4K", "payload": "9000"}])
def test_the_command_line_it_prints_reproduces_the_run(config, capsys):
    res = json.loads(api.run(config))
    argv = shlex.split(res["command"]["cli"])
    assert argv[:3] == ["python", "-m", "vsockmodel"]
    assert cli.main(argv[3:] + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out) == res["result"]
    # and the Python call
    call = res["command"]["python"]
    assert call.startswith("vsockmodel.run(")
    assert json.loads(json.dumps(eval(call, {"vsockmodel": vm}).to_dict())) == res["result"]   # noqa: S307


def test_bad_input_runs_nothing():
    res = json.loads(api.run({"payload": 0}))
    assert res == {"ok": False, "param": "payload", "message": _api_error(payload=0)}


def test_compare_pairs_seeds_and_names_the_sides():
    res = json.loads(api.compare({"payload": 256}, {"payload": 256, "variant": "p1-p5"}, 3))
    c = vm.compare("baseline", "p1-p5", replications=3, payload=256)
    assert res["change_pct"] == c.change_pct and res["change_ci"] == list(c.change_ci)
    assert res["comparison"]["seeds"] == [1, 2, 3]
    assert res["command"]["cli"].startswith("python -m vsockmodel compare --variants baseline p1-p5")
    # a knob only B has
    res = json.loads(api.compare({"variant": "p1-p5"}, {"variant": "p1-p5", "vhost_used_batch": True}, 2))
    assert "--b-set vhost_used_batch=True" in res["command"]["cli"]
    bad = json.loads(api.compare({}, {"workload": "pingpong"}, 2))
    assert not bad["ok"] and bad["message"].startswith("workload:")


def test_the_compare_command_reproduces_the_change(capsys):
    res = json.loads(api.compare({"payload": 512, "seed": 4}, {"payload": 512, "variant": "p1-p3"}, 2))
    argv = shlex.split(res["command"]["cli"])
    assert cli.main(argv[3:] + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["change_pct"] == res["change_pct"]


def test_a_sweep_point_is_a_run_at_that_payload():
    pt = json.loads(api.sweep_point({"variant": "p1-p5", "transfer": "1M"}, 512))
    assert pt["value"] == vm.run(variant="p1-p5", payload=512).throughput_gbps   # its default length
    pt = json.loads(api.sweep_point({"variant": "p1-p5"}, 512, True))
    assert pt["value"] == vm.run(variant="p1-p5", payload=512, recv_size=512).throughput_gbps


def test_measurements_are_drawn_only_where_the_settings_are_the_test_bed():
    assert {m["source"] for m in api.measured({"variant": "p1-p5"})} == {"measured, v1", "measured, v2"}
    assert api.measured({"variant": "p1-p5", "buffer": "64K"}) == []
    assert api.measured({"variant": "p1-p5", "recv_size": "4K"}) == []
    assert api.measured({"variant": "p1-p5", "recv_size": "4K"}, matched=True)
    change = api.measured({"variant": "baseline"}, False, {"variant": "p1-p5"})
    assert change and all(m["ci_low"] is not None for m in change)
    assert api.measured({"variant": "baseline"}, False, {"variant": "p1-p5", "vhost_used_batch": True}) == []


def test_the_timeline_is_the_same_run_traced():
    res = json.loads(api.timeline({"payload": "2K"}))
    assert res["ok"] and res["span_us"] == api.TIMELINE_SPAN_NS / 1000
    rows = res["spec"]["data"]["values"]
    assert rows and {r["row"] for r in rows} <= {"RX worker holds", "RX worker waits", "reader holds", "reader waits"}
    assert all(res["t0_us"] <= r["start"] <= r["end"] <= res["t0_us"] + res["span_us"] for r in rows)
    later = json.loads(api.timeline({"payload": "2K"}, 0))
    assert later["t0_us"] == 0


def _specs():
    run = json.loads(api.run(CONFIG))
    yield run["charts"]["worker_time"]
    yield json.loads(api.timeline(CONFIG))["spec"]
    yield json.loads(api.compare({"payload": 256}, {"payload": 256, "variant": "p1-p5"}, 2))["chart"]
    yield json.loads(api.sweep_chart({"variant": "p1-p5"}, [{"payload": 64, "value": 0.2}]))["spec"]
    from vsockmodel.lab import headline as headline_module
    point = json.loads(headline_module.point(64, 2))
    yield json.loads(headline_module.chart([point]))["spec"]


@pytest.mark.parametrize("spec", list(_specs()), ids=["worker_time", "timeline", "compare", "sweep", "headline"])
def test_every_figure_has_a_text_alternative_units_and_the_book_palette(spec):
    assert spec["$schema"].endswith("vega-lite/v6.json") and len(spec["description"]) > 40
    text = json.dumps(spec)
    titles = [t for t in _find(spec, "title") if isinstance(t, str)]
    assert any("(" in t and ")" in t for t in titles), titles          # a unit in parentheses
    ranges = {c.lower() for c in _find(spec, "range") for c in (c if isinstance(c, list) else [])
              if isinstance(c, str)}
    shapes = {"circle", "diamond", "square", "triangle-up"}  # a shape scale's range (sweep, headline)
    assert ranges - shapes <= {c.lower() for c in charts.COLORS.values()} | {"#888888"}
    assert "NaN" not in text


def _find(node, key):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                yield v
            yield from _find(v, key)
    elif isinstance(node, list):
        for v in node:
            yield from _find(v, key)


def test_the_run_path_imports_nothing_pyodide_lacks():
    # Pyodide from npm has no numpy, scipy or matplotlib: block them and use the lab.
    code = """
import sys
for m in ("numpy", "scipy", "matplotlib", "joblib", "tqdm", "ipywidgets", "pandas"):
    sys.modules[m] = None
import json
from vsockmodel.lab import api
assert json.loads(api.run({"payload": 64}))["ok"]
assert json.loads(api.compare({}, {"variant": "p1-p5"}, 2))["ok"]
assert json.loads(api.timeline({}))["ok"]
assert json.loads(api.sweep_chart({}, [{"payload": 64, "value": 0.1}]))["ok"]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_the_schema_is_what_make_params_checks():
    # One schema: every range the lab shows is the range the API enforces.
    for p in schema.PARAMETERS:
        if p.kind in ("size", "int") and p.hi is not None and p.applies.to("p1-p3", "stream"):
            kw = {"variant": "p1-p3", p.name: p.hi + 1}
            with pytest.raises(ValueError, match=rf"^{p.name}: "):
                vm.make_params(**kw)


# ---- the page's own entry points (vsockmodel.lab.calls) ---------------------------------------

from vsockmodel.lab import calls, comparing, examples, formats, headline, metrics, pycode, sweeps, testbed  # noqa: E402
from vsockmodel.model.units import fmt_size_exact  # noqa: E402


def test_size_sliders_step_over_round_sizes_whose_texts_read_back_exactly():
    stops = formats.slider_stops(schema.BY_NAME["payload"])
    values = [s["value"] for s in stops]
    after_4k = values[values.index(4096) + 1]
    assert after_4k == 6144                                    # not 4277: a keyboard step lands on a round size
    for s in stops:
        assert vm.parse_size(s["text"]) == s["value"] and s["said"] == fmt_size_exact(s["value"])
    ring = [s["value"] for s in formats.slider_stops(schema.BY_NAME["rx_ring_size"])]
    assert ring == [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert formats.slider_stops(schema.BY_NAME["seed"]) is None
    for p in schema.PARAMETERS:                                # every default sits on a stop
        stops = formats.slider_stops(p)
        if stops and p.default is not None:
            assert p.default in [s["value"] for s in stops], p.name


def test_the_page_formats_no_size_itself():
    # One rule for sizes and counts: Python's (vsockmodel.model.units). The page's
    # JavaScript shows texts Python made; it has no KiB/MiB arithmetic of its own.
    from pathlib import Path
    static = Path(api.__file__).parent / "static"
    for js in static.glob("*.js"):
        code = "\n".join(line for line in js.read_text().splitlines() if not line.strip().startswith("//"))
        for forbidden in ('"KiB"', '" KiB"', "'KiB'", "* 1024", "/ 1024", "MiB", "toLocaleString(\"en\") + \" B"):
            assert forbidden not in code, (js.name, forbidden)


def test_a_checked_configuration_comes_with_every_value_as_the_page_shows_it():
    res = json.loads(calls.call("check", json.dumps([{"payload": 2049, "buffer": "48K"}])))
    assert res["shown"]["payload"] == {"text": "2049", "said": "2,049 B (2.0 KiB)", "short": "2.0 KiB"}
    assert res["shown"]["buffer"]["text"] == "48K"
    transfer = vm.make_params(payload=100)[0].transfer_bytes
    res = json.loads(calls.call("check", json.dumps([{"payload": 100}])))
    assert res["shown"]["derived.transfer"]["short"] == "781.2 KiB" == formats.fmt_size(transfer)
    bad = json.loads(calls.call("nonsense", "[]"))
    assert not bad["ok"] and "no such call 'nonsense'" in bad["message"]


def test_every_metric_a_reader_asked_for_is_offered_from_python():
    keys = [m["key"] for m in metrics.describe()]
    for wanted in ("lock_waits", "vhost_no_rx_buf_pct", "rx_cycles_per_byte", "packets_per_lock_hold",
                   "useful_wakeups", "futile_wakeups", "recv_per_write", "throughput_gbps"):
        assert wanted in keys
    page = calls.page_data()
    from vsockmodel.study import quiz
    assert page["metrics"] == metrics.describe() and page["quiz_chapters"] == sorted(quiz.CHAPTERS)


def test_compare_metrics_gives_each_metric_with_its_paired_interval():
    res = json.loads(comparing.compare_metrics({"payload": 256}, {"payload": 256, "variant": "p1-p5"}, 3))
    c = vm.compare("baseline", "p1-p5", replications=3, payload=256)
    rows = {r["key"]: r for r in res["metrics"]}
    assert rows["throughput_gbps"]["change_pct"] == c.change_pct
    assert rows["throughput_gbps"]["change_ci"] == list(c.change_ci)
    useful = [r.wakeups - r.futile_wakeups for r in c.runs_b.results]
    assert rows["useful_wakeups"]["b"] == useful
    # the baseline locks per packet (the closing OP_SHUTDOWN takes one hold of its own)
    assert rows["packets_per_lock_hold"]["a"] == [r.packets / (r.packets + 1) for r in c.runs_a.results]
    # a metric some run reports as zero: a paired difference, not a ratio
    lo, hi = c.change_ci
    assert rows["throughput_gbps"]["change_text"] == f"{c.change_pct:+.1f} % ({lo:+.1f} to {hi:+.1f})"
    zero = [r for r in res["metrics"] if r["change_pct"] is None]
    assert all(r["diff_ci"] is not None and "difference" in r["text"] for r in zero)
    assert res["chart"]["description"].startswith("throughput:")
    bad = json.loads(comparing.compare_metrics({"payload": 256}, {"variant": "p1-p5"}, 2, "rtt_us"))
    assert bad["param"] == "metric" and bad["message"].startswith("metric: 'rtt_us' is not reported by these runs; allowed: throughput_gbps, ")
    other = json.loads(comparing.redraw(res, "lock_waits"))
    assert other["chart"]["description"].startswith("socket-lock waits")
    # the Python it prints reproduces every line
    out = subprocess.run([sys.executable, "-c", res["command"]["python"]], capture_output=True, text=True, timeout=300)
    assert out.stdout.splitlines() == [r["text"] for r in res["metrics"]]


def test_a_comparison_on_the_test_bed_shows_the_measured_change_and_how_far_apart():
    res = json.loads(comparing.compare_metrics({"payload": 64}, {"payload": 64, "variant": "p1-p5"}, 2))
    [v1, v2] = res["measured"]
    assert (v1["table"], v1["value"], v1["ci_low"]) == ("v1_all_fixed64k", 92.91, 89.31)
    model = res["metrics"][0]["change_pct"]
    assert f"{abs(model - 92.91):.1f} points" in res["measured_text"]
    off = json.loads(comparing.compare_metrics({"payload": 64, "buffer": "64K"},
                                               {"payload": 64, "buffer": "64K", "variant": "p1-p5"}, 2))
    assert off["measured"] == [] and off["measured_text"] == ""
    matched = testbed.measured_changes({"payload": 256, "recv_size": 256}, {"payload": 256, "recv_size": 256,
                                                                            "variant": "p1-p3"})
    assert [m["table"] for m in matched] == ["v1_p1p3_fixedsyscall", "v2_p1p3_fixedsyscall"]
    assert testbed.measured_changes({"payload": 100}, {"payload": 100, "variant": "p1-p5"}) == []


def test_the_headline_is_the_compare_of_the_book_and_its_sentence_comes_from_the_numbers():
    pt = json.loads(headline.point(64, 2))
    c = vm.compare("baseline", "p1-p5", replications=2, payload=64)
    assert pt["gains"]["p1-p5"]["value"] == pytest.approx(c.change_pct, rel=1e-12)
    assert [pt["gains"]["p1-p5"]["ci_low"], pt["gains"]["p1-p5"]["ci_high"]] == pytest.approx(list(c.change_ci))
    # the sentence names the payload where model and measurement part most
    fake = [{"payload": p, "gains": {"p1-p5": {"value": m["value"] + (40 if p == 4096 else 1),
                                               "ci_low": m["ci_low"], "ci_high": m["ci_high"]}}}
            for p, m in ((m["payload"], m) for m in headline.measured()["p1-p5"])]
    text = headline.where_they_part(fake, headline.measured())
    assert text.startswith("Model and measurement part most at 4 KiB") and "40.0 points apart" in text
    res = json.loads(headline.chart([pt]))
    drawn = {(r["variant"], r["kind"]) for r in res["spec"]["data"]["values"]}
    assert drawn == {(v, k) for v in ("p1-p3", "p1-p5") for k in ("model", "measured (v1 cover letter)")}
    off = json.loads(headline.chart([pt], buffer="64K"))
    assert "not the series' test bed" in off["sentence"]


def test_the_sweep_s_python_loop_prints_the_sweep():
    cmd = sweeps.command({"variant": "p1-p5", "buffer": "64K"})
    assert cmd["cli"].startswith("for p in 64 128 ") and "--buffer" in cmd["cli"]
    short = cmd["python"].replace(str(list(api.SWEEP_PAYLOADS)), "[64, 4096]")
    out = subprocess.run([sys.executable, "-c", short], capture_output=True, text=True, timeout=300)
    expected = [f"{p} {json.loads(api.sweep_point({'variant': 'p1-p5', 'buffer': '64K'}, p))['value']}"
                for p in (64, 4096)]
    assert out.stdout.splitlines() == expected
    change = sweeps.command({"variant": "baseline"}, False, {"variant": "p1-p5"})
    assert "compare --variants baseline p1-p5" in change["cli"]
    apart = sweeps.apart([{"payload": 64, "value": 50.0}], False, {"variant": "baseline"}, {"variant": "p1-p5"})
    assert "42.9 at most (at 64 B: model +50.0 %, measured +92.9 %)" in apart
    assert sweeps.apart([{"payload": 64, "value": 50.0}], False, {"buffer": "64K"}) == ""


@pytest.mark.parametrize("example", examples.EXAMPLES, ids=[e.key for e in examples.EXAMPLES])
def test_every_starting_example_runs_and_prints(example, capsys):
    res = json.loads(pycode.run_code(example.code))
    assert res["ok"], res["error"]
    assert capsys.readouterr().out.strip()
    assert all(f["$schema"].endswith("v6.json") and f["description"] for f in res["figures"])


def test_examples_are_keyed_by_chapter_slug():
    slugs = {e.chapter for e in examples.EXAMPLES}
    assert {"per-packet-locking", "batched-rx", "metadata-slots", "notification-deferral", "measuring"} <= slugs
    assert all(not s[0].isdigit() for s in slugs)


def test_an_error_s_traceback_points_at_the_reader_s_line_only(capsys):
    res = json.loads(pycode.run_code("import vsockmodel\n\ndef f():\n    return vsockmodel.run(payload=0)\n\nf()\n"))
    assert not res["ok"]
    lines = [line for line in res["error"].splitlines() if line.strip(" ^~")]    # not the markers under a call
    assert lines == [
        "Traceback (most recent call last):", '  File "<lab>", line 6, in <module>', "    f()",
        '  File "<lab>", line 4, in f', "    return vsockmodel.run(payload=0)",
        "ValueError: " + _api_error(payload=0)]
    syntax = json.loads(pycode.run_code("print(1)\nfor i in range(3)\n    print(i)\n"))
    assert 'File "<lab>", line 2' in syntax["error"] and "SyntaxError" in syntax["error"]
    assert capsys.readouterr().out == ""                     # nothing ran before the syntax error
    gone = json.loads(pycode.run_code("raise SystemExit(3)"))
    assert not gone["ok"] and "SystemExit: 3" in gone["error"]


def test_show_draws_runs_comparisons_sweeps_and_points():
    r = vm.run(payload=64, transfer="64K")
    assert pycode.figure(r)["description"].startswith("RX worker's time")
    c = vm.compare("baseline", "p1-p5", replications=2, payload=64, transfer="64K")
    assert "change" in pycode.figure(c)["description"]
    sweep = {p: vm.run(payload=p, transfer="64K") for p in (64, 256)}
    assert pycode.figure(sweep)["datasets"]["model"][0]["payload"] == 64
    pts = pycode.figure([(1, 2.0), (2, 3.5)], title="t", x="seed", y="throughput (Gbit/s)")
    assert pts["data"]["values"] == [{"x": 1.0, "y": 2.0}, {"x": 2.0, "y": 3.5}] and pts["title"] == "t"
    assert [pts["encoding"][a]["title"] for a in "xy"] == ["seed", "throughput (Gbit/s)"]
    with pytest.raises(TypeError, match="show\\(\\) draws"):
        pycode.figure("not a figure")
    res = json.loads(pycode.run_code("import vsockmodel\nvsockmodel.lab.show([(1, 2), (3, 4)])\n"))
    assert res["ok"] and len(res["figures"]) == 1
