"""Plots and cached model runs shared by the chapters.

Chapters call these so that a figure means the same thing everywhere: the
same colour for a variant, the same units, the same way of showing a seed
measurement next to a model prediction.
"""

from __future__ import annotations

from functools import lru_cache

from . import seeddata
from .model import run
from .style import COLORS, fmt_size, label, size_ticks

VARIANT_COLORS = {
    "pre-skb": COLORS["reddish_purple"],
    "baseline": COLORS["vermillion"],
    "p1-p3": COLORS["sky_blue"],
    "p1-p5": COLORS["blue"],
}
ACTOR_COLORS = {"worker": COLORS["blue"], "reader": COLORS["orange"]}
SERIES_PAYLOADS = seeddata.SERIES_PAYLOADS


@lru_cache(maxsize=4096)
def _cached(items: tuple):
    return run(**dict(items))


def cached_run(**params):
    """``vsockmodel.run`` memoised on its parameters (runs are deterministic)."""
    return _cached(tuple(sorted(params.items())))


def sweep(variant: str, payloads=SERIES_PAYLOADS, metric: str = "throughput_gbps", **fixed) -> list:
    """One metric of ``run`` over payloads, e.g. throughput against payload size."""
    out = []
    for p in payloads:
        r = cached_run(variant=variant, payload=p, **fixed)
        out.append(getattr(r, metric) if metric != "recv_per_write" else r.recv_calls / r.writes)
    return out


def throughput_vs_payload(ax, variants=("baseline", "p1-p5"), payloads=SERIES_PAYLOADS,
                          seed_table: str | None = None, highlight: int | None = None, **fixed):
    """Model throughput against payload for some variants; seed measurements as markers."""
    for v in variants:
        ys = sweep(v, payloads, **fixed)
        ax.plot(payloads, ys, "-o", color=VARIANT_COLORS[v], label=f"model: {v}", markersize=4)
        if highlight is not None and highlight in payloads:
            i = list(payloads).index(highlight)
            ax.plot([highlight], [ys[i]], "o", color=VARIANT_COLORS[v], markersize=10,
                    markerfacecolor="none", markeredgewidth=2)
    if seed_table:
        for v in variants:
            measured = _seed_values(seed_table, v, "throughput_gbps")
            if measured:
                xs = sorted(measured)
                ax.plot(xs, [measured[x] for x in xs], "s", color=VARIANT_COLORS[v],
                        markerfacecolor="white", markeredgewidth=1.5, linestyle="none",
                        label=f"measured: {v}")
    ax.set_xscale("log", base=2)
    size_ticks(ax.xaxis, payloads)
    label(ax, x="payload per send() (bytes)", y="throughput (Gbit/s)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", ncol=2)


def _seed_values(table: str, variant: str, metric: str) -> dict:
    try:
        return seeddata.values(table, variant, metric)
    except seeddata.SeedDataError:
        return {}


def lock_timeline(ax, result, t0_us: float | None = None, span_us: float = 200.0):
    """Who owns the socket lock, who waits for it, and when the reader reads.

    Needs a result from ``run(..., trace=True)``. Rows: the RX worker and the
    reader; solid bars are lock ownership, hatched bars waiting for the lock,
    ticks are enqueued packets (worker row) and recv() returns (reader row).
    """
    trace = sorted(result.trace, key=lambda e: e[0])
    if t0_us is None:
        t0_us = trace[len(trace) // 3][0] / 1000
    t1_us = t0_us + span_us
    rows = {"worker": 1.0, "reader": 0.0}
    owned_from: dict = {}
    waiting_from: dict = {}
    for t, actor, event, info in trace:
        tu = t / 1000
        if actor not in rows:
            continue
        if event == "lock":
            owned_from[actor] = tu
            if actor in waiting_from:
                _bar(ax, rows[actor], waiting_from.pop(actor), tu, t0_us, t1_us, actor, hatch=True)
        elif event == "unlock" and actor in owned_from:
            _bar(ax, rows[actor], owned_from.pop(actor), tu, t0_us, t1_us, actor)
        elif event == "lock_wait" and actor not in waiting_from:
            waiting_from[actor] = tu
        elif t0_us <= tu <= t1_us and event in ("enqueue", "tail_copy"):
            ax.plot([tu, tu], [rows[actor] + 0.3, rows[actor] + 0.42], color=COLORS["black"], lw=0.8)
        elif t0_us <= tu <= t1_us and event == "recv":
            ax.plot([tu], [rows[actor] + 0.36], "v", color=COLORS["black"], markersize=5)
    ax.set_yticks([0.0, 1.0], ["reader\n(CPU0)", "RX worker\n(CPU1)"])
    ax.set_ylim(-0.4, 1.6)
    ax.set_xlim(t0_us, t1_us)
    ax.grid(axis="y", visible=False)
    label(ax, x="simulated time (µs)")


def _bar(ax, y, a, b, t0, t1, actor, hatch=False):
    a, b = max(a, t0), min(b, t1)
    if b <= a:
        return
    color = ACTOR_COLORS[actor]
    if hatch:
        ax.barh(y, b - a, left=a, height=0.45, color="white", edgecolor=color, hatch="////", lw=0.5)
    else:
        ax.barh(y, b - a, left=a, height=0.45, color=color, lw=0)


def gain_pct(a: float, b: float) -> float:
    return 100.0 * (b / a - 1.0)


__all__ = ["VARIANT_COLORS", "ACTOR_COLORS", "cached_run", "sweep", "throughput_vs_payload",
           "lock_timeline", "gain_pct", "fmt_size"]
