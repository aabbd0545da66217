"""Plots and cached model runs shared by the chapters.

Chapters call these so that a figure means the same thing everywhere: the
same colour for a variant, the same units, the same way of showing a measured
value next to a model prediction.
"""

from __future__ import annotations

import bisect
from functools import lru_cache

from ..study import measurements
from ..model.costs import Costs
from ..study.cache import cached_simulate
from ..model.params import Params, make_params
from .style import COLORS, fmt_size, label, size_ticks

from .palette import ACTOR_COLORS, VARIANT_COLORS   # noqa: E402  (shared with the lab)
SERIES_PAYLOADS = measurements.SERIES_PAYLOADS


@lru_cache(maxsize=4096)
def _simulate(params: Params, costs: Costs):
    return cached_simulate(params, costs)     # in memory here, and on disk


def cached_run(**params):
    """``vsockmodel.run`` memoised on the parameters it resolves to (runs are
    deterministic): ``payload=4096`` and ``payload="4K", recv_size="64K"`` are
    the same run, and run once (and once per model: see study.cache)."""
    return _simulate(*make_params(**params))


def sweep(variant: str, payloads=SERIES_PAYLOADS, metric: str = "throughput_gbps", **fixed) -> list:
    """One metric of ``run`` over payloads, e.g. throughput against payload size."""
    out = []
    for p in payloads:
        r = cached_run(variant=variant, payload=p, **fixed)
        out.append(getattr(r, metric))
    return out


def throughput_vs_payload(ax, variants=("baseline", "p1-p5"), payloads=SERIES_PAYLOADS,
                          measured_table: str | None = None, highlight: int | None = None, **fixed):
    """Model throughput against payload for some variants; the series' measurements as markers."""
    for v in variants:
        ys = sweep(v, payloads, **fixed)
        ax.plot(payloads, ys, "-o", color=VARIANT_COLORS[v], label=f"model: {v}", markersize=4)
        if highlight is not None and highlight in payloads:
            i = list(payloads).index(highlight)
            ax.plot([highlight], [ys[i]], "o", color=VARIANT_COLORS[v], markersize=10,
                    markerfacecolor="none", markeredgewidth=2)
    if measured_table:
        for v in variants:
            measured = _measured_values(measured_table, v, "throughput_gbps")
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


def model_gains(a: str = "baseline", b: str = "p1-p5", payloads=SERIES_PAYLOADS, seeds=range(1, 5),
                **fixed) -> dict:
    """payload -> (gain %, low, high): the throughput gain of b over a, the mean
    over paired seeds with the 95 % interval of the paired log ratios."""
    from ..study.confidence import paired_change_ci

    out = {}
    for p in payloads:
        xa = [cached_run(variant=a, payload=p, seed=s, **fixed).throughput_gbps for s in seeds]
        xb = [cached_run(variant=b, payload=p, seed=s, **fixed).throughput_gbps for s in seeds]
        out[p] = (gain_pct(sum(xa) / len(xa), sum(xb) / len(xb)), *paired_change_ci(xa, xb))
    return out


def gains_vs_payload(ax, a: str = "baseline", b: str = "p1-p5", payloads=SERIES_PAYLOADS,
                     measured_table: str = "v1_all_fixed64k", seeds=range(1, 5), gains=None, **fixed):
    """The gain of b over a against payload: the model's (mean over seeds, with its
    paired 95 % interval as a band) beside the series' measured gain and its
    interval, so the gain at 64 B can be read beside the one at 4 KiB. The two
    differ in colour (blue, black), mark (filled circles on a line, open squares)
    and line, so neither colour nor print in grey is needed to tell them apart.
    ``gains``: :func:`model_gains`'s result, if already computed. Returns it."""
    gains = gains or model_gains(a, b, payloads, seeds, **fixed)
    xs = list(payloads)
    mean, lo, hi = ([gains[p][i] for p in xs] for i in range(3))
    ax.axhline(0, color=COLORS["black"], linewidth=0.8, alpha=0.5)
    ax.fill_between(xs, lo, hi, color=COLORS["blue"], alpha=0.2, linewidth=0,
                    label=f"model: 95 % interval over {len(list(seeds))} seeds")
    ax.plot(xs, mean, "-o", color=COLORS["blue"], markersize=4.5, label=f"model: {b} over {a}")
    measured = measurements.change(measured_table)
    mx = [p for p in xs if p in measured]
    my = [measured[p][0] for p in mx]
    err = [[measured[p][0] - measured[p][1] for p in mx], [measured[p][2] - measured[p][0] for p in mx]]
    ax.errorbar(mx, my, yerr=err, fmt="s", color=COLORS["black"], markerfacecolor="white", markersize=6,
                markeredgewidth=1.5, capsize=3, linestyle="none", label="measured (v1 cover letter), 95 % CI")
    ax.set_xscale("log", base=2)
    size_ticks(ax.xaxis, xs)
    label(ax, x="payload per send() (bytes)", y=f"gain of {b} (%)")
    ax.legend(loc="upper right", fontsize=8)
    return gains


