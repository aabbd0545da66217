"""The calibration follows its protocol (cycles, then one throughput table) and is
deterministic; validation scores every table, grouped as the protocol says."""

import math
import statistics

import pytest
from scipy import stats

from vsockmodel.study import calibrate, measurements, validate
from vsockmodel.model.costs import Costs, default_costs, load_calibrated
from vsockmodel.sim.run import simulate
from vsockmodel.model.params import make_params

from model_support import only_costs


@pytest.fixture
def quick(monkeypatch):
    """Short runs: the same code paths in a few seconds."""
    monkeypatch.setattr(calibrate, "PACKETS_PER_RUN", 1500)
    monkeypatch.setattr(calibrate, "SEEDS", (11,))
    monkeypatch.setattr(calibrate, "TIMING_PACKETS", 600)
    monkeypatch.setattr(calibrate, "TIMING_SEEDS", (21,))


def test_calibration_is_deterministic(quick):
    a = calibrate.fit(Costs(), iterations=1, timing_evaluations=4, jobs=1)
    b = calibrate.fit(Costs(), iterations=1, timing_evaluations=4, jobs=1)
    assert a["scales"] == b["scales"] and a["costs"] == b["costs"] and a["timing"] == b["timing"]
    assert math.isfinite(a["rms_pct"])


def test_the_fit_reads_no_held_out_table(quick, monkeypatch):
    # The protocol: the cycles tables and v1_all_fixed64k's throughputs, nothing else.
    read = set()
    for name in ("values", "change", "table"):
        original = getattr(measurements, name)

        def spy(table, *a, _original=original, **k):
            read.add(table)
            return _original(table, *a, **k)

        monkeypatch.setattr(measurements, name, spy)
    result = calibrate.fit(Costs(), iterations=1, timing_evaluations=3, jobs=1)
    assert read == set(calibrate.CYCLES_TABLES) | {calibrate.THROUGHPUT_TABLE}
    assert {r["table"] for r in result["timing_fit"]["rows"]} == {"v1_all_fixed64k"}
    assert len(result["timing_fit"]["rows"]) == 16          # both columns, 8 payloads


def test_calibration_fits_the_cycles_tables_then_one_throughput_table():
    rows = calibrate.rows()
    assert {r["table"] for r in rows} == {"v1_all_cycles", "v1_p1p3_cycles", "v1_p4p5_cycles"}
    assert len(rows) == 48
    assert calibrate.THROUGHPUT_TABLE == validate.IN_SAMPLE
    # every timing prior has a range, and the shipped fit landed inside it (or says so)
    import json
    from importlib import resources
    doc = json.loads(resources.files("vsockmodel.model").joinpath("data", "costs.json").read_text())
    for name, (lo, hi) in calibrate.TIMING.items():
        t = doc["timing"][name]
        assert lo <= t["value"] <= hi and (t["low"], t["high"]) == (lo, hi)
        assert t["at_bound"] == (min(t["value"] - lo, hi - t["value"]) <= 0.01 * (hi - lo))


def test_shipped_calibration_is_applied_and_refits_the_cycles():
    fitted = load_calibrated()
    # the cycles groups and the timing priors of the default hypothesis, no others
    cycles = {n for names in calibrate.GROUPS.values() for n in names}
    assert set(fitted) == cycles | set(calibrate.timing_priors())
    assert set(fitted) <= set(calibrate.fitted_names())
    costs = default_costs()
    for name, value in fitted.items():
        assert getattr(costs, name) == pytest.approx(value)
    import json
    from importlib import resources
    doc = json.loads(resources.files("vsockmodel.model").joinpath("data", "costs.json").read_text())
    # Without a per-byte CPU1 cost (rx_work never touches the payload) the cycles of
    # the largest patched writes sit about 20 % below the tables: a stated miss
    # (chapter 6), bounded here so that it cannot grow unseen.
    assert doc["rms_pct"] <= 12.0
    assert all(abs(r["error_pct"]) < 25 for r in doc["rows"])


def test_the_current_model_reproduces_the_fitted_cycles():
    # Not the stored fit: the model as it is now, with the shipped costs, in
    # short runs (one seed, about 4000 packets) against every cycles/B row.
    costs = default_costs()
    model: dict = {}
    errors = []
    for row in calibrate.rows():
        key = (row["variant"], row["payload"])
        if key not in model:
            p, _ = make_params(variant=key[0], payload=key[1], seed=11)
            p, _ = make_params(variant=key[0], payload=key[1], seed=11, transfer=p.transfer_for(4000))
            ops = simulate(p, costs).worker_ops
            model[key] = ops["busy_ns"] * costs.clock_ghz / ops["payload_bytes"]
        errors.append(model[key] / row["measured"] - 1)
    assert len(errors) == 48
    assert 100 * math.sqrt(statistics.fmean(e * e for e in errors)) < 12.5
    assert max(abs(e) for e in errors) < 0.25


