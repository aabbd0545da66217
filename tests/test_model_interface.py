"""The v1 review's scenario, bad input, and the command line."""

import contextlib
import io
import json
import statistics
import subprocess
import sys

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vsockmodel as vm
from vsockmodel.model import kernel
from vsockmodel.model.params import MAX_WORK
from vsockmodel.scenarios.starvation import starvation

# ---- the v1 review's scenario: two same-flow packets, queue_max == 1 ----------


def test_a_1k_buffer_leaves_one_metadata_slot():
    assert kernel.queue_max(1024) == 1
    assert kernel.rx_skb_has_headroom(0, 1024) and not kernel.rx_skb_has_headroom(1, 1024)


def test_fast_reader_per_packet_locking_gives_the_reader_its_chance():
    r = starvation(variant="baseline", buffer="1K", reader_wake_ns=200)
    assert not r.reset and r.bytes_received == 2 * r.payload
    # the reader dequeued the first packet between the two lock holds of the worker
    events = [(a, e.split()[0]) for _, a, e in r.interleaving]
    assert events.index(("reader", "recv")) < events.index(("worker", "enqueue"), 1 + events.index(("worker", "enqueue")))


def test_fast_reader_batch_without_headroom_check_resets():
    r = starvation(variant="p1-p3", buffer="1K", headroom_check=False, reader_wake_ns=200)
    assert r.reset and "ENOBUFS" in r.reason and r.bytes_received == 0


@pytest.mark.parametrize("variant", ["p1-p3", "p1-p5"])
def test_fast_reader_batch_with_headroom_check_survives(variant):
    r = starvation(variant=variant, buffer="1K", headroom_check=True, reader_wake_ns=200)
    assert not r.reset and r.bytes_received == 2 * r.payload


@pytest.mark.parametrize("variant,check", [("baseline", None), ("p1-p3", True), ("p1-p3", False)])
def test_slow_reader_every_sk_buff_mode_resets(variant, check):
    # The check restores an opportunity; it does not guarantee it (the v1 review).
    r = starvation(variant=variant, buffer="1K", headroom_check=check, reader_wake_ns=20_000)
    assert r.reset


def test_pre_skb_has_no_metadata_budget():
    assert not starvation(variant="pre-skb", buffer="1K", reader_wake_ns=20_000).reset


# ---- bad input: one clear ValueError naming the parameter and its range -------------

