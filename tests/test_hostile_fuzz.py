"""The fuzzer: every surface driven with values generated from the parameter
schema (tests/fuzz_strategies.py), valid, at a boundary, and hostile.

Properties, on each surface:

- an accepted configuration runs (when it is small enough to run here) and
  its result conserves bytes and is the same run on every surface;
- a refused one is exactly one error naming a parameter: a ValueError (API);
  exit status 2, one line on stderr, nothing on stdout (command line);
  ``{"ok": false, "message"}`` in strict JSON (lab);
- nothing else escapes, and a hostile value is never accepted.

Runs larger than SMALL work units are not run (``Guard``): whether they are
accepted is still checked. The suite runs a few dozen examples per surface,
the same ones every time; ``HYPOTHESIS_PROFILE=long`` runs many more, each
time others (DEVELOPMENT.md, "The fuzzer").
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from concurrent import futures
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import fuzz_strategies as fz
import vsockmodel as vm
import vsockmodel.sim.run as sim_run
from vsockmodel import cli
from vsockmodel.lab import api
from vsockmodel.model import schema
from vsockmodel.scenarios.starvation import starvation
from vsockmodel.study import bench, calibrate, hypotheses, quiz, validate
from vsockmodel.study import replications as rep

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
SMALL = 20_000                      # work units (about 20 ms): larger accepted runs are not run here


def examples(n: int) -> int:
    return n * 40 if LONG else n


class NotRunHere(Exception):
    """An accepted run too large for the fuzzer: acceptance was the point."""


@contextlib.contextmanager
def guard():
    """Runs only up to SMALL work units, in this process (no worker processes);
    the long commands (calibrate, validate, hypotheses, bench) stop where they would start,
    having been given their arguments; quiz problems are cheap stand-ins."""
    real = sim_run.simulate

    def simulate(p, costs):
        if p.work_units > SMALL:
            raise NotRunHere(p.work_units)
        return real(p, costs)

    def reached(*args, jobs=None, **kwargs):
        assert jobs is None or (isinstance(jobs, int) and 1 <= jobs <= rep.MAX_WORKERS), jobs
        raise NotRunHere("a long command, given valid arguments")

    def problem(chapter, seed):
        chapter, seed = quiz.checked_args(chapter, seed)
        return quiz.Problem(chapter, seed, "stand-in", "How many?", 4.0, "skbs", 0.0, "because",
                            code="print(4.0)")

    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(sim_run, "simulate", simulate))
        stack.enter_context(mock.patch.object(rep, "ProcessPoolExecutor", futures.ThreadPoolExecutor))
        stack.enter_context(mock.patch.object(calibrate, "fit", reached))
        stack.enter_context(mock.patch.object(validate, "validate", reached))
        stack.enter_context(mock.patch.object(bench, "measure", reached))
        stack.enter_context(mock.patch.object(hypotheses, "study",
                                              lambda names=None, **kw: (hypotheses.selected(names),
                                                                        reached(**kw))))
        stack.enter_context(mock.patch.object(quiz, "problem", problem))
        api._problem.cache_clear()                    # noqa: SLF001 - the lab's cache of problems
        yield
    api._problem.cache_clear()                        # noqa: SLF001


# What an error may name: a parameter of the call, or the metric a comparison
# could not compute (a side whose stream was reset has no throughput).
NAMED = (set(schema.NAMES) | {"costs", "replications", "jobs", "metric", "a", "b", "chapter", "answer", "key", "only",
                              "reader_wake_ns"} | set(rep.STREAM_METRICS) | set(rep.PINGPONG_METRICS))


def assert_names_a_parameter(message: str) -> None:
    event("refused")
    assert "\n" not in message and len(message) < 1000, message
    head = message.split(":", 1)[0]
    assert head in NAMED or head.startswith("costs.") or message.startswith("unknown parameter(s)"), message


def strict_json(text: str):
    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def conserves(r) -> None:
    assert r.bytes_sent == r.bytes_received + r.bytes_dropped
    assert r.bytes_received <= r.bytes_sent and r.sim_time_us > 0


def test_every_parameter_kind_has_strategies():
    # A parameter of a new kind needs strategies (tests/fuzz_strategies.py); one
    # of a known kind is fuzzed as it is.
    assert {p.kind for p in schema.PARAMETERS} <= set(fz.KINDS)
    assert set(fz.STRATEGIES) == set(schema.NAMES)


# ---- the Python API ------------------------------------------------------------------------------

@settings(max_examples=examples(60))
@given(fz.settings(), fz.costs)
def test_api_run(case, costs):
    kwargs, bad = case
    if costs is not None:
        kwargs = dict(kwargs, costs=costs)
    with guard():
        try:
            p, _ = vm.make_params(**kwargs)
        except ValueError as exc:
            assert_names_a_parameter(str(exc))
            return
        assert not bad, f"accepted hostile values of {bad}"
        assert p.work_units <= vm.model.budget.MAX_WORK
        try:
            r = vm.run(**kwargs)
        except NotRunHere:
            event("accepted, not run here")
            return
        event("ran")
        conserves(r)
        if "costs" not in kwargs and not kwargs.get("trace"):   # the command line has neither
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert cli.main(["run", "--json", *_argv(kwargs)]) == 0
            assert strict_json(out.getvalue()) == strict_json(json.dumps(r.to_dict(), default=str))


def _argv(kwargs: dict) -> list[str]:
    """The command line of keyword arguments that run() accepted."""
    argv = []
    for name, value in kwargs.items():
        prm = schema.BY_NAME[name]
        if name == "trace" or value is None:
            continue
        if prm.kind in ("bool", "tristate"):
            argv.append(prm.cli_option if value else "--no-" + prm.cli_option[2:])
        else:
            argv.append(f"{prm.cli_option}={fz.text(value)}")
    return argv


@settings(max_examples=examples(40))
@given(fz.settings(), st.sampled_from([2, 3, "2", 1, 65, "x", None, fz.HUGE, 2.5]),
       st.sampled_from([None, 1, 2, "2", 64, 0, -1, "x", fz.HUGE, 2.0]))
def test_api_replicate(case, replications, jobs):
    kwargs, bad = case
    with guard():
        try:
            reps = vm.replicate(replications, jobs=jobs, **kwargs)
        except NotRunHere:
            event("accepted, not run here")
            assert not bad
            return
        except ValueError as exc:
            assert_names_a_parameter(str(exc))
            return
    event("ran")
    assert not bad, f"accepted hostile values of {bad}"
    assert reps.seeds == list(range(reps.seeds[0], reps.seeds[0] + len(reps.seeds)))
    for r in reps.results:
        conserves(r)
    strict_json(json.dumps(reps.to_dict()))


@settings(max_examples=examples(40))
@given(fz.settings(names=tuple(n for n in schema.NAMES if n not in ("seed", "trace")), hostile_share=1),
       fz.settings(names=tuple(n for n in schema.NAMES if n not in ("seed", "trace")), hostile_share=1),
       fz.settings(names=("payload", "transfer", "workload", "seed", "requests")),
       st.sampled_from([2, 3, "2", 1, 100]), st.sampled_from([None, "throughput_gbps", "rtt_us", "x"]))
def test_api_compare(side_a, side_b, common, replications, metric):
    (a, bad_a), (b, bad_b), (kw, bad) = side_a, side_b, common
    a, b = {**a, "variant": a.get("variant", "baseline")}, {**b, "variant": b.get("variant", "p1-p5")}
    with guard():
        try:
            c = vm.compare(a, b, replications=replications, metric=metric, **kw)
        except NotRunHere:
            event("accepted, not run here")
            return
        except ValueError as exc:
            assert_names_a_parameter(str(exc))
            return
    event("ran")
    assert not (bad_a or bad_b or bad), "accepted hostile values"
    lo, hi = c.change_ci
    assert lo <= c.change_pct <= hi or lo == hi
    strict_json(json.dumps(c.to_dict()))


STARVATION = ("variant", "buffer", "payload", "headroom_check", "seed")


@settings(max_examples=examples(40))
@given(fz.settings(names=STARVATION, small=False),
       st.none() | st.sampled_from([0, 200.0, "200", 1e9, 1e10, -1, "nan", float("inf"), "x", True, fz.HUGE]))
def test_api_starvation(case, wake):
    kwargs, bad = case
    if wake is not None:
        kwargs = dict(kwargs, reader_wake_ns=wake)
    try:
        r = starvation(**kwargs)
    except ValueError as exc:
        assert_names_a_parameter(str(exc))
        return
    event("ran")
    assert not bad, f"accepted hostile values of {bad}"
    assert isinstance(r.reset, bool) and 0 <= r.bytes_received <= 2 * r.payload
    strict_json(json.dumps(r.to_dict()))


# ---- the command line, in-process --------------------------------------------------------------------

def _subcommands():
    return cli.build_parser()._subparsers._group_actions[0].choices      # noqa: SLF001


SPECIAL = {   # options whose values are not parameters of the schema (the rest are generated from it)
    "replications": st.sampled_from(["2", "3", "1", "65", "x", "", fz.HUGE, "2.0", "-2"]),
    "jobs": st.sampled_from(["1", "2", "64", "0", "-1", "x", fz.HUGE, "1.5"]),
    "variants": st.lists(st.sampled_from(list(vm.VARIANTS) + ["p9", ""]), min_size=2, max_size=2),
    "a_set": st.lists(st.sampled_from(["batch_pkts=4", "vhost_used_batch=true", "variant=p1-p3", "x=1",
                                        "payload", "seed=3", "headroom_check=maybe", "buffer=" + fz.HUGE]),
                      max_size=2),
    "chapter": st.sampled_from(["1", "3", "5", "0", "6", "x", fz.HUGE]),
    "answer": st.sampled_from(["4", "5", "yes", "no", "nan", "", "1e999", "1" * 5000]),
    "key": st.sampled_from(["1-3", "0-0", "5", "0-199", "3-1", "x", "1-" + fz.HUGE]),
    "reader_wake_ns": st.sampled_from(["200", "0", "1e9", "2e9", "-1", "nan", "x"]),
}
SPECIAL["b_set"] = SPECIAL["a_set"]


@st.composite
def command_lines(draw):
    """A subcommand and a list of its options: each option of the parser, with
    values from the schema (or SPECIAL), valid, boundary or hostile, as text."""
    subs = _subcommands()
    name = draw(st.sampled_from(sorted(subs)))
    argv, hostile = [name], False
    actions = [a for a in subs[name]._actions if a.option_strings and a.dest != "help"]   # noqa: SLF001
    for action in draw(st.lists(st.sampled_from(actions), unique_by=id, max_size=6)):
        flag = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            argv.append(flag)
            continue
        if action.dest in SPECIAL:
            value = draw(SPECIAL[action.dest])
            values = value if isinstance(value, list) else [value]
        elif action.dest in fz.STRATEGIES:
            which = draw(st.sampled_from(["valid", "valid", "boundary", "hostile"]))
            values = [draw(fz.STRATEGIES[action.dest][which])]
            hostile |= which == "hostile"
        else:
            values = [draw(st.text(max_size=8))]            # an option the fuzzer knows nothing of
        if not values:
            continue
        if action.nargs is None or action.nargs == "?":
            values = values[:1]
        argv += [flag, *(fz.text(v) for v in values)]
    if name in ("run", "compare") and draw(st.integers(0, 3)):
        argv += ["--transfer", "4K", "--payload", "64"] if "--transfer" not in argv else []
    return argv, hostile


@settings(max_examples=examples(80))
@given(command_lines())
def test_command_line(case):
    argv, hostile = case
    out, err = io.StringIO(), io.StringIO()
    with guard(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except NotRunHere:
            event("accepted, not run here")
            return
    out, err = out.getvalue(), err.getvalue()
    event(f"{argv[0]}: exit {status}")
    assert status in (0, 2, cli.WRONG_ANSWER), (argv, status, err)
    if status == 2:
        assert out == "", (argv, out)
        assert len(err.strip().splitlines()) == 1 and err.startswith("python -m vsockmodel"), (argv, err)
        return
    assert not hostile, f"accepted a hostile value: {argv}"
    assert "Traceback" not in err and "Traceback" not in out
    if "--json" in argv:
        strict_json(out)


# ---- the lab's entry points, and its address --------------------------------------------------------

def lab_reply(text) -> dict:
    assert isinstance(text, str)
    res = strict_json(text)
    assert isinstance(res, dict) and isinstance(res["ok"], bool)
    if not res["ok"]:
        assert isinstance(res["message"], str) and res["message"] and "\n" not in res["message"]
        assert res["param"] is None or isinstance(res["param"], str)
    return res


def _config():
    plain = fz.settings().map(lambda case: case[0])
    as_text = plain.map(fz.json_text)
    return plain | as_text | st.sampled_from([None, "", "[1, 2]", "{payload: 4K}", "null", 3, [], "{}"])


CALLS = {
    "check": lambda d: api.check(d(_config())),
    "run": lambda d: api.run(d(_config())),
    "timeline": lambda d: api.timeline(d(_config()), d(st.none() | st.sampled_from([0, 5.5, "7", -1, "x", 1e300,
                                                                                    float("nan")]))),
    "compare": lambda d: api.compare(d(_config()), d(_config()), d(st.sampled_from([2, 3, "2", 1, 64, "x"]))),
    "sweep_point": lambda d: api.sweep_point(d(_config()), d(st.sampled_from([64, 4096, "4K", 0, "x", None,
                                                                             2**70])),
                                             d(st.sampled_from([False, True, None, "yes"])),
                                             d(st.none() | _config())),
    "sweep_chart": lambda d: api.sweep_chart(d(_config()), d(st.lists(st.fixed_dictionaries(
        {"payload": st.sampled_from([64, 4096, 0, "x"]), "value": st.sampled_from([0.5, float("nan"), None])}),
        max_size=3) | st.sampled_from(["[]", "x", None])), d(st.booleans()), d(st.none() | _config())),
    "quiz_problem": lambda d: api.quiz_problem(d(SPECIAL["chapter"]), d(st.sampled_from(["1", "42", "-1", "x",
                                                                                        fz.HUGE, None]))),
    "quiz_check": lambda d: api.quiz_check(d(SPECIAL["chapter"]), d(st.sampled_from(["1", "0"])),
                                           d(SPECIAL["answer"] | st.none())),
}


@settings(max_examples=examples(80))
@given(st.sampled_from(sorted(CALLS)), st.data())
def test_lab_entry_points(name, data):
    with guard():
        try:
            reply = CALLS[name](data.draw)
        except NotRunHere:
            event("accepted, not run here")
            return
    event(f"{name}: ok" if lab_reply(reply)["ok"] else f"{name}: refused")


@settings(max_examples=examples(40))
@given(fz.lab_addresses())
def test_lab_addresses(fragment):
    # What the page does with an address: its state (lab.js readHash, configOf),
    # then the calls it makes from it.
    state = fz.read_address(fragment)
    with guard():
        try:
            lab_reply(api.check(state["config"]))
            lab_reply(api.run(state["config"]))
            if state["a"] is not None and state["b"] is not None:
                lab_reply(api.compare(fz.json_text(state["a"]), fz.json_text(state["b"]), 2))
            if state["qchapter"] is not None or state["qseed"] is not None:
                lab_reply(api.quiz_problem(state["qchapter"], state["qseed"]))
        except NotRunHere:
            pass


@pytest.mark.parametrize("fragment,config", [
    ("payload=4K&variant=p1-p5&batch_pkts=16", {"variant": "p1-p5", "payload": "4K", "batch_pkts": "16"}),
    ("variant=nope&payload=64&payload=128", {"payload": "64"}),
    ("headroom_check=maybe&variant=p1-p3", {"variant": "p1-p3"}),
    ("batch_pkts=8", {}),                               # no effect on the baseline: not sent
])
def test_the_address_reader_is_the_pages(fragment, config):
    assert json.loads(fz.read_address(fragment)["config"]) == config
