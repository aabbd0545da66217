"""Update latency of an explorer widget like the book's, with a kernel."""

from __future__ import annotations

import statistics

from ..sim.results import nearest_rank


def widget_update_ms(moves: int = 30) -> dict | None:
    """Slider updates of an explorer like the book's, with a kernel: the chapter 2
    pattern (throughput and cycles per byte against payload, one slider for the
    payload and one for the buffer). Every grid position is drawn first, as
    when the cell runs; then each move switches the kernel's figures to it,
    which is what a reader waits for. None if the widget libraries are not installed."""
    if moves < 1:
        raise ValueError(f"moves: {moves} is out of range; allowed at least 1")
    try:
        import ipywidgets  # noqa: F401  (the optional widget dependencies)
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        return None
    from .figures import sweep
    from ..study.measurements import SERIES_PAYLOADS
    from .style import fmt_size, label
    from .widgets import explorer
    payloads = list(SERIES_PAYLOADS)

    def draw(fig, payload, buffer):
        ax, bx = fig.subplots(1, 2)
        for a, metric in ((ax, "throughput_gbps"), (bx, "rx_cycles_per_byte")):
            ys = sweep("baseline", payloads, metric, buffer=buffer)
            a.plot(payloads, ys, "-o")
            a.plot([payload], [ys[payloads.index(payload)]], "o", ms=10)
            a.set_xscale("log", base=2)
        label(ax, x="payload (bytes)", y="throughput (Gbit/s)")
        label(bx, x="payload (bytes)", y="guest CPU1 cycles per byte (cycles/B)")

    ex = explorer(draw, {"payload": payloads, "buffer": [16384, 65536, 262144]},
                  alt="Throughput and cycles per byte against payload, buffer {buffer}",
                  formats={"payload": fmt_size, "buffer": fmt_size}).build()
    grid = [(p, b) for p in payloads for b in (16384, 65536, 262144)]
    times = []
    for i in range(moves):
        p, b = grid[(7 * i + 3) % len(grid)]       # a fixed, scattered walk over the grid
        ex.select(payload=p, buffer=b)
        times.append(1000 * ex.last_update_s)
    return {"moves": moves, "grid_build_s": ex.build_s, "p50_ms": statistics.median(times),
            "p95_ms": nearest_rank(times, 0.95), "max_ms": max(times)}


def report(w: dict | None) -> None:
    if w is None:
        print("\nWidget update latency: skipped (ipywidgets or matplotlib not installed)")
        return
    print(f"\nWidget update latency, in Python (a two-slider explorer like chapter 2's, "
          f"grid built in {w['grid_build_s']:.1f} s):\n  {w['moves']} slider moves: "
          f"p50 {w['p50_ms']:.0f} ms, p95 {w['p95_ms']:.0f} ms, max {w['max_ms']:.0f} ms "
          f"(scripts/bench-explorer times the book's own explorers)")
