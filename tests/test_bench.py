"""The benchmark's stability report (its numbers are timings: not asserted here)."""

import statistics

import pytest

from vsockmodel import bench, run


def test_stability_compares_seed_one_with_a_run_ten_times_longer_and_reports_the_spread():
    s = bench.stability("p1-p5", 1024, repeats=3)
    short = run(variant="p1-p5", payload=1024, seed=1)
    long = run(variant="p1-p5", payload=1024, seed=1, transfer=10 * short.params["transfer"])
    assert s["throughput_gbps"] == short.throughput_gbps
    assert s["throughput_10x_gbps"] == long.throughput_gbps
    assert s["difference_pct"] == pytest.approx(100 * (short.throughput_gbps / long.throughput_gbps - 1))
    def spread(length):
        gbps = [run(variant="p1-p5", payload=1024, seed=k,
                    transfer=length * short.params["transfer"]).throughput_gbps for k in (1, 2, 3)]
        return 100 * statistics.stdev(gbps) / statistics.mean(gbps)

    assert s["seeds"] == 3
    assert s["seed_sd_pct"] == pytest.approx(spread(1))
    assert s["longer"] == bench.LONGER > 1
    assert s["seed_sd_longer_pct"] == pytest.approx(spread(bench.LONGER))
    # 19 in 20 within 1 %: 1.96 spreads, shrinking as 1/sqrt(length) from the longer runs
    assert s["length_for_1pct"] == pytest.approx(
        max(1.0, bench.LONGER * (1.96 * s["seed_sd_longer_pct"]) ** 2))


def test_stability_needs_two_runs_for_a_spread():
    with pytest.raises(ValueError, match="repeats: 1 is out of range"):
        bench.stability("p1-p5", 1024, repeats=1)
