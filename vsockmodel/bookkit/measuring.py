"""Chapter 6's plumbing: the fitted constants, the report card and the residuals.

Everything here is read from what the study already wrote or returns: the
calibration's ``costs.json`` (``vsockmodel.study.calibrate``) and the report of
``vsockmodel.study.validate.score``. Nothing is fitted or scored anew. The few
diagnostic runs the chapter needs go through :func:`runs`, which runs them in
worker processes and remembers them for the kernel's lifetime; every run is
seeded, so the results do not depend on the number of processes.
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from importlib import resources

from ..model.costs import Costs
from ..model.params import make_params
from ..study import calibrate, validate

#: Group names of the report card, in the order validate's checks come.
GROUPS = {
    "in-sample": "In-sample: the table the timing priors were fitted to",
    "same test bed": "Same test bed as the fitted table: reported apart, not evidence",
    "held out": "Held out: never fitted, only scored",
    "held out (v2)": "Held out: v2, another test bed",
    "shape": "The baseline's shape (held out)",
}

#: What each stage-1 cost group of the calibration (calibrate.GROUPS) stands for, as plain text.
GROUP_MEANING = {
    "per_packet": "each packet's buffer, header, credit, enqueue and refill",
    "lookup_lock": "each packet's socket lookup, lock_sock and release_sock",
    "notify": "sk_write_space and sk_data_ready with nobody asleep",
    "per_irq": "the interrupt and the start of a work item",
    "tx_done": "tx_work freeing each credit update vhost has used",
    "scheduler": "the kworkers' context switches and the wake-ups they send",
}

#: Where each stage-2 range comes from, in the words of the costs' docstrings.
TIMING_MEANING = {
    "host_send_ns": "one host send() in vsock_perf: syscall, lock_sock, credit check",
    "host_copy_byte_ns": "the sender's copy of each payload byte from user memory into the skb",
    "vhost_copy_byte_ns": "vhost's copy of each payload byte into guest memory",
    "vcpu_wake_short_ns": "wake-up of a guest task whose vCPU halted briefly: the scheduler path",
    "copy_hot_byte_ns": "two-rate copies: the cost per byte of the part the caches hold",
    "ipi_exit_ns": "without IPI virtualisation: the VM exit of an IPI to a halted vCPU",
}


def costs_file() -> dict:
    """The calibration's output, as ``python -m vsockmodel calibrate`` wrote it."""
    path = resources.files("vsockmodel.model").joinpath("data", "costs.json")
    return json.loads(path.read_text(encoding="utf-8"))


def cycle_groups() -> list[dict]:
    """Stage 1: each cost group's fitted scale, its bounds and whether it ends at one."""
    fit = costs_file()
    lo, hi = calibrate.SCALE_BOUNDS
    out = []
    for group, names in calibrate.GROUPS.items():
        scale = fit["scales"][group]
        out.append({"group": group, "scale": scale, "low": lo, "high": hi,
                    "at_bound": "low" if scale <= lo * 1.01 else "high" if scale >= hi * 0.99 else "",
                    "costs": list(names)})
    return out


def timing_priors() -> list[dict]:
    """Stage 2: each timing prior's fitted value, its range, where in the range it
    landed (0 = low end, 1 = high end), its unit and its docstring."""
    fit = costs_file()["timing"]
    docs = {d["name"]: d for d in Costs.describe()}
    out = []
    for name in fit:
        t = fit[name]
        out.append({"name": name, "value": t["value"], "low": t["low"], "high": t["high"],
                    "position": (t["value"] - t["low"]) / (t["high"] - t["low"]),
                    "at_bound": t["at_bound"], "unit": docs[name]["unit"],
                    "meaning": TIMING_MEANING[name], "doc": docs[name]["doc"]})
    return out


def timing_rms() -> dict:
    """The stage-2 fit's own rms error per column (its seeds and run length)."""
    return costs_file()["timing_fit"]["rms_pct_by_state"]


