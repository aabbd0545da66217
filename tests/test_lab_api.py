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


@pytest.mark.parametrize("spec", list(_specs()), ids=["worker_time", "timeline", "compare", "sweep"])
def test_every_figure_has_a_text_alternative_units_and_the_book_palette(spec):
    assert spec["$schema"].endswith("vega-lite/v6.json") and len(spec["description"]) > 40
    text = json.dumps(spec)
    titles = [t for t in _find(spec, "title") if isinstance(t, str)]
    assert any("(" in t and ")" in t for t in titles), titles          # a unit in parentheses
    ranges = {c.lower() for c in _find(spec, "range") for c in (c if isinstance(c, list) else [])
              if isinstance(c, str)}
    shapes = {"circle", "diamond"}                          # a shape scale's range (the sweep's)
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