@pytest.mark.parametrize("kwargs,name,hint", [
    ({"payload": -4}, "payload", "[1 B,"),
    ({"payload": 0}, "payload", "[1 B,"),
    ({"buffer": 64}, "buffer", "128"),
    ({"buffer": 0}, "buffer", "128"),
    ({"variant": "p1-p9"}, "variant", "baseline"),
    ({"workload": "rr"}, "workload", "pingpong"),
    ({"batch_pkts": 0}, "batch_pkts", "[1, 4,096] packets"),
    ({"batch_bytes": 0}, "batch_bytes", "[1 B,"),
    ({"recv_size": 0}, "recv_size", "[1 B,"),
    ({"payload": 64, "transfer": "10G"}, "transfer", "at most"),
    ({"payload": "4X"}, "payload", "suffix"),
    ({"payload": "abc"}, "payload", "allowed [1 B, 64 MiB]"),
    ({"payload": "\u0664K"}, "payload", "as a size"),      # ASCII digits only
    ({"payload": "4.3K"}, "payload", "whole number of bytes; allowed [1 B, 64 MiB]"),
    ({"payload": 4096.5}, "payload", "whole number of bytes"),
    ({"buffer": None}, "buffer", "allowed [128 B, 64 MiB]"),
    # a knob of the other workload would do nothing
    ({"workload": "pingpong", "transfer": "4K"}, "transfer", "allowed here: unset"),
    ({"requests": 5}, "requests", "the default, 300"),
    ({"rcvlowat": 1 << 20}, "rcvlowat", "buffer"),
    ({"seed": -1}, "seed", "[0,"),
    ({"nonsense": 1}, "nonsense", "known"),
    ({"costs": {"lock_ns": -1}}, "lock_ns", "[0,"),
    # wrong types and non-finite numbers: still one ValueError naming the parameter
    ({"variant": ["p1-p3"]}, "variant", "baseline"),
    ({"costs": {1: 2}}, "costs", "known"),
    ({"costs": {"irq_ns": float("nan")}}, "irq_ns", "finite"),
    ({"costs": {"jitter_cv": float("inf")}}, "jitter_cv", "finite"),
    ({"costs": {"irq_ns": True}}, "irq_ns", "finite"),
    ({"costs": {"clock_ghz": 0}}, "clock_ghz", "(0,"),
    ({"payload": "4\nK"}, "payload", "suffix"),
    ({"batch_pkts": 1.5}, "batch_pkts", "[1, 4,096]"),
    # lock-batch knobs on a variant that locks per packet would do nothing
    ({"variant": "baseline", "batch_pkts": 8}, "batch_pkts", "applies to p1-p3 and p1-p5"),
    ({"variant": "pre-skb", "batch_bytes": "4K"}, "batch_bytes", "the default, 64 KiB"),
    ({"variant": "baseline", "headroom_check": True}, "headroom_check", "allowed here: unset"),
    ({"rcvlowat": float("nan")}, "rcvlowat", "as a size"),
    ({"rx_ring_size": 100}, "rx_ring_size", "power of two"),
    ({"rx_ring_size": 4}, "rx_ring_size", "[8, 4,096]"),
    ({"rx_ring_size": 0}, "rx_ring_size", "[8, 4,096]"),
    # work that would take minutes: refused up front, naming what to change
    ({"recv_size": 1, "payload": "1M"}, "recv_size", "recv_size >= 2"),
    ({"workload": "pingpong", "payload": "64M", "requests": 100}, "requests", "[1, 24]"),
])
def test_bad_input_is_one_clear_error(kwargs, name, hint):
    with pytest.raises(ValueError) as exc:
        vm.run(**kwargs)
    msg = str(exc.value)
    assert name in msg and hint in msg and "\n" not in msg


@pytest.mark.parametrize("kwargs", [
    {"seed": 2**63}, {"rx_ring_size": 8192}, {"rcvlowat": "300K"}, {"batch_pkts": 5000, "variant": "p1-p3"},
    {"variant": "pre-skb", "payload": 12288, "transfer": 4096000000}, {"buffer": 4096, "rcvlowat": 4096},
    {"variant": "pre-skb", "batch_bytes": "4K"}, {"workload": "pingpong", "requests": 200_000},
])
def test_every_range_an_error_quotes_has_one_format_for_sizes_and_counts(kwargs):
    # Sizes as "64 KiB" (exact: "1,542,008,832 B (1.4 GiB)"), counts with separators
    # ("9,223,372,036,854,775,807"): never a bare "[1, 262144] bytes" beside "[1 B, 64 MiB]".
    with pytest.raises(ValueError) as exc:
        vm.make_params(**kwargs)
    msg = str(exc.value)
    assert not re.search(r"(?<![\d,.])\d{5,}(?![\d,])", msg), msg
    assert "] bytes" not in msg, msg


def test_sizes_accept_suffixes():
    p, _ = vm.make_params(payload="4K", recv_size="64KiB", buffer="1M")
    assert (p.payload, p.recv_size, p.buffer) == (4096, 65536, 1 << 20)


def test_a_decimal_size_is_accepted_when_it_is_whole_bytes_as_a_float_is():
    p, _ = vm.make_params(payload="4096.0", recv_size="1.5K", buffer=262144.0)
    assert (p.payload, p.recv_size, p.buffer) == (4096, 1536, 262144)


def test_the_largest_accepted_values_are_the_ones_the_errors_quote():
    # The upper bound an error quotes is itself accepted, and one more byte is not.
    with pytest.raises(ValueError) as exc:
        vm.make_params(variant="pre-skb", payload=12288, transfer=4096000000)
    top = _quoted_number(str(exc.value).split("allowed [1 B, ")[1].split("]")[0])
    assert vm.make_params(variant="pre-skb", payload=12288, transfer=top)[0].work_units <= MAX_WORK
    with pytest.raises(ValueError, match="transfer"):
        vm.make_params(variant="pre-skb", payload=12288, transfer=top + 1)
    # The largest payload runs with its default transfer.
    assert vm.make_params(payload="64M")[0].work_units <= MAX_WORK


