"""Regression tests for the defects found by trying every surface as a hostile
user would (issue 35), and for the quiz's answer command (issue 36, defect 27).

Each test names its defect. The command line is called in-process
(``cli.main(argv)``); runs are kept short (small transfers), and the work
bound is tested by what it refuses before running.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from concurrent import futures
from dataclasses import fields
from importlib import resources
from pathlib import Path

import pytest

import vsockmodel as vm
from vsockmodel import cli
from vsockmodel.lab import api
from vsockmodel.model import budget, schema
from vsockmodel.model.params import PATH_COSTS
from vsockmodel.scenarios.starvation import starvation
from vsockmodel.study import confidence, measurements, quiz
from vsockmodel.study import replications as rep

SMALL = ["--payload", "64", "--transfer", "4K"]          # a run of 64 writes: milliseconds
DATA = Path(measurements.__file__).parent / "data"


def run_cli(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def one_line_error(status, out, err, start):
    """Bad input: exit 2, nothing on stdout, one line on stderr naming the parameter."""
    assert status == 2 and out == "", (status, out, err)
    assert len(err.strip().splitlines()) == 1, err
    assert err.split(": error: ", 1)[1].startswith(start), err


def refusal(reply: str, param) -> dict:
    res = json.loads(reply)                       # strict JSON: json.loads accepts NaN, so check
    assert "NaN" not in reply and "Infinity" not in reply
    assert res["ok"] is False and res["param"] == param and res["message"], res
    assert "\n" not in res["message"]
    return res


class _Files:
    """resources.files() of a package whose data folder is ``root``."""

    def __init__(self, root: Path):
        self.root = root

    def joinpath(self, *parts):
        return self.root.joinpath(*parts)


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of the package's data files (the study's and the model's costs.json)
    that the package reads instead of its own."""
    shutil.copytree(DATA, tmp_path / "data")
    shutil.copy(Path(vm.model.costs.__file__).parent / "data" / "costs.json", tmp_path / "data")
    monkeypatch.setattr(resources, "files", lambda _pkg: _Files(tmp_path))
    measurements._packaged_rows.cache_clear()
    confidence._t_table.cache_clear()
    yield tmp_path / "data"
    measurements._packaged_rows.cache_clear()
    confidence._t_table.cache_clear()


# ---- 1: --jobs and jobs= are numbers --------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["run", "--replications", "2", "--jobs", "1", *SMALL],
    ["run", "--replications", "2", "--jobs", "2", *SMALL],
    ["compare", "--replications", "2", "--jobs", "1", *SMALL],
])
def test_1_jobs_from_the_command_line_runs(capsys, argv):
    status, out, err = run_cli(capsys, *argv)
    assert status == 0 and err == "" and "Traceback" not in out


@pytest.mark.parametrize("argv,target", [
    (["validate", "-q", "--jobs", "1"], "validate"),
    (["calibrate", "-q", "--dry-run", "--jobs", "2"], "fit"),
])
def test_1_validate_and_calibrate_get_a_number_of_jobs(capsys, monkeypatch, argv, target):
    from vsockmodel.study import calibrate, validate
    seen = {}

    def stub(*args, jobs=None, **kwargs):
        seen["jobs"] = jobs
        raise ValueError("stub: stopped here")     # reached with jobs read: enough

    monkeypatch.setattr(validate if target == "validate" else calibrate, target, stub)
    status, out, err = run_cli(capsys, *argv)
    assert isinstance(seen["jobs"], int) and 1 <= seen["jobs"] <= int(argv[-1])
    assert "stub: stopped here" in err


def test_1_replicate_reads_jobs_as_text_too():
    assert rep.replicate(2, jobs="2", payload=64, transfer="4K").seeds == [1, 2]


# ---- 2: compare --quiz ------------------------------------------------------------------------

def test_2_compare_quiz_asks_its_questions(capsys):
    status, out, err = run_cli(capsys, "compare", "--quiz")
    assert status == 0 and err == ""
    assert "Each seed from 1 to 8 runs A and B" in out and "Questions:" in out


# ---- 3: runs bounded by their configuration, the same on every machine --------------------------

