"""Fit the model's costs, in two stages, to two kinds of measurement and nothing else.

The protocol
------------
Stage 1 fits the RX worker's per-operation costs to the v1 guest CPU1
cycles-per-byte tables (``v1_all_cycles``, ``v1_p1p3_cycles``,
``v1_p4p5_cycles``: 48 numbers measured with perf on the CPU that runs the
worker). Stage 2 fits a few timing priors (``TIMING``), each within a range
with a physical reason, to the absolute throughputs of one table:
``v1_all_fixed64k``, both columns (16 numbers). Every other measurement of
the series is held out: ``vsockmodel.study.validate`` only scores the model
against it. (``THROUGHPUT_TABLE`` and ``CYCLES_TABLES`` are all this module
reads; tests/test_calibration_validation.py checks that.)

Stage 1: cycles only say how much CPU the worker used, and most of its
per-packet work is common to every variant, so the individual kernel
functions cannot be told apart. The fit therefore scales *groups* of costs,
keeping the priors' ratios inside a group:

- ``per_packet``: work every variant does for every buffer (get_buf, rx_fill,
  recv_pkt decode/trace, space_update, enqueue);
- ``lookup_lock``: what patches 1-3 amortise (socket lookup, lock_sock,
  release_sock);
- ``notify``: what patches 4-5 coalesce (sk_write_space, sk_data_ready);
- ``per_irq``: the RX interrupt and the start of rx_work;
- ``tx_done``: the TX interrupt and tx_work that free each guest TX buffer (a
  credit update) vhost has used;
- ``per_byte``: CPU1 time per payload byte.

The scheduler's costs (``wakeup_ns``, ``sleep_ns``) are priors, not fitted:
the worker sleeps so rarely that the cycles cannot identify them (a fit puts
them at 0), and they also price the CPU0 reader, which the cycles never see.

The worker's busy time is linear in the costs once the operation counts are
known, and the counts (packets, lock holds, interrupts, refills) come from a
simulation. So: simulate with the current costs, read the counts, solve a
non-negative least-squares problem for the group scales on relative errors,
and repeat until the scales settle (the counts move a little with the costs).

Stage 2 minimises the rms relative error of the 16 throughputs over the
timing priors, bounded (Nelder-Mead on the priors scaled to their ranges,
with the same seeds for every evaluation). A value at a bound is reported as
such. Everything is seeded: the same inputs give the same constants.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import fields
from importlib import resources

from . import measurements
from ..model.costs import CALIBRATED_FILE, Costs
from ..model.params import make_params

TABLES = {  # table -> (state in the table, model variant) pairs
    "v1_all_cycles": (("baseline", "baseline"), ("p1-p5", "p1-p5")),
    "v1_p1p3_cycles": (("baseline", "baseline"), ("p1-p3", "p1-p3")),
    "v1_p4p5_cycles": (("p1-p3", "p1-p3"), ("p1-p5", "p1-p5")),
}

GROUPS = {
    "per_packet": ("get_buf_ns", "rx_fill_buf_ns", "recv_pkt_ns", "space_update_ns", "enqueue_ns",
                   "tail_free_ns"),
    "lookup_lock": ("lookup_ns", "lock_ns", "unlock_ns"),
    "notify": ("write_space_ns", "data_ready_ns"),
    "per_irq": ("irq_ns", "worker_run_ns"),
    "tx_done": ("tx_work_ns",),
    # The scheduler's work on CPU1: a kworker that sleeps (in __lock_sock, or
    # for work) and runs again, and the wake-ups it sends. The cycles tables
    # see it; the same costs price CPU0's, which they do not.
    "scheduler": ("wakeup_ns", "sleep_ns"),
}
CYCLES_TABLES = tuple(TABLES)

# Stage 2: timing priors fitted to the absolute throughputs of one table, each
# within a range a source gives (the costs' docstrings say which).
THROUGHPUT_TABLE = "v1_all_fixed64k"
THROUGHPUT_STATES = (("baseline", "baseline"), ("p1-p5", "p1-p5"))
TIMING = {
    "host_send_ns": (1000.0, 2000.0),
    "host_copy_byte_ns": (0.05, 1.5),
    "vhost_copy_byte_ns": (0.05, 1.4),
    "vcpu_wake_short_ns": (2000.0, 10000.0),
}
# Priors that only some hypotheses use, fitted only under them.
TIMING_IF = {
    ("copy_model", "two-rate"): {"copy_hot_byte_ns": (0.02, 0.5)},
    ("ipi_virtualization", False): {"ipi_exit_ns": (1000.0, 2500.0)},
}
TIMING_SEEDS = (21, 22)
TIMING_PACKETS = 3000
TIMING_EVALUATIONS = 80


def timing_priors(hypothesis: dict | None = None) -> dict:
    """The timing priors stage 2 fits under a hypothesis (its switches), with their ranges."""
    out = dict(TIMING)
    for (name, value), extra in TIMING_IF.items():
        if (hypothesis or {}).get(name, _schema_default(name)) == value:
            out.update(extra)
    return out


def _schema_default(name: str):
    from ..model.schema import BY_NAME
    return BY_NAME[name].default

FITTED = {name for names in GROUPS.values() for name in names}

PACKETS_PER_RUN = 8000
SEEDS = (11, 12)
ITERATIONS = 4
RIDGE = 0.1
# A group's scale stays within a factor of four of its prior: the priors are
# order-of-magnitude estimates of each operation, and the cycles cannot tell
# some groups apart (left free, the fit sets lookup_lock and tx_done to 0).
SCALE_BOUNDS = (0.25, 4.0)


def _counts(variant: str, ops: dict) -> dict[str, float]:
    """How many times CPU1 paid each cost, from a run's worker_ops (where the
    guest code charges them: vsockmodel.sim.guest)."""
    from ..model.variants import VARIANTS

    spec = VARIANTS[variant]
    pkts, holds = ops["packets"], ops["lock_holds"]
    return {
        "get_buf_ns": pkts, "recv_pkt_ns": pkts, "space_update_ns": pkts, "enqueue_ns": pkts,
        "rx_fill_buf_ns": ops["refill_bufs"], "tail_free_ns": ops["tail_frees"],
        "lookup_ns": holds, "lock_ns": holds, "unlock_ns": holds,
        "write_space_ns": holds if spec.coalesce_write_space else pkts,
        # patch 5: one sock_def_readable() per batch that met the watermark
        "data_ready_ns": ops["data_ready_calls"] if spec.defer_data_ready else pkts,
        "irq_ns": ops["interrupts"], "worker_run_ns": ops["work_runs"],
        "tx_work_ns": ops["tx_done"],
        "wakeup_ns": ops["wakes_sent"], "sleep_ns": ops["sleeps"],
        # the series' sk_callback_lock (patch 2 at a batch's start, patch 5 at its end) and
        # patch 5's per-packet flag: priors, in no group
        "callback_lock_ns": holds * ((2 if spec.defer_data_ready else 1) if spec.batch else 0),
        "data_ready_flag_ns": pkts if spec.defer_data_ready else 0,
        "tail_copy_byte_ns": ops["tail_copy_bytes"],
        # VM exits (vq_kick_ns, ipi_exit_ns) are host-mode time: perf does not see them.
    }


def _worker_ops(args) -> tuple[dict, dict]:
    """One seeded run of stage 1: (operation counts, worker_ops) (top level, for worker processes)."""
    from ..sim.run import simulate

    costs_dict, variant, payload, seed, hypothesis = args
    p, _ = make_params(variant=variant, payload=payload, seed=seed, transfer=_transfer(variant, payload),
                       **hypothesis)
    ops = simulate(p, Costs(**costs_dict)).worker_ops
    return _counts(variant, ops), ops


def _simulate_counts(costs: Costs, configs: list, pool, hypothesis: dict) -> dict:
    """(variant, payload) -> (operation counts per received byte, busy ns per byte), over SEEDS."""
    tasks = [(costs.to_dict(), v, p, s, hypothesis) for v, p in configs for s in SEEDS]
    results = list(pool.map(_worker_ops, tasks)) if pool else [_worker_ops(t) for t in tasks]
    out = {}
    for i, config in enumerate(configs):
        total: dict[str, float] = {}
        busy = bytes_ = 0.0
        for counts, ops in results[i * len(SEEDS):(i + 1) * len(SEEDS)]:
            for k, v in counts.items():
                total[k] = total.get(k, 0.0) + v
            busy += ops["busy_ns"]
            bytes_ += ops["payload_bytes"]
        out[config] = ({k: v / bytes_ for k, v in total.items()}, busy / bytes_)
    return out


def _transfer(variant: str, payload: int) -> int:
    return make_params(variant=variant, payload=payload)[0].transfer_for(PACKETS_PER_RUN)


def rows() -> list[dict]:
    """The 48 measured points: table, state, variant, payload, cycles/B."""
    out = []
    for table, states in TABLES.items():
        for state, variant in states:
            for payload, value in sorted(measurements.values(table, state, "cycles_per_byte").items()):
                out.append(dict(table=table, state=state, variant=variant, payload=payload,
                                measured=value))
    return out


def fit_cycles(priors: Costs | None = None, iterations: int = ITERATIONS, progress=None,
               pool=None, hypothesis: dict | None = None) -> dict:
    """Stage 1: the RX worker's cost groups against the CPU1 cycles per byte."""
    import numpy as np
    from scipy.optimize import lsq_linear

    priors = priors or Costs()
    data = rows()
    configs = sorted({(r["variant"], r["payload"]) for r in data})
    scales = {g: 1.0 for g in GROUPS}
    costs = priors
    history = []
    for it in range(iterations):
        counts = _simulate_counts(costs, configs, pool, hypothesis or {})
        if progress:
            progress(it, it + 1, iterations + 1)
        # Design matrix: cycles per byte contributed by each group at prior values.
        a = np.zeros((len(data), len(GROUPS)))
        fixed = np.zeros(len(data))         # cycles per byte of costs no group scales
        y = np.array([r["measured"] for r in data])
        for i, r in enumerate(data):
            per_byte, _ = counts[(r["variant"], r["payload"])]
            for j, names in enumerate(GROUPS.values()):
                a[i, j] = sum(per_byte[n] * getattr(priors, n) for n in names) * priors.clock_ghz
            fixed[i] = sum(per_byte[n] * getattr(priors, n) for n in per_byte
                           if n not in FITTED) * priors.clock_ghz
        # Relative errors: each row divided by its measurement. A weak pull of
        # every scale towards 1 (the prior) keeps groups the cycles cannot tell
        # apart from wandering: a scale of 0 or 2 costs as much as one
        # measurement missed by RIDGE.
        k = len(GROUPS)
        lhs = np.vstack([a / y[:, None], RIDGE * np.eye(k)])
        rhs = np.concatenate([(y - fixed) / y, RIDGE * np.ones(k)])
        sol = lsq_linear(lhs, rhs, bounds=SCALE_BOUNDS)
        new = dict(zip(GROUPS, (float(x) for x in sol.x)))
        if it:  # damp: the counts of the next simulation move with the costs
            new = {g: (new[g] + scales[g]) / 2 for g in GROUPS}
        change = max(abs(new[g] - scales[g]) / max(scales[g], 1e-9) for g in GROUPS)
        scales = new
        costs = apply(priors, scales)
        pred = a @ np.array([scales[g] for g in GROUPS]) + fixed
        rel = (pred - y) / y
        history.append({"iteration": it + 1, "scales": dict(scales), "max_change": change,
                        "rms_pct": float(100 * np.sqrt(np.mean(rel ** 2)))})
    # Final check with the fitted costs: simulated (not linearised) cycles per byte.
    checked = []
    final = _simulate_counts(costs, configs, pool, hypothesis or {})
    for r in data:
        _, busy_per_byte = final[(r["variant"], r["payload"])]
        predicted = busy_per_byte * costs.clock_ghz
        checked.append(dict(r, predicted=predicted, error_pct=100 * (predicted / r["measured"] - 1)))
    rms = math.sqrt(sum(c["error_pct"] ** 2 for c in checked) / len(checked))
    lo, hi = SCALE_BOUNDS
    at_bound = [g for g, v in scales.items() if v <= lo * 1.01 or v >= hi * 0.99]
    return {"costs": {n: getattr(costs, n) for g in GROUPS.values() for n in g},
            "scales": scales, "scales_at_bound": at_bound, "rms_pct": rms, "rows": checked,
            "history": history,
            "tables": list(TABLES), "seeds": list(SEEDS), "packets_per_run": PACKETS_PER_RUN}


