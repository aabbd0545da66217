"""Everything the lab's worker may call, by name: the API's entry points and
the page's own (every metric A against B, the headline, formatted values, the
reader's Python). The worker sends the name and the arguments as JSON and
gets JSON text back, as CPython would print it.
"""

from __future__ import annotations

import importlib
import json

from ..model import schema
from . import api, formats


def check_shown(config) -> str:
    """``api.check``, with each size and count as the page shows it (``formats.shown``)."""
    res = json.loads(api.check(config))
    if res.get("ok"):
        res["shown"] = formats.shown(res["params"])
        res["shown"].update({f"derived.{k}": v for k, v in formats.shown(
            {k: res["derived"][k] for k in ("transfer", "rx_buf_payload") if res["derived"].get(k) is not None}
        ).items()})
    return api._json(res)


def page_data() -> dict:
    """What the page needs before Python has loaded: slider stops with their texts,
    the metrics Compare offers, the Python mode's examples, the problem sets'
    chapters, and how to say each parameter's default."""
    from ..study import quiz                # only the build needs these
    from . import examples, headline, metrics

    stops = {p.name: formats.slider_stops(p) for p in schema.PARAMETERS}
    defaults = {p.name: formats.shown({p.name: p.default}).get(p.name) for p in schema.PARAMETERS}
    return {"stops": {k: v for k, v in stops.items() if v}, "defaults": {k: v for k, v in defaults.items() if v},
            "metrics": metrics.describe(), "examples": examples.describe(), "default_example": examples.DEFAULT.key,
            "quiz_chapters": sorted(quiz.CHAPTERS), "code_limit": CODE_LIMIT,
            "compare_pairs": list(api.COMPARE_REPLICATIONS[:2]),
            "headline_pairs": headline.PAIRS, "headline_payloads": list(headline.PAYLOADS)}


CODE_LIMIT = 6000        # characters of code a link carries (an address of about 8 KB at most)

# name -> (module, function): a module is imported at its first call, so that
# the worker is ready before it has imported what only some modes use.
CALLS = {
    "check": ("calls", "check_shown"), "run": ("api", "run"), "timeline": ("api", "timeline"),
    "compare": ("api", "compare"), "compare_metrics": ("comparing", "compare_metrics"),
    "redraw_comparison": ("comparing", "redraw"), "sweep_point": ("api", "sweep_point"),
    "sweep_chart": ("api", "sweep_chart"), "sweep_summary": ("sweeps", "summary"),
    "headline_point": ("headline", "point"), "headline_chart": ("headline", "chart"),
    "quiz_problem": ("api", "quiz_problem"), "quiz_check": ("api", "quiz_check"),
    "run_code": ("pycode", "run_code"),
}


def call(name: str, args_json: str) -> str:
    """Call ``name`` with the JSON-encoded positional arguments; its JSON reply."""
    if name not in CALLS:
        return api._json({"ok": False, "param": None,
                          "message": f"no such call {name!r}; the lab calls {', '.join(sorted(CALLS))}"})
    module, function = CALLS[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)(*json.loads(args_json))