@pytest.mark.parametrize("kwargs,name", [
    ({"workload": "pingpong", "requests": 100_000}, "requests"),                   # 11.2 s quiet
    ({"workload": "pingpong", "requests": 100_000, "payload": 1}, "requests"),     # hit the 30 s stop
    ({"payload": 1, "rx_ring_size": 8, "transfer": 399_992}, "transfer"),          # 10.6 s quiet
])
def test_3_long_runs_are_refused_before_running(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}: .* out of range; allowed \[1( B)?, [\d,]+( B)?[^\]]*\].*work units"):
        vm.make_params(**kwargs)


def test_3_the_decision_reads_no_clock(monkeypatch):
    # Accepting or refusing is arithmetic on the configuration: with every clock
    # broken, make_params says the same.
    def no_clock():
        raise AssertionError("the work bound read a clock")

    for clock in ("perf_counter", "monotonic", "process_time", "time"):
        monkeypatch.setattr(time, clock, no_clock)
    assert vm.make_params(payload="64M")[0].work_units <= budget.MAX_WORK
    with pytest.raises(ValueError, match="^requests:"):
        vm.make_params(workload="pingpong", requests=100_000)


def test_3_the_largest_accepted_run_is_within_the_bound_and_one_more_write_is_not():
    for kwargs in ({"payload": 1, "rx_ring_size": 8}, {"workload": "pingpong", "payload": 1},
                   {"payload": "64K", "recv_size": 16}):
        p, _ = vm.make_params(**kwargs)
        most = p.max_writes
        name = "requests" if p.workload == "pingpong" else "transfer"
        value = most if name == "requests" else most * p.payload
        step = 1 if name == "requests" else p.payload
        assert vm.make_params(**kwargs, **{name: value})[0].work_units <= budget.MAX_WORK
        with pytest.raises(ValueError, match=f"^{name}:"):
            vm.make_params(**kwargs, **{name: value + step})


# ---- 3b: calls of many runs are bounded as a whole -------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: vm.compare("baseline", "p1-p5", replications=64),
    lambda: vm.replicate(2, workload="pingpong", payload=1, requests=60_000),
    lambda: vm.replicate(64, payload="64K"),
])
def test_3b_many_runs_are_bounded_together(monkeypatch, call):
    monkeypatch.setattr(rep, "_run_one", lambda kw: pytest.fail("a run started"))
    with pytest.raises(ValueError, match=r"^replications: \d+ runs would take [\d,]+ work units"):
        call()


def test_3b_the_lab_refuses_a_long_compare_and_a_long_sweep_before_running(monkeypatch):
    monkeypatch.setattr(rep, "_run_one", lambda kw: pytest.fail("a run started"))
    refusal(api.compare({}, {"variant": "p1-p5"}, 64), "replications")
    monkeypatch.setattr(vm.sim.run, "simulate", lambda *a: pytest.fail("a run started"))
    refusal(api.sweep_point({"workload": "pingpong", "requests": 100_000}, 64), "requests")
    # each point alone is allowed; the sixteen together are not
    res = refusal(api.sweep_point({"workload": "pingpong", "requests": 20_000}, 64), "requests")
    assert "a sweep of 16 payloads" in res["message"]


# ---- 4: worker processes -------------------------------------------------------------------------

def test_4_worker_processes_are_capped(monkeypatch):
    started = []

    class Pool(futures.ThreadPoolExecutor):            # threads: the same runs, no processes
        def __init__(self, max_workers):
            started.append(max_workers)
            super().__init__(max_workers)

    monkeypatch.setattr(rep, "ProcessPoolExecutor", Pool)
    rep.replicate(16, jobs=64, payload="64K", transfer="64K")
    assert started and started[0] <= min(rep.MAX_WORKERS, __import__("os").cpu_count())
    assert rep.worker_count(256, 1000) <= rep.MAX_WORKERS
    assert rep.worker_count("3", 2) <= 2


# ---- 5: Student's t table ---------------------------------------------------------------------------

def _set_t(path: Path, change) -> None:
    table = json.loads(path.read_text())
    change(table)
    path.write_text(json.dumps(table))                 # NaN written as JSON's common extension