def throughput_rows() -> list[dict]:
    """The 16 measured throughputs stage 2 fits: both columns of THROUGHPUT_TABLE."""
    out = []
    for state, variant in THROUGHPUT_STATES:
        for payload, value in sorted(measurements.values(THROUGHPUT_TABLE, state, "throughput_gbps").items()):
            out.append(dict(table=THROUGHPUT_TABLE, state=state, variant=variant, payload=payload,
                            measured=value))
    return out


def _throughput(args) -> float:
    """One seeded run of stage 2 (top level, for worker processes)."""
    from ..sim.run import simulate

    costs_dict, variant, payload, seed, hypothesis = args
    p, _ = make_params(variant=variant, payload=payload, seed=seed,
                       transfer=make_params(variant=variant, payload=payload)[0].transfer_for(TIMING_PACKETS),
                       **hypothesis)
    return simulate(p, Costs(**costs_dict)).throughput_gbps


def _predicted(costs: Costs, data: list[dict], pool, hypothesis: dict) -> list[float]:
    tasks = [(costs.to_dict(), r["variant"], r["payload"], s, hypothesis) for r in data for s in TIMING_SEEDS]
    values = list(pool.map(_throughput, tasks)) if pool else [_throughput(t) for t in tasks]
    n = len(TIMING_SEEDS)
    return [sum(values[i * n:(i + 1) * n]) / n for i in range(len(data))]


