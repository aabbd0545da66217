"""Which story fits the measurements: the mechanisms the sources leave open, as named
hypotheses, each fitted as the protocol allows and scored on the measurements' fingerprints.

The kernel source fixes most of the receive path; what it cannot fix is how the
test bed's hardware and host priced a few things. Each is a switch of the
parameter schema (group "advanced", vsockmodel.model.schema):

- ``halt_poll_ns``: does KVM poll before it schedules a halted vCPU out (x86's
  default, 200 us) or not;
- ``ipi_virtualization``: does waking a halted vCPU cost the waker a VM exit;
- ``deep_cstates``: do long-idle host CPUs sleep deeply (and wake slowly);
- ``copy_model``: do the host's copies cost the same per byte at every size, or
  less for the part the caches hold.

A hypothesis is one setting of the switches. For each, the calibration runs
as for the default (vsockmodel.study.calibrate: CPU1 costs fitted to the
cycles tables, timing priors within their ranges to the absolute throughputs
of v1_all_fixed64k), and the fitted model is scored:

- in-sample, on the table it was fitted to: the error of each column, the
  gains' rank correlation and mean error, the 64 B and 4 KiB gains;
- on the fingerprints the measurements leave (FINGERPRINTS), some from the
  in-sample tables (F1-F3), some held out (F4-F6: the fixed-syscall tables,
  the recv() counts, the round-trip times).

The default hypothesis is chosen on the in-sample score only
(``choose``). ``python -m vsockmodel hypotheses`` runs the study (about 15
minutes on two cores) and writes ``study/data/hypotheses.json``, which chapter 6
shows; ``--only NAME`` rescores one hypothesis.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from importlib import resources

from ..model.costs import Costs
from ..model.params import make_params
from . import measurements, validate

DATA_FILE = "hypotheses.json"
# Each fitted hypothesis is scored on runs as long as the validation's, with as
# many seeds: the fit's own short runs (calibrate.TIMING_PACKETS) carry a
# start-up transient that a choice between close hypotheses must not rest on.
SEEDS = validate.SEEDS
PACKETS = validate.PACKETS
RTT_REQUESTS = validate.RTT_REQUESTS

# The switches of each hypothesis; the names say what they claim.
HYPOTHESES: dict[str, dict] = {
    "IPIv, no polling": dict(ipi_virtualization=True, halt_poll_ns=0),
    "IPI exits": dict(ipi_virtualization=False, halt_poll_ns=0),
    "halt polling": dict(ipi_virtualization=True, halt_poll_ns=200_000),
    "IPI exits + halt polling": dict(ipi_virtualization=False, halt_poll_ns=200_000),
}
COPY_MODELS = ("linear", "two-rate")
RTT_TABLES = ("v1_all_rtt", "v2_all_rtt", "v2_p1p3_rtt")


def all_hypotheses() -> dict[str, dict]:
    """Every hypothesis of the study: each wake-up story with each copy model."""
    out = {}
    for name, switches in HYPOTHESES.items():
        for copy in COPY_MODELS:
            out[f"{name}, {copy} copies"] = dict(switches, copy_model=copy, deep_cstates=True)
    return out


@dataclass(frozen=True)
class Fingerprint:
    key: str
    what: str
    measured: str
    in_sample: bool


FINGERPRINTS = (
    Fingerprint("F1", "CPU1 work does not set the pace: the patches cut the baseline's CPU1 cycles "
                      "per write by at most 15 % while time per write falls by 25 % or more (256 B-1 KiB)",
                "cycles -5 to -11 %, time -31 to -40 %", True),
    Fingerprint("F2", "64 B is slower than 256 B in the baseline (time per write)",
                "3.97 against 3.54 us", True),
    Fingerprint("F3", "at 4 KiB and above the baseline's penalty is per write: baseline minus patched "
                      "within 1.5-3.5 us per write at 4, 16 and 64 KiB",
                "2.2-2.7 us", True),
    Fingerprint("F4", "the fixed-syscall baseline is slower than fixed 64 KiB at 256 B-1 KiB, and not "
                      "slower at 64 B", "about +43 %; -7 % at 64 B", False),
    Fingerprint("F5", "recv() calls per 64 KiB write in the fixed-syscall test: 1.3-1.7 baseline, "
                      "at most 1.05 patched", "1.48 / 1.00", False),
    Fingerprint("F6", "ping-pong round trip: the patches change it by less than 3 %, and it lies "
                      "within what the two test beds measured, 120-227 us", "222-227 us, +0.0 to +1.1 %",
                False),
)


def rtt_range() -> tuple[float, float]:
    """The lowest and highest round trip of every RTT table (v1 and v2), us."""
    values = [r.value for name in RTT_TABLES for r in measurements.table(name, "rtt_us")]
    return min(values), max(values)


def _run(args) -> dict:
    """One seeded run (top level, for worker processes)."""
    from ..sim.run import simulate

    costs_dict, hypothesis, variant, payload, seed, kind = args
    kwargs = dict(hypothesis, variant=variant, payload=payload, seed=seed)
    if kind == "pingpong":
        kwargs.update(workload="pingpong", requests=RTT_REQUESTS)
    else:
        p, _ = make_params(variant=variant, payload=payload)
        kwargs["transfer"] = p.transfer_for(PACKETS)
        if kind == "matched":
            kwargs["recv_size"] = payload
    p, _ = make_params(**kwargs)
    r = simulate(p, Costs(**costs_dict))
    return {"us_per_write": payload * 8 / r.throughput_gbps / 1000 if r.throughput_gbps else math.inf,
            "cycles_per_write": (r.rx_cycles_per_byte or 0.0) * payload,
            "recv_per_write": r.recv_per_write, "rtt_us": r.rtt_us}


def measure(costs: Costs, hypothesis: dict, pool=None) -> dict:
    """What the scores need, averaged over SEEDS: {(kind, variant, payload): metrics}."""
    configs = [("fixed", v, pl) for v in ("baseline", "p1-p5") for pl in measurements.SERIES_PAYLOADS]
    configs += [("matched", v, pl) for v in ("baseline", "p1-p5") for pl in (64, 256, 512, 1024, 65536)]
    configs += [("pingpong", v, pl) for v in ("baseline", "p1-p5") for pl in measurements.RTT_PAYLOADS]
    tasks = [(costs.to_dict(), hypothesis, v, pl, s, kind) for kind, v, pl in configs for s in SEEDS]
    results = list(pool.map(_run, tasks)) if pool else [_run(t) for t in tasks]
    out, n = {}, len(SEEDS)
    for i, config in enumerate(configs):
        runs = results[i * n:(i + 1) * n]
        out[config] = {k: statistics.fmean(r[k] for r in runs if r[k] is not None)
                       for k in runs[0] if runs[0][k] is not None}
    return out


def _spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for rank, i in enumerate(order):
            r[i] = rank
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def score(m: dict) -> dict:
    """In-sample scores and fingerprints of one hypothesis's measured model."""
    table = "v1_all_fixed64k"
    meas_b = measurements.values(table, "baseline", "throughput_gbps")
    meas_p = measurements.values(table, "p1-p5", "throughput_gbps")
    payloads = sorted(meas_b)

    def us(pl, gbps):
        return pl * 8 / gbps / 1000

    err = {"baseline": [], "p1-p5": []}
    gains_meas, gains_model = [], []
    for pl in payloads:
        mb, mp = m[("fixed", "baseline", pl)]["us_per_write"], m[("fixed", "p1-p5", pl)]["us_per_write"]
        err["baseline"].append(us(pl, meas_b[pl]) / mb - 1)       # throughput error, relative
        err["p1-p5"].append(us(pl, meas_p[pl]) / mp - 1)
        gains_meas.append(100 * (meas_p[pl] / meas_b[pl] - 1))
        gains_model.append(100 * (mb / mp - 1))
    rms = {k: 100 * math.sqrt(statistics.fmean(e * e for e in v)) for k, v in err.items()}
    gain = dict(zip(payloads, gains_model))
    in_sample = {
        "rms_baseline_pct": rms["baseline"], "rms_patched_pct": rms["p1-p5"],
        "gains_rho": _spearman(gains_meas, gains_model),
        "gains_mae_pp": statistics.fmean(abs(a - b) for a, b in zip(gains_meas, gains_model)),
        "gain_64_pct": gain[64], "gain_4k_pct": gain[4096],
    }
    in_sample["targets_met"] = sum([
        rms["baseline"] <= 8, rms["p1-p5"] <= 8, in_sample["gains_rho"] >= 0.9,
        in_sample["gains_mae_pp"] <= 10, abs(gain[64] - 92.9) <= 15, abs(gain[4096] - 47.8) <= 15])

    def t(kind, v, pl):
        return m[(kind, v, pl)]["us_per_write"]

    small = (256, 512, 1024)
    dtime = statistics.fmean(t("fixed", "p1-p5", pl) / t("fixed", "baseline", pl) - 1 for pl in small)
    dcyc = statistics.fmean(m[("fixed", "p1-p5", pl)]["cycles_per_write"]
                            / m[("fixed", "baseline", pl)]["cycles_per_write"] - 1 for pl in small)
    penalty = [t("fixed", "baseline", pl) - t("fixed", "p1-p5", pl) for pl in (4096, 16384, 65536)]
    matched = [t("matched", "baseline", pl) / t("fixed", "baseline", pl) - 1 for pl in (256, 512, 1024)]
    m64 = t("matched", "baseline", 64) / t("fixed", "baseline", 64) - 1
    rpw = (m[("matched", "baseline", 65536)]["recv_per_write"], m[("matched", "p1-p5", 65536)]["recv_per_write"])
    rtts = [(m[("pingpong", "baseline", pl)]["rtt_us"], m[("pingpong", "p1-p5", pl)]["rtt_us"])
            for pl in measurements.RTT_PAYLOADS]
    rtt_change = max(abs(p / b - 1) for b, p in rtts)
    rtt_lo, rtt_hi = math.floor(rtt_range()[0]), math.ceil(rtt_range()[1])
    fingerprints = {
        "F1": {"value": f"cycles {100 * dcyc:+.0f} %, time {100 * dtime:+.0f} %",
               "pass": dcyc >= -0.15 and dtime <= -0.25},
        "F2": {"value": f"{t('fixed', 'baseline', 64):.2f} against {t('fixed', 'baseline', 256):.2f} us",
               "pass": t("fixed", "baseline", 64) > t("fixed", "baseline", 256)},
        "F3": {"value": " / ".join(f"{x:.1f}" for x in penalty) + " us",
               "pass": all(1.5 <= x <= 3.5 for x in penalty)},
        "F4": {"value": f"{100 * statistics.fmean(matched):+.0f} %; {100 * m64:+.0f} % at 64 B",
               "pass": all(x > 0.1 for x in matched) and m64 <= 0.0},
        "F5": {"value": f"{rpw[0]:.2f} / {rpw[1]:.2f}", "pass": 1.3 <= rpw[0] <= 1.7 and rpw[1] <= 1.05},
        "F6": {"value": f"{min(min(r) for r in rtts):.0f}-{max(max(r) for r in rtts):.0f} us, "
                        f"change up to {100 * rtt_change:.1f} %",
               "pass": rtt_change <= 0.03 and all(rtt_lo <= x <= rtt_hi for r in rtts for x in r)},
    }
    return {"in_sample": in_sample, "fingerprints": fingerprints}


