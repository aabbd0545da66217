"""Fit the RX worker's per-operation costs to the series' v1 CPU1 cycles-per-byte tables.

What is fitted, and on what
---------------------------
Only the guest CPU1 cycles per received byte of the v1 series (tables
``v1_all_cycles``, ``v1_p1p3_cycles`` and ``v1_p4p5_cycles``: 48 numbers,
measured with perf on the CPU that runs the RX worker). Throughput, recv()
counts and RTT are never used: they are what the model is then asked to
predict (``vsockmodel.validate``).

Cycles only say how much CPU the worker used, and most of its per-packet work
is common to every variant, so the individual kernel functions cannot be told
apart. The fit therefore scales *groups* of costs, keeping the priors' ratios
inside a group:

- ``per_packet``: work every variant does for every buffer (get_buf, rx_fill,
  recv_pkt decode/trace, space_update, enqueue);
- ``lookup_lock``: what patches 1-3 amortise (socket lookup, lock_sock,
  release_sock);
- ``notify``: what patches 4-5 coalesce (sk_write_space, sk_data_ready);
- ``per_irq``: the RX interrupt and the start of rx_work;
- ``tx_done``: the TX interrupt and tx_work that free each guest TX buffer (a
  credit update) vhost has used;
- ``sched``: a wake-up sent (try_to_wake_up + IPI) and a sleep (two context
  switches), paid when the worker and the reader contend;
- ``per_byte``: CPU1 time per payload byte.

How
---
The worker's busy time is linear in the costs once the operation counts are
known, and the counts (packets, lock holds, interrupts, refills) come from a
simulation. So: simulate with the current costs, read the counts, solve a
non-negative least-squares problem for the group scales on relative errors,
and repeat until the scales settle (the counts move a little with the costs).
Everything is seeded: the same inputs give the same constants.
"""

from __future__ import annotations

import json
import math
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
    "tx_done": ("tx_irq_ns", "tx_work_ns"),
    "sched": ("wakeup_ns", "sleep_ns"),
    "per_byte": ("rx_byte_ns",),
}

FITTED = {name for names in GROUPS.values() for name in names}

PACKETS_PER_RUN = 16000
SEEDS = (11, 12)
ITERATIONS = 5
RIDGE = 0.1


def _counts(variant: str, ops: dict) -> dict[str, float]:
    """How many times the worker paid each cost, from a run's worker_ops."""
    from ..model.variants import VARIANTS

    spec = VARIANTS[variant]
    pkts, holds = ops["packets"], ops["lock_holds"]
    return {
        "get_buf_ns": pkts, "recv_pkt_ns": pkts, "space_update_ns": pkts, "enqueue_ns": pkts,
        "rx_fill_buf_ns": ops["refill_bufs"], "tail_free_ns": ops["tail_frees"],
        "lookup_ns": holds, "lock_ns": holds, "unlock_ns": holds,
        "write_space_ns": holds if spec.coalesce_write_space else pkts,
        "data_ready_ns": pkts / 2 if spec.defer_data_ready else pkts,
        "irq_ns": ops["irqs"], "worker_run_ns": ops["irqs"],
        "tx_irq_ns": ops["tx_irqs"], "tx_work_ns": ops["tx_done"],
        "rx_byte_ns": ops["payload_bytes"],
        # the CPU cost of the scheduler's work (group "sched"):
        "wakeup_ns": ops["wakes_sent"], "sleep_ns": ops["sleeps"],
        # not fitted: a prior, in no group
        "tail_copy_byte_ns": ops["tail_copy_bytes"],
        # VM exits (vq_kick_ns, ipi_exit_ns) are host-mode time: perf does not see them.
    }


def _simulate_counts(costs: Costs, variant: str, payload: int) -> tuple[dict, float]:
    """Average operation counts per received byte for one configuration."""
    from ..sim.run import simulate

    total: dict[str, float] = {}
    busy = bytes_ = 0.0
    for seed in SEEDS:
        p, _ = make_params(variant=variant, payload=payload, seed=seed,
                           transfer=_transfer(variant, payload))
        r = simulate(p, costs)
        for k, v in _counts(variant, r.worker_ops).items():
            total[k] = total.get(k, 0.0) + v
        busy += r.worker_ops["busy_ns"]
        bytes_ += r.worker_ops["payload_bytes"]
    return {k: v / bytes_ for k, v in total.items()}, busy / bytes_


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


def fit(priors: Costs | None = None, iterations: int = ITERATIONS, progress=None) -> dict:
    """Run the calibration; return fitted costs, scales and the per-row fit."""
    import numpy as np
    from scipy.optimize import lsq_linear

    priors = priors or Costs()
    data = rows()
    configs = sorted({(r["variant"], r["payload"]) for r in data})
    scales = {g: 1.0 for g in GROUPS}
    costs = priors
    history = []
    for it in range(iterations):
        counts = {}
        for i, (variant, payload) in enumerate(configs):
            counts[(variant, payload)] = _simulate_counts(costs, variant, payload)
            if progress:
                progress(it, i + 1, len(configs))
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
        sol = lsq_linear(lhs, rhs, bounds=(0, np.inf))
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
    for r in data:
        _, busy_per_byte = _simulate_counts(costs, r["variant"], r["payload"])
        predicted = busy_per_byte * costs.clock_ghz
        checked.append(dict(r, predicted=predicted, error_pct=100 * (predicted / r["measured"] - 1)))
    rms = math.sqrt(sum(c["error_pct"] ** 2 for c in checked) / len(checked))
    return {"costs": {n: getattr(costs, n) for g in GROUPS.values() for n in g},
            "scales": scales, "rms_pct": rms, "rows": checked, "history": history,
            "tables": list(TABLES), "seeds": list(SEEDS), "packets_per_run": PACKETS_PER_RUN}


def apply(priors: Costs, scales: dict) -> Costs:
    changes = {n: getattr(priors, n) * scales[g] for g, names in GROUPS.items() for n in names}
    return priors.with_(**changes)


def write(result: dict, path=None) -> str:
    """Write the fitted constants where ``default_costs()`` finds them."""
    target = path or resources.files("vsockmodel.model").joinpath("data", CALIBRATED_FILE)
    doc = {
        "about": "Written by `python -m vsockmodel calibrate`: RX worker costs fitted to the v1 "
                 "guest CPU1 cycles/byte tables. Do not edit by hand.",
        "costs": {k: round(v, 4) for k, v in result["costs"].items()},
        "scales": {k: round(v, 4) for k, v in result["scales"].items()},
        "rms_pct": round(result["rms_pct"], 2),
        "tables": result["tables"], "seeds": result["seeds"],
        "packets_per_run": result["packets_per_run"],
        "rows": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}
                 for r in result["rows"]],
    }
    try:
        with open(str(target), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    except OSError as exc:
        raise CalibrationWriteError(f"cannot write {target}: {exc.strerror or exc}; nothing was "
                                    f"changed (--dry-run prints the fit without writing)") from None
    return str(target)


class CalibrationWriteError(OSError):
    """costs.json could not be written (a read-only install, say)."""


def fitted_names() -> list[str]:
    return [n for names in GROUPS.values() for n in names]


assert all(n in {f.name for f in fields(Costs)} for n in fitted_names())
