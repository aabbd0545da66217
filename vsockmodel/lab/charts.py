"""The browser lab's figures, as Vega-Lite specifications built in Python.

The lab's JavaScript only renders what these functions return (vega-embed),
so what a figure shows, its colours, units and text alternative are decided
here and tested under CPython. Every spec carries a ``description``: the
figure's values in words, which vega-embed puts on the SVG for screen
readers and the lab also prints beside the figure.

Colours are the book's Okabe-Ito palette (colour-blind safe), readable on a
light and on a dark page; ``THEMES`` gives the text and axes of each, which
the page merges over a figure's own configuration.
"""

from __future__ import annotations

import math

from ..bookkit.palette import ACTOR_COLORS, COLORS, VARIANT_COLORS
from ..model.units import fmt_size

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"   # a version tag: never fetched

# Text and axes for a light and a dark page (the figures have no background).
_INK = {"light": ("#222222", "#555555", "#dddddd"), "dark": ("#eeeeee", "#bbbbbb", "#444444")}
THEMES = {
    name: {"background": None, "title": {"color": text},
           "axis": {"labelColor": text, "titleColor": text, "domainColor": muted, "tickColor": muted,
                    "gridColor": grid},
           "legend": {"labelColor": text, "titleColor": text},
           "text": {"color": text}}
    for name, (text, muted, grid) in _INK.items()
}

WORKER_PARTS = (("busy", "on its CPU", COLORS["blue"]),
                ("lock_wait", "waiting for the socket lock", COLORS["vermillion"]),
                ("idle", "idle, waiting for buffers", COLORS["sky_blue"]))


def _base(description: str, height: int) -> dict:
    return {"$schema": SCHEMA, "description": description, "width": "container",
            "height": height, "autosize": {"type": "fit-x", "contains": "padding"},
            "config": {"view": {"stroke": None}, "font": "system-ui, sans-serif",
                       "axis": {"labelFontSize": 12, "titleFontSize": 12},
                       # One entry a line, never cut short: three side by side
                       # truncated their labels at every width.
                       "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "bottom",
                                  "columns": 1, "labelLimit": 0}}}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


# ---- one run -------------------------------------------------------------------------

def worker_time(split: dict) -> dict:
    """The RX worker's elapsed time: busy / waiting for the lock / idle (Result.worker_time())."""
    rows = [{"part": label, "share": split[key], "order": i}
            for i, (key, label, _) in enumerate(WORKER_PARTS)]
    text = "RX worker's time: " + ", ".join(f"{r['part']} {_pct(r['share'])}" for r in rows) + "."
    spec = _base(text, 70)
    spec.update({
        "data": {"values": rows},
        "mark": {"type": "bar", "height": 28, "tooltip": True},
        "encoding": {
            "x": {"field": "share", "type": "quantitative", "stack": "zero",
                  "scale": {"domain": [0, 1]}, "axis": {"format": ".0%", "title": "share of the run (%)"}},
            "color": {"field": "part", "type": "nominal", "title": None,
                      "scale": {"domain": [label for _, label, _ in WORKER_PARTS],
                                "range": [color for _, _, color in WORKER_PARTS]}},
            "order": {"field": "order"},
        },
    })
    return spec


def lock_timeline(spans: list, t0_ns: float, span_ns: float, shares: dict) -> dict:
    """Who holds the guest socket's lock, and who waits for it, in [t0, t0 + span].

    One row per actor and state ("RX worker holds", "RX worker waits", ...), so
    the axis names every bar and no legend has to match a mark: solid bars hold
    the lock, faded ones wait for it, in the actor's colour. ``spans`` are
    ``vsockmodel.sim.trace.Span``; bars are clipped to the window."""
    t1_ns = t0_ns + span_ns
    actors = {"worker": "RX worker", "reader": "reader"}
    rows_order = [f"{name} {kind}" for name in actors.values() for kind in ("holds", "waits")]
    rows = []
    for s in spans:
        if s.end_ns < t0_ns or s.start_ns > t1_ns:
            continue
        kind = "holds" if s.kind == "holds" else "waits"
        rows.append({"row": f"{actors[s.actor]} {kind}", "actor": actors[s.actor], "what": kind,
                     "start": max(s.start_ns, t0_ns) / 1000, "end": min(s.end_ns, t1_ns) / 1000})
    text = (f"Socket lock from {t0_ns / 1000:.1f} to {t1_ns / 1000:.1f} µs: the RX worker (CPU1) holds it "
            f"{_pct(shares['worker holds'])} of the time and waits {_pct(shares['worker waits'])}; "
            f"the reader (CPU0) holds it {_pct(shares['reader holds'])} and waits "
            f"{_pct(shares['reader waits'])}.")
    spec = _base(text, 140)
    spec.update({
        "data": {"values": rows},
        "mark": {"type": "bar", "tooltip": True, "clip": True},
        "encoding": {
            "x": {"field": "start", "type": "quantitative", "title": "simulated time (µs)",
                  "scale": {"domain": [t0_ns / 1000, t1_ns / 1000], "nice": False, "zero": False}},
            "x2": {"field": "end"},
            "y": {"field": "row", "type": "nominal", "title": None, "sort": rows_order,
                  "scale": {"domain": rows_order}},
            "color": {"field": "actor", "type": "nominal", "legend": None,
                      "scale": {"domain": list(actors.values()),
                                "range": [ACTOR_COLORS["worker"], ACTOR_COLORS["reader"]]}},
            "opacity": {"field": "what", "type": "ordinal", "legend": None,
                        "scale": {"domain": ["holds", "waits"], "range": [1.0, 0.45]}},
        },
    })
    return spec