@pytest.mark.parametrize("damage,what", [
    (lambda path: path.unlink(), "missing"),
    (lambda path: path.write_text(""), "not JSON"),
    (lambda path: path.write_text(path.read_text()[:5000]), "not JSON"),
    (lambda path: path.write_bytes(b"\xff\xfe{}"), "not UTF-8"),
    (lambda path: _set_t(path, lambda t: t["quantiles"]["0.95"].__setitem__(0, math.nan)),
     "quantiles['0.95'][0]: nan is out of range"),
    (lambda path: _set_t(path, lambda t: t.update(max_df=0)), "max_df"),
    (lambda path: _set_t(path, lambda t: t["quantiles"].pop("0.95")), "quantiles"),
])
def test_5_a_damaged_t_table_is_one_error_naming_the_file(data_copy, capsys, damage, what):
    damage(data_copy / "student_t.json")
    with pytest.raises(ValueError) as exc:
        confidence.t_quantile(0.95, 3)
    assert str(exc.value).startswith("vsockmodel/study/data/student_t.json: ") and what in str(exc.value)
    status, out, err = run_cli(capsys, "run", "--replications", "2", "--json", *SMALL)
    one_line_error(status, out, err, "vsockmodel/study/data/student_t.json:")


# ---- 6: answer keys ------------------------------------------------------------------------------------

def test_6_a_long_answer_key_is_refused_before_anything_runs(capsys, monkeypatch):
    monkeypatch.setattr(quiz, "problem", lambda *a: pytest.fail("a problem was computed"))
    status, out, err = run_cli(capsys, "quiz", "--chapter", "1", "--key", "0-199")
    one_line_error(status, out, err, "key: '0-199' is out of range; allowed a range of at most 60 seeds")


def test_6_a_key_prints_each_line_as_it_is_computed(capsys, monkeypatch):
    lines = []

    def problem(chapter, seed):
        lines.append(capsys.readouterr().out)          # what was printed before this problem
        return quiz.Problem(chapter, seed, "kind", "?", 1.0, "", 0.0, "")

    monkeypatch.setattr(quiz, "problem", problem)
    assert cli.main(["quiz", "--chapter", "2", "--key", "1-3"]) == 0
    assert "Answer key" in lines[0] and "seed    1" in lines[1] and "seed    2" in lines[2]


# ---- 7: an infinite answer is a wrong answer -------------------------------------------------------

@pytest.mark.parametrize("answer", ["1e999", "-1e999", "1" * 5000])
def test_7_an_answer_too_large_for_a_float_is_judged_wrong(answer):
    reply = api.quiz_check(4, 0, answer)                # a problem without a run
    res = json.loads(reply)
    assert "Infinity" not in reply and res["ok"] and res["correct"] is False and res["given"] is None


# ---- 8: the run cache's directory ------------------------------------------------------------------

@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_8_an_unusable_cache_directory_is_one_line_naming_the_variable(capsys, monkeypatch, tmp_path, where):
    afile = tmp_path / "hostname"
    afile.write_text("not a directory")
    monkeypatch.setenv("VSOCKMODEL_CACHE", str(afile if where == "a file" else afile / "sub"))
    status, out, err = run_cli(capsys, "run", "--replications", "2", *SMALL)
    one_line_error(status, out, err, "VSOCKMODEL_CACHE: the run cache")


# ---- 9 and 10: numbers of thousands of digits --------------------------------------------------------

@pytest.mark.parametrize("digits", [5000, 4001])
def test_9_10_a_huge_number_is_refused_by_name_in_a_short_message(capsys, digits):
    text = "9" * digits
    for name in ("payload", "seed", "requests"):
        with pytest.raises(ValueError) as exc:
            vm.make_params(workload="pingpong", **{name: text})
        message = str(exc.value)
        assert message.startswith(f"{name}: a number of {digits:,} digits is out of range; allowed ")
        assert len(message) < 200
    status, out, err = run_cli(capsys, "run", "--payload", text)
    one_line_error(status, out, err, f"payload: a number of {digits:,} digits")
    assert len(err) < 200
    status, out, err = run_cli(capsys, "run", "--seed", text)
    one_line_error(status, out, err, "seed: a number of")
    refusal(api.quiz_problem(1, text), "seed")
    refusal(api.run({"seed": text}), "seed")
    with pytest.raises(ValueError, match=r"^payload: a number of about 5,001 digits is out of range"):
        vm.make_params(payload=10**5000)                 # a Python int, too


# ---- 11: a bad --answer is refused before the problem is printed -------------------------------------

@pytest.mark.parametrize("answer", ["yes", "nan", ""])
def test_11_a_bad_answer_prints_nothing_but_its_error(capsys, answer):
    status, out, err = run_cli(capsys, "quiz", "--chapter", "1", "--seed", "0", "--answer", answer)
    one_line_error(status, out, err, "answer: cannot read")


