"""Hypothesis strategies generated from the parameter schema, for the fuzzer
(tests/test_hostile_fuzz.py).

Every parameter of ``vsockmodel.model.schema.PARAMETERS`` gets three
strategies from its kind, range and choices alone, so a parameter added to
the schema is fuzzed with no change here:

- ``valid``: values in range, in every form a surface accepts (4096, "4096",
  "4K", 4096.0 for a size);
- ``boundary``: the ends of the range and one step past them (may be
  refused, by a rule of its own or one between parameters);
- ``hostile``: values no surface may accept (wrong types, NaN and infinity,
  5,000-digit numbers, unicode digits, empty text, junk).

A new *kind* of parameter needs strategies here: KINDS lists those known, and
tests/test_hostile_fuzz.py fails on a kind it does not hold.
"""

from __future__ import annotations

import math
from dataclasses import fields
from urllib.parse import parse_qsl, urlencode

from hypothesis import strategies as st

from vsockmodel.model import schema
from vsockmodel.model.costs import Costs
from vsockmodel.model.schema import PARAMETERS, Parameter
from vsockmodel.model.units import GiB, KiB, MiB

KINDS = ("choice", "size", "int", "bool", "tristate")
HUGE = "9" * 5000


def _log_int(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers in [lo, hi], spread over the orders of magnitude (small ones common)."""
    top = max(0, (hi - lo).bit_length())
    return st.integers(0, top).flatmap(lambda b: st.integers(lo, min(hi, lo + (1 << b) - 1)))


def _forms(p: Parameter, n: int) -> list:
    """The ways a surface may write the number n for parameter p."""
    forms = [n, str(n), f" {n} ", float(n)]
    if p.kind == "size":
        forms.append(f"{n}B")
        for unit, factor in (("K", KiB), ("M", MiB), ("G", GiB)):
            if n % factor == 0:
                forms += [f"{n // factor}{unit}", f"{n // factor}{unit.lower()}iB"]
    return forms


def _numbers(p: Parameter) -> st.SearchStrategy[int]:
    hi = p.hi if p.hi is not None else p.lo << 24          # "at most what the work bound allows"
    if p.power_of_two:
        return st.integers(p.lo.bit_length() - 1, hi.bit_length() - 1).map(lambda k: 1 << k)
    return _log_int(p.lo, hi)


def valid(p: Parameter) -> st.SearchStrategy:
    if p.kind == "choice":
        out = st.sampled_from(p.choices)
    elif p.kind == "bool":
        out = st.booleans()
    elif p.kind == "tristate":
        out = st.none() | st.booleans()
    else:
        out = _numbers(p).flatmap(lambda n: st.sampled_from(_forms(p, n)))
    return st.none() | out if p.optional else out


def boundary(p: Parameter) -> st.SearchStrategy:
    if p.kind in ("size", "int"):
        ends = [p.lo, p.lo - 1, 0, -1, 2**63, 2**64]
        if p.hi is not None:
            ends += [p.hi, p.hi + 1]
        if p.power_of_two:
            ends += [p.lo + 1, 3 * p.lo]
        return st.sampled_from(ends).flatmap(lambda n: st.sampled_from(_forms(p, n)))
    if p.kind == "choice":
        return st.sampled_from(p.choices).flatmap(
            lambda c: st.sampled_from([c, c.upper(), f" {c}", c + "\n"]))
    return st.sampled_from([True, False] + ([None] if p.kind == "tristate" or p.optional else []))


_JUNK = st.text(max_size=30).map(lambda t: "x" + t)       # never a number, a size or a name


def hostile(p: Parameter) -> st.SearchStrategy:
    """Values every surface must refuse for p, whatever else is set."""
    shapes = [[1], {"a": 1}, b"4", object(), (), [p.default]]
    if p.kind in ("size", "int"):
        values = ["", " ", "nan", "inf", "-inf", math.nan, math.inf, -math.inf, HUGE, "-" + HUGE,
                  10**5000, "\u0663", "1_000", "0x10", "1e3", "4KB", "½", "1.5.2", True]
        if not p.optional:
            values.append(None)
        if p.lo > 0:
            values += [p.lo - 1, -10**30]
        return st.sampled_from(values + shapes) | _JUNK
    if p.kind == "choice":
        return st.sampled_from([None, 1, "", " ", HUGE, p.choices[0].upper() + "!"] + shapes) | _JUNK.filter(
            lambda t: t not in p.choices)
    # bool and tristate: only True and False (and None for a tristate) are switch values
    return st.sampled_from(["true", "false", "yes", 1, 0, 1.0, "", HUGE] + shapes
                           + ([] if p.kind == "tristate" else [None])) | _JUNK


STRATEGIES = {p.name: {"valid": valid(p), "boundary": boundary(p), "hostile": hostile(p)}
              for p in PARAMETERS}


@st.composite
def settings(draw, names=schema.NAMES, small: bool = True, hostile_share: int = 2):
    """(keyword arguments, the names given a hostile value): a subset of the
    parameters, each valid, at a boundary, or hostile. ``small``: a stream is
    usually a few writes and a ping-pong a few round trips, so that an
    accepted configuration usually runs in milliseconds."""
    kwargs, bad = {}, []
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    clean = draw(st.booleans())                 # half the examples: every value valid
    for name in chosen:
        which = "valid" if clean else draw(st.sampled_from(["valid"] * 6 + ["boundary"] * 2
                                                           + ["hostile"] * hostile_share))
        kwargs[name] = draw(STRATEGIES[name][which])
        if which == "hostile":
            bad.append(name)
    if small and draw(st.integers(0, 9)) < 8:
        if "transfer" in names and "transfer" not in kwargs and kwargs.get("workload", "stream") == "stream":
            kwargs["transfer"] = draw(st.integers(1, 8)) * _payload_bytes(kwargs.get("payload", 4096))
        if "requests" in names and "requests" not in kwargs and kwargs.get("workload") == "pingpong":
            kwargs["requests"] = draw(st.integers(1, 20))
    return kwargs, bad


def text(value) -> str:
    """A value as a command line or an address writes it (str(), which refuses
    integers of more than 4300 digits: those are written digit by digit)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**100:
        return ("-" if value < 0 else "") + "9" * 5000
    return str(value)


def _payload_bytes(value) -> int:
    """The payload's bytes when it is a valid size, else the default (the
    transfer then only has to be some valid size)."""
    try:
        return schema.BY_NAME["payload"].coerce(value)
    except ValueError:
        return 4096


COST_NAMES = tuple(f.name for f in fields(Costs))
costs = st.none() | st.dictionaries(
    st.sampled_from(COST_NAMES) | _JUNK, st.floats(0, 1e4) | st.sampled_from([-1, math.nan, "x", None, 1e10]),
    max_size=3) | st.just({name: 0.0 for name in COST_NAMES if name != "clock_ghz"})


# ---- the lab's address (lab.js: readHash, configOf) ---------------------------------------------

LAB_KEYS = ("mode", "a", "b", "qchapter", "qseed", "matched")


@st.composite
def lab_addresses(draw):
    """An address fragment "name=value&...": the lab's own names with valid,
    boundary and hostile values as text, repeated names, and unknown names."""
    pairs = []
    kwargs, _ = draw(settings(small=True))
    for name, value in kwargs.items():
        pairs.append((name, ("true" if value else "false") if isinstance(value, bool)
                      else "" if value is None else text(value)))
    for key in draw(st.lists(st.sampled_from(LAB_KEYS + ("nonsense",)), max_size=4)):
        pairs.append((key, draw(_lab_value(key))))
    pairs = draw(st.permutations(pairs)) if pairs else pairs
    if pairs and draw(st.booleans()):
        pairs.append(pairs[0])                          # a name given twice
    return urlencode(pairs)


def _lab_value(key: str) -> st.SearchStrategy[str]:
    if key == "mode":
        return st.sampled_from(["run", "compare", "sweep", "problems", "nope", ""])
    if key in ("a", "b"):
        return settings(names=tuple(n for n in schema.NAMES if n not in ("seed", "trace")), small=True).map(
            lambda kb: json_text(kb[0])) | st.sampled_from(["", "{", "[]", "null", '{"foo": 1}'])
    if key in ("qchapter", "qseed"):
        return st.sampled_from(["1", "3", "9", "0", "-1", "", "x", HUGE, "2147483648"])
    return st.sampled_from(["1", "0", "true", ""])


def json_text(value) -> str:
    """JSON text of a generated value, as a client would send it: a huge integer
    as its digits (which json.dumps refuses to write), other objects as text."""
    import json

    def plain(v):
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**100:
            return "__HUGE__"
        return v

    return json.dumps(plain(value), default=repr).replace('"__HUGE__"', "9" * 5000)


def read_address(fragment: str) -> dict:
    """What lab.js's readHash() and configOf() make of an address fragment: the
    page's state, and the configuration it sends the worker (as JSON text)."""
    import json
    by_name = schema.BY_NAME
    values = {p.name: p.default for p in PARAMETERS}
    state = {"mode": "run", "a": None, "b": None, "qchapter": None, "qseed": None, "matched": False}
    seen = set()
    for k, v in parse_qsl(fragment, keep_blank_values=True):
        if k in seen:
            continue                                   # "given twice; the first value is used"
        seen.add(k)
        if k in by_name:
            p = by_name[k]
            if p.kind in ("bool", "tristate"):
                word = v.lower()
                value = True if word == "true" else False if word == "false" else (
                    None if p.kind == "tristate" and v == "" else "undefined")
            else:
                value = None if v == "" and p.optional else v
            if value == "undefined" or (p.kind == "choice" and value not in p.choices):
                continue                               # "left at the default"
            values[k] = value
        elif k == "mode":
            state["mode"] = v if v in ("run", "compare", "sweep", "problems") else "run"
        elif k in ("qchapter", "qseed"):
            state[k] = v
        elif k in ("a", "b"):
            try:
                side = json.loads(v)
            except ValueError:
                side = None
            if isinstance(side, dict) and all(name in by_name for name in side):
                state[k] = side
        elif k == "matched":
            state["matched"] = v == "1"
    config = {}
    for p in PARAMETERS:
        if not p.applies.to(values["variant"], values["workload"]):
            continue
        v = values[p.name]
        if v == p.default or v is None:
            continue
        config[p.name] = v
    state["config"] = json.dumps(config)
    return state