def selected(names=None) -> dict:
    """The hypotheses named (all if none), checked before anything runs."""
    hyps = all_hypotheses()
    if not names:
        return hyps
    unknown = [n for n in names if n not in hyps]
    if unknown:
        raise ValueError(f"only: unknown hypothesis {unknown[0]!r}; one of: {', '.join(map(repr, hyps))}")
    return {k: v for k, v in hyps.items() if k in names}


def study(names=None, jobs: int = 2, progress=None) -> dict:
    """Fit and score every hypothesis (or those named). Returns the study's rows."""
    import contextlib
    from concurrent.futures import ProcessPoolExecutor

    from . import calibrate

    hyps = selected(names)
    rows = []
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        # Stage 1 (CPU1's costs against the cycles tables) once: the wake-up and
        # copy hypotheses change how long things take, not what CPU1 does.
        cycles = calibrate.fit_cycles(Costs(), pool=pool)
        base = Costs().with_(**cycles["costs"])
        for i, (name, switches) in enumerate(hyps.items()):
            if progress:
                progress(name, i, len(hyps))
            timing = calibrate.fit_timing(base, pool=pool, hypothesis=switches)
            costs = base.with_(**{k: v["value"] for k, v in timing["timing"].items()})
            scores = score(measure(costs, switches, pool))
            rows.append({"name": name, "switches": switches, "cycles_rms_pct": cycles["rms_pct"],
                         "timing": timing["timing"], **scores})
    return {"rows": rows, "chosen": choose(rows), "cycles": {"costs": cycles["costs"],
                                                             "scales": cycles["scales"],
                                                             "rms_pct": cycles["rms_pct"]}}