def fit_timing(costs: Costs, evaluations: int = TIMING_EVALUATIONS, progress=None, pool=None,
               hypothesis: dict | None = None) -> dict:
    """Stage 2: the timing priors, within their ranges, against the absolute
    throughputs of THROUGHPUT_TABLE (both columns)."""
    from scipy.optimize import minimize

    hypothesis = hypothesis or {}
    priors = timing_priors(hypothesis)
    data = throughput_rows()
    names = list(priors)
    lo = [priors[n][0] for n in names]
    hi = [priors[n][1] for n in names]

    def values_at(x) -> dict:
        return {n: float(lo[i] + min(1.0, max(0.0, float(x[i]))) * (hi[i] - lo[i]))
                for i, n in enumerate(names)}

    evaluated = []

    def rms(x, pool) -> float:
        trial = costs.with_(**values_at(x))
        pred = _predicted(trial, data, pool, hypothesis)
        err = math.sqrt(sum((p / r["measured"] - 1) ** 2 for p, r in zip(pred, data)) / len(data))
        # outside the box the objective grows with the distance, so the search comes back
        err += sum(max(0.0, -v, v - 1.0) for v in x)
        evaluated.append(err)
        if progress:
            progress(len(evaluated), evaluations)
        return err

    start = [(getattr(costs, n) - lo[i]) / (hi[i] - lo[i]) for i, n in enumerate(names)]
    start = [min(0.95, max(0.05, v)) for v in start]
    res = minimize(rms, start, args=(pool,), method="Nelder-Mead",
                   options={"maxfev": evaluations, "xatol": 0.02, "fatol": 1e-4,
                            "initial_simplex": _simplex(start)})
    fitted = values_at(res.x)
    pred = _predicted(costs.with_(**fitted), data, pool, hypothesis)
    rows = [dict(r, predicted=p, error_pct=100 * (p / r["measured"] - 1)) for p, r in zip(pred, data)]
    columns = {}
    for state, _ in THROUGHPUT_STATES:
        errs = [r["error_pct"] for r in rows if r["state"] == state]
        columns[state] = math.sqrt(sum(e * e for e in errs) / len(errs))
    timing = {n: {"value": fitted[n], "low": priors[n][0], "high": priors[n][1],
                  "at_bound": bool(min(fitted[n] - priors[n][0], priors[n][1] - fitted[n])
                                   <= 0.01 * (priors[n][1] - priors[n][0]))}
              for n in names}
    return {"timing": timing, "rows": rows, "rms_pct_by_state": columns,
            "evaluations": len(evaluated), "table": THROUGHPUT_TABLE, "seeds": list(TIMING_SEEDS),
            "packets_per_run": TIMING_PACKETS}


