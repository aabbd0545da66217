"""The benchmark's stability report (its numbers are timings: not asserted here)."""

import pytest

from vsockmodel.study import bench
from vsockmodel import run


def test_stability_compares_seed_one_with_a_run_ten_times_longer():
    s = bench.stability("p1-p5", 1024, repeats=3)
    short = run(variant="p1-p5", payload=1024, seed=1)
    long = run(variant="p1-p5", payload=1024, seed=1, transfer=10 * short.params["transfer"])
    assert s["throughput_gbps"] == short.throughput_gbps
    assert s["throughput_10x_gbps"] == long.throughput_gbps
    assert s["seeds"] == 3 and s["longer"] == bench.LONGER > 1
    assert s["seed_sd_pct"] > 0 and s["seed_sd_longer_pct"] > 0   # three seeds, three values
    assert s["length_for_1pct"] == bench.length_for_target(s["seed_sd_pct"], s["seed_sd_longer_pct"])


@pytest.mark.parametrize("spread,spread_longer,needed", [
    (0.5, 0.2, 1.0),              # 1.96 x 0.5 % <= 1 %: the default is enough
    (3.5, 1.4, 4 * (1.96 * 1.4) ** 2),   # beyond 4x: from the longer runs (p1-p5 4 KiB)
    (0.6, 0.2, (1.96 * 0.6) ** 2),       # between 1x and 4x: from the default runs
    (1.2, 0.2, 4.0),              # ... at most 4x, which the longer runs show is enough
])
def test_the_length_for_a_stable_run_takes_the_estimate_that_holds_at_that_length(
        spread, spread_longer, needed):
    assert bench.LONGER == 4
    assert bench.length_for_target(spread, spread_longer) == pytest.approx(needed)


def test_stability_needs_two_runs_for_a_spread():
    with pytest.raises(ValueError, match="repeats: 1 is out of range"):
        bench.stability("p1-p5", 1024, repeats=1)
