"""The lab's Python: run a reader's code against the model, as at home.

``run_code`` executes the code in a fresh namespace (``vsockmodel`` already
imported), lets ``print`` write where the page shows it, and turns an
exception into a traceback that names the reader's own lines ("line 3") and
nothing of the lab's. ``show`` draws with the lab's own Vega-Lite charts; in
CPython, outside the lab, it records the figure and prints nothing, so the
same code prints the same text in both places.
"""

from __future__ import annotations

import json
import linecache
import math
import sys
import traceback

FILENAME = "<lab>"
MAX_FIGURES = 20
_figures: list[dict] = []


def _pairs_chart(points, title: str, x: str, y: str) -> dict:
    from . import charts

    rows = [{"x": float(x), "y": float(y)} for x, y in points]
    text = f"{title or 'Points'}: " + ", ".join(f"({r['x']:.4g}, {r['y']:.4g})" for r in rows) + "."
    spec = charts._base(text, 260)
    spec.update({"data": {"values": rows},
                 "mark": {"type": "line", "point": {"filled": True, "size": 50}, "tooltip": True,
                          "color": charts.COLORS["blue"]},
                 "encoding": {"x": {"field": "x", "type": "quantitative", "title": x},
                              "y": {"field": "y", "type": "quantitative", "title": y}}})
    if title:
        spec["title"] = title
    return spec


def figure(obj, title: str = "", x: str = "x", y: str = "y") -> dict:
    """The Vega-Lite spec ``show`` draws for ``obj``: a run's Result, a Comparison,
    a sweep ({payload: Result} or [(payload, Result)]), or (x, y) points (``x`` and
    ``y`` name their axes, with units: "throughput (Gbit/s)")."""
    from ..sim.results import Result
    from ..study.replications import Comparison
    from . import charts

    if isinstance(obj, Result):
        spec = charts.worker_time(obj.worker_time())
    elif isinstance(obj, Comparison):
        lo, hi = obj.change_ci
        spec = charts.comparison(obj.seeds, obj.values_a, obj.values_b, obj.a, obj.b, obj.metric, "",
                                 obj.change_pct, (lo, hi))
    else:
        items = list(obj.items()) if isinstance(obj, dict) else [] if isinstance(obj, (str, bytes)) else list(obj)
        pairs = all(isinstance(p, (tuple, list)) and len(p) == 2 for p in items)
        if items and pairs and all(isinstance(v, Result) for _, v in items):
            points = [{"payload": int(k), "value": v.throughput_gbps} for k, v in items]
            spec = charts.sweep(points, title or "sweep", "throughput", "Gbit/s", [],
                                sorted(p["payload"] for p in points))
        elif items and pairs and all(isinstance(c, (int, float)) and math.isfinite(c) for p in items for c in p):
            return _pairs_chart(items, title, x, y)
        else:
            raise TypeError("show() draws a Result, a Comparison, a sweep ({payload: Result}) "
                            f"or a list of (x, y) numbers; got {type(obj).__name__}")
    if title:
        spec["title"] = title
    return spec


def show(obj, title: str = "", x: str = "x", y: str = "y") -> None:
    """Draw ``obj`` in the lab (a Result, a Comparison, a sweep, or (x, y) points,
    whose axes ``x`` and ``y`` name)."""
    if len(_figures) >= MAX_FIGURES:
        raise RuntimeError(f"show: at most {MAX_FIGURES} figures per run")
    _figures.append(figure(obj, title, x, y))


def _traceback(exc: BaseException) -> str:
    """The traceback through the reader's own lines only ("<lab>", line 3): the
    frames of the lab and of the model are left out, and the error says the rest."""
    only = "".join(traceback.format_exception_only(type(exc), exc))
    if isinstance(exc, SyntaxError):
        return only
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
    return "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + only


def run_code(code: str) -> str:
    """Run the reader's code; JSON {"ok", "error" (a traceback or ""), "figures"}.
    What it prints goes to sys.stdout as it runs."""
    import vsockmodel

    _figures.clear()
    lines = code.splitlines(True)
    linecache.cache[FILENAME] = (len(code), None, lines, FILENAME)   # tracebacks quote the reader's lines
    namespace = {"__name__": "__main__", "vsockmodel": vsockmodel}
    error = ""
    try:
        exec(compile(code, FILENAME, "exec"), namespace)     # noqa: S102 - the reader's own code, in their browser
    except KeyboardInterrupt:
        raise
    except BaseException as exc:                              # SystemExit too: the lab goes on
        error = _traceback(exc)
    finally:
        sys.stdout.flush()
    return json.dumps({"ok": not error, "error": error, "figures": list(_figures)}, allow_nan=False)