def _simplex(start: list[float]) -> list[list[float]]:
    """A starting simplex a fifth of each range wide, inside the box."""
    out = [list(start)]
    for i in range(len(start)):
        v = list(start)
        v[i] = v[i] + 0.2 if v[i] + 0.2 <= 1 else v[i] - 0.2
        out.append(v)
    return out


def fit(priors: Costs | None = None, iterations: int = ITERATIONS, progress=None,
        timing_evaluations: int = TIMING_EVALUATIONS, jobs: int | None = None,
        hypothesis: dict | None = None) -> dict:
    """Both stages: the cycles, then the timing priors with the fitted cycles costs,
    under a hypothesis (the schema's advanced switches; none given: their defaults)."""
    import contextlib
    import os
    from concurrent.futures import ProcessPoolExecutor

    priors = priors or Costs()
    jobs = jobs or os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        cycles = fit_cycles(priors, iterations, pool=pool, hypothesis=hypothesis,
                            progress=(lambda it, i, n: progress("cycles", i, n)) if progress else None)
        costs = priors.with_(**cycles["costs"])
        timing = fit_timing(costs, timing_evaluations, pool=pool, hypothesis=hypothesis,
                            progress=(lambda i, n: progress("throughput", i, n)) if progress else None)
    return dict(cycles, timing=timing["timing"], timing_fit=timing, hypothesis=dict(hypothesis or {}))


