"""Speed benchmark: simulated packets per wall-clock second against a bare simpy loop,
and the wall time and stability of a default run.

The reference is the cheapest useful simpy program: a producer that waits a
timeout and puts an item in a Store, and a consumer that gets it. It is timed
in the same process, right before the model, so the ratio does not depend on
how fast the machine happens to be.

The widget latency of the book's explorers is measured by the book kit
(``vsockmodel.bookkit.bench``), which the command line adds to this report.
"""

from __future__ import annotations

import json
import statistics
import time

import simpy

from ..sim.run import run
from ..sim.results import nearest_rank
from ..model.variants import VARIANTS

REPEATS = 5
SPREAD_SEEDS = 10    # runs per setting and length for the spread over random seeds
LONGER = 4           # the second length the spread is measured at, in default runs
TARGET_PCT = 1.0     # how long a run must be to land within 1 % (information)
TARGET_MS = 60       # the target: a default stream run's median wall time on a 2-core machine


def bare_simpy_items_per_s(items: int = 20000, repeats: int = REPEATS) -> float:
    def once():
        env = simpy.Environment()
        store = simpy.Store(env)

        def producer():
            for i in range(items):
                yield env.timeout(1.0)
                yield store.put(i)

        def consumer():
            for _ in range(items):
                yield store.get()

        env.process(producer())
        env.process(consumer())
        env.run()

    return items / _best_time(once, repeats)


def _best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def model_packets_per_s(variant: str, payload: int, repeats: int = REPEATS) -> tuple[float, int]:
    result = {}

    def once():
        result["r"] = run(variant=variant, payload=payload)

    t = _best_time(once, repeats)
    return result["r"].packets / t, result["r"].packets


def stability(variant: str = "baseline", payload: int = 4096, repeats: int = SPREAD_SEEDS) -> dict:
    """Wall time of a default run, its throughput against a run ten times longer,
    and how long a run must be to land within 1 % of the long-run value 19 times in 20.

    The default runs use random seeds 1 to ``repeats``: the first is compared
    with the long run (same seed). Their spread (the standard deviation, in per
    cent of the mean) is measured at the default length and at ``LONGER`` times
    it; ``length_for_target`` turns the two into the length needed.
    """
    if repeats < 2:
        raise ValueError(f"repeats: {repeats} is out of range; allowed at least 2 (a spread needs two runs)")
    times, runs = [], []
    for seed in range(1, repeats + 1):
        t0 = time.perf_counter()
        runs.append(run(variant=variant, payload=payload, seed=seed))
        times.append(time.perf_counter() - t0)
    short = runs[0]
    transfer = short.params["transfer"]
    long = run(variant=variant, payload=payload, seed=1, transfer=10 * transfer)
    longer = [run(variant=variant, payload=payload, seed=seed, transfer=LONGER * transfer)
              for seed in range(1, repeats + 1)]
    spread, spread_longer = _spread_pct(runs), _spread_pct(longer)
    needed = length_for_target(spread, spread_longer)
    return {"variant": variant, "payload": payload, "packets": short.packets,
            "wall_ms_median": 1000 * statistics.median(times), "wall_ms_best": 1000 * min(times),
            "throughput_gbps": short.throughput_gbps, "throughput_10x_gbps": long.throughput_gbps,
            "difference_pct": 100 * (short.throughput_gbps / long.throughput_gbps - 1),
            "seeds": len(runs), "seed_sd_pct": spread, "longer": LONGER,
            "seed_sd_longer_pct": spread_longer,
            "length_for_1pct": needed, "wall_ms_for_1pct": needed * 1000 * statistics.median(times)}


def length_for_target(spread: float, spread_longer: float) -> float:
    """The run length, in default runs, for 19 in 20 runs within TARGET_PCT:
    1.96 spreads <= TARGET_PCT, with the spread falling as 1/sqrt(length).

    A short run's start and end (the warm-up, the last partial credit cycle)
    weigh more, so from 1x to LONGER x the spread falls faster than that: from
    the default runs the estimate is too long (at p1-p5 4 KiB about 2.5 times),
    from the longer ones too short below LONGER x. So: the default when it is
    enough; beyond LONGER x, the longer runs' estimate; in between, the default
    runs' estimate, at most LONGER x.
    """
    from_default = (1.96 * spread / TARGET_PCT) ** 2
    from_longer = LONGER * (1.96 * spread_longer / TARGET_PCT) ** 2
    if from_default <= 1:
        return 1.0
    if from_longer > LONGER:
        return from_longer
    return min(from_default, LONGER)


def _spread_pct(runs) -> float:
    gbps = [r.throughput_gbps for r in runs]
    return 100 * statistics.stdev(gbps) / statistics.mean(gbps)


def measure(quick: bool = False) -> dict:
    repeats = 2 if quick else REPEATS
    bare = bare_simpy_items_per_s(repeats=repeats)
    rows = []
    for variant in VARIANTS:
        for payload in (64, 65536):
            rate, packets = model_packets_per_s(variant, payload, repeats)
            rows.append({"variant": variant, "payload": payload, "packets": packets,
                         "packets_per_s": rate, "ratio": rate / bare})
    seeds = 3 if quick else SPREAD_SEEDS
    stable = [stability(v, p, seeds) for v in ("baseline", "p1-p5") for p in (64, 4096, 65536)]
    return {"bare_simpy_items_per_s": bare, "model": rows, "stability": stable}


def report(m: dict) -> None:
    """Print what measure() returned."""
    print(f"bare simpy loop (timeout + Store put/get per item): {m['bare_simpy_items_per_s']:,.0f} items/s\n")
    print(f"{'variant':<9} {'payload':>7}  {'packets/s':>11}  ratio to bare loop")
    for r in m["model"]:
        print(f"{r['variant']:<9} {r['payload']:>7}  {r['packets_per_s']:>11,.0f}  {r['ratio']:.2f}")
    print("\nDefault stream run: wall time, throughput against a run 10x longer (random seed 1),\n"
          "and the spread of default runs over random seeds (standard deviation)")
    for s in m["stability"]:
        print(f"  {s['variant']:<9} {s['payload']:>6} B  {s['packets']:>5} packets  "
              f"{s['wall_ms_median']:6.1f} ms (best {s['wall_ms_best']:.1f})  "
              f"{s['throughput_gbps']:.3f} vs {s['throughput_10x_gbps']:.3f} Gbit/s "
              f"({s['difference_pct']:+.2f} %)  spread {s['seed_sd_pct']:.2f} % over {s['seeds']} seeds")
    print(f"  Run length for 19 in 20 runs within 1 % (spread x 1.96 <= 1 %, the spread falling as "
          f"1/sqrt(length);\n  beyond {LONGER}x the default, from the spread of runs {LONGER}x "
          f"the default):")
    for s in m["stability"]:
        print(f"  {s['variant']:<9} {s['payload']:>6} B  spread {s['seed_sd_longer_pct']:.2f} % at "
              f"{s['longer']}x  ->  {s['length_for_1pct']:5.1f} x the default, "
              f"about {s['wall_ms_for_1pct']:.0f} ms")
    met = sum(s["wall_ms_median"] <= TARGET_MS for s in m["stability"])
    print(f"  Default runs with a median of at most {TARGET_MS} ms (the target): "
          f"{met} of {len(m['stability'])} settings")