def _measured_values(table: str, variant: str, metric: str) -> dict:
    try:
        return measurements.values(table, variant, metric)
    except measurements.MeasurementsError:
        return {}


def _event_times(result, actor: str, events: tuple) -> list[float]:
    """Sorted times (µs) of an actor's trace events of the given kinds."""
    return sorted(t / 1000 for t, a, e, _ in result.trace if a == actor and e in events)


def busiest_window(result, span_us: float, min_recvs: int = 2) -> float:
    """Start (µs) of the ``span_us`` window with the most packets queued, among
    the windows in which the reader returns from ``recv()`` at least ``min_recvs``
    times, from a traced run.

    A timeline of a window picked at random may show a pause: the baseline's
    RX worker spends long stretches idle, waiting for vhost to refill the ring.
    """
    queued = _event_times(result, "worker", ("enqueue", "tail_copy"))
    reads = _event_times(result, "reader", ("recv",))
    best, best_n = queued[0], -1
    for i, t in enumerate(queued):
        n = bisect.bisect_right(queued, t + span_us) - i
        if n > best_n and bisect.bisect_right(reads, t + span_us) - bisect.bisect_left(reads, t) >= min_recvs:
            best, best_n = t, n
    return best


def idle_gaps(result, longer_than_us: float = 50.0) -> float:
    """Share of a traced run spent in gaps between queued packets longer than ``longer_than_us``."""
    times = _event_times(result, "worker", ("enqueue", "tail_copy"))
    gaps = sum(b - a for a, b in zip(times, times[1:]) if b - a > longer_than_us)
    return gaps / result.sim_time_us


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


__all__ = ["VARIANT_COLORS", "ACTOR_COLORS", "cached_run", "sweep", "throughput_vs_payload", "gains_vs_payload", "model_gains",
           "lock_timeline", "gain_pct", "fmt_size"]


# ---------------------------------------------------------------------------
# Chapters 1 and 2: RX buffer layouts and an annotated lock timeline.

