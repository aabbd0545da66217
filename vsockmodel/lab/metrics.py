"""What the lab can compare between A and B: every metric a run reports, with
its paired-seed interval.

Each metric is read from a run's ``Result`` (its ``to_dict()`` and the shares
it computes), so the list lives here, in Python, and the page only shows it.
A metric a run does not report (a ping-pong's throughput, a field a later
model drops) is left out, not shown as zero.

The change from A to B is the series' own measure: the change of the mean in
%, with the 95 % interval of the paired log ratios (``paired_change_ci``).
Where a run gives zero (no futile wake-up, no lock wait) a ratio has no
meaning, so the change is the paired difference B - A with its interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ..model.units import fmt_count
from ..study.confidence import mean_ci, paired_change_ci


def _get(path: str) -> Callable:
    """A number at a path of ``Result.to_dict()`` ("lock_wait_us.worker.count"), or None."""
    def read(r):
        node = r.to_dict()
        for key in path.split("."):
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node
    return read


def _lock_waits(r):
    waits = r.to_dict().get("lock_wait_us") or {}
    counts = [v.get("count") for v in waits.values() if isinstance(v, dict)]
    return sum(counts) if counts and None not in counts else None


def _useful_wakeups(r):
    return None if r.wakeups is None or r.futile_wakeups is None else r.wakeups - r.futile_wakeups


def _share_pct(method: str, key: str | None = None) -> Callable:
    def read(r):
        fn = getattr(r, method, None)
        if fn is None:
            return None
        value = fn() if key is None else fn().get(key)
        return None if value is None else 100 * value
    return read


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    read: Callable            # Result -> number or None
    count: bool = False       # a whole number of events: printed with separators

    def text(self, value: float) -> str:
        if self.count and float(value).is_integer():
            return fmt_count(int(value))
        return f"{value:.4g}"


METRICS: tuple[Metric, ...] = (
    Metric("throughput_gbps", "throughput", "Gbit/s", _get("throughput_gbps")),
    Metric("rtt_us", "ping-pong round trip, mean", "µs", _get("rtt_us")),
    Metric("rx_cycles_per_byte", "guest CPU1 cycles per byte", "cycles/B", _get("rx_cycles_per_byte")),
    Metric("packets_per_lock_hold", "packets per socket-lock hold (RX worker)", "packets",
           _get("batch_pkts.mean")),
    Metric("lock_waits", "socket-lock waits (RX worker and reader)", "waits", _lock_waits, count=True),
    Metric("worker_lock_wait_pct", "RX worker's time waiting for the socket lock", "% of the run",
           _share_pct("worker_time", "lock_wait")),
    Metric("vhost_no_rx_buf_pct", "time vhost waits for guest RX buffers", "% of the run",
           _share_pct("vhost_no_rx_buf_share")),
    Metric("useful_wakeups", "wake-ups, useful", "wake-ups", _useful_wakeups, count=True),
    Metric("futile_wakeups", "wake-ups, futile", "wake-ups", _get("futile_wakeups"), count=True),
    Metric("recv_per_write", "recv() calls per write", "calls", _get("recv_per_write")),
)
BY_KEY = {m.key: m for m in METRICS}


def describe() -> list[dict]:
    """The metrics, for the page's menu."""
    return [{"key": m.key, "label": m.label, "unit": m.unit} for m in METRICS]


def values(metric: Metric, results) -> list[float] | None:
    """One value per run, or None when some run does not report the metric."""
    out = [metric.read(r) for r in results]
    if any(v is None or not math.isfinite(v) for v in out):
        return None
    return [float(v) for v in out]


def _signed(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}"


def paired(metric: Metric, results_a, results_b) -> dict | None:
    """A against B for one metric over runs paired by seed, or None if a run lacks it."""
    a, b = values(metric, results_a), values(metric, results_b)
    if a is None or b is None:
        return None
    est_a, est_b = mean_ci(a), mean_ci(b)
    out = {"key": metric.key, "label": metric.label, "unit": metric.unit, "a": a, "b": b,
           "a_mean": est_a.mean, "b_mean": est_b.mean,
           "a_text": metric.text(est_a.mean), "b_text": metric.text(est_b.mean),
           "change_pct": None, "change_ci": None, "diff": None, "diff_ci": None}
    n = len(a)
    if all(x > 0 for x in a + b):
        lo, hi = paired_change_ci(a, b)
        change = 100 * (math.fsum(b) / math.fsum(a) - 1)
        out.update(change_pct=change, change_ci=[lo, hi],
                   change_text=f"{_signed(change)} % ({_signed(lo)} to {_signed(hi)})")
        out["text"] = (f"{metric.label}: A {out['a_text']}, B {out['b_text']} {metric.unit} (means); "
                       f"B against A {_signed(change)} % (95 % interval {_signed(lo)} % to {_signed(hi)} %), "
                       f"over {n} pairs.")
    else:
        diffs = mean_ci([y - x for x, y in zip(a, b)])
        out.update(diff=diffs.mean, diff_ci=[diffs.ci_low, diffs.ci_high],
                   change_text=f"{diffs.mean:+.4g} ({diffs.ci_low:+.4g} to {diffs.ci_high:+.4g}), a difference")
        out["text"] = (f"{metric.label}: A {out['a_text']}, B {out['b_text']} {metric.unit} (means); "
                       f"B minus A {diffs.mean:+.4g} {metric.unit} (95 % interval {diffs.ci_low:+.4g} to "
                       f"{diffs.ci_high:+.4g}), over {n} pairs: a run gave zero, so the change is a "
                       f"difference, not a ratio.")
    return out


def paired_all(results_a, results_b) -> list[dict]:
    """Every metric both sides report, A against B."""
    return [row for m in METRICS if (row := paired(m, results_a, results_b)) is not None]
