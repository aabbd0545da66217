"""Replications over seeds and paired comparisons: API, statistics and command line."""

import json
import math
import statistics
import subprocess
import sys

import pytest
from scipy import stats

import vsockmodel as vm
from vsockmodel.study import replications as rep
from vsockmodel.study.confidence import mean_ci, paired_change_ci

SMALL = dict(payload=1024, transfer=1024 * 400)          # quick runs: 400 writes


# ---- the interval of a mean ----------------------------------------------------------

def test_mean_ci_is_students_t():
    xs = [5.2, 5.6, 5.1, 5.9, 5.4]
    e = mean_ci(xs)
    half = stats.t.ppf(0.975, 4) * statistics.stdev(xs) / math.sqrt(5)
    assert e.mean == pytest.approx(statistics.fmean(xs))
    assert (e.ci_low, e.ci_high) == pytest.approx((e.mean - half, e.mean + half))
    assert e.n == 5 and e.sd == pytest.approx(statistics.stdev(xs))


def test_mean_ci_of_identical_samples_is_the_point_and_needs_two():
    assert mean_ci([2.0, 2.0, 2.0]).ci_low == mean_ci([2.0, 2.0, 2.0]).ci_high == 2.0
    with pytest.raises(ValueError, match="at least 2"):
        mean_ci([1.0])


# ---- replicate -------------------------------------------------------------------

def test_replications_are_the_single_runs_with_consecutive_seeds():
    reps = rep.replicate(3, variant="baseline", seed=7, **SMALL)
    assert reps.seeds == [7, 8, 9]
    for seed, r in zip(reps.seeds, reps.results):
        single = vm.run(variant="baseline", seed=seed, **SMALL)
        assert r.to_dict() == single.to_dict()
        assert r.bytes_sent == r.bytes_received + r.bytes_dropped
    e = reps.estimate("throughput_gbps")
    xs = reps.values("throughput_gbps")
    assert min(xs) <= e.mean <= max(xs) and e.ci_low < e.mean < e.ci_high


def test_replications_do_not_depend_on_the_number_of_processes():
    one = rep.replicate(2, variant="p1-p5", jobs=1, **SMALL).to_dict()
    two = rep.replicate(2, variant="p1-p5", jobs=2, **SMALL).to_dict()
    assert one == two


def test_replications_to_dict_summarises_every_metric():
    d = rep.replicate(2, workload="pingpong", requests=40).to_dict()
    assert set(d["estimates"]) == set(rep.PINGPONG_METRICS)
    assert len(d["per_seed"]["rtt_us"]) == 2 and d["estimates"]["rtt_us"]["mean"] > 0


# ---- compare ---------------------------------------------------------------------

def test_compare_pairs_the_seeds_and_reports_the_paired_interval():
    c = rep.compare("baseline", "p1-p5", replications=3, payload=256, transfer=256 * 2000)
    a = rep.replicate(3, variant="baseline", payload=256, transfer=256 * 2000).values("throughput_gbps")
    assert c.values_a == a                                  # same seeds, same runs
    assert c.change_pct == pytest.approx(100 * (sum(c.values_b) / sum(c.values_a) - 1))
    assert c.change_ci == paired_change_ci(c.values_a, c.values_b)
    # Chapter 2-3's claim at small payloads: the patched kernel is faster beyond the noise.
    assert c.change_ci[0] > 20


def test_compare_takes_parameter_overrides():
    c = rep.compare({"variant": "p1-p5"}, {"variant": "p1-p5", "vhost_used_batch": True},
                    replications=2, **SMALL)
    assert c.b == "variant=p1-p5, vhost_used_batch=True"
    assert c.runs_b.params["vhost_used_batch"] is True and c.runs_a.params["vhost_used_batch"] is False


# ---- bad input: one error, before anything runs ---------------------------------------------

