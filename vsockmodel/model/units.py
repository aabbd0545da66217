"""Reading and writing byte sizes and counts: one rule for every surface.

The Python API, the command line and the browser lab all read a size with
``parse_size`` ("4K", "64KiB", "1.5K", 4096) and an integer with
``parse_int`` (ASCII digits only), and print sizes with ``fmt_size``.
"""

from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# Spaces only (no tabs or newlines): "4 K", "64KiB", "512B", "4096.0", "1.5K".
# ASCII digits only: "٣" is not a size, nor "1_000". "4KB" is refused: KB is
# 1000 bytes to some readers and 1024 to others (_DECIMAL_RE says which to write).
_SIZE_RE = re.compile(r" *([-+]?\d+(?:\.\d+)?) *(?:([KMG])(?:iB)?|B)? *", re.IGNORECASE | re.ASCII)
_DECIMAL_RE = re.compile(r" *([-+]?\d+(?:\.\d+)?) *([KMG])B *", re.IGNORECASE | re.ASCII)
_INT_RE = re.compile(r" *([-+]?\d+)(?:\.0+)? *", re.ASCII)     # "16", and "16.0" as 16.0 is
_FACTORS = {"": 1, "K": KiB, "M": MiB, "G": GiB}
# No size or count here has more than 19 digits (the largest seed): longer text
# is refused before Python converts it, which it does only up to 4300 digits,
# and which takes time quadratic in the length.
MAX_DIGITS = 40
# Errors quote what was given, cut to this many characters.
QUOTE_CHARS = 40


def quote(value) -> str:
    """``repr(value)`` for an error message, cut short: a 5,000-character
    text is quoted as its first characters and its length."""
    if isinstance(value, int) and abs(value) >= 10**MAX_DIGITS:
        return fmt_count(value)            # repr() refuses past 4300 digits
    text = repr(value)
    if len(text) <= QUOTE_CHARS:
        return text
    if isinstance(value, str):
        return f"{value[:QUOTE_CHARS // 2]!r}... ({len(value):,} characters)"
    return f"{text[:QUOTE_CHARS // 2]}... ({type(value).__name__}, {len(text):,} characters)"


def fmt_count(n: int, unit: str = "") -> str:
    """An integer with thousands separators and its unit (" bytes"), or its
    length when it is too long to quote: 68157440 -> "68,157,440";
    10**5000 -> "a number of about 5,001 digits"."""
    if abs(n) < 10**MAX_DIGITS:
        return f"{n:,}{unit}"
    digits = int(abs(n).bit_length() * math.log10(2)) + 1    # str() would refuse past 4300 digits
    return f"{'minus ' if n < 0 else ''}a number of about {digits:,} digits"


def _too_long(number: str, name: str, where: str) -> None:
    """Refuse a number with more digits than any value here has, before converting it."""
    digits = sum(c.isdigit() for c in number)
    if digits > MAX_DIGITS:
        raise ValueError(f"{name}: a number of {digits:,} digits is out of range{where}")


