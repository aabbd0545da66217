"""The lab's Compare: A against B with the same seeds, for every metric at once.

One call runs the pairs once and returns each metric's paired change
(``metrics.paired_all``), the figure of the metric the reader picked, the
series' measurement where the configuration is its test bed
(``testbed.measured_changes``), and the command and the Python that
reproduce it at home.
"""

from __future__ import annotations

import json

from ..sim.errors import Deadlock, SimulationLimitExceeded
from ..study.replications import compare as compare_model
from . import api, charts, metrics, testbed


def _command(side_a: dict, side_b: dict, common: dict, replications: int) -> dict:
    a_opts = " ".join(f"--a-set {k}={v}" for k, v in side_a.items() if k != "variant")
    b_opts = " ".join(f"--b-set {k}={v}" for k, v in side_b.items() if k != "variant")
    shared = api.command(common)["cli"].replace("python -m vsockmodel run", "").strip()
    cli = " ".join(x for x in (f"python -m vsockmodel compare --variants {side_a['variant']} "
                               f"{side_b['variant']}", a_opts, b_opts, f"--replications {replications}",
                               shared) if x)
    call = (f"vsockmodel.compare({side_a!r}, {side_b!r}, replications={replications!r}"
            + "".join(f", {k}={v!r}" for k, v in common.items()) + ")")
    py = ("import vsockmodel\nfrom vsockmodel.lab import metrics\n"
          f"c = {call}\n"
          "for row in metrics.paired_all(c.runs_a.results, c.runs_b.results):\n"
          "    print(row['text'])")
    return {"cli": cli, "python": py}


def _chart(row: dict, seeds: list[int], label_a: str, label_b: str) -> dict:
    change = row["change_pct"] if row["change_pct"] is not None else 0.0
    ci = row["change_ci"] or (change, change)
    spec = charts.comparison(seeds, row["a"], row["b"], label_a, label_b, row["label"], row["unit"],
                             change, tuple(ci))
    spec["description"] = (row["text"] + " Per seed: "
                           + "; ".join(f"seed {s}: {x:.4g} and {y:.4g}"
                                       for s, x, y in zip(seeds, row["a"], row["b"])) + ".")
    return spec


def compare_metrics(config_a, config_b, replications=api.COMPARE_REPLICATIONS[2], metric=None) -> str:
    """A against B over ``replications`` seed pairs: every metric, the chosen one drawn."""
    try:
        config_a, config_b = api._config(config_a), api._config(config_b)
        side_a, side_b, common = api._sides(config_a, config_b)
        c = compare_model(side_a, side_b, replications=replications, **common)
    except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
        return api._error(exc)
    rows = metrics.paired_all(c.runs_a.results, c.runs_b.results)
    if not rows:
        return api._json({"ok": False, "param": None, "message": "no metric is reported by every run"})
    keys = [r["key"] for r in rows]
    if metric is not None and metric not in keys:
        return api._json({"ok": False, "param": "metric",
                          "message": f"metric: {metric!r} is not reported by these runs; allowed: {', '.join(keys)}"})
    metric = metric or keys[0]
    row = rows[keys.index(metric)]
    b_full = {**config_b, "seed": config_a.get("seed", 1)}
    measured = testbed.measured_changes(config_a, b_full) if rows[0]["key"] in ("throughput_gbps", "rtt_us") else []
    headline = rows[0]
    beside = [testbed.apart(headline["change_pct"], headline["change_ci"], m) for m in measured
              if headline["change_pct"] is not None]
    spec = _chart(row, c.seeds, c.a, c.b)
    return api._json({"ok": True, "metric": metric, "metrics": rows, "seeds": c.seeds,
                      "chart": spec, "text": spec["description"], "measured": measured,
                      "measured_text": " ".join(beside),
                      "labels": [c.a, c.b], "command": _command(side_a, side_b, common, replications)})


def redraw(result, metric) -> str:
    """The figure of another metric of a comparison already run (nothing runs again)."""
    result = json.loads(result) if isinstance(result, str) else result
    rows = {r["key"]: r for r in result["metrics"]}
    if metric not in rows:
        return api._json({"ok": False, "param": "metric",
                          "message": f"metric: {metric!r} is not one of {', '.join(rows)}"})
    a_label, b_label = result.get("labels", ["A", "B"])
    spec = _chart(rows[metric], result["seeds"], a_label, b_label)
    return api._json({"ok": True, "chart": spec, "text": spec["description"]})