def test_starvation_bad_input_is_one_clear_error():
    from vsockmodel.scenarios.starvation import starvation
    with pytest.raises(ValueError, match="^unknown parameter"):
        starvation(foo=1)
    with pytest.raises(ValueError, match="^reader_wake_ns"):
        starvation(reader_wake_ns=True)


def test_recv_calls_count_towards_the_run_bound(monkeypatch):
    # A reader taking 64 B at a time from 64 KiB writes makes few packets but
    # many recv() calls; the bound must see them, or such a run could go on
    # far past its wall-time limit without ever being checked.
    import vsockmodel as vm
    kwargs = dict(payload="64K", recv_size=64, transfer=64 * 1024 * 20)
    assert vm.run(**kwargs).recv_calls > 20_000
    monkeypatch.setattr(vm.sim.engine.Sim, "MAX_EVENTS_PER_PACKET", 0)   # leaves the fixed 10000
    with pytest.raises(vm.SimulationLimitExceeded):
        vm.run(**kwargs)


def test_runs_are_bounded(monkeypatch):
    import vsockmodel as vm
    # the largest run allowed is refused before it starts when it would be too long...
    with pytest.raises(ValueError, match="transfer"):
        vm.make_params(payload=1, transfer=10**9)
    # ...and the event budget stops a run that goes wrong
    monkeypatch.setattr(vm.sim.engine.Sim, "MAX_EVENTS_PER_PACKET", 0)
    with pytest.raises(vm.SimulationLimitExceeded):
        vm.run(payload=4096, transfer=4096 * 20000)


# ---- the command line ------------------------------------------------------------------

