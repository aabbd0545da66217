"""Regression tests for input and data defects found by trying the package as a new user.

The command line is called in-process (``cli.main(argv)``), which is what it
runs; tests/test_model_interface.py keeps a few real subprocess calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from importlib import resources

import pytest

import vsockmodel as vm
from vsockmodel import cli
from vsockmodel.model import costs as costs_module
from vsockmodel.model.schema import PARAMETERS
from vsockmodel.study import calibrate, measurements


def run_cli(capsys, *argv):
    status = cli.main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


# ---- the API: Params and simulate validate too ---------------------------------------

@pytest.mark.parametrize("kwargs,start", [
    ({"payload": 0}, "payload: 0 bytes is out of range"),
    ({"variant": "foo"}, "variant: unknown variant 'foo'"),
    ({"transfer": 10**12}, "transfer: 1,000,000,000,000 B (931.3 GiB) is out of range"),
])
def test_params_made_directly_are_validated(kwargs, start):
    t0 = time.perf_counter()
    with pytest.raises(ValueError) as exc:
        vm.simulate(vm.Params(**kwargs), vm.Costs())
    assert str(exc.value).startswith(start)
    assert time.perf_counter() - t0 < 1.0        # refused up front, not after a long run


def test_a_too_large_transfer_is_reported_as_given_not_rounded():
    with pytest.raises(ValueError) as exc:
        vm.make_params(payload=4096, transfer=10**12 + 1)
    assert str(exc.value).startswith("transfer: 1,000,000,000,001 B")


def test_api_errors_name_no_command_line_flag():
    with pytest.raises(ValueError) as exc:
        vm.run(variant="baseline", headroom_check=False)
    assert "--" not in str(exc.value) and "headroom_check" in str(exc.value)


def test_traces_are_not_kept_over_replications():
    # 3 traced runs of 400,000 one-byte packets reached 2.4 GB: refused up front.
    with pytest.raises(ValueError, match="^trace: not kept over replications"):
        vm.replicate(3, trace=True, payload=1, transfer=399992)


def test_estimate_of_a_field_that_is_not_a_number_says_so():
    reps = vm.replicate(2, payload=64, transfer="8K")
    with pytest.raises(ValueError, match=r"^metric: 'trace' is not a number"):
        reps.estimate("trace")


@pytest.mark.parametrize("value", ["\u0663", "1_000", "1K", " 8 x"])
def test_integers_follow_the_size_rule_ascii_digits_only(value):
    with pytest.raises(ValueError, match="^batch_pkts: expected an integer"):
        vm.make_params(variant="p1-p3", batch_pkts=value)
    assert vm.make_params(variant="p1-p3", batch_pkts="16")[0].batch_pkts == 16


# ---- data files ----------------------------------------------------------------------

class _FakeFiles:
    def __init__(self, root):
        self.root = root

    def joinpath(self, *parts):
        return self.root.joinpath(*parts)


def test_a_missing_calibration_is_an_error_not_a_silent_fallback(monkeypatch, tmp_path, capsys):
    (tmp_path / "data").mkdir()
    monkeypatch.setattr(resources, "files", lambda _pkg: _FakeFiles(tmp_path))
    with pytest.raises(ValueError, match=r"costs.json: missing .*calibrate"):
        costs_module.default_costs()
    status, out, err = run_cli(capsys, "run", "--payload", "64")
    assert status == 2 and out == "" and "costs.json: missing" in err


def test_an_invalid_calibrated_value_names_the_file(monkeypatch, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "costs.json").write_text(json.dumps({"costs": {"irq_ns": -5}}))
    monkeypatch.setattr(resources, "files", lambda _pkg: _FakeFiles(tmp_path))
    with pytest.raises(ValueError) as exc:
        costs_module.default_costs()
    assert str(exc.value).startswith("vsockmodel/model/data/costs.json: costs.irq_ns: -5")


def test_a_data_file_that_is_not_utf8_is_named(tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_bytes(b"table,state\n\xff\xfe\n")
    with pytest.raises(measurements.MeasurementsError, match=rf"^{bad}: not UTF-8 text"):
        measurements.rows(bad)


def test_calibrate_that_cannot_write_is_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(calibrate, "fit", lambda *a, **k: {
        "costs": {}, "scales": {}, "scales_at_bound": [], "rms_pct": 0.0, "tables": [], "seeds": [],
        "packets_per_run": 0, "rows": [], "timing": {},
        "timing_fit": {"table": "v1_all_fixed64k", "evaluations": 0, "rms_pct_by_state": {}, "rows": []}})
    target = tmp_path / "no" / "such" / "dir" / "costs.json"
    real_write = calibrate.write
    monkeypatch.setattr(calibrate, "write", lambda result: real_write(result, target))
    status, out, err = run_cli(capsys, "calibrate", "-q")
    assert status == 1 and "Traceback" not in err
    assert err.strip().startswith("python -m vsockmodel calibrate: error: cannot write")
    assert len(err.strip().splitlines()) == 1


# ---- the command line ------------------------------------------------------------------

@pytest.mark.parametrize("argv,start", [
    (["run", "--variant", "p1-p3", "--headroom-check", "--no-headroom-check"],
     "headroom_check: --headroom-check and --no-headroom-check both set it"),
    (["run", "--payload", "4K", "--payload", "8K"], "payload: --payload 4K and --payload 8K both set it"),
    (["compare", "--b-set", "batch_pkts=4", "--b-set", "batch_pkts=8"], "--b-set: batch_pkts is set twice"),
    (["compare", "--variants", "p1-p5", "p1-p5", "--a-set", "variant=baseline"],
     "variant: --variants p1-p5 p1-p5 and --a-set variant=baseline both set side A's variant"),
    (["run", "--payload", "-inf"], "payload: cannot read '-inf' as a size"),
    (["run", "--payload", "-4K"], "payload: -4K (-4,096 bytes) is out of range"),
    (["run", "--rx-ring-size", "\u0663"], "rx_ring_size: expected an integer"),
    (["run", "-c"], "-c prints a quiz's answers: use it with --quiz"),
])
def test_cli_conflicts_and_odd_values_are_one_line_naming_the_parameter(capsys, argv, start):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith(f"python -m vsockmodel {argv[0]}: error: {start}"), err
    assert len(err.strip().splitlines()) == 1


def test_cli_a_reset_stream_over_seeds_is_a_result_not_bad_input(capsys):
    status, out, err = run_cli(capsys, "run", "--buffer", "128", "--replications", "2")
    assert status == 0 and err == ""
    assert "undefined with seed 1: no byte was received" in out


def test_cli_pingpong_quiz_asks_about_rtt(capsys):
    status, out, _ = run_cli(capsys, "run", "--workload", "pingpong", "--quiz")
    assert status == 0 and "round-trip time" in out and "throughput" not in out.lower()


def test_cli_stream_runs_do_not_echo_ping_pong_settings(capsys):
    _, out, _ = run_cli(capsys, "run", "--quiz")
    assert "ARG requests" not in out and "ARG transfer" in out
    _, out, _ = run_cli(capsys, "run", "--workload", "pingpong", "--quiz")
    assert "ARG requests 300" in out and "ARG transfer" not in out


def test_cli_options_come_from_the_schema_and_all_have_help():
    parser = cli.build_parser()
    subparsers = parser._subparsers._group_actions[0].choices          # noqa: SLF001
    run_options = {opt for a in subparsers["run"]._actions for opt in a.option_strings}  # noqa: SLF001
    for prm in PARAMETERS:
        if prm.name != "trace":
            assert prm.cli_option in run_options, prm.name
    for name, sub in subparsers.items():
        for action in sub._actions:                                    # noqa: SLF001
            if action.help is not None and action.help != "==SUPPRESS==":
                assert action.help.strip(), (name, action.option_strings)
            elif action.help is None:
                raise AssertionError(f"{name} {action.option_strings}: no help text")
    calibrate_help = subparsers["calibrate"].format_help()
    assert "rewrite" in calibrate_help and "costs.json" in calibrate_help


def test_a_traced_run_keeps_at_most_max_trace_events(monkeypatch):
    # Memory is bounded as well as time: the largest traced run stops recording
    # at Sim.MAX_TRACE_EVENTS (600,000 entries, about 250 MB at most) and says so.
    from vsockmodel.sim.engine import Sim
    monkeypatch.setattr(Sim, "MAX_TRACE_EVENTS", 500)
    r = vm.run(payload=64, transfer="64K", trace=True)
    assert len(r.trace) == 500 and r.trace_truncated and r.to_dict()["trace_truncated"]
    full = vm.run(payload=64, transfer="64K")
    assert r.throughput_gbps == full.throughput_gbps          # the run itself is the same


@pytest.mark.parametrize("value", ["4KB", "4 kb", "1MB", "2GB"])
def test_decimal_looking_units_are_refused_not_guessed(value):
    # "4KB" is 4000 bytes to some readers and 4096 to others: one message says
    # what to write instead, on the API and the command line alike.
    with pytest.raises(ValueError, match=r"^payload: .* is ambiguous .*sizes here are binary: write \d+[KMG] or"):
        vm.run(payload=value)
    proc = subprocess.run([sys.executable, "-m", "vsockmodel", "run", "--payload", value],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is ambiguous" in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("value,n", [("4K", 4096), ("4KiB", 4096), ("512B", 512), ("1.5k", 1536)])
def test_binary_units_are_read(value, n):
    assert vm.make_params(payload=value)[0].payload == n