def rx_buffer_layouts(ax):
    """One guest RX buffer in each kernel layout, drawn to scale in bytes.

    Rows: the ``virtio_vsock_pkt`` layout (up to Linux 6.2), the sk_buff
    layout of 6.3-6.16 (``alloc_skb(4096 + 44)``, whose head kmalloc rounds up
    to 8 KiB: the hatched slack) and the 6.17+ layout
    (``SKB_WITH_OVERHEAD(4096)``: the whole head fits one 4 KiB page). Sizes
    come from :mod:`vsockmodel.kernel`; brackets above a row are the virtqueue
    descriptors the guest posts for that buffer. The axes are switched off; a
    scale bar gives the byte scale.
    """
    from matplotlib.patches import Rectangle

    from ..model import kernel

    hdr = kernel.VIRTIO_VSOCK_HDR_SIZE
    page = 4096
    shinfo = kernel.SKB_SHARED_INFO_SIZE
    skb_struct = kernel.SKB_TRUESIZE_0 - shinfo                # aligned struct sk_buff
    pkt_rest = 64                                              # the rest of virtio_vsock_pkt (not to scale)
    head_x = 520                                               # where the data allocation starts
    colors = {"hdr": COLORS["vermillion"], "data": COLORS["sky_blue"], "shinfo": "#b8b8b8",
              "struct": "#f3d9a4", "rest": "#f3d9a4", "slack": "#ffffff"}

    def box(x, y, w, kind, text=None, hatch=None, text_color="#222222", fontsize=8.5):
        ax.add_patch(Rectangle((x, y - 0.2), w, 0.4, facecolor=colors[kind], edgecolor="#444444",
                               lw=0.8, hatch=hatch))
        if text:
            ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=fontsize, color=text_color)

    def desc(x, w, y, text):
        top = y + 0.3
        ax.plot([x, x, x + w, x + w], [top - 0.06, top, top, top - 0.06], color="#222222", lw=1.0)
        ax.text(x + w / 2, top + 0.04, text, ha="center", va="bottom", fontsize=8)

    def alloc(x, y, text, right=False):
        ax.text(x, y - 0.27, text, ha="right" if right else "left", va="top", fontsize=7.5,
                color="#444444", style="italic")

    rows = [
        (2.2, "up to 6.2\nvirtio_vsock_pkt", kernel.RX_BUF_PAYLOAD_PRE_SKB, None),
        (1.0, "6.3 to 6.16\nsk_buff", kernel.RX_BUF_PAYLOAD_6_3, None),
        (-0.2, "6.17+\nsk_buff, one page", kernel.RX_BUF_PAYLOAD_6_17, page),
    ]
    for i, (y, name, payload, head_total) in enumerate(rows):
        ax.text(-120, y, name, ha="right", va="center", fontsize=9, fontweight="bold")
        if i == 0:
            # kzalloc(sizeof(*pkt)): the header is the first member of the struct
            box(0, y, hdr, "hdr")
            box(hdr, y, pkt_rest, "rest", hatch="//")
            alloc(0, y, "kzalloc: struct virtio_vsock_pkt")
            desc(0, hdr, y, f"desc 0: {hdr} B")
            box(head_x, y, payload, "data", f"pkt->buf: payload {payload} B")
            alloc(head_x + payload, y, f"kmalloc: {payload} B", right=True)
            desc(head_x, payload, y, f"desc 1: {payload} B")
            continue
        box(0, y, skb_struct, "struct")
        alloc(0, y, f"sk_buff: {skb_struct} B")
        box(head_x, y, hdr, "hdr")
        box(head_x + hdr, y, payload, "data", f"payload {payload} B")
        # kmalloc rounds the head up (kernel.rx_skb_room): room the buffer never uses
        slack = kernel.rx_skb_room(payload) - payload
        slack_w = 420 if slack else 0                        # hatched: not to scale
        if slack:
            box(head_x + hdr + payload, y, slack_w, "slack", hatch="//")
            ax.text(head_x + hdr + payload + slack_w / 2, y, f"{slack} B", ha="center", va="center",
                    fontsize=7, color="#222222",
                    bbox=dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none"))
        box(head_x + hdr + payload + slack_w, y, shinfo, "shinfo", f"shinfo\n{shinfo} B", fontsize=7)
        total = hdr + payload + shinfo
        asked, allocated = kernel.rx_skb_head(payload)
        what = (f"head: {total} B = one 4 KiB page" if head_total else
                f"head: {asked} B asked, {allocated // 1024} KiB kmalloc'd")
        alloc(head_x + total + slack_w, y, what, right=True)
        desc(head_x, hdr + payload, y, f"one descriptor: {hdr} + {payload} = {hdr + payload} B")
    # scale bar and colour key
    sb_y = -0.95
    ax.plot([head_x, head_x + 1024], [sb_y, sb_y], color="#222222", lw=2)
    ax.text(head_x + 512, sb_y - 0.08, "1 KiB (hatched part: not to scale)", ha="center", va="top",
            fontsize=7.5)
    from matplotlib.patches import Patch
    key = [("hdr", f"virtio_vsock_hdr ({hdr} B)"), ("data", "payload"),
           ("shinfo", "struct skb_shared_info"), ("struct", "struct sk_buff / virtio_vsock_pkt"),
           ("slack", "kmalloc slack (tailroom)")]
    ax.legend([Patch(facecolor=colors[k], edgecolor="#444444", lw=0.6,
                     hatch="//" if k == "slack" else None) for k, _ in key],
              [t for _, t in key], loc="lower right", ncol=2, fontsize=7.5,
              bbox_to_anchor=(1.0, -0.02), handlelength=1.2, columnspacing=1.2)
    ax.set_xlim(-1250, head_x + 4096 + 44 + 420 + shinfo + 60)
    ax.set_ylim(-1.25, 2.75)
    ax.set_axis_off()


def _next_event(trace, i, actor):
    for t, a, e, info in trace[i + 1:]:
        if a == actor:
            return t, e
    return None, None


def lock_timeline_annotated(ax, result, t0_us: float, span_us: float = 60.0):
    """:func:`lock_timeline` plus the wake-ups that explain it.

    On top of lock ownership (solid), waiting for the lock (hatched), queued
    packets (ticks) and recv() returns (triangles), it draws:

    * the reader asleep waiting for data (grey dashed line),
    * each ``sk_data_ready`` wake-up of the reader by the RX worker (arrow),
    * each futile wake-up (cross): a task woken for data or for the lock that
      finds the socket owned and goes back to sleep in ``__lock_sock``.

    Use :func:`timeline_legend` for a matching legend.
    """
    lock_timeline(ax, result, t0_us=t0_us, span_us=span_us)
    t1_us = t0_us + span_us
    rows = {"worker": 1.0, "reader": 0.0}
    trace = sorted(result.trace, key=lambda e: e[0])
    for i, (t, actor, event, info) in enumerate(trace):
        tu = t / 1000
        if actor == "reader" and event == "sleep":
            t_next, _ = _next_event(trace, i, "reader")
            a, b = max(tu, t0_us), min((t_next or t) / 1000, t1_us)
            if b > a:
                ax.plot([a, b], [0.0, 0.0], color="#777777", lw=1.2, ls=(0, (3, 2)))
        if not t0_us <= tu <= t1_us:
            continue
        if actor == "worker" and event == "wake_reader":
            ax.annotate("", xy=(tu, 0.3), xytext=(tu, 0.72),
                        arrowprops=dict(arrowstyle="-|>", color=COLORS["vermillion"], lw=1.3,
                                        mutation_scale=9))
        elif event == "futile_wakeup":
            ax.plot([tu], [rows[actor] - 0.36], "x", color=COLORS["vermillion"], markersize=6,
                    markeredgewidth=1.6)


def timeline_legend():
    """(handles, labels) for :func:`lock_timeline_annotated`, for ``fig.legend``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Patch(color=ACTOR_COLORS["worker"]),
        Patch(color=ACTOR_COLORS["reader"]),
        Patch(facecolor="white", edgecolor="#555555", hatch="////"),
        Line2D([], [], color="#777777", lw=1.2, ls=(0, (3, 2))),
        Line2D([], [], color=COLORS["black"], marker="|", ls="none", markersize=7),
        Line2D([], [], color=COLORS["black"], marker="v", ls="none", markersize=5),
        Line2D([], [], color=COLORS["vermillion"], marker="$\\downarrow$", ls="none", markersize=9),
        Line2D([], [], color=COLORS["vermillion"], marker="x", ls="none", markersize=6,
               markeredgewidth=1.6),
    ]
    labels = [
        "RX worker owns lock_sock", "reader owns lock_sock", "asleep in __lock_sock",
        "reader asleep for data", "packet queued", "recv() returns", "RX worker wakes reader",
        "futile wake-up",
    ]
    return handles, labels


__all__ += ["rx_buffer_layouts", "lock_timeline_annotated", "timeline_legend"]


# ---------------------------------------------------------------------------
# Chapter 5: who woke whom (vsockmodel.sim.trace.wakeups).

#: How a wake-up was sent, as the start marker of its arrow (shape, not colour).
VIA_MARKERS = {"sk_write_space": "o", "sk_data_ready": "s", "sock_wfree": "D", "release_sock": "^"}
# The timeline's rows: CPU1 above (the RX worker; tx_work's kworker runs on the
# same CPU, and its sock_wfree wake-ups start there), the reader's CPU0 below.
WAKE_ROWS = {"worker": 1.0, "tx worker": 1.0, "reader": 0.0}


def wakeup_window(wakes, span_us: float, after_us: float = 0.0) -> float:
    """Start (µs) of the ``span_us`` window, from ``after_us`` on, that holds
    the most wake-ups with at least one futile one among them (or the most
    wake-ups, if none is futile). ``wakes``: :func:`vsockmodel.sim.trace.wakeups`."""
    sent = [w.t_sent_ns / 1000 for w in wakes if w.t_sent_ns / 1000 >= after_us]
    futile = [w.t_sent_ns / 1000 for w in wakes if not w.useful and w.t_sent_ns / 1000 >= after_us]
    if not sent:
        return after_us
    best, best_n = sent[0], -1
    for i, t in enumerate(sent):
        lo = bisect.bisect_left(futile, t)
        has_futile = lo < len(futile) and futile[lo] <= t + span_us - 15.0
        n = bisect.bisect_right(sent, t + span_us - 15.0) - i + (1000 if has_futile else 0)
        if n > best_n:
            best, best_n = t, n
    return max(best - 5.0, 0.0)


def wakeup_timeline(ax, trace, t0_us: float, span_us: float = 80.0, wakes=None, latency_labels: bool = True):
    """Who woke whom in a window of a traced run, and whether it helped.

    Rows: the RX worker (CPU1, where tx_work runs too) and the reader (CPU0), with their lock holds
    (solid) and sleeps in ``__lock_sock`` (hatched). Each wake-up is an arrow
    from the waker's row when ``try_to_wake_up`` ran to the wakee's row when
    it next acted: solid and green when it took the lock (useful), dashed and
    vermillion with a cross when it found the lock owned (futile). The
    arrow's start marker says how it was sent (:data:`VIA_MARKERS`), and its
    label the latency in µs. Use :func:`wakeup_legend` for the legend.
    """
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.ticker import FuncFormatter

    from ..sim.trace import lock_spans, wakeups

    t1_us = t0_us + span_us
    for s in lock_spans(trace):
        _bar(ax, WAKE_ROWS[s.actor], s.start_ns / 1000, s.end_ns / 1000, t0_us, t1_us, s.actor,
             hatch=s.kind == "waits")
    wakes = wakeups(trace) if wakes is None else wakes
    shown = [w for w in wakes if t0_us <= w.t_sent_ns / 1000 and w.t_run_ns / 1000 <= t1_us]
    for k, w in enumerate(shown):
        a, b = w.t_sent_ns / 1000, w.t_run_ns / 1000
        y0, y1 = WAKE_ROWS[w.waker], WAKE_ROWS[w.wakee]
        down = y1 < y0
        ya, yb = (y0 - 0.25, y1 + 0.25) if down else (y0 + 0.25, y1 - 0.25)
        if y0 == y1:                         # not drawn by the model today; kept readable
            ya, yb = y0 + 0.25, y1 + 0.25
        color = COLORS["bluish_green"] if w.useful else COLORS["vermillion"]
        ax.add_patch(FancyArrowPatch((a, ya), (b, yb), arrowstyle="-|>", mutation_scale=9, lw=1.3,
                                     color=color, linestyle="-" if w.useful else (0, (3, 2)),
                                     shrinkA=0, shrinkB=0))
        ax.plot([a], [ya], VIA_MARKERS.get(w.via, "o"), color=color, markersize=5,
                markerfacecolor="white", markeredgewidth=1.3)
        if not w.useful:
            ax.plot([b], [yb], "x", color=color, markersize=7, markeredgewidth=1.8)
        if latency_labels:
            # alternate above and below the middle, so neighbours do not collide
            ym = 0.5 + (0.09 if k % 2 else -0.09)
            ax.text((a + b) / 2, ym, f"{w.latency_ns / 1000:.1f}", fontsize=7.5, ha="center", va="center",
                    color="#222222", bbox=dict(boxstyle="round,pad=0.12", facecolor="white",
                                              edgecolor="none", alpha=0.85))
    ax.set_yticks([0.0, 1.0], ["reader\n(CPU0)", "RX worker,\ntx_work (CPU1)"])
    ax.set_ylim(-0.4, 1.45)
    ax.set_xlim(t0_us, t1_us)
    # Times from the window's start (the run's own clock says nothing here), in round steps.
    step = 10.0 if span_us >= 40 else 5.0
    ax.set_xticks([t0_us + k * step for k in range(int(span_us // step) + 1)])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x - t0_us:.0f}"))
    ax.grid(axis="y", visible=False)
    label(ax, x="time from the window's start (µs)")
    return shown


def wakeup_legend():
    """(handles, labels) for :func:`wakeup_timeline`, for ``fig.legend``."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Patch(color=ACTOR_COLORS["worker"]),
        Patch(color=ACTOR_COLORS["reader"]),
        Patch(facecolor="white", edgecolor="#555555", hatch="////"),
        Line2D([], [], color=COLORS["bluish_green"], lw=1.3),
        Line2D([], [], color=COLORS["vermillion"], lw=1.3, ls=(0, (3, 2)), marker="x", markersize=6,
               markeredgewidth=1.6),
    ] + [Line2D([], [], color="#444444", marker=m, ls="none", markerfacecolor="white", markersize=5)
         for m in VIA_MARKERS.values()]
    labels = ["RX worker owns lock_sock", "reader owns lock_sock", "asleep in __lock_sock",
              "useful wake-up (label: latency, µs)", "futile wake-up: lock owned"] + \
             [f"sent by {via}" for via in VIA_MARKERS]
    return handles, labels


__all__ += ["VIA_MARKERS", "wakeup_window", "wakeup_timeline", "wakeup_legend"]
