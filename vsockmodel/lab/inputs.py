"""The lab's entry points read their arguments here, before anything runs.

The page sends what its controls and its address hold, but an entry point is
a public function: anything may reach it (a hand-edited address, another
client). ``checked`` puts one validation layer on top of an entry point: each
argument is read by its reader below, and bad input, or an error the model
raises for its input, comes back as the entry point's usual refusal
(``{"ok": false, "param", "message"}``) instead of an exception.

Each reader takes the argument's name and value and returns the value in the
form the entry point expects, or raises ValueError naming the argument.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
from typing import Callable

from ..model import schema
from ..model.units import parse_int, parse_number, quote
from ..sim.errors import Deadlock, SimulationLimitExceeded

Reader = Callable[[str, object], object]


def checked(refuse: Callable[[Exception], str], check: Callable | None = None, **readers: Reader):
    """Decorate an entry point: read each named argument with its reader, then
    run ``check`` (a bound on the whole call, say) on the arguments as read,
    then the entry point. ``refuse`` turns an exception into the JSON reply."""
    def wrap(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def call(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:                  # a missing or unknown argument
                return refuse(ValueError(f"{fn.__name__}: {exc}"))
            bound.apply_defaults()
            try:
                for name, read in readers.items():
                    bound.arguments[name] = read(name, bound.arguments[name])
                if check is not None:
                    check(**bound.arguments)
                return fn(*bound.args, **bound.kwargs)
            except (ValueError, SimulationLimitExceeded, Deadlock) as exc:
                return refuse(exc)
        return call
    return wrap


# ---- readers ----------------------------------------------------------------------------------

def _json_text(name: str, value):
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"{name}: not JSON ({exc}): {quote(value)}") from None
    return value


def config(name: str, value) -> dict:
    """A configuration: a dict of run() settings, or its JSON text. Its values
    are the model's to judge (make_params names the parameter)."""
    value = _json_text(name, value)
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{name}: expected an object of run() settings such as "
                         f'{{"payload": "4K"}}, got {quote(value)}')
    return dict(value)


def known_config(name: str, value) -> dict:
    """A configuration whose every name is a parameter of the schema."""
    value = config(name, value)
    unknown = sorted(k for k in value if k not in schema.BY_NAME)
    if unknown:
        raise ValueError(f"{name}: unknown parameter(s) {', '.join(quote(k) for k in unknown)}; "
                         f"known: {', '.join(schema.NAMES)}")
    return value


def optional(read: Reader) -> Reader:
    """``read``, or None (the argument left out)."""
    def read_optional(name: str, value):
        return None if value is None else read(name, value)
    return read_optional


def time_us(name: str, value) -> float:
    """A moment of a run, in microseconds (a number or its text)."""
    return parse_number(value, name, 0.0, 1e12, "[0, 1e12] µs")


def size(name: str, value) -> int:
    """A size by the schema's rule for that parameter ("4K", 4096)."""
    return schema.BY_NAME[name].coerce(value)


def flag(name: str, value) -> bool:
    """True or false (None: false, as the page sends an unset box)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ValueError(f"{name}: expected true or false, got {quote(value)}")


def points(name: str, value) -> list[dict]:
    """A sweep's points so far: [{"payload": bytes, "value": a finite number}, ...]."""
    value = _json_text(name, value)
    if not isinstance(value, list):
        raise ValueError(f"{name}: expected a list of points such as "
                         f'[{{"payload": 64, "value": 0.5}}], got {quote(value)}')
    out = []
    for i, point in enumerate(value):
        where = f"{name}: point {i}"
        if not isinstance(point, dict) or set(point) != {"payload", "value"}:
            raise ValueError(f"{where}: expected {{\"payload\": bytes, \"value\": a number}}, "
                             f"got {quote(point)}")
        payload = parse_int(point["payload"], f"{where}, payload", f"[1, {schema.MAX_SIZE}] bytes")
        if not 1 <= payload <= schema.MAX_SIZE:
            raise ValueError(f"{where}, payload: {payload} is out of range; allowed [1, {schema.MAX_SIZE}] bytes")
        number = point["value"]
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise ValueError(f"{where}, value: expected a finite number, got {quote(number)}")
        out.append({"payload": payload, "value": float(number)})
    return out


#: the names a refusal may carry as its ``param``, besides the schema's
ARGUMENTS = ("config", "config_a", "config_b", "t0_us", "points", "matched", "replications",
             "a", "b", "chapter", "answer")
