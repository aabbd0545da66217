"""The hypotheses study (vsockmodel.study.hypotheses): its scores, its choice and
what the model ships with."""

from __future__ import annotations

import copy

import pytest

from vsockmodel.model.schema import BY_NAME
from vsockmodel.study import hypotheses, measurements


def _us(payload, gbps):
    return payload * 8 / gbps / 1000


def measured_as_model() -> dict:
    """What hypotheses.measure returns, filled with the series' own measurements
    (v1 cover letter): a model that equals them."""
    m = {}
    writes = {r["payload"]: r["writes"] for r in measurements.testbed() if r["source"] == "003"}
    for v in ("baseline", "p1-p5"):
        fixed = measurements.values("v1_all_fixed64k", v, "throughput_gbps")
        cycles = measurements.values("v1_all_cycles", v, "cycles_per_byte")
        matched = measurements.values("v1_all_fixedsyscall", v, "throughput_gbps")
        calls = measurements.values("v1_all_fixedsyscall", v, "recv_calls")
        rtt = measurements.values("v1_all_rtt", v, "rtt_us")
        for p in measurements.SERIES_PAYLOADS:
            m[("fixed", v, p)] = {"us_per_write": _us(p, fixed[p]), "cycles_per_write": cycles[p] * p}
        for p in (64, 256, 512, 1024, 65536):
            m[("matched", v, p)] = {"us_per_write": _us(p, matched[p]), "recv_per_write": calls[p] / writes[p]}
        for p in measurements.RTT_PAYLOADS:
            m[("pingpong", v, p)] = {"rtt_us": rtt[p]}
    return m


def test_the_measurements_themselves_meet_every_target_and_fingerprint():
    got = hypotheses.score(measured_as_model())
    assert got["in_sample"]["targets_met"] == 6
    assert got["in_sample"]["gains_rho"] == pytest.approx(1.0)
    failing = [k for k, f in got["fingerprints"].items() if not f["pass"]]
    assert failing == [], f"the measurements fail their own fingerprints {failing}"


@pytest.mark.parametrize("key, change", [
    ("F2", lambda m: m[("fixed", "baseline", 64)].update(us_per_write=3.0)),         # 64 B now faster
    ("F5", lambda m: m[("matched", "baseline", 65536)].update(recv_per_write=2.3)),  # the model's count
    ("F6", lambda m: m[("pingpong", "p1-p5", 256)].update(rtt_us=40.0)),            # the model's RTT
])
def test_a_model_that_departs_from_a_fingerprint_fails_it(key, change):
    m = copy.deepcopy(measured_as_model())
    change(m)
    assert not hypotheses.score(m)["fingerprints"][key]["pass"]


def test_the_choice_reads_the_in_sample_scores_only():
    data = hypotheses.load()
    assert hypotheses.choose(data["rows"]) == data["chosen"]
    flipped = copy.deepcopy(data["rows"])
    for row in flipped:                        # every held-out verdict reversed
        for f in hypotheses.FINGERPRINTS:
            if not f.in_sample:
                row["fingerprints"][f.key]["pass"] = not row["fingerprints"][f.key]["pass"]
    assert hypotheses.choose(flipped) == data["chosen"]


def test_the_model_ships_with_the_chosen_hypothesis():
    data = hypotheses.load()
    chosen = next(r for r in data["rows"] if r["name"] == data["chosen"])
    assert {k: BY_NAME[k].default for k in chosen["switches"]} == chosen["switches"]


def test_the_study_covers_every_hypothesis_and_the_table_marks_the_default():
    data = hypotheses.load()
    assert [r["name"] for r in data["rows"]] == list(hypotheses.all_hypotheses())
    table = hypotheses.table(data)
    assert len(table) == 1 + len(data["rows"])
    marked = [row[0] for row in table[1:] if row[0].endswith("(default)")]
    assert marked == [f"{data['chosen']} (default)"]
    for row in data["rows"]:            # each fitted prior is reported with its bound
        for name, t in row["timing"].items():
            assert t["low"] <= t["value"] <= t["high"], name