def apply(priors: Costs, scales: dict) -> Costs:
    changes = {n: getattr(priors, n) * scales[g] for g, names in GROUPS.items() for n in names}
    return priors.with_(**changes)


def write(result: dict, path=None) -> str:
    """Write the fitted constants where ``default_costs()`` finds them."""
    target = path or resources.files("vsockmodel.model").joinpath("data", CALIBRATED_FILE)
    doc = {
        "about": "Written by `python -m vsockmodel calibrate`: RX worker costs fitted to the v1 "
                 "guest CPU1 cycles/byte tables (costs), and timing priors fitted within their "
                 "ranges to the absolute throughputs of v1_all_fixed64k (timing). Do not edit by hand.",
        "costs": {k: round(v, 4) for k, v in result["costs"].items()},
        "timing": {k: {kk: (round(vv, 4) if isinstance(vv, float) else vv) for kk, vv in v.items()}
                   for k, v in result["timing"].items()},
        "timing_fit": {"rms_pct_by_state": {k: round(v, 2) for k, v in
                                            result["timing_fit"]["rms_pct_by_state"].items()},
                       "evaluations": result["timing_fit"]["evaluations"],
                       "rows": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
                                for r in result["timing_fit"]["rows"]]},
        "scales": {k: round(v, 4) for k, v in result["scales"].items()},
        "rms_pct": round(result["rms_pct"], 2),
        "tables": result["tables"], "seeds": result["seeds"],
        "packets_per_run": result["packets_per_run"],
        "rows": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
                 for r in result["rows"]],
    }
    text = json.dumps(doc, indent=1) + "\n"           # the whole file first: a failure leaves the old one
    try:
        tmp = f"{target}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, str(target))
    except OSError as exc:
        raise CalibrationWriteError(f"cannot write {target}: {exc.strerror or exc}; nothing was "
                                    f"changed (--dry-run prints the fit without writing)") from None
    return str(target)


class CalibrationWriteError(OSError):
    """costs.json could not be written (a read-only install, say)."""


def fitted_names() -> list[str]:
    """Every cost the calibration may set: the cycles groups' and the timing priors."""
    extra = [n for group in TIMING_IF.values() for n in group]
    return [n for names in GROUPS.values() for n in names] + list(TIMING) + extra


assert all(n in {f.name for f in fields(Costs)} for n in fitted_names())