# ---- 12: the lab's entry points and input the page never sends ------------------------------------

@pytest.mark.parametrize("call,param", [
    (lambda: api.check("[1,2]"), "config"),
    (lambda: api.check("{payload: 4K}"), "config"),
    (lambda: api.check(None), "config"),
    (lambda: api.run(42), "config"),
    (lambda: api.timeline({}, "abc"), "t0_us"),
    (lambda: api.timeline({}, float("nan")), "t0_us"),
    (lambda: api.compare({"foo": 1}, {}, 5), "config_a"),
    (lambda: api.compare({}, "[]", 5), "config_b"),
    (lambda: api.sweep_chart({}, [{"payload": 64, "value": float("nan")}]), "points"),
    (lambda: api.sweep_chart({}, [{"value": 1}]), "points"),
    (lambda: api.sweep_chart({}, "not json"), "points"),
    (lambda: api.sweep_chart({"variant": ["x"]}, []), "variant"),
    (lambda: api.sweep_point({}, "banana"), "payload"),
    (lambda: api.sweep_point({}, 64, "yes"), "matched"),
    (lambda: api.quiz_problem(None, None), "chapter"),
    (lambda: api.check(), None),
])
def test_12_lab_input_the_page_never_sends_is_refused_by_name(call, param):
    refusal(call(), param)


def test_12_a_sweep_point_reads_a_size_as_everywhere():
    assert json.loads(api.sweep_point({"transfer": "64K"}, "4K"))["payload"] == 4096


# ---- 13: costs that take no time --------------------------------------------------------------------

def _zero_costs(**keep):
    return {f.name: 0.0 for f in fields(vm.Costs) if f.name != "clock_ghz"} | keep


def test_13_costs_that_take_no_time_are_refused():
    with pytest.raises(ValueError, match=r"^costs: every cost on the path each packet takes is 0"):
        vm.run(costs=_zero_costs())


def test_13_simulate_refuses_them_too():
    # simulate() takes validated Params and a Costs as they are: it checks them all the same.
    with pytest.raises(ValueError, match=r"^costs: every cost on the path each packet takes is 0"):
        vm.simulate(vm.Params(), vm.Costs(**_zero_costs(clock_ghz=2.4)))


@pytest.mark.parametrize("variant", ["pre-skb", "baseline", "p1-p5"])
@pytest.mark.parametrize("workload", ["stream", "pingpong"])
def test_13_each_path_cost_alone_makes_time_pass(variant, workload):
    # The rule refuses only what must take no time: any one of PATH_COSTS is enough.
    kw = {"payload": 4096, "transfer": "16K"} if workload == "stream" else {"workload": workload, "requests": 3}
    for name in PATH_COSTS:
        r = vm.run(variant=variant, costs=_zero_costs(**{name: 100.0}), **kw)
        assert r.sim_time_us > 0, name
        r.worker_time()                                  # divides by the run's time
        r.vhost_no_rx_buf_share()


# ---- 14: a measurements file cut short ----------------------------------------------------------------

def test_14_a_table_cut_from_the_measurements_names_the_file(data_copy, capsys):
    path = data_copy / "measurements.csv"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                            if ",v2_all_fixed64k," not in line))
    with pytest.raises(measurements.MeasurementsError,
                       match=r"^vsockmodel/study/data/measurements.csv: table\(s\) v2_all_fixed64k missing"):
        measurements.rows()
    status, out, err = run_cli(capsys, "validate", "-q")
    one_line_error(status, out, err, "vsockmodel/study/data/measurements.csv: table(s) v2_all_fixed64k")


def test_14_a_lookup_of_an_unknown_table_names_the_file(tmp_path):
    with pytest.raises(measurements.MeasurementsError,
                       match=r"^vsockmodel/study/data/measurements.csv: unknown table 'nope'"):
        measurements.table("nope")


@pytest.mark.parametrize("column,value,what", [("value", "-5.1", "value must be positive"),
                                              ("payload", "0", "payload must be a positive")])
def test_14_out_of_range_numbers_in_the_measurements_are_named(data_copy, column, value, what):
    path = data_copy / "measurements.csv"
    lines = path.read_text().splitlines(keepends=True)
    header = lines[0].strip().split(",")
    row = next(i for i, line in enumerate(lines) if ",throughput_gbps,baseline," in line)
    fields_ = lines[row].rstrip("\n").split(",")
    fields_[header.index(column)] = value
    lines[row] = ",".join(fields_) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(measurements.MeasurementsError, match=rf"measurements.csv, line {row + 1}: {what}"):
        measurements.rows()


