"""What the browser lab's worker calls: the model's own API, with JSON in and out.

The lab runs this module in Pyodide (CPython compiled to WebAssembly) inside a
Web Worker. Every function takes plain values (a configuration is a dict of
``vsockmodel.run`` keyword arguments, sizes may be "4K"-style text) and
returns a JSON string, so that the page receives exactly what CPython would
print. Bad input comes back as ``{"ok": false, "param": ..., "message": ...}``
with the API's own message; nothing runs.

Imports only the model, the simulation and the standard library: Pyodide from
npm has no numpy or scipy (tests/test_lab_api.py keeps it so).
"""

from __future__ import annotations

import functools
import json
import math
import time
from functools import lru_cache

from ..model import budget, schema
from ..model.params import Params, make_params
from ..model.units import fmt_size, fmt_size_exact, quote
from ..sim.errors import Deadlock, SimulationLimitExceeded
from ..sim.run import run as run_model
from ..sim.trace import busiest_window, lock_spans, shares
from ..study import measurements
from ..study.replications import compare as compare_model
from . import charts, inputs

# The sweep's payloads: every payload the series measured, and points between.
SWEEP_PAYLOADS = (64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
                  32768, 65536)
COMPARE_REPLICATIONS = (2, 16, 5)     # lowest, highest, default number of pairs in the lab
TIMELINE_SPAN_NS = 100_000.0

# What the lab shows for a run: (Result field, label, unit, format).
HEADLINE = (
    ("throughput_gbps", "throughput", "Gbit/s", "{:.3f}"),
    ("rtt_us", "ping-pong round trip, mean", "µs", "{:.1f}"),
    ("rtt_p95_us", "ping-pong round trip, p95", "µs", "{:.1f}"),
    ("rx_cycles_per_byte", "guest CPU1 cycles per byte", "cycles/B", "{:.3f}"),
    ("recv_per_write", "recv() calls per write", "", "{:.3f}"),
    ("wakeups", "wake-ups", "", "{:d}"),
    ("futile_wakeups", "of which futile", "", "{:d}"),
    ("resets", "resets (ENOBUFS)", "", "{:d}"),
    ("bytes_dropped", "bytes dropped", "bytes", "{:d}"),
)


def _json(value) -> str:
    return json.dumps(value, allow_nan=False)


def _refusal(exc: Exception, **extra) -> dict:
    """The API's message, and the parameter it names ("payload: ..."), if any."""
    message = str(exc)
    head = message.split(":", 1)[0]
    param = head if head in schema.BY_NAME or head in inputs.ARGUMENTS else None
    if isinstance(exc, (SimulationLimitExceeded, Deadlock)):
        message, param = f"run stopped: {message}", None
    return {"ok": False, "param": param, "message": message, **extra}


def _error(exc: Exception) -> str:
    return _json(_refusal(exc))


# The validation layer of every entry point (vsockmodel.lab.inputs): arguments
# are read by kind before the body runs; bad input comes back as a refusal.
checked = functools.partial(inputs.checked, _error)


def _config(config) -> dict:
    """A configuration from the page: a dict (or its JSON) of run() keyword arguments."""
    if isinstance(config, str):
        config = json.loads(config)
    return dict(config)


# ---- the schema and one configuration -------------------------------------------------

def describe() -> str:
    """The parameter schema and what the lab offers, for building its controls."""
    from ..study.quiz import CHAPTERS       # the chapters with problems (written once, when the lab is built)

    doc = schema.to_json()
    doc.update(sweep_payloads=list(SWEEP_PAYLOADS), compare_replications=list(COMPARE_REPLICATIONS),
               quiz_chapters=list(CHAPTERS),
               themes=charts.THEMES,
               headline=[{"key": k, "label": label, "unit": unit} for k, label, unit, _ in HEADLINE])
    return _json(doc)


def _derived(p: Params) -> dict:
    return {"packets_per_write": p.packets_per_write, "rx_buf_payload": p.buf_payload,
            "writes": p.writes, "transfer": p.transfer_bytes if p.workload == "stream" else None,
            "headroom_check": p.check_headroom,
            "summary": (f"Each {fmt_size_exact(p.payload)} send() becomes {p.packets_per_write} guest RX "
                        f"buffer(s) of up to {fmt_size(p.buf_payload)} of payload; "
                        + (f"{p.writes} writes, {fmt_size(p.transfer_bytes)} in all."
                           if p.workload == "stream" else f"{p.requests} round trips."))}