def choose(rows: list[dict]) -> str:
    """The default: the most in-sample targets met, then the smallest in-sample error.
    Held-out fingerprints play no part."""
    def key(row):
        s = row["in_sample"]
        return (-s["targets_met"], s["rms_baseline_pct"] + s["rms_patched_pct"] + s["gains_mae_pp"])
    return min(rows, key=key)["name"]


def load() -> dict:
    """The last study, as `python -m vsockmodel hypotheses` wrote it."""
    path = resources.files("vsockmodel.study").joinpath("data", DATA_FILE)
    name = f"vsockmodel/study/data/{DATA_FILE}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["rows"]
        chosen = data["chosen"]
    except FileNotFoundError:
        raise ValueError(f"{name}: missing; run `python -m vsockmodel hypotheses` to write it") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{name}: malformed ({exc}); run `python -m vsockmodel hypotheses`") from None
    if chosen not in {r["name"] for r in rows}:
        raise ValueError(f"{name}: the chosen hypothesis {chosen!r} is not among its rows")
    return data


def write(result: dict, path=None) -> str:
    target = path or resources.files("vsockmodel.study").joinpath("data", DATA_FILE)
    text = json.dumps(result, indent=1, sort_keys=False, default=float) + "\n"
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return str(target)


def table(data: dict) -> list[list[str]]:
    """The hypotheses table: which mechanism reproduces which fingerprint."""
    head = ["hypothesis", "in-sample targets", "rms base / patched", "gain 64 B / 4 KiB"] + \
           [f.key for f in FINGERPRINTS]
    out = [head]
    for r in data["rows"]:
        s = r["in_sample"]
        mark = " (default)" if r["name"] == data["chosen"] else ""
        out.append([r["name"] + mark, f"{s['targets_met']} of 6",
                    f"{s['rms_baseline_pct']:.0f} / {s['rms_patched_pct']:.0f} %",
                    f"{s['gain_64_pct']:+.0f} / {s['gain_4k_pct']:+.0f} %"] +
                   ["yes" if r["fingerprints"][f.key]["pass"] else "no" for f in FINGERPRINTS])
    return out