@pytest.fixture
def nothing_runs(monkeypatch):
    def fail(_):
        raise AssertionError("a run started despite bad input")
    monkeypatch.setattr(rep, "_run_one", fail)


@pytest.mark.parametrize("call,name", [
    (lambda: rep.replicate(1), "replications"),
    (lambda: rep.replicate(65), "replications"),
    (lambda: rep.replicate("8.5"), "replications"),
    (lambda: rep.replicate(2, trace=True), "trace"),
    (lambda: rep.replicate(True), "replications"),
    (lambda: rep.replicate(64, transfer="256M"), "replications"),
    (lambda: rep.replicate(2, transfer="1G"), "transfer"),
    (lambda: rep.replicate(2, payload=-1), "payload"),
    (lambda: rep.replicate(2, seed=2**63 - 1), "replications"),
    (lambda: rep.replicate(2, jobs=-1), "jobs"),
    (lambda: rep.replicate(2, jobs="x"), "jobs"),
    (lambda: rep.compare({1: 2}, "p1-p5"), "a"),
    (lambda: rep.compare(workload="pingpong", requests=60000, payload=64), "replications"),
    (lambda: rep.compare(workload="pingpong", requests=100000, payload=64), "requests"),
    (lambda: rep.compare("baseline", "p9"), "variant"),
    (lambda: rep.compare("baseline", 3), "b"),
    (lambda: rep.compare("baseline", "p1-p5", metric="rtt_us"), "metric"),
    (lambda: rep.compare("baseline", {"variant": "p1-p5", "workload": "pingpong"}), "workload"),
])
def test_bad_input_is_one_clear_error(nothing_runs, call, name):
    with pytest.raises(ValueError) as exc:
        call()
    assert str(exc.value).startswith(f"{name}:")


def test_the_work_bound_not_the_count_limits_replications_of_default_runs():
    # 2 to 64 seeds, as long as the runs together stay within MAX_WORK (about
    # 10 s): 64 pairs of default runs would take about 24 s, so the error says
    # how many fit, and that many are accepted.
    kw = {}
    with pytest.raises(ValueError, match=r"^replications: 128 runs .*replications <= (\d+) here") as exc:
        rep.check_replications(rep.MAX_REPLICATIONS, kw, kw)
    most = int(str(exc.value).split("replications <= ")[1].split(" ")[0])
    assert 16 <= most < 64                        # the lab's 16 pairs fit
    assert len(rep.check_replications(most, kw, kw)[0][1]) == most
    with pytest.raises(ValueError, match=r"replications <= \d+ here"):
        rep.check_replications(8, {"transfer": "100M"}, {"transfer": "100M"})
    # short ping-pongs: 64 pairs fit
    rep.check_replications(rep.MAX_REPLICATIONS, {"workload": "pingpong"}, {"workload": "pingpong"})


def test_a_comparison_counts_the_work_of_each_side_once():
    # Side A is a default run (187,072 work units), side B reads 4 KiB at a
    # time (224,572): 24 pairs are 9,871,536 units, 25 would be over MAX_WORK.
    a, b = {}, {"recv_size": "4K"}
    assert [vm.make_params(**side)[0].work_units for side in (a, b)] == [187_072, 224_572]
    with pytest.raises(ValueError, match=r"replications <= 24 here"):
        rep.check_replications(25, a, b)
    assert len(rep.check_replications(24, a, b)) == 2
    # ping-pong calls are bounded by their work too
    big = {"workload": "pingpong", "payload": "1M", "requests": 1000}
    with pytest.raises(ValueError, match="work units"):
        rep.check_replications(64, big, big)


# ---- the command line ------------------------------------------------------------------

def cli(*args):
    return subprocess.run([sys.executable, "-m", "vsockmodel", *args],
                          capture_output=True, text=True, timeout=120)