def _field_errors(config: dict) -> list[dict]:
    """Every error in a configuration, one per parameter, so that the page can
    flag each bad field at once, not only the first one run() names: first the
    values wrong on their own (type, range), then the rules between parameters
    (``rcvlowat`` and ``buffer``, say) among the rest, one at a time."""
    errors = []
    for name, value in config.items():
        prm = schema.BY_NAME.get(name)
        if prm is None:
            continue
        try:
            prm.coerce(value)
        except ValueError as exc:
            errors.append({"param": name, "message": str(exc)})
    rest = {k: v for k, v in config.items() if k in schema.BY_NAME and k not in {e["param"] for e in errors}}
    for _ in range(len(rest)):            # each pass drops the parameter its error names
        try:
            make_params(**rest)
            break
        except ValueError as exc:
            name = _refusal(exc)["param"]
            if name not in rest:
                break
            errors.append({"param": name, "message": str(exc)})
            del rest[name]
    return errors


@checked(config=inputs.config)
def check(config) -> str:
    """Validate a configuration as ``vsockmodel.run`` would, without running it.

    An error names the first problem, as run() does, and ``fields`` lists every
    parameter with an error (``_field_errors``)."""
    config = _config(config)
    try:
        p, _ = make_params(**config)
    except ValueError as exc:
        return _json(_refusal(exc, fields=_field_errors(config)))
    return _json({"ok": True, "params": p.to_dict(), "derived": _derived(p)})


def command(config) -> dict:
    """The command line and the Python call that reproduce a run (non-default values only)."""
    config = _config(config)
    p, _ = make_params(**config)
    given = {name: getattr(p, name) for name in schema.NAMES
             if name != "trace" and getattr(p, name) != schema.BY_NAME[name].default}
    given["seed"] = p.seed                      # always: the seed is what makes it reproducible
    cli, py = ["python -m vsockmodel run"], []
    for name, value in given.items():
        prm = schema.BY_NAME[name]
        if prm.kind in ("bool", "tristate"):
            cli.append(prm.cli_option if value else "--no-" + prm.cli_option[2:])
        else:
            cli.append(f"{prm.cli_option} {value}")
        py.append(f"{name}={value!r}")
    return {"cli": " ".join(cli), "python": f"vsockmodel.run({', '.join(py)})"}


# ---- one run ------------------------------------------------------------------------------

def _headline(r) -> list[dict]:
    rows = []
    for key, label, unit, fmt in HEADLINE:
        value = getattr(r, key)
        if value is None and key.startswith("rtt"):
            continue                            # a stream has no round trips
        text = "-" if value is None else fmt.format(value)
        if key == "resets" and r.resets:
            text += f" ({r.reset_reason})"
        rows.append({"key": key, "label": label, "unit": unit, "value": value, "text": text})
    return rows


@checked(config=inputs.config)
def run(config) -> str:
    """One run: headline results, the RX worker's time split, the reproducing commands,
    and ``result``: exactly ``vsockmodel.run(**config).to_dict()``."""
    try:
        config = _config(config)
        t0 = time.perf_counter()
        r = run_model(**config)
        elapsed_ms = 1000 * (time.perf_counter() - t0)
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    split = r.worker_time()
    return _json({
        "ok": True, "result": r.to_dict(), "headline": _headline(r), "worker_time": split,
        "vhost_no_rx_buf": r.vhost_no_rx_buf_share(),
        "charts": {"worker_time": charts.worker_time(split)},
        "command": command(config), "elapsed_ms": elapsed_ms,
        "derived": _derived(make_params(**config)[0]),
    })


@lru_cache(maxsize=2)
def _traced_spans(config_json: str) -> tuple:
    """The lock spans of a configuration's run, traced (the same run: a trace changes nothing)."""
    r = run_model(**json.loads(config_json), trace=True)
    spans = lock_spans(r.trace)
    return tuple(spans), busiest_window(r.trace, TIMELINE_SPAN_NS), r.sim_time_us * 1000, r.trace_truncated