def parse_size(value, name: str = "size", allowed: str = "") -> int:
    """'4K' -> 4096, '64KiB' -> 65536, '1M', '2G', '512', '512B'; integers pass through.

    A decimal is accepted when it is a whole number of bytes ('4096.0', '1.5K'),
    as a float is from Python. ``allowed`` (e.g. "[1, 64 MiB] bytes") is quoted
    in the error when ``value`` is not a size.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)                  # int, or a numpy integer from a notebook
    where = f"; allowed {allowed}" if allowed else ""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        raise ValueError(f"{name}: {value!r} is not a whole number of bytes{where}")
    m = _SIZE_RE.fullmatch(value) if isinstance(value, str) else None
    if m:
        _too_long(m.group(1), name, where)
    ambiguous = _DECIMAL_RE.fullmatch(value) if isinstance(value, str) and not m else None
    if ambiguous:
        number, unit = ambiguous.group(1), ambiguous.group(2).upper()
        raise ValueError(f"{name}: {quote(value)} is ambiguous ({unit}B means powers of 1000 to some, of 1024 to "
                         f"others); sizes here are binary: write {number}{unit} or {number}{unit}iB{where}")
    if not m:
        raise ValueError(f"{name}: cannot read {quote(value)} as a size; use bytes with an optional "
                         f"K, M or G suffix (binary), e.g. 4K or 65536{where}")
    size = Fraction(m.group(1)) * _FACTORS[(m.group(2) or "").upper()]
    if size.denominator != 1:
        raise ValueError(f"{name}: {quote(value)} is not a whole number of bytes{where}")
    return int(size)


def parse_int(value, name: str, allowed: str = "") -> int:
    """An integer from Python (int, numpy integer, a whole float) or from text
    of ASCII digits with an optional sign ("64", "-1", and "64.0" as the float
    64.0 is): the same rule as sizes, without a unit."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    m = _INT_RE.fullmatch(value) if isinstance(value, str) else None
    where = f" in {allowed}" if allowed else ""
    if not m:
        raise ValueError(f"{name}: expected an integer{where}, got {quote(value)}")
    _too_long(m.group(1), name, f"; allowed {allowed}" if allowed else "")
    return int(m.group(1))


def fmt_size(n: float, _pos=None) -> str:
    """A byte count with binary prefixes: 65536 -> "64 KiB", 3732 -> "3.6 KiB", 100 -> "100 B".

    Whole multiples of a unit print without decimals, others with one. Also a
    matplotlib tick formatter (the second argument, the tick position, is ignored).
    """
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit, factor in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if value >= factor:
            scaled = value / factor
            text = f"{scaled:.0f}" if scaled.is_integer() else f"{scaled:.1f}"
            return f"{sign}{text} {unit}"
    return f"{sign}{value:.0f} B" if value.is_integer() else f"{sign}{value:.1f} B"


def fmt_range(lo: int, hi: int, size: bool = False) -> str:
    """An allowed range as every error and help text quotes it: "[1 B, 64 MiB]"
    for sizes (exact: "[1 B, 794,370,048 B (757.6 MiB)]"), "[0, 1,000]" for counts."""
    fmt = fmt_size_exact if size else fmt_count
    return f"[{fmt(lo)}, {fmt(hi)}]"


def check_int(name: str, value, lo: int, hi: int, what: str = "") -> int:
    """An integer in [lo, hi], read by parse_int's rule; ``what`` follows the
    range in the error (" runs (one per seed)")."""
    n = parse_int(value, name, f"{fmt_range(lo, hi)}{what}")
    if not lo <= n <= hi:
        raise ValueError(f"{name}: {fmt_count(n)} is out of range; allowed {fmt_range(lo, hi)}{what}")
    return n


_NUMBER_RE = re.compile(r" *[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)? *", re.ASCII)


def parse_number(value, name: str, lo: float, hi: float, allowed: str) -> float:
    """A finite number in [lo, hi] from Python or from ASCII text ("200", "1.5e3");
    ``allowed`` is the range as the error quotes it ("[0, 1e9] ns")."""
    given = value
    if isinstance(value, str) and _NUMBER_RE.fullmatch(value):
        value = float(value)               # float() reads any length: "1" * 5000 is inf
    try:
        in_range = (not isinstance(value, bool) and isinstance(value, numbers.Real)
                    and lo <= float(value) <= hi)
    except OverflowError:                  # an int too large for a float
        in_range = False
    if not in_range:
        raise ValueError(f"{name}: expected a number in {allowed}, got {quote(given)}")
    return float(value)


def fmt_size_exact(n: int) -> str:
    """``fmt_size`` where it is exact ("2 KiB", "1.5 KiB"), else the bytes too:
    2049 -> "2,049 B (2.0 KiB)". For text that says what a run used."""
    text = fmt_size(n)
    number, unit = text.split()
    factor = {"B": 1, "KiB": KiB, "MiB": MiB, "GiB": GiB}[unit]
    return text if float(number) * factor == n else f"{n:,} B ({text})"
