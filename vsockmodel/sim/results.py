"""What one run returns: throughput, CPU cost, counts, distributions, trace."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields


def nearest_rank(values, q: float, ordered: bool = False) -> float:
    """The q-quantile (0 < q <= 1) by the nearest-rank method: a value that
    occurred, the smallest with at least q of the values at or below it
    (numpy's ``percentile(..., method="inverted_cdf")``). ``ordered``: the
    values are sorted already."""
    xs = values if ordered else sorted(values)
    return float(xs[max(0, math.ceil(q * len(xs)) - 1)])


def summary_us(values_ns: list[float]) -> dict:
    """count, mean, p50, p95, max of a list of durations, in microseconds.

    The mean is an exact sum (math.fsum): Python 3.12 made the built-in
    sum() of floats more exact, and the browser lab runs a newer Python than
    the book may, so a plain sum() would differ in the last digits.
    """
    if not values_ns:
        return {"count": 0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    n = len(values_ns)
    xs = sorted(values_ns)
    return {
        "count": n,
        "mean": math.fsum(xs) / n / 1000,
        "p50": nearest_rank(xs, 0.50, ordered=True) / 1000,
        "p95": nearest_rank(xs, 0.95, ordered=True) / 1000,
        "max": xs[-1] / 1000,
    }


@dataclass
class Result:
    params: dict
    throughput_gbps: float
    rx_cycles_per_byte: float | None   # None when no byte was received (a reset stream)
    recv_calls: int
    writes: int
    packets: int
    recv_per_write: float          # recv() calls / writes over the whole run, as the series counts them
    bytes_sent: int
    bytes_received: int
    bytes_dropped: int
    resets: int
    reset_reason: str
    wakeups: int
    futile_wakeups: int
    wakeups_by_task: dict
    futile_wakeups_by_task: dict
    lock_hold_us: dict
    lock_wait_us: dict
    batch_pkts: dict
    rtt_us: float | None
    rtt_p95_us: float | None
    counters: dict
    utilization: dict
    worker_ops: dict
    sim_time_us: float
    events: int          # scheduling events plus recv() calls: what the run's bound counts
    trace: list | None = field(default=None, repr=False)
    trace_truncated: bool = False  # the trace stopped at Sim.MAX_TRACE_EVENTS
    raw: dict = field(default_factory=dict, repr=False)   # full distributions, for plots

    def to_dict(self, include_trace: bool = False) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k not in ("trace", "raw", "trace_truncated")}
        if self.trace is not None:
            d["trace_truncated"] = self.trace_truncated
        if include_trace:
            d["trace"] = [{"t_ns": t, "actor": a, "event": e, **info} for t, a, e, info in self.trace or []]
        return d

    def worker_time(self) -> dict:
        """Where the RX worker's elapsed time went, as shares of the run.

        ``busy``: on its CPU (what perf's cycles see). ``lock_wait``: from
        finding lock_sock owned until it held the lock, wake-up included.
        ``idle``: the rest, waiting for used buffers: for vhost's next run,
        its interrupt and the wake-up of the halted vCPU.
        """
        elapsed = self.sim_time_us * 1000
        busy = self.utilization["worker"]
        lock_wait = math.fsum(self.raw.get("lock_wait_ns", {}).get("worker", ())) / elapsed
        return {"busy": busy, "lock_wait": lock_wait, "idle": max(0.0, 1.0 - busy - lock_wait)}

    def vhost_no_rx_buf_share(self) -> float:
        """Share of the run vhost spent asleep with data queued but no guest RX
        buffer to put it in: the RX ring's stop-and-go (the guest refills the
        ring only when a run of its RX worker ends)."""
        return self.counters["vhost_no_rx_buf_ns"] / (self.sim_time_us * 1000)


# The fields of a Result that are numbers (some may be None: no RTT on a stream).
NUMERIC_FIELDS = frozenset(f.name for f in fields(Result)
                           if f.type in ("int", "float", "float | None"))