@checked(config=inputs.config, t0_us=inputs.optional(inputs.time_us))
def timeline(config, t0_us=None) -> str:
    """The lock-ownership timeline of a configuration's run, for a window of
    TIMELINE_SPAN_NS from ``t0_us`` (default: the window with the most packets)."""
    try:
        config = _config(config)
        config.pop("trace", None)
        make_params(**config)
        spans, busiest, end_ns, truncated = _traced_spans(_json(dict(sorted(config.items()))))
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    span = min(TIMELINE_SPAN_NS, end_ns)
    t0 = busiest if t0_us is None else float(t0_us) * 1000
    t0 = min(max(0.0, t0), max(0.0, end_ns - span))
    share = shares(list(spans), t0, t0 + span)
    spec = charts.lock_timeline(list(spans), t0, span, share)
    return _json({"ok": True, "spec": spec, "t0_us": t0 / 1000, "span_us": span / 1000,
                  "end_us": end_ns / 1000, "truncated": truncated, "text": spec["description"]})


# ---- A against B ----------------------------------------------------------------------------

def _sides(config_a: dict, config_b: dict) -> tuple[dict, dict, dict]:
    """(side A, side B, common) for compare(): what differs, and what both share.
    The seed is A's: the pairs are the point."""
    a, b = dict(config_a), dict(config_b)
    b["seed"] = a.get("seed", schema.BY_NAME["seed"].default)
    keys = set(a) | set(b) | {"variant"}
    default = {k: schema.BY_NAME[k].default for k in keys}
    differ = {k for k in keys if a.get(k, default[k]) != b.get(k, default[k])} | {"variant"}
    side_a = {k: a.get(k, default[k]) for k in sorted(differ)}
    side_b = {k: b.get(k, default[k]) for k in sorted(differ)}
    common = {k: v for k, v in a.items() if k not in differ}
    return side_a, side_b, common


@checked(config_a=inputs.known_config, config_b=inputs.known_config)
def compare(config_a, config_b, replications=COMPARE_REPLICATIONS[2]) -> str:
    """A against B with the same seeds: the change and its 95 % interval over the pairs."""
    try:
        side_a, side_b, common = _sides(_config(config_a), _config(config_b))
        c = compare_model(side_a, side_b, replications=replications, **common)
        lo, hi = c.change_ci
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    metric, unit = ("round-trip time", "µs") if c.metric.startswith("rtt") else ("throughput", "Gbit/s")
    spec = charts.comparison(c.seeds, c.values_a, c.values_b, c.a, c.b, metric, unit, c.change_pct, (lo, hi))
    a_opts = " ".join(f"--a-set {k}={v}" for k, v in side_a.items() if k != "variant")
    b_opts = " ".join(f"--b-set {k}={v}" for k, v in side_b.items() if k != "variant")
    shared = command(common)["cli"].replace("python -m vsockmodel run", "").strip()
    cli = " ".join(x for x in (f"python -m vsockmodel compare --variants {side_a['variant']} "
                               f"{side_b['variant']}", a_opts, b_opts, f"--replications {replications}",
                               shared) if x)
    py = (f"vsockmodel.compare({side_a!r}, {side_b!r}, replications={replications!r}"
          + "".join(f", {k}={v!r}" for k, v in common.items()) + ")")
    return _json({"ok": True, "comparison": c.to_dict(), "change_pct": c.change_pct,
                  "change_ci": [lo, hi], "metric": c.metric, "chart": spec, "text": spec["description"],
                  "command": {"cli": cli, "python": py}})


# ---- sweeps ------------------------------------------------------------------------------------

def _sweep_config(config: dict, payload: int, matched: bool) -> dict:
    out = {k: v for k, v in config.items() if k != "transfer"}   # each payload its default length
    out["payload"] = payload
    if matched:
        out["recv_size"] = payload
    return out


