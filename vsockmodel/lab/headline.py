"""The book's headline in one click: the patches' gain against payload, model
beside measurement.

At the intro's settings, which are the series' test bed (a fixed 64 KiB
recv(), a 256 KiB socket buffer, the default ring), the model runs baseline,
p1-p3 and p1-p5 with the same seeds at every payload the series measured, and
gives each gain with its paired 95 % interval; the v1 cover letter's measured
gains (tables v1_all_fixed64k and v1_p1p3_fixed64k) are drawn beside them.
One sentence, computed from these numbers, says where model and measurement
part. The book's build computes it once with CPython (lab-data.js), so the
figure is there before Python has loaded in the page; the page can compute it
again live, point by point (``point``, then ``chart``).
"""

from __future__ import annotations

import math

from ..model.units import fmt_size
from ..sim.errors import Deadlock, SimulationLimitExceeded
from ..study import measurements
from ..study.confidence import paired_change_ci
from ..study.replications import replicate
from . import api, charts

PAIRS = 3                                     # seeds per payload: an interval, in seconds
PAYLOADS = measurements.SERIES_PAYLOADS       # 64 B to 64 KiB, as the series measured
CHANGES = (("p1-p5", "all"), ("p1-p3", "p1p3"))   # variant against baseline, and its v1 table


def point(payload, pairs=PAIRS, buffer=None) -> str:
    """The model's gains at one payload: each patched variant against the baseline, paired seeds."""
    try:
        common = {"payload": int(payload)}
        if buffer is not None:
            common["buffer"] = buffer
        runs = {v: replicate(pairs, variant=v, **common).values("throughput_gbps")
                for v in ("baseline", *(v for v, _ in CHANGES))}
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return api._error(exc)
    out = {"ok": True, "payload": int(payload), "gains": {}}
    for variant, _ in CHANGES:
        a, b = runs["baseline"], runs[variant]
        lo, hi = paired_change_ci(a, b)
        out["gains"][variant] = {"value": 100 * (math.fsum(b) / math.fsum(a) - 1), "ci_low": lo, "ci_high": hi}
    return api._json(out)


def measured(on_testbed: bool = True) -> dict:
    """variant -> [{"payload", "value", "ci_low", "ci_high"}] from the v1 cover letter."""
    if not on_testbed:
        return {}
    out = {}
    for variant, group in CHANGES:
        changes = measurements.change(f"v1_{group}_fixed64k")
        out[variant] = [{"payload": p, "value": v, "ci_low": lo, "ci_high": hi}
                        for p, (v, lo, hi) in sorted(changes.items())]
    return out


def where_they_part(points: list[dict], meas: dict, variant: str = "p1-p5") -> str:
    """One sentence from the numbers: the payload where the model's gain and the
    measured one are furthest apart, and where their intervals overlap."""
    model = {p["payload"]: p["gains"][variant] for p in points}
    both = [m for m in meas.get(variant, []) if m["payload"] in model]
    if not both:
        return ""
    gaps = [(abs(model[m["payload"]]["value"] - m["value"]), m) for m in both]
    _, worst = max(gaps, key=lambda g: g[0])
    mw = model[worst["payload"]]
    overlap = [fmt_size(m["payload"]) for m in both
               if model[m["payload"]]["ci_low"] <= m["ci_high"] and m["ci_low"] <= model[m["payload"]]["ci_high"]]
    close = [fmt_size(m["payload"]) for g, m in gaps if g <= 10]
    text = (f"Model and measurement part most at {fmt_size(worst['payload'])}: the model's {variant} gain is "
            f"{mw['value']:+.1f} % (95 % interval {mw['ci_low']:+.1f} to {mw['ci_high']:+.1f}), measured "
            f"{worst['value']:+.1f} % ({worst['ci_low']:+.1f} to {worst['ci_high']:+.1f}), "
            f"{abs(mw['value'] - worst['value']):.1f} points apart.")
    text += (f" They agree within 10 points at {', '.join(close)}" if close
             else " They are more than 10 points apart at every payload")
    text += (f"; the intervals overlap at {', '.join(overlap)}." if overlap
             else "; the intervals overlap nowhere.")
    return text


def chart(points, buffer=None) -> str:
    """The headline's figure and sentence from the points computed so far."""
    points = api._config({"p": points})["p"] if isinstance(points, str) else list(points)
    on_testbed = buffer is None or api._on_testbed({"buffer": buffer}, False)
    meas = measured(on_testbed)
    sweep_points, meas_points = [], []
    for variant, _ in CHANGES:
        sweep_points += [{"payload": p["payload"], "value": p["gains"][variant]["value"],
                          "ci_low": p["gains"][variant]["ci_low"], "ci_high": p["gains"][variant]["ci_high"],
                          "variant": variant} for p in points]
        meas_points += [dict(m, variant=variant, source="measured (v1 cover letter)") for m in meas.get(variant, [])]
    spec = charts.headline(sweep_points, meas_points, list(PAYLOADS))
    sentence = where_they_part(points, meas)
    if not on_testbed:
        sentence = "This buffer is not the series' test bed (256 KiB), so no measurement is drawn beside the model."
    cli = (f"python -m vsockmodel compare --variants baseline p1-p5 --replications {PAIRS} --payload P"
           + (f" --buffer {buffer}" if buffer is not None else ""))
    py = ("import vsockmodel\n"
          f"for payload in {list(PAYLOADS)}:\n"
          f"    c = vsockmodel.compare('baseline', 'p1-p5', replications={PAIRS}, payload=payload"
          + (f", buffer={buffer!r}" if buffer is not None else "") + ")\n"
          "    lo, hi = c.change_ci\n"
          "    print(f'{payload:>6} B  {c.change_pct:+.1f} %  [{lo:+.1f}, {hi:+.1f}]')")
    return api._json({"ok": True, "spec": spec, "text": spec["description"], "sentence": sentence,
                      "command": {"cli": cli, "python": py}})


def precompute() -> dict:
    """Every point and the figure, computed now (the book's build, CPython)."""
    import json

    points = [json.loads(point(p)) for p in PAYLOADS]
    return {"points": points, **json.loads(chart(points))}