def test_cli_run_replications_json():
    out = cli("run", "--payload", "1K", "--transfer", "400K", "--replications", "3", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["seeds"] == [1, 2, 3]
    e = d["estimates"]["throughput_gbps"]
    assert e["ci_low"] <= e["mean"] <= e["ci_high"] and e["n"] == 3


def test_cli_compare_prints_pairs_and_hides_the_answer_in_quiz_mode():
    args = ("compare", "--variants", "baseline", "p1-p3", "--payload", "1K", "--transfer", "400K",
            "--replications", "3")
    quiz = cli(*args, "--quiz")
    assert "ARG A baseline" in quiz.stdout and "ARG B p1-p3" in quiz.stdout
    assert "%" not in quiz.stdout.split("Questions")[0]
    assert "Change" not in quiz.stdout and "Answer" not in quiz.stdout
    out = cli(*args)
    assert out.returncode == 0, out.stderr
    assert "Change: p1-p3 vs baseline" in out.stdout and "95 % CI" in out.stdout
    assert len([ln for ln in out.stdout.splitlines() if ln.strip().split(" ")[0] in ("1", "2", "3")]) == 3
    assert "Answer: p1-p3 vs baseline" in cli(*args, "--quiz", "-c").stdout


def test_cli_compare_sets_a_parameter_on_one_side_only():
    out = cli("compare", "--variants", "p1-p3", "p1-p3", "--payload", "1K", "--transfer", "2M",
              "--replications", "4", "--a-set", "batch_pkts=1", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["a"] == "variant=p1-p3, batch_pkts=1" and d["b"] == "p1-p3"
    assert d["params_a"]["batch_pkts"] == 1 and d["params_b"]["batch_pkts"] == 64
    assert d["change_ci_low"] > 0          # a batch of one packet is the slower side


def test_cli_compare_says_which_side_refuses_a_shared_setting():
    out = cli("compare", "--variants", "baseline", "p1-p3", "--batch-pkts", "8")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "batch_pkts: 8 has no effect on variant 'baseline'" in out.stderr
    assert "[side A, variant baseline;" in out.stderr and "--b-set" in out.stderr


def test_cli_compare_echoes_each_sides_own_settings():
    # A variant brings defaults of its own (headroom_check, rx_buf_payload), and
    # --b-set changes one side: the echo must not print side A's value as shared.
    quiz = cli("compare", "--variants", "baseline", "p1-p5", "--b-set", "vhost_used_batch=true",
               "--quiz").stdout.splitlines()
    assert "ARG headroom_check A=- B=True" in quiz           # the baseline has no lock batch
    assert "ARG vhost_used_batch A=False B=True" in quiz
    assert "ARG payload 4096" in quiz and "ARG seed 1" in quiz
    quiz = cli("compare", "--variants", "pre-skb", "baseline", "--quiz").stdout.splitlines()
    assert "ARG rx_buf_payload A=4096 B=3732" in quiz


@pytest.mark.parametrize("args", [
    ["compare", "--b-set", "bogus=1"], ["compare", "--b-set", "batch_pkts=0"],
    ["compare", "--a-set", "headroom_check=maybe"], ["compare", "--b-set", "batch_pkts"],
    ["compare", "--replications", "1"], ["compare", "--variants", "baseline", "nope"],
    ["compare", "--variants", "baseline"], ["run", "--replications", "0"],
    ["run", "--replications", "64", "--transfer", "1G"],
])
def test_cli_bad_input_exits_2_with_one_line(args):
    out = cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_the_noise_the_book_describes():
    # book/how-to-use.md and chapter 6: most settings vary by about 1 % from seed
    # to seed, the patched kernel at 4 KiB by clearly more.
    def rel_sd(**kw):
        e = rep.replicate(8, **kw).estimate("throughput_gbps")
        return e.sd / e.mean

    quiet = max(rel_sd(variant="baseline", payload=1024), rel_sd(variant="baseline", payload=65536))
    assert quiet < 0.015
    assert rel_sd(variant="p1-p5", payload=4096) > 1.5 * quiet
