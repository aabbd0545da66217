"""Where a lab configuration is the series' test bed, what the series measured.

A comparison A -> B matches a measured table when A and B differ only in the
variant, the pair of variants is one the series compared (baseline -> p1-p5,
baseline -> p1-p3, p1-p3 -> p1-p5), everything else is the test bed's (256 KiB
buffer, default ring, SO_RCVLOWAT 1, ...), and the receiver is one the series
ran: a fixed 64 KiB recv() (``*_fixed64k``), one of the write's size
(``*_fixedsyscall``), or a ping-pong (``*_rtt``). Then the page shows the
measured change and its 95 % interval beside the model's, and how far apart
they are (issue: the lab tells the reader where the model stands).
"""

from __future__ import annotations

from ..model.params import make_params
from ..model.units import fmt_size
from ..study import measurements
from . import api

SOURCES = {"v1": "v1 cover letter", "v2": "v2 series"}


def _receiver(config: dict) -> str | None:
    p, _ = make_params(**{k: v for k, v in config.items() if k != "transfer"})
    if p.workload == "pingpong":
        return "rtt"
    if p.recv_size == 65536:
        return "fixed64k"
    if p.recv_size == p.payload:
        return "fixedsyscall"
    return None


def measured_changes(config_a: dict, config_b: dict) -> list[dict]:
    """The series' measured changes for this comparison, one per series version
    that measured it: [{"version", "source", "table", "payload", "value", "ci_low", "ci_high"}]."""
    a, b = dict(config_a), dict(config_b)
    others = {k for k in set(a) | set(b) if k not in ("variant", "seed") and a.get(k) != b.get(k)}
    group = api._MEASURED_CHANGE.get((a.get("variant", "baseline"), b.get("variant", "baseline")))
    if group is None or others:
        return []
    try:
        receiver = _receiver(a)
        if receiver is None or not api._on_testbed(a, receiver == "fixedsyscall"):
            return []
        payload = make_params(**{k: v for k, v in a.items() if k != "transfer"})[0].payload
    except ValueError:
        return []
    out = []
    for version in ("v1", "v2"):
        table = f"{version}_{group}_{receiver}"
        try:
            changes = measurements.change(table)
        except measurements.MeasurementsError:
            continue
        if payload in changes:
            value, lo, hi = changes[payload]
            out.append({"version": version, "source": SOURCES[version], "table": table,
                        "payload": payload, "value": value, "ci_low": lo, "ci_high": hi})
    return out


def _interval(lo, hi) -> str:
    return "" if lo is None else f" (95 % interval {lo:+.1f} % to {hi:+.1f} %)"


def apart(model_pct: float, model_ci, m: dict) -> str:
    """One sentence: the measured change beside the model's, and how far apart they are."""
    gap = model_pct - m["value"]
    overlap = (model_ci is not None and m["ci_low"] is not None
               and model_ci[0] <= m["ci_high"] and m["ci_low"] <= model_ci[1])
    where = ("the intervals overlap" if overlap
             else "the intervals do not overlap" if m["ci_low"] is not None and model_ci is not None else "")
    return (f"Measured at {fmt_size(m['payload'])} ({m['source']}, table {m['table']}): "
            f"{m['value']:+.1f} %{_interval(m['ci_low'], m['ci_high'])}. The model's {model_pct:+.1f} % is "
            f"{abs(gap):.1f} points {'above' if gap > 0 else 'below'} it"
            + (f"; {where}." if where else "."))