def cli(*args):
    """``python -m vsockmodel ARGS``, in this process: what main() returns and prints."""
    from vsockmodel import cli as cli_module
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_module.main(list(args))
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def cli_process(*args):
    """The real command, in a new process (for the smoke tests of the entry point)."""
    return subprocess.run([sys.executable, "-m", "vsockmodel", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_command_runs_as_a_program():
    out = cli_process("run", "--payload", "64", "--transfer", "64K", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["params"]["payload"] == 64
    bad = cli_process("run", "--payload", "banana")
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.count("\n") == 1


def test_cli_run_json_has_the_documented_fields():
    out = cli("run", "--variant", "p1-p3", "--payload", "4K", "--recv-size", "64K",
              "--buffer", "256K", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    for key in ("throughput_gbps", "recv_calls", "writes", "packets", "bytes_sent",
                "bytes_received", "bytes_dropped", "resets", "rx_cycles_per_byte",
                "wakeups", "futile_wakeups"):
        assert key in d
    assert d["params"]["variant"] == "p1-p3" and d["params"]["payload"] == 4096


def test_cli_reads_a_decimal_size_as_the_api_does():
    d = json.loads(cli("run", "--payload", "4096.0", "--transfer", "64K", "--json").stdout)
    assert d["params"]["payload"] == 4096
    out = cli("run", "--payload", "4.3K")
    assert out.returncode == 2 and "payload: '4.3K' is not a whole number of bytes" in out.stderr


def test_cli_rcvlowat_takes_a_size_like_the_other_byte_counts():
    d = json.loads(cli("run", "--payload", "4K", "--transfer", "64K", "--rcvlowat", "2K",
                       "--json").stdout)
    assert d["params"]["rcvlowat"] == 2048


def test_cli_stops_quietly_when_its_reader_goes_away():
    # `python -m vsockmodel run | head -2`: the pipe closes under the printer.
    proc = subprocess.Popen([sys.executable, "-m", "vsockmodel", "run", "--payload", "4K",
                             "--transfer", "64K"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                                 # before it has printed anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1 and "Traceback" not in err, err


def test_cli_host_lock_flag_reaches_the_model_and_its_counters():
    on = json.loads(cli("run", "--variant", "p1-p5", "--payload", "256", "--transfer", "256K",
                        "--host-lock", "--json").stdout)
    off = json.loads(cli("run", "--variant", "p1-p5", "--payload", "256", "--transfer", "256K",
                         "--json").stdout)
    assert on["params"]["host_lock"] is True and off["params"]["host_lock"] is False
    assert on["counters"]["host_lock_waits"] > 0 == off["counters"]["host_lock_waits"]
    text = cli("run", "--variant", "p1-p5", "--payload", "256", "--transfer", "256K", "--host-lock").stdout
    assert "ARG host_lock True" in text and "host_lock_waits" in text
    from vsockmodel.cli import build_parser
    assert build_parser().parse_args(["validate", "--host-lock"]).host_lock is True
    assert build_parser().parse_args(["validate"]).host_lock is False


def test_cli_rx_ring_size_reaches_the_model():
    args = ("run", "--payload", "4K", "--transfer", "2M", "--json")
    big = json.loads(cli(*args, "--rx-ring-size", "1024").stdout)
    default = json.loads(cli(*args).stdout)
    assert big["params"]["rx_ring_size"] == 1024 and default["params"]["rx_ring_size"] == 128
    assert big["counters"]["refills"] < default["counters"]["refills"]
    out = cli("run", "--rx-ring-size", "100")
    assert out.returncode == 2 and "rx_ring_size" in out.stderr and "Traceback" not in out.stderr


def test_cli_pingpong_json_has_rtt():
    d = json.loads(cli("run", "--workload", "pingpong", "--requests", "50", "--json").stdout)
    assert d["rtt_us"] > 0


def test_cli_echoes_arguments_and_hides_answers_in_quiz_mode():
    out = cli("run", "--payload", "64", "--quiz", "-s", "3")
    assert "ARG payload 64" in out.stdout and "ARG seed 3" in out.stdout
    assert "Gbit/s" not in out.stdout
    assert "Gbit/s" in cli("run", "--payload", "64", "--quiz", "-c", "-s", "3").stdout


def test_cli_starvation():
    out = cli("starvation", "--buffer", "1K", "--variant", "p1-p3", "--no-headroom-check", "--json")
    assert json.loads(out.stdout)["reset"] is True
    out = cli("starvation", "--buffer", "1K", "--variant", "p1-p3", "--json")
    assert json.loads(out.stdout)["reset"] is False


@pytest.mark.parametrize("args", [
    ["run", "--payload", "-4"], ["run", "--variant", "nope"], ["run", "--buffer", "0"],
    ["run", "--batch-pkts", "0"], ["run", "--recv-size", "0"], ["run", "--bogus"],
    ["starvation", "--buffer", "64"], ["run", "--batch-pkts", "1.5"], ["run", "--jobs", "4"],
    ["run", "--recv-size", "1", "--transfer", "1G"], ["validate", "--jobs", "-1"],
    ["starvation", "--seed", "x"], ["starvation", "--reader-wake-ns", "abc"],
    ["run", "--rcvlowat", "1X"],
    ["run", "--variant", "baseline", "--batch-pkts", "8"],
    ["run", "--payload", "-4K"], ["starvation", "--payload", "-4K"],   # not argparse's "expected one argument"
    ["run", "--quiz", "--json"],
    ["compare", "--buffer", "128", "--replications", "2"],             # reset: no ratio to take
    ["starvation", "--variant", "baseline", "--no-headroom-check"],
])
def test_cli_bad_input_exits_2_with_one_line(args):
    out = cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    # named as the subcommand's own errors are, with the range for numbers
    assert out.stderr.startswith(f"python -m vsockmodel {args[0]}: error: ")


def test_cli_echo_marks_the_lock_batch_knobs_of_a_per_packet_variant():
    echo = cli("run", "--variant", "baseline", "--quiz").stdout.splitlines()
    assert {"ARG batch_pkts -", "ARG batch_bytes -", "ARG headroom_check -"} <= set(echo)
    echo = cli("run", "--variant", "p1-p3", "--quiz").stdout.splitlines()
    assert {"ARG batch_pkts 64", "ARG batch_bytes 65536", "ARG headroom_check True"} <= set(echo)


def test_cli_an_integer_option_that_is_not_an_integer_gets_its_range():
    assert "batch_pkts: expected an integer in [1, 4,096]" in cli("run", "--batch-pkts", "1.5").stderr
    assert "reader_wake_ns: expected a number in [0, 1e9]" in cli(
        "starvation", "--reader-wake-ns", "abc").stderr


def test_cli_a_run_stopped_by_its_bound_is_one_line(monkeypatch, capsys):
    import importlib
    cli_module = importlib.import_module("vsockmodel.cli")
    monkeypatch.setattr(importlib.import_module("vsockmodel.sim.engine").Sim, "MAX_EVENTS_PER_PACKET", 0)
    assert cli_module.main(["run", "--payload", "4K", "--transfer", "80M", "--json"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "scheduling events" in err


# ---- calibrate / validate refuse bad data -------------------------------------------

def test_validate_and_calibrate_refuse_malformed_seed_data(monkeypatch, capsys):
    from vsockmodel import cli
    from vsockmodel.study import measurements

    def broken(*_a, **_k):
        raise measurements.MeasurementsError("vsockmodel/study/data/measurements.csv, line 7: column 'value' "
                                     "is not a number: 'x'")

    monkeypatch.setattr(measurements, "change", broken)
    monkeypatch.setattr(measurements, "values", broken)
    for command in (["validate", "-q"], ["calibrate", "-q", "--dry-run"]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "measurements.csv, line 7" in err[0]


def test_a_malformed_calibration_file_is_one_clear_error(monkeypatch, tmp_path):
    from importlib import resources

    from vsockmodel.model import costs

    bad = tmp_path / "data"
    bad.mkdir()
    (bad / "costs.json").write_text("{not json")

    class Fake:
        def joinpath(self, *parts):
            return tmp_path.joinpath(*parts)

    monkeypatch.setattr(resources, "files", lambda _pkg: Fake())
    with pytest.raises(ValueError, match="costs.json: malformed"):
        costs.load_calibrated()


def test_cli_quiz_hides_every_answer():
    # OSTEP style: --quiz prints the set-up and the questions; -c adds the answers.
    out = cli("starvation", "--buffer", "1K", "--quiz")
    assert out.returncode == 0 and "Question" in out.stdout
    assert "Answer" not in out.stdout and "Interleaving" not in out.stdout
    assert "Answer" in cli("starvation", "--buffer", "1K", "--quiz", "-c").stdout
    out = cli("run", "--payload", "64", "--transfer", "64K", "--replications", "2", "--quiz")
    assert out.returncode == 0 and "Questions" in out.stdout and "Gbit/s" not in out.stdout


def _quoted_number(text: str) -> int:
    """A count or size as an error quotes it: "4,095", "256 KiB", "794,370,048 B (757.6 MiB)"."""
    text = text.split(" (")[0].replace(",", "")
    return vm.parse_size(text.replace(" B", "").replace("iB", "").replace(" ", ""))


def _work_fix(msg: str):
    """(parameter, quoted limit, step beyond it) of a work-bound error, or None."""
    if msg.startswith("recv_size:") and ">=" in msg:
        return "recv_size", int(msg.split("recv_size >= ")[1].split(" ")[0]), -1
    if msg.startswith(("transfer:", "requests:")) and "work units" in msg:
        top = msg.split("allowed [")[1].split("]")[0].split(", ")[1]
        return msg.split(":")[0], _quoted_number(top), +1
    return None


@settings(max_examples=300, deadline=None)
@given(payload=st.integers(1, 64 << 20), recv_size=st.integers(1, 64 << 20),
       buffer=st.sampled_from([128, 4096, 262144, 64 << 20]),
       rx_buf_payload=st.sampled_from([None, 1, 512, 3732]),
       pingpong=st.booleans(), amount=st.integers(1, 10**9))
def test_following_the_work_errors_leads_to_an_accepted_run(payload, recv_size, buffer,
                                                            rx_buf_payload, pingpong, amount):
    # A work-bound error names one parameter and the limit it allows. Setting it
    # to that limit is accepted, or leads to the next such error (at most one
    # more), and one step beyond the limit is refused.
    kw = dict(payload=payload, recv_size=recv_size, buffer=buffer, rx_buf_payload=rx_buf_payload)
    if pingpong:
        kw.update(workload="pingpong", requests=min(amount, 100_000))
    else:
        kw.update(transfer=payload * (1 + amount % 1000))
    for _ in range(3):
        try:
            vm.make_params(**kw)
            return
        except ValueError as exc:
            fix = _work_fix(str(exc))
        if fix is None:
            return                          # not a work bound (e.g. too many packets per write)
        name, limit, beyond = fix
        if limit + beyond >= 1 and not (name == "requests" and limit == 100_000):
            with pytest.raises(ValueError) as exc:
                vm.make_params(**dict(kw, **{name: limit + beyond}))
            assert _work_fix(str(exc.value)), "one step beyond the quoted limit is a work error"
        kw[name] = limit
    raise AssertionError(f"three quoted limits in a row did not give an accepted run: {kw}")


def test_negative_option_values_reach_validation():
    assert "payload: -4K (-4,096 bytes) is out of range" in cli("run", "--payload", "-4K").stderr
    assert "payload: cannot read '-inf' as a size" in cli("run", "--payload", "-inf").stderr


def test_transfer_is_rounded_up_to_whole_writes():
    p, _ = vm.make_params(payload=4096, transfer=5000)
    assert p.transfer == p.to_dict()["transfer"] == 8192 and p.writes == 2
    assert vm.make_params(payload=4096, transfer=100)[0].transfer == 4096
    r = vm.run(payload=4096, transfer=5000)
    assert r.bytes_sent == r.params["transfer"] == 8192
    assert "ARG transfer 8192" in cli("run", "--payload", "4K", "--transfer", "5000", "--quiz").stdout


def test_numpy_integers_are_integers():
    np = pytest.importorskip("numpy")
    p, _ = vm.make_params(seed=np.int64(3), batch_pkts=np.int32(8), variant="p1-p3", payload=np.int64(64))
    assert (p.seed, p.batch_pkts, p.payload) == (3, 8, 64) and type(p.seed) is int


def test_compare_refuses_a_run_without_throughput_before_printing():
    with pytest.raises(ValueError, match=r"throughput_gbps: side A gave 0.0 .*reset.*1152 B"):
        vm.compare("baseline", "p1-p5", replications=2, buffer=128)
    out = cli("compare", "--buffer", "128", "--replications", "2")
    assert out.returncode == 2 and out.stdout == ""


def test_compare_sides_cannot_have_their_own_seed():
    with pytest.raises(ValueError, match="b: seed must be the same for both sides"):
        vm.compare("baseline", {"variant": "p1-p5", "seed": 100}, replications=2)


def test_replications_estimate_names_the_metrics():
    from vsockmodel.study.replications import replicate
    reps = replicate(2, payload=64, transfer="8K")
    with pytest.raises(ValueError, match="rtt_us: measured only for workload 'pingpong', not 'stream'"):
        reps.estimate("rtt_us")
    with pytest.raises(ValueError, match="metric: .bogus. is not a number of a run.s result; for example "):
        reps.estimate("bogus")
    with pytest.raises(ValueError, match="metric: .trace. is not a number of a run.s result"):
        reps.estimate("trace")
    assert reps.estimate("recv_calls").mean == statistics.fmean(r.recv_calls for r in reps.results)


def test_cli_an_option_before_the_command_is_named():
    out = cli("--bogus")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == ("python -m vsockmodel: error: --bogus: expected a command first, one of: "
                                  "run, compare, starvation, quiz, calibrate, validate, hypotheses, bench")


def test_cli_starvation_on_pre_skb_has_no_slot_count():
    text = cli("starvation", "--variant", "pre-skb", "--quiz").stdout
    assert "pre-skb has no metadata budget" in text and "SKB_TRUESIZE" not in text


def test_a_run_that_received_nothing_has_no_cycles_per_byte():
    r = vm.run(variant="baseline", buffer=128, payload=4096)
    assert r.resets == 1 and r.bytes_received == 0 and r.rx_cycles_per_byte is None
    assert "- (no byte received)" in cli("run", "--buffer", "128").stdout
    # Not bad input: every seed ran and was reset, and the report says so.
    out = cli("run", "--buffer", "128", "--replications", "2")
    assert out.returncode == 0 and out.stderr == ""
    assert "guest CPU1 cycles per byte  -  " in out.stdout
    assert "undefined with seed 1: no byte was received (ENOBUFS" in out.stdout
