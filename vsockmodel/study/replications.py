"""Independent replications: one configuration run with several seeds.

The model is stochastic: one seed is one sample, as one run is one sample on
a test bed. At most grid points a default run varies by about 1 % from seed
to seed, but where the pipeline runs in long cycles (the patched kernel at
4 KiB, for one) the spread is several times larger, and one run can mislead.

- ``replicate`` runs a configuration with seeds ``seed``, ``seed + 1``, ...
  and gives each metric's mean with a Student-t 95 % interval.
- ``compare`` runs two configurations with the same seeds (pairs, like the
  series' AB/BA runs) and gives the change with its interval from the paired
  log ratios (``vsockmodel.confidence``).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from ..model import kernel
from .confidence import Estimate, mean_ci, paired_change_ci
from ..model import budget
from ..model.params import MAX_SEED, MAX_WORK, Params, make_params
from ..model.units import MAX_DIGITS, QUOTE_CHARS, check_int, quote
from ..sim.results import NUMERIC_FIELDS, Result

MAX_REPLICATIONS = 64
MAX_JOBS = 256                # accepted; worker_count() decides how many processes run
# Memory: a worker process holds the model and its runs' results (about 30 MB
# of its own, PSS: DEVELOPMENT.md, "Bounds"); MAX_WORKERS of them stay under
# the memory a call may take, whatever --jobs asks.
MAX_WORKERS = budget.MEMORY_BUDGET // budget.WORKER_MEMORY
DEFAULT_REPLICATIONS = 8
STREAM_METRICS = ("throughput_gbps", "rx_cycles_per_byte", "recv_per_write", "futile_wakeups")
PINGPONG_METRICS = ("rtt_us", "rtt_p95_us", "rx_cycles_per_byte")


def metrics_for(workload: str) -> tuple[str, ...]:
    """The metrics summarised for a workload; the first is the one ``compare`` uses."""
    return PINGPONG_METRICS if workload == "pingpong" else STREAM_METRICS


def check_replications(replications, *sides: dict,
                       labels: tuple[str, ...] = ()) -> list[tuple[Params, list[dict]]]:
    """Validate every run's parameters and the call's total work before running any.

    Each side is the keyword arguments of one configuration (``replicate`` has
    one, ``compare`` two), run with the same ``replications`` seeds. Returns, per
    side, its first run's Params and the keyword arguments of each run, seed by seed.
    ``labels`` name the sides in errors (``compare`` passes "a" and "b").
    """
    replications = check_int("replications", replications, 2, MAX_REPLICATIONS, " runs (one per seed)")
    checked = []
    for i, kwargs in enumerate(sides):
        if kwargs.get("trace"):
            # A trace holds every event of a run; over many runs it is memory
            # without bound. One seed with run(trace=True) shows the same.
            raise ValueError("trace: not kept over replications (memory grows with every run); "
                             "allowed here: False. Trace one seed with run(..., trace=True)")
        try:
            p, _ = make_params(**kwargs)
        except ValueError as exc:
            if i >= len(labels):
                raise
            side = labels[i]
            # compare(): say which side, and how to give one side a setting of its own
            variant = _shown(kwargs.get("variant", Params.variant))
            raise ValueError(f"{exc} [side {side.upper()}, variant {variant}; "
                             f"to give one side a setting of its own: --a-set or --b-set NAME=VALUE, "
                             f"in Python a={{...}} or b={{...}}]") from None
        if p.seed + replications - 1 > MAX_SEED:
            raise ValueError(f"replications: seeds {p.seed} to {p.seed + replications - 1} go past "
                             f"the largest seed {MAX_SEED}; use seed <= {MAX_SEED - replications + 1}")
        checked.append((p, [dict(kwargs, seed=p.seed + i) for i in range(replications)]))
    # The call as a whole: every run's estimated work together (vsockmodel.model.budget),
    # whatever the number of processes, so the decision is the same on every machine.
    per_seed = sum(p.work_units for p, _ in checked)
    if replications * per_seed > MAX_WORK:
        most = MAX_WORK // per_seed
        heavy = "fewer requests" if checked[0][0].workload == "pingpong" else "a smaller transfer"
        fix = (f"i.e. replications <= {most} here, or {heavy}" if most >= 2
               else f"even 2 replications need {heavy}")
        budget.check_call(replications * per_seed, f"{replications * len(sides)} runs", "replications", fix)
    return checked


def check_jobs(jobs) -> int | None:
    """``jobs``: None (the default) or a number of worker processes, read by the
    integer rule ("2" from the command line is 2)."""
    if jobs is None:
        return None
    return check_int("jobs", jobs, 1, MAX_JOBS, " worker processes")


def worker_count(jobs: int | None, runs: int | None = None) -> int:
    """How many processes run ``runs`` runs when ``jobs`` were asked for (None:
    one per CPU): never more than the runs, the CPUs, or MAX_WORKERS, which
    keeps a call's memory under MEMORY_BUDGET. The result does not depend on it."""
    jobs = check_jobs(jobs) or os.cpu_count() or 1
    return max(1, min(jobs, runs or jobs, os.cpu_count() or 1, MAX_WORKERS))