def _sweep_within_bound(config: dict, matched: bool, config_b: dict | None = None, **_) -> None:
    """A sweep is bounded as a whole: its points together, both sides, within
    MAX_WORK (vsockmodel.model.budget). Each point asks, so the first is refused.
    Its two sides run the same workload, as compare()'s do."""
    workloads = [side.get("workload", "stream") for side in (config, config_b) if side is not None]
    if len(set(map(quote, workloads))) > 1:
        raise ValueError(f"workload: A and B must run the same workload; A runs {quote(workloads[0])}, "
                         f"B runs {quote(workloads[1])}")
    total, heaviest = 0, None
    for side in (config, config_b):
        for payload in SWEEP_PAYLOADS if side is not None else ():
            try:
                p, _ = make_params(**_sweep_config(side, payload, matched))
            except ValueError:
                continue                  # that point says what is wrong when its turn comes
            total += p.work_units
            heaviest = max(heaviest or p, p, key=lambda q: q.work_units)
    if heaviest is not None and total > budget.MAX_WORK:
        name, fix = budget.what_to_change(heaviest)
        budget.check_call(total, f"a sweep of {len(SWEEP_PAYLOADS)} payloads"
                          + (" on both sides" if config_b is not None else ""), name,
                          f"{fix} (the heaviest point is {fmt_size(heaviest.payload)})")


@checked(config=inputs.known_config, payload=inputs.size, matched=inputs.flag,
         config_b=inputs.optional(inputs.known_config), check=_sweep_within_bound)
def sweep_point(config, payload, matched=False, config_b=None) -> str:
    """One point of a sweep: the metric at ``payload``, or the change from A to B
    there (one pair, with A's seed)."""
    try:
        config = _config(config)
        a = _sweep_config(config, int(payload), bool(matched))
        if config_b is None:
            r = run_model(**a)
            value = r.rtt_us if r.params["workload"] == "pingpong" else r.throughput_gbps
        else:
            b = _sweep_config(_config(config_b), int(payload), bool(matched))
            b["seed"] = a.get("seed", 1)
            ra, rb = run_model(**a), run_model(**b)
            key = "rtt_us" if ra.params["workload"] == "pingpong" else "throughput_gbps"
            x, y = getattr(ra, key), getattr(rb, key)
            value = 100 * (y / x - 1) if x and y is not None else None    # a reset side has none
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    if value is None or not math.isfinite(value):
        return _json({"ok": False, "param": None, "message": f"no value at {fmt_size(payload)} "
                      "(the stream was reset: no throughput to compare)"})
    return _json({"ok": True, "payload": int(payload), "value": value})


# The test bed of the series' tables: what a configuration must keep to be compared with them.
_TESTBED = {"buffer": 256 * 1024, "rcvlowat": 1, "rx_buf_payload": None, "rx_ring_size": 128,
            "batch_pkts": 64, "batch_bytes": 65536, "headroom_check": None, "vhost_used_batch": False}
# variant -> the tables (and state) that measured it
_MEASURED_STATE = {"baseline": ("all", "baseline"), "p1-p5": ("all", "p1-p5"), "p1-p3": ("p1p3", "p1-p3")}
_MEASURED_CHANGE = {("baseline", "p1-p5"): "all", ("baseline", "p1-p3"): "p1p3", ("p1-p3", "p1-p5"): "p4p5"}


def _on_testbed(config: dict, matched: bool) -> bool:
    """Everything but the payload as on the series' test bed, with its receiver:
    a 64 KiB recv(), or one of the write's size (``matched``)."""
    p, _ = make_params(**{k: v for k, v in config.items() if k != "transfer"})
    if any(getattr(p, k) != v for k, v in _TESTBED.items()):
        return False
    return matched or p.workload == "pingpong" or p.recv_size == 65536


def _settings_valid(config: dict, config_b: dict | None = None, **_) -> None:
    """A sweep's settings are ones run() accepts (its payload aside, which each point sets)."""
    for side in (config, config_b or {}):
        make_params(**{k: v for k, v in side.items() if k not in ("payload", "transfer")})