def targets(report: dict, group: str | None = None) -> list[dict]:
    """validate's checks, all or one group's."""
    return [t for t in report["targets"] if group is None or t["group"] == group]


def time_per_write(report: dict, table: str) -> dict:
    """payload -> {"baseline": (measured, model), "<patched>": (measured, model)} in
    microseconds per write, for one throughput table of the report."""
    t = report["throughput"][table]
    out: dict = {}
    for side, state in zip("ab", t["states"]):
        meas = validate.time_per_write_us(t["rows"], side, source="measured")
        model = validate.time_per_write_us(t["rows"], side)
        for p in meas:
            out.setdefault(p, {})[state] = (meas[p], model[p])
    return out


def abs_error_pct(report: dict, table: str) -> dict:
    """state -> {payload: model / measured - 1, in %} of a table's absolute throughputs."""
    t = report["throughput"][table]
    return {state: {r["payload"]: 100 * (r[f"model_{side}_gbps"] / r[f"measured_{side}_gbps"] - 1)
                    for r in t["rows"]}
            for side, state in zip("ab", t["states"])}


def summary(result, payload: int) -> dict:
    """The numbers the chapter reads from one run, per write or as shares of the run."""
    w = result.worker_time()
    return {
        "gbps": result.throughput_gbps,
        "us_per_write": 8 * payload / result.throughput_gbps / 1000,
        "credit_updates_per_write": result.counters["credit_updates"] / result.writes,
        # the host sender found no credit and slept (virtio_transport_stream_has_space == 0)
        "sender_blocked_per_write": result.counters["sender_blocked"] / result.writes,
        "recv_per_write": result.recv_per_write,
        "sender_busy": result.utilization["sender"],
        "vhost_busy": result.utilization["vhost"],
        "reader_busy": result.utilization["reader"],
        "worker_busy": w["busy"], "worker_lock_wait": w["lock_wait"], "worker_idle": w["idle"],
        "vhost_waits_for_buffers": result.vhost_no_rx_buf_share(),
        # vhost runs that ended at head == vq->num (no guest buffer left), of all its RX runs
        "ring_full_share": result.counters["vhost_runs_ring_full"] / max(1, result.counters["vhost_runs"]),
        "packets_per_irq": result.packets / max(1, result.counters["irqs"]),
        "worker_sleeps_per_packet": result.worker_ops["sleeps"] / result.packets,
        "reader_wakeups_per_write": result.wakeups_by_task.get("reader", 0) / result.writes,
    }


def _one(kwargs: dict) -> dict:
    """One seeded run: of ``transfer`` bytes if given, else of ``packets`` packets
    (validate's length by default)."""
    from ..sim.run import simulate

    kw = dict(kwargs)
    packets = kw.pop("packets", validate.PACKETS)
    if "transfer" not in kw:
        p0, _ = make_params(variant=kw.get("variant", "baseline"), payload=kw["payload"])
        kw["transfer"] = p0.transfer_for(packets)
    params, costs = make_params(**kw)
    return summary(simulate(params, costs), params.payload)


_MEMO: dict = {}


def _key(kwargs: dict) -> str:
    return json.dumps(kwargs, sort_keys=True, default=str)


def runs(configs: list[dict], jobs: int = 2) -> list[dict]:
    """:func:`summary` of each configuration (keyword arguments of ``vsockmodel.run``,
    plus ``packets``), run like validate's runs; new ones in ``jobs`` processes."""
    todo = [c for c in {_key(c): c for c in configs}.values() if _key(c) not in _MEMO]
    if todo:
        if jobs > 1 and len(todo) > 1:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
                done = list(pool.map(_one, todo))
        else:
            done = [_one(c) for c in todo]
        for c, d in zip(todo, done):
            _MEMO[_key(c)] = d
    return [_MEMO[_key(c)] for c in configs]


def mean_of(configs: list[dict], metric: str, jobs: int = 2) -> float:
    """The mean of one metric over configurations (usually the same one over seeds)."""
    values = [r[metric] for r in runs(configs, jobs)]
    return sum(values) / len(values)
