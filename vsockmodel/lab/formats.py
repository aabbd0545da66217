"""Every size and count the lab's page shows, formatted by the package's own rule.

The page holds no formatting code of its own: the slider stops and their
texts come with the schema (``slider_stops``), and a checked configuration
comes back with each value's text (``shown``). So the command line, the API
and the page print a size or a count the same way (``vsockmodel.model.units``).
"""

from __future__ import annotations

from ..model import schema
from ..model.units import GiB, KiB, MiB, fmt_count, fmt_size, fmt_size_exact


def size_text(n: int) -> str:
    """The shortest text ``parse_size`` reads back as exactly ``n``: "4K", "3732", "1M"."""
    for suffix, factor in (("G", GiB), ("M", MiB), ("K", KiB)):
        if n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)


def value_text(prm: schema.Parameter, n: int) -> str:
    """What the page writes in a parameter's text box: "4K" for sizes, "64" for counts."""
    return size_text(n) if prm.kind == "size" else str(n)


def said(prm: schema.Parameter, n: int) -> str:
    """What a screen reader hears for a value: exact ("2,049 B (2.0 KiB)", "4,096 packets")."""
    if prm.kind == "size":
        return fmt_size_exact(n)
    return f"{fmt_count(n)} {prm.unit}".strip()


def _round_values(lo: int, hi: int, power_of_two: bool) -> list[int]:
    """Round values from lo to hi: powers of two and, between them, 1.5 times one
    (4K, 6K, 8K, 12K, ...), so a keyboard step never lands on 4277."""
    out = {lo, hi}
    k = 1
    while k <= hi:
        for v in ((k,) if power_of_two else (k, k + k // 2)):
            if lo <= v <= hi:
                out.add(v)
        k *= 2
    return sorted(out)


def slider_stops(prm: schema.Parameter) -> list[dict] | None:
    """A slider's positions for a size or count on a log scale, each with its box
    text and its spoken text; None where a slider makes no sense (the seed)."""
    if prm.kind not in ("size", "int") or not (prm.log_scale or prm.power_of_two):
        return None
    hi = prm.hi if prm.hi is not None else 64 * MiB
    values = set(_round_values(prm.lo, hi, prm.power_of_two))
    if isinstance(prm.default, int):
        values.add(prm.default)
    return [{"value": v, "text": value_text(prm, v), "said": said(prm, v)} for v in sorted(values)]


def shown(params: dict) -> dict:
    """Each size or count of a checked configuration as the page shows it:
    {name: {"text": box text, "said": spoken text, "short": "781.2 KiB"}}."""
    out = {}
    for name, value in params.items():
        prm = schema.BY_NAME.get(name)
        if prm is None or prm.kind not in ("size", "int") or not isinstance(value, int):
            continue
        out[name] = {"text": value_text(prm, value), "said": said(prm, value),
                     "short": fmt_size(value) if prm.kind == "size" else fmt_count(value)}
    return out