def test_validation_scores_every_table_with_its_receiver():
    pred = validate.predict(seeds=(1,), jobs=1, packets=1500)
    report = validate.score(pred)
    assert set(report["throughput"]) == set(validate.THROUGHPUT)
    for table, t in report["throughput"].items():
        assert len(t["rows"]) == 8 and math.isfinite(t["mae_pp"])
        measured = measurements.change(table)
        assert [r["measured_pct"] for r in t["rows"]] == [measured[p][0] for p in validate.PAYLOADS]
    assert set(report["rtt"]) == set(validate.RTT)
    checks = {t["check"] for t in report["targets"]}
    assert "recv() per write, matched, 64 KiB, baseline" in checks and len(checks) == len(report["targets"])
    groups = {t["group"] for t in report["targets"]}
    assert groups == {"in-sample", "same test bed", "held out", "held out (v2)", "shape"}
    in_sample = [t for t in report["targets"] if t["group"] == "in-sample"]
    assert all("v1_all_fixed64k" in t["check"] for t in in_sample) and len(in_sample) == 6
    # fixed-syscall runs read with recv(write size): at <= 1 KiB exactly one call per write
    calls = report["recv_per_write"]["v1_all_fixedsyscall"]["baseline"]
    assert calls[64]["predicted"] == pytest.approx(1.0, abs=0.01)