# ---- payload sweeps --------------------------------------------------------------------

def _size_axis(payloads) -> dict:
    values = sorted(set(payloads))
    return {"field": "payload", "type": "quantitative", "title": "payload per send() (bytes)",
            # a little room at both ends, so the end points and their labels are not cut
            "scale": {"type": "log", "base": 2, "nice": False,
                      "domain": [values[0] / 1.25, values[-1] * 1.25] if values else [51.2, 81920]},
            # Labels every factor of 4 (64 B, 256 B ... 64 KiB): six fit on a phone, so
            # none is dropped, the ends included.
            "axis": {"values": [v for v in values if math.log2(v).is_integer() and math.log2(v / values[0]) % 2 == 0],
                     "labelOverlap": False,
                     "labelExpr": "datum.value >= 1024 ? datum.value / 1024 + ' KiB' : datum.value + ' B'"}}


def sweep(points: list[dict], label: str, metric: str, unit: str, measured: list[dict],
          planned: list[int]) -> dict:
    """A metric against payload, drawn point by point as runs finish.

    ``points``: [{"payload", "value"}] from the model; ``measured``: [{"payload",
    "value", "ci_low", "ci_high", "source"}] from the series where the
    configuration matches its test bed; ``planned``: every payload of the sweep
    (the x axis does not move as points arrive)."""
    model = [{"payload": p["payload"], "value": p["value"], "series": f"model: {label}"} for p in points]
    meas = [dict(m, series=m["source"]) for m in measured]
    done = ", ".join(f"{fmt_size(p['payload'])} {p['value']:.3g}" for p in points)
    text = f"{metric} ({unit}) against payload, model, {label}: {done or 'no point yet'}."
    if meas:
        by_source: dict[str, list[dict]] = {}
        for m in meas:
            by_source.setdefault(m["source"], []).append(m)
        # "measured, v1: 64 B 224, 256 B 222; measured, v2: ..."
        said = "; ".join(f"{source}: " + ", ".join(f"{fmt_size(m['payload'])} {m['value']:.3g}" for m in rows)
                         for source, rows in by_source.items())
        text += f" {said[0].upper()}{said[1:]}."
    series = [f"model: {label}"] + sorted({m["series"] for m in meas})
    # No black: the figures have no background, and black vanishes on a dark page.
    palette = [COLORS["blue"], COLORS["reddish_purple"], COLORS["orange"], COLORS["bluish_green"]]
    color = {"field": "series", "type": "nominal", "title": None,
             "scale": {"domain": series, "range": palette[:len(series)]}}
    # The model's points are circles, the measurements diamonds, in the legend too.
    shape = {"field": "series", "type": "nominal", "title": None,
             "scale": {"domain": series, "range": ["circle"] + ["diamond"] * (len(series) - 1)}}
    x = _size_axis(planned or [p["payload"] for p in points])
    y = {"field": "value", "type": "quantitative", "title": f"{metric} ({unit})"}
    # Named datasets: as points arrive only "model" grows, and the page updates
    # the drawn figure's data instead of drawing it again.
    layers = [{"data": {"name": "model"}, "mark": {"type": "line"}, "encoding": {"x": x, "y": y, "color": color}},
              {"data": {"name": "model"}, "mark": {"type": "point", "size": 50, "filled": True, "tooltip": True},
               "encoding": {"x": x, "y": y, "color": color, "shape": shape}}]
    datasets = {"model": model}
    if meas:
        datasets["measured"] = meas
        layers.append({"data": {"name": "measured"},
                       "mark": {"type": "point", "size": 70, "filled": True, "tooltip": True},
                       "encoding": {"x": x, "y": y, "color": color, "shape": shape}})
        with_ci = [m for m in meas if m.get("ci_low") is not None]
        if with_ci:
            datasets["measured_ci"] = with_ci
            layers.append({"data": {"name": "measured_ci"}, "mark": {"type": "rule", "strokeWidth": 1.5},
                           "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative"},
                                        "y2": {"field": "ci_high"}, "color": color}})
    spec = _base(text, 260)
    spec["layer"] = layers
    spec["datasets"] = datasets
    return spec


# ---- A against B ------------------------------------------------------------------------