def test_14_a_testbed_row_of_zero_writes_is_named(data_copy):
    path = data_copy / "testbed.csv"
    lines = path.read_text().splitlines(keepends=True)
    fields_ = lines[1].rstrip("\n").split(",")
    fields_[3] = "0"                                       # writes
    lines[1] = ",".join(fields_) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(measurements.MeasurementsError,
                       match=r"^vsockmodel/study/data/testbed.csv, line 2: column 'writes' must be positive"):
        measurements.testbed()


# ---- 15: starvation's sizes -----------------------------------------------------------------------------

def test_15_starvation_quotes_the_allowed_range():
    with pytest.raises(ValueError) as exc:
        starvation(payload="abc")
    assert str(exc.value).startswith("payload: cannot read 'abc' as a size")
    assert str(exc.value).endswith(f"allowed {schema.BY_NAME['payload'].allowed()}")


# ---- issue 36, defect 27: the quiz's answer command, and an exit status for a wrong answer -------------

def test_27_the_answer_comes_with_the_command_that_computes_it(capsys):
    p = quiz.problem(3, 0)                             # the patched side of a comparison, seed 0
    status, out, _ = run_cli(capsys, "quiz", "--chapter", "3", "--seed", "0", "-c")
    assert status == 0 and p.command in out and "seed=0" in p.command and "variant='p1-p5'" in p.command


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_27_each_kind_of_problem_has_a_command_that_prints_its_answer(chapter, capsys):
    for seed in range(len(quiz.KINDS[chapter])):       # one of each kind
        p = quiz.problem(chapter, seed)
        assert p.command == f'python -c "{p.code}"'
        exec(p.code, {})                                # noqa: S102 - the model's own call
        printed = capsys.readouterr().out.strip()
        value = {"True": 1.0, "False": 0.0}.get(printed, None)
        assert (float(printed) if value is None else value) == p.answer, (p.kind, printed)


def test_27_a_wrong_answer_has_its_own_exit_status(capsys):
    p = quiz.problem(4, 0)                             # metadata slots: no run
    assert run_cli(capsys, "quiz", "--chapter", "4", "--seed", "0", "--answer", p.answer)[0] == 0
    status, out, err = run_cli(capsys, "quiz", "--chapter", "4", "--seed", "0", "--answer", p.answer + 1)
    assert status == cli.WRONG_ANSWER == 3 and "Not quite" in out and err == ""
    quiz_help = cli.build_parser()._subparsers._group_actions[0].choices["quiz"].format_help()   # noqa: SLF001
    assert "3 if wrong" in quiz_help and "Exit status" in quiz_help


# ---- found by the fuzzer (tests/test_hostile_fuzz.py) -----------------------------------------------

def test_fuzz_a_side_with_a_huge_number_or_a_newline_is_named_in_one_line():
    with pytest.raises(ValueError) as exc:
        vm.compare("baseline", {"variant": "p1-p5", "payload": 10**5000}, replications=2)
    assert str(exc.value).startswith("payload: a number of about 5,001 digits")
    with pytest.raises(ValueError) as exc:
        vm.compare("baseline", "pre-skb\n", replications=2)
    assert "\n" not in str(exc.value) and "variant 'pre-skb\\n';" in str(exc.value)


def test_fuzz_a_sweep_point_of_two_workloads_or_a_reset_side_is_an_answer_not_a_crash():
    refusal(api.sweep_point({"workload": "pingpong", "requests": 2}, 64, False, {"transfer": "4K"}), "workload")
    res = json.loads(api.sweep_point({"workload": "pingpong", "requests": 2}, 64, False,
                                     {"workload": "pingpong", "requests": 2, "buffer": 128}))
    assert res["ok"] is False and "no value at 64 B" in res["message"]


def test_fuzz_integers_read_a_whole_decimal_as_sizes_do():
    # "16.0" is read as 16 on every surface, as 16.0 is from Python and "4096.0" as a size
    assert vm.make_params(seed="16.0", payload="4096.0")[0].seed == 16
    with pytest.raises(ValueError, match="^seed: expected an integer"):
        vm.make_params(seed="16.5")