def _run_one(kwargs: dict) -> Result:
    from .cache import cached_simulate

    return cached_simulate(*make_params(**kwargs))


def _run_all(configs: list[dict], jobs: int | None) -> list[Result]:
    """Run every configuration, in parallel if ``jobs`` > 1; results in input order."""
    jobs = worker_count(jobs or 1, len(configs))
    if jobs == 1:
        return [_run_one(kw) for kw in configs]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_run_one, configs))


@dataclass
class Replications:
    """One configuration over several seeds."""

    params: dict                 # the first run's parameters (its seed is the first seed)
    seeds: list[int]
    results: list[Result]

    @property
    def metrics(self) -> tuple[str, ...]:
        return metrics_for(self.params["workload"])

    def undefined(self, metric: str) -> str | None:
        """Why ``metric`` has no value in some run, or None if it has one in every run."""
        if metric not in NUMERIC_FIELDS:
            raise ValueError(f"metric: {metric!r} is not a number of a run's result; for example "
                             f"{', '.join(self.metrics)}")
        if metric.startswith("rtt") and self.params["workload"] != "pingpong":
            return f"measured only for workload 'pingpong', not {self.params['workload']!r}"
        for seed, r in zip(self.seeds, self.results):
            if getattr(r, metric) is None:   # rx_cycles_per_byte of a run that received nothing
                return (f"undefined with seed {seed}: no byte was received "
                        f"({r.reset_reason or 'nothing sent'})")
        return None

    def values(self, metric: str) -> list[float]:
        """One value of ``metric`` per seed (a numeric field of ``Result``)."""
        why = self.undefined(metric)
        if why:
            raise ValueError(f"{metric}: {why}")
        return [float(getattr(r, metric)) for r in self.results]

    def estimate(self, metric: str) -> Estimate:
        """``metric``'s mean over the seeds, with its 95 % interval."""
        return mean_ci(self.values(metric))

    def to_dict(self) -> dict:
        defined = [m for m in self.metrics if not self.undefined(m)]
        return {"params": self.params, "seeds": self.seeds,
                "estimates": {m: self.estimate(m).to_dict() for m in defined},
                "per_seed": {m: self.values(m) for m in defined},
                "undefined": {m: self.undefined(m) for m in self.metrics if m not in defined}}


def replicate(replications: int = DEFAULT_REPLICATIONS, jobs: int | None = 1, **kwargs) -> Replications:
    """Run one configuration (the keyword arguments of ``vsockmodel.run``) with
    ``replications`` consecutive seeds starting at ``seed``.

    ``jobs`` > 1 runs them in that many processes; the result does not depend on it.
    Raises ValueError, before running anything, on a bad parameter or when the
    runs together would exceed the work allowed in one call (MAX_WORK, vsockmodel.model.budget).
    """
    check_jobs(jobs)
    [(_, configs)] = check_replications(replications, kwargs)
    results = _run_all(configs, jobs)
    return Replications(params=results[0].params, seeds=[kw["seed"] for kw in configs],
                        results=results)


def _shown(v) -> str:
    """A setting as a label or a message shows it: as given, unless too long
    or too odd to print as it is (then quoted, and cut short)."""
    if isinstance(v, str) and v.isprintable() and len(v) <= QUOTE_CHARS:
        return v
    if isinstance(v, (bool, float)) or (isinstance(v, int) and abs(v) < 10**MAX_DIGITS):
        return str(v)
    return quote(v)


def side_label(side: dict) -> str:
    """How a side of a comparison is named: its variant, or "name=value, ..."."""
    if list(side) == ["variant"] and isinstance(side["variant"], str):
        return _shown(side["variant"])
    return ", ".join(f"{k}={_shown(v)}" for k, v in side.items())