def test_paired_change_ci_brackets_the_pairs_and_widens_with_their_spread():
    from vsockmodel.study.validate import paired_change_ci

    assert paired_change_ci([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) == pytest.approx((100.0, 100.0))
    lo, hi = paired_change_ci([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])
    assert lo < 100.0 < hi
    # Student's t on the mean log ratio, computed here independently
    a, b = [1.0, 1.1, 0.9], [2.0, 2.1, 1.9]
    d = [math.log(y / x) for x, y in zip(a, b)]
    half = stats.t.ppf(0.975, len(d) - 1) * statistics.stdev(d) / math.sqrt(len(d))
    mean = statistics.fmean(d)
    assert (lo, hi) == pytest.approx((100 * math.expm1(mean - half), 100 * math.expm1(mean + half)))
    lo2, hi2 = paired_change_ci([1.0, 1.3, 0.7], [2.0, 2.1, 1.9])
    assert hi2 - lo2 > hi - lo
    assert paired_change_ci([1.0], [1.5]) == pytest.approx((50.0, 50.0))


def test_each_table_is_scored_on_its_own_seeds():
    from vsockmodel.study import validate

    a, b = validate.Config("p1-p3", 1024, "fixedsyscall"), validate.Config("p1-p5", 1024, "fixedsyscall")
    seeds = tuple(range(1, 17))
    pred = {a: {"seeds": seeds, "per_seed": {"throughput_gbps": [1.0] * 16}},
            b: {"seeds": seeds, "per_seed": {"throughput_gbps": [1.1] * 4 + [1.3] * 12}}}
    # the P4-P5 table averages all sixteen seeds, a four-seed table only the first four
    xa, xb = validate._pair(pred, "v1_p4p5_fixedsyscall", a, b, "throughput_gbps")
    assert len(xa) == len(xb) == 16
    xa, xb = validate._pair(pred, "v1_all_fixedsyscall", a, b, "throughput_gbps")
    assert xb == [1.1] * 4
    # an explicit seed list overrides every table's default
    assert validate.table_seeds("v1_p4p5_fixedsyscall", seeds=(7,)) == (7,)
    assert validate.table_seeds("v1_all_fixed64k") == validate.SEEDS


def test_a_64k_write_read_by_write_size_reuses_the_fixed_64k_run(monkeypatch):
    # recv(64 KiB) is both receivers at 64 KiB: validate runs it once and gives
    # both configurations the same values; every other configuration runs.
    ran = []
    real = validate._run_one
    monkeypatch.setattr(validate, "_run_one", lambda task: ran.append(task[0]) or real(task))
    pred = validate.predict(seeds=(1,), jobs=1, packets=300,
                            tables=("v1_all_fixed64k", "v1_all_fixedsyscall"))
    for v in ("baseline", "p1-p5"):
        fixed, matched = (pred[validate.Config(v, 65536, r)] for r in ("fixed64k", "fixedsyscall"))
        assert fixed["per_seed"] == matched["per_seed"] and "recv_per_write" in matched["per_seed"]
    assert len(ran) == len(set(ran)) == 2 * (2 * len(validate.PAYLOADS) - 1)
    assert validate.Config("baseline", 65536, "fixedsyscall") not in ran


def test_validation_can_score_a_few_tables_and_refuses_unknown_ones():
    from vsockmodel.study import validate

    tables = ("v1_all_fixed64k",)
    pred = validate.predict(seeds=(1,), jobs=1, packets=600, tables=tables)
    assert {c.receiver for c in pred} == {"fixed64k"}
    report = validate.score(pred, tables=tables)
    assert list(report["throughput"]) == ["v1_all_fixed64k"] and report["targets"] == []
    with pytest.raises(ValueError, match="tables"):
        validate.predict(tables=("v9_nonsense",))


def test_cached_predictions_equal_fresh_ones_and_are_keyed_on_the_model(tmp_path, monkeypatch):
    from vsockmodel.study import cache, validate

    monkeypatch.setenv("VSOCKMODEL_CACHE", str(tmp_path))
    args = dict(seeds=(1,), jobs=1, packets=600, tables=("v1_all_fixed64k",))
    first = validate.predict_cached(**args)
    assert first == validate.predict(**args)
    assert any(tmp_path.rglob("*.pkl")), "nothing was stored"
    assert validate.predict_cached(**args) == first
    # a different model (here: a different digest) is a different key
    monkeypatch.setattr(cache, "model_digest", lambda: "another model")
    calls = []
    monkeypatch.setattr(validate, "predict", lambda *a, **k: calls.append(1) or first)
    validate.predict_cached(**args)
    assert calls == [1]


@pytest.mark.parametrize("variant", ["baseline", "p1-p3", "p1-p5"])
@pytest.mark.parametrize("payload", [64, 256, 4096, 65536])
def test_the_calibrations_operation_counts_add_up_to_the_workers_busy_time(variant, payload):
    # The fit is linear in the costs, with counts taken from a run (calibrate._counts).
    # Without noise, counts times costs must give the RX worker's busy time: a cost
    # the worker pays but the calibration does not count would bias every fit.
    from vsockmodel.sim.run import simulate
    from vsockmodel.model.params import make_params

    transfer = make_params(variant=variant, payload=payload)[0].transfer_for(2000)
    p, costs = make_params(variant=variant, payload=payload, transfer=transfer)
    costs = costs.with_(jitter_cv=0.0)
    ops = simulate(p, costs).worker_ops
    counted = sum(n * getattr(costs, name) for name, n in calibrate._counts(variant, ops).items())
    # The run may end inside the last packet or refill (charged before the ring
    # has the buffers): allow one packet's work, a worker run and a ring's refill.
    one_packet = (sum(getattr(costs, n) for g in ("per_packet", "lookup_lock", "notify")
                      for n in calibrate.GROUPS[g])
                  + costs.irq_ns + costs.worker_run_ns + p.rx_ring_size * costs.rx_fill_buf_ns)
    assert counted == pytest.approx(ops["busy_ns"], abs=one_packet)
    assert ops["packets"] >= 1000                 # many packets: a missed cost adds up


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 256), ("p1-p3", 4096)])
def test_each_cpu1_cost_is_counted_as_often_as_it_is_paid(variant, payload):
    # One cost at a time, all other CPU costs 0: CPU1's busy time is that cost
    # times calibrate._counts' count of it, give or take the run's ends (two
    # charges: a kworker asleep at the end, the closing OP_SHUTDOWN's packet;
    # a ring's worth for a refill the run ended inside).
    keep_moving = dict(vcpu_wake_short_ns=5000.0, vcpu_wake_long_ns=30000.0,
                       host_wake_latency_ns=3000.0, host_to_guest_latency_ns=4000.0,
                       host_send_ns=1000.0, recv_syscall_ns=500.0, vhost_pkt_ns=600.0)
    transfer = make_params(variant=variant, payload=payload)[0].transfer_for(1000)
    p, _ = make_params(variant=variant, payload=payload, transfer=transfer)
    names = [n for n in calibrate._counts(variant, simulate(p, default_costs()).worker_ops)]
    for name in names:
        ops = simulate(p, only_costs(**{**keep_moving, name: 1000.0})).worker_ops
        paid = ops["busy_ns"] / 1000.0
        counted = calibrate._counts(variant, ops)[name]
        slack = p.rx_ring_size if name == "rx_fill_buf_ns" else 2
        assert abs(paid - counted) <= slack, f"{name}: paid {paid:g} times, counted {counted:g}"
        assert counted > 0 or name in ("data_ready_flag_ns", "callback_lock_ns", "tail_copy_byte_ns",
                                       "tail_free_ns", "wakeup_ns"), name


def test_the_costs_marked_fitted_are_the_ones_the_calibration_fits():
    marked = {d["name"] for d in Costs.describe() if d["origin"] == "fitted"}
    assert marked == {n for names in calibrate.GROUPS.values() for n in names}
    timing = {d["name"] for d in Costs.describe() if d["origin"] == "fitted: throughput"}
    assert timing == set(calibrate.TIMING)


def test_the_book_names_every_fitted_group_and_prior():
    from vsockmodel.bookkit import measuring
    assert set(measuring.GROUP_MEANING) == set(calibrate.GROUPS)
    assert set(measuring.TIMING_MEANING) == set(calibrate.fitted_names()) - {
        n for names in calibrate.GROUPS.values() for n in names}