def comparison(seeds: list[int], a: list[float], b: list[float], label_a: str, label_b: str,
               metric: str, unit: str, change_pct: float, ci: tuple[float, float]) -> dict:
    """Each seed's pair (A and B run with the same seed), and the change with its interval."""
    rows = []
    for seed, x, y in zip(seeds, a, b):
        rows += [{"seed": str(seed), "side": f"A: {label_a}", "value": x},
                 {"seed": str(seed), "side": f"B: {label_b}", "value": y}]
    text = (f"{metric} ({unit}) for {len(seeds)} seeds, A {label_a} against B {label_b}: change "
            f"{change_pct:+.1f} % (95 % interval {ci[0]:+.1f} % to {ci[1]:+.1f} %). Per seed: "
            + "; ".join(f"seed {s}: {x:.4g} and {y:.4g}" for s, x, y in zip(seeds, a, b)) + ".")
    sides = [f"A: {label_a}", f"B: {label_b}"]
    spec = _base(text, 220)
    spec.update({
        "data": {"values": rows},
        "layer": [
            {"mark": {"type": "line", "color": "#888888", "strokeWidth": 1},
             "encoding": {"x": {"field": "side", "type": "nominal", "sort": sides, "title": None,
                                "axis": {"labelAngle": 0}},
                          "y": {"field": "value", "type": "quantitative", "title": f"{metric} ({unit})",
                                "scale": {"zero": False}},
                          "detail": {"field": "seed"}}},
            {"mark": {"type": "point", "filled": True, "size": 70, "tooltip": True},
             "encoding": {"x": {"field": "side", "type": "nominal", "sort": sides},
                          "y": {"field": "value", "type": "quantitative"},
                          "color": {"field": "side", "type": "nominal", "title": None,
                                    "scale": {"domain": sides,
                                              "range": [COLORS["vermillion"], COLORS["blue"]]}}}},
        ],
    })
    return spec


def variant_color(variant: str) -> str:
    return VARIANT_COLORS.get(variant, COLORS["blue"])


# ---- the book's headline -----------------------------------------------------------------

def headline(model: list[dict], measured: list[dict], planned: list[int]) -> dict:
    """Gains against payload, one colour per patch set: the model's (circles) and
    the measured ones (diamonds), each with its 95 % interval as a vertical bar.
    Points of the same payload are drawn a little apart (model left, measurement
    right) so neither hides the other.

    ``model``: [{"payload", "value", "ci_low", "ci_high", "variant"}];
    ``measured``: the same with "source" (who measured it)."""
    variants = sorted({r["variant"] for r in model + measured}, reverse=True)   # p1-p5 first
    # Four points at a payload, side by side: each variant's model, then its measurement.
    nudge = {(v, k): 1.05 ** (2 * (2 * i + j) - 3) for i, v in enumerate(variants) for j, k in enumerate("mM")}
    rows = ([dict(m, x=m["payload"] * nudge[m["variant"], "m"], kind="model") for m in model]
            + [dict(m, x=m["payload"] * nudge[m["variant"], "M"], kind=m["source"]) for m in measured])
    kinds = ["model"] + sorted({m["source"] for m in measured})
    palette = [COLORS["blue"], COLORS["orange"], COLORS["bluish_green"], COLORS["reddish_purple"]]
    said = []
    for v in variants:
        for k in kinds:
            pts = sorted((r for r in rows if r["variant"] == v and r["kind"] == k), key=lambda r: r["payload"])
            if pts:
                said.append(f"{v} against baseline, {k}: "
                            + ", ".join(f"{fmt_size(r['payload'])} {r['value']:+.1f} %" for r in pts))
    text = ("Throughput gain against payload, fixed 64 KiB recv(), with 95 % intervals. "
            + ("; ".join(said) if said else "no point yet") + ".")
    x = dict(_size_axis(planned), field="x")
    color = {"field": "variant", "type": "nominal", "title": "against baseline",
             "scale": {"domain": variants, "range": palette[:len(variants)]}}
    # The shapes' legend in grey: its default black vanishes on a dark page.
    shape = {"field": "kind", "type": "nominal", "title": None,
             "scale": {"domain": kinds, "range": ["circle", "diamond", "square", "triangle-up"][:len(kinds)]},
             "legend": {"symbolFillColor": "#888888", "symbolStrokeColor": "#888888"}}
    y = {"field": "value", "type": "quantitative", "title": "throughput gain against baseline (%)"}
    tooltip = [{"field": "variant", "type": "nominal"}, {"field": "kind", "type": "nominal"},
               {"field": "payload", "type": "quantitative"},
               {"field": "value", "type": "quantitative", "format": "+.1f"},
               {"field": "ci_low", "type": "quantitative", "format": "+.1f"},
               {"field": "ci_high", "type": "quantitative", "format": "+.1f"}]
    spec = _base(text, 280)
    spec["data"] = {"values": rows}
    spec["layer"] = [
        {"mark": {"type": "rule", "strokeWidth": 1.5},
         "encoding": {"x": x, "y": {"field": "ci_low", "type": "quantitative"}, "y2": {"field": "ci_high"},
                      "color": color}},
        {"mark": {"type": "point", "size": 70, "filled": True},
         "encoding": {"x": x, "y": y, "color": color, "shape": shape, "tooltip": tooltip}},
    ]
    return spec

