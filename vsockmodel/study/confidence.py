"""95 % confidence intervals, with Student's t.

The model is stochastic: each seed is one sample, like one run on the test
bed. ``mean_ci`` is the interval of a mean over independent replications;
``paired_change_ci`` is the interval of a change between two states run with
the same seeds (pairs), on log ratios. That is the method the vhost batching patch describes
for its gains, with Student's t in place of its normal approximation: with a
handful of pairs the t interval is the honest, wider one.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
from dataclasses import asdict, dataclass
from importlib import resources


T_TABLE = "vsockmodel/study/data/student_t.json"
LEVEL = "0.95"               # the level every interval of the book uses: the table must hold it


@functools.lru_cache(maxsize=1)
def _t_table() -> dict:
    """Student's t quantiles computed once with scipy (scripts/student-t-table):
    the browser lab has no scipy, and a table gives every Python the same numbers.

    Checked on load: a missing, empty, truncated or non-UTF-8 file, or a
    quantile that is not a finite number falling with the degrees of freedom
    and above the normal distribution's, is one ValueError naming the file and
    the field."""
    again = "write it again with scripts/student-t-table"
    path = resources.files("vsockmodel.study").joinpath("data", "student_t.json")
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{T_TABLE}: missing (Student's t quantiles); {again}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{T_TABLE}: not UTF-8 text ({exc.reason} at byte {exc.start}); {again}") from None
    except ValueError as exc:                      # json.JSONDecodeError: empty or cut short
        raise ValueError(f"{T_TABLE}: not JSON ({exc}); {again}") from None
    _check_t_table(table, again)
    return table


def _check_t_table(table, again: str) -> None:
    def bad(field: str, what: str) -> ValueError:
        return ValueError(f"{T_TABLE}: {field}: {what}; {again}")

    if not isinstance(table, dict):
        raise bad("(top level)", f"expected an object, got {type(table).__name__}")
    max_df = table.get("max_df")
    if isinstance(max_df, bool) or not isinstance(max_df, int) or not 1 <= max_df <= 100_000:
        raise bad("max_df", f"expected an integer in [1, 100000], got {max_df!r}")
    columns = table.get("quantiles")
    if not isinstance(columns, dict) or LEVEL not in columns:
        raise bad("quantiles", f"expected an object with a column {LEVEL!r} (and others, e.g. '0.90')")
    for level, column in columns.items():
        field = f"quantiles[{level!r}]"
        try:
            p = float(level)
        except ValueError:
            raise bad(field, "the level is not a number such as '0.95'") from None
        if not 0 < p < 1 or level != f"{p:.2f}":
            raise bad(field, "the level must be written like '0.95', in (0, 1)")
        if not isinstance(column, list) or len(column) != max_df:
            raise bad(field, f"expected a list of max_df = {max_df} numbers")
        normal = statistics.NormalDist().inv_cdf(0.5 + p / 2)
        previous = math.inf
        for df, t in enumerate(column, start=1):
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not normal < t < previous:
                raise bad(f"{field}[{df - 1}]", f"{t!r} is out of range for df = {df}: expected a "
                          f"finite number above the normal quantile {normal:.4f} and below the "
                          f"previous value" + (f" {previous!r}" if df > 1 else ""))
            previous = t


def t_quantile(level: float, df: int) -> float:
    """The two-sided Student's t quantile, t.ppf(0.5 + level / 2, df)."""
    table = _t_table()
    column = table["quantiles"].get(f"{level:.2f}")
    if column is not None and round(level, 2) == level and 1 <= df <= table["max_df"]:
        return column[df - 1]
    from scipy.stats import t             # a level or a sample size the table does not hold

    return float(t.ppf(0.5 + level / 2, df))


@dataclass(frozen=True)
class Estimate:
    """A mean over n samples with its confidence interval and standard deviation."""

    mean: float
    ci_low: float
    ci_high: float
    sd: float
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def mean_ci(xs, level: float = 0.95) -> Estimate:
    """Student's t interval of the mean of ``xs`` (at least two samples).

    Samples that agree exactly have no spread to measure: the interval is the point.
    """
    xs = [float(x) for x in xs]
    if len(xs) < 2:
        raise ValueError(f"mean_ci: needs at least 2 samples, got {len(xs)}")
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs)
    if sd == 0:
        return Estimate(mean, mean, mean, 0.0, len(xs))
    half = t_quantile(level, len(xs) - 1) * sd / math.sqrt(len(xs))
    return Estimate(mean, mean - half, mean + half, sd, len(xs))


def paired_change_ci(a, b, level: float = 0.95) -> tuple[float, float]:
    """CI of the change from a to b in %, from paired log ratios.

    The pairs are runs with the same seed; the interval is Student's t on the
    mean of log(b/a), turned back into a percentage. With one pair, or pairs
    that agree exactly, there is no spread to measure: the interval is the point.
    """
    d = [math.log(y / x) for x, y in zip(a, b)]
    if len(d) < 2 or max(d) == min(d):
        return (100 * math.expm1(d[0]),) * 2
    e = mean_ci(d, level)
    return 100 * math.expm1(e.ci_low), 100 * math.expm1(e.ci_high)