def _side(spec, name: str) -> tuple[str, dict]:
    """A side of a comparison: a variant name, or a dict of parameter overrides."""
    if isinstance(spec, str):
        spec = {"variant": spec}
    if isinstance(spec, dict) and spec and all(isinstance(k, str) for k in spec):
        shared = sorted(set(spec) & {"seed", "trace"})
        if shared:   # the pairs are the point: both sides run the same seeds
            raise ValueError(f"{name}: {shared[0]} must be the same for both sides of a comparison; "
                             f"pass it to compare() itself, not in {name}")
        return side_label(spec), dict(spec)
    raise ValueError(f"{name}: expected a variant name or a dict of parameters, got {spec!r}")


@dataclass
class Comparison:
    """Two configurations run with the same seeds: the paired change of one metric."""

    a: str                       # labels: a variant name or "name=value, ..."
    b: str
    metric: str
    seeds: list[int]
    runs_a: Replications
    runs_b: Replications

    @property
    def values_a(self) -> list[float]:
        return self.runs_a.values(self.metric)

    @property
    def values_b(self) -> list[float]:
        return self.runs_b.values(self.metric)

    @property
    def change_pct(self) -> float:
        """Change of the mean from a to b, in % (as the series' tables report it)."""
        a, b = self.values_a, self.values_b
        return 100 * (math.fsum(b) / math.fsum(a) - 1)

    @property
    def change_ci(self) -> tuple[float, float]:
        """95 % interval of the change, from the paired log ratios."""
        return paired_change_ci(self.values_a, self.values_b)

    def to_dict(self) -> dict:
        lo, hi = self.change_ci
        return {"a": self.a, "b": self.b, "metric": self.metric, "seeds": self.seeds,
                "a_values": self.values_a, "b_values": self.values_b,
                "a_estimate": self.runs_a.estimate(self.metric).to_dict(),
                "b_estimate": self.runs_b.estimate(self.metric).to_dict(),
                "change_pct": self.change_pct, "change_ci_low": lo, "change_ci_high": hi,
                "params_a": self.runs_a.params, "params_b": self.runs_b.params}


def compare(a="baseline", b="p1-p5", replications: int = DEFAULT_REPLICATIONS, metric: str | None = None,
            jobs: int | None = 1, **common) -> Comparison:
    """Run configurations ``a`` and ``b`` with the same seeds and compare ``metric``.

    ``a`` and ``b`` are variant names or dicts of parameters that differ between
    the two (``{"variant": "p1-p5", "vhost_used_batch": True}``); ``common`` holds
    the rest (``payload=4096, recv_size=4096, seed=1``). ``metric`` defaults to
    throughput for a stream and RTT for ping-pong.
    """
    check_jobs(jobs)
    label_a, over_a = _side(a, "a")
    label_b, over_b = _side(b, "b")
    (pa, conf_a), (pb, conf_b) = check_replications(replications, {**common, **over_a},
                                                    {**common, **over_b}, labels=("a", "b"))
    workload = pa.workload
    if pb.workload != workload:
        raise ValueError(f"workload: a and b must run the same workload; a runs {workload!r}, "
                         f"b runs {pb.workload!r}")
    allowed = metrics_for(workload)
    metric = metric or allowed[0]
    if metric not in allowed:
        raise ValueError(f"metric: {metric!r} is not one of {', '.join(allowed)} ({workload})")
    results = _run_all(conf_a + conf_b, jobs)
    n = len(conf_a)
    seeds = [kw["seed"] for kw in conf_a]
    for side, runs in (("a", results[:n]), ("b", results[n:])):
        _check_positive(metric, side, seeds, runs)
    return Comparison(label_a, label_b, metric, seeds,
                      Replications(results[0].params, seeds, results[:n]),
                      Replications(results[n].params, seeds, results[n:]))


def _check_positive(metric: str, side: str, seeds: list[int], runs: list[Result]) -> None:
    """A change is a ratio: it needs a positive value from every run. A stream
    that was reset (a buffer with one metadata slot, say) delivers nothing."""
    for seed, r in zip(seeds, runs):
        value = getattr(r, metric)
        if value is not None and value > 0:
            continue
        why = ""
        if r.resets:
            why = (f": the connection was reset ({r.reset_reason}); a buffer below 2 x "
                   f"SKB_TRUESIZE(0) = {2 * kernel.SKB_TRUESIZE_0} B leaves a stream one metadata "
                   f"slot or none")
        raise ValueError(f"{metric}: side {side.upper()} gave {value} with seed {seed}{why}; a change "
                         f"is a ratio and needs a positive value from every run")