def measured(config, matched=False, config_b=None) -> list[dict]:
    """The series' measurements that match a sweep, for drawing beside the model."""
    config = _config(config)
    try:
        if not _on_testbed(config, matched) or (config_b is not None
                                                and not _on_testbed(_config(config_b), matched)):
            return []
    except ValueError:
        return []
    workload = config.get("workload", "stream")
    receiver = "rtt" if workload == "pingpong" else ("fixedsyscall" if matched else "fixed64k")
    out = []
    for version in ("v1", "v2"):
        if config_b is None:
            group_state = _MEASURED_STATE.get(config.get("variant", "baseline"))
            if group_state is None:
                continue
            group, state = group_state
            name = f"{version}_{group}_{receiver}"
            metric = "rtt_us" if receiver == "rtt" else "throughput_gbps"
            try:
                values = measurements.values(name, state, metric)
            except measurements.MeasurementsError:
                continue
            out += [{"payload": p, "value": v, "ci_low": None, "ci_high": None,
                     "source": f"measured, {version}"} for p, v in sorted(values.items())]
        else:
            others = {k for k in set(config) | set(config_b) if k not in ("variant", "seed")
                      and config.get(k) != config_b.get(k)}
            pair = (config.get("variant", "baseline"), config_b.get("variant", "baseline"))
            group = _MEASURED_CHANGE.get(pair)
            if group is None or others:
                continue
            try:
                changes = measurements.change(f"{version}_{group}_{receiver}")
            except measurements.MeasurementsError:
                continue
            out += [{"payload": p, "value": v, "ci_low": lo, "ci_high": hi, "source": f"measured, {version}"}
                    for p, (v, lo, hi) in sorted(changes.items())]
    return out


@checked(config=inputs.known_config, points=inputs.points, matched=inputs.flag,
         config_b=inputs.optional(inputs.known_config), check=_settings_valid)
def sweep_chart(config, points, matched=False, config_b=None) -> str:
    """The sweep's figure with the points so far (and the measurements that match)."""
    config = _config(config)
    points = json.loads(points) if isinstance(points, str) else list(points)
    b = None if config_b is None else _config(config_b)
    pingpong = config.get("workload", "stream") == "pingpong"
    if b is None:
        metric, unit = ("round-trip time", "µs") if pingpong else ("throughput", "Gbit/s")
        label = config.get("variant", "baseline")
    else:
        metric, unit = ("change in round-trip time", "%") if pingpong else ("change in throughput", "%")
        label = f"{config.get('variant', 'baseline')} to {b.get('variant', 'baseline')}"
    meas = measured(config, matched, b)
    spec = charts.sweep(points, label, metric, unit, meas, list(SWEEP_PAYLOADS))
    note = ""
    if pingpong and b is None and meas:
        # Chapter 6, "The absolute round-trip time": each patch's change is reproduced, not the level.
        model = {p["payload"]: p["value"] for p in points}
        shares_pct = [100 * model[m["payload"]] / m["value"] for m in meas if m["payload"] in model]
        level = (f"{min(shares_pct):.0f} to {max(shares_pct):.0f} % of the measured one where both have a point"
                 if shares_pct else "well below the measured one")
        note = (f"The model's round trip is {level}: a real round trip wakes about five threads in turn, "
                "each from idle, and the model prices those wake-ups only in part (chapter 6, “The absolute "
                "round-trip time”). Read how the round trip changes with payload, or compare A and B, "
                "rather than its level.")
    return _json({"ok": True, "spec": spec, "text": spec["description"],
                  "note": note})


# ---- problem sets (vsockmodel.study.quiz) ------------------------------------------------------

@lru_cache(maxsize=64)
def _problem(chapter: int, seed: int):
    from ..study import quiz

    return quiz.problem(chapter, seed)


@checked()
def quiz_problem(chapter, seed) -> str:
    """A chapter's seeded problem, without its answer (the same as ``python -m vsockmodel quiz``)."""
    from ..study import quiz

    try:
        chapter, seed = quiz.checked_args(chapter, seed)
        p = _problem(chapter, seed)
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    return _json({"ok": True, "problem": p.to_dict(answers=False),
                  "command": f"python -m vsockmodel quiz --chapter {chapter} --seed {seed}"})


@checked()
def quiz_check(chapter, seed, answer) -> str:
    """Is ``answer`` right for that problem? With the model's answer, tolerance and explanation."""
    from ..study import quiz

    try:
        chapter, seed = quiz.checked_args(chapter, seed)
        result = quiz.check(_problem(chapter, seed), answer)
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return _error(exc)
    return _json({"ok": True, **result})
