"""What the lab's Sweep adds to the API's points and figure: the loop that
reproduces the sweep at home, and, where the settings are the series' test
bed, how far the model's points are from the measured ones."""

from __future__ import annotations

from ..model.units import fmt_size
from . import api


def command(config, matched=False, config_b=None) -> dict:
    """A shell loop and a Python loop that print the sweep's points."""
    config = api._config(config)
    payloads = list(api.SWEEP_PAYLOADS)
    base = {k: v for k, v in config.items() if k not in ("transfer", "payload")}
    recv = ' --recv-size "$p"' if matched else ""
    recv_py = ", recv_size=payload" if matched else ""
    if config_b is None:
        shared = api.command(base)["cli"].replace("python -m vsockmodel run", "").strip()
        key = "rtt_us" if base.get("workload") == "pingpong" else "throughput_gbps"
        cli = (f"for p in {' '.join(map(str, payloads))}; do python -m vsockmodel run --payload \"$p\"{recv} "
               f"{shared}; done")
        kwargs = "".join(f", {k}={v!r}" for k, v in base.items())
        py = ("import vsockmodel\n"
              f"for payload in {payloads}:\n"
              f"    r = vsockmodel.run(payload=payload{recv_py}{kwargs})\n"
              f"    print(payload, r.{key})")
        return {"cli": cli, "python": py}
    b = {k: v for k, v in api._config(config_b).items() if k not in ("transfer", "payload", "seed")}
    side_a, side_b, common = api._sides(base, b)
    kwargs = "".join(f", {k}={v!r}" for k, v in common.items())
    py = ("import vsockmodel\n"
          f"for payload in {payloads}:\n"
          f"    a = vsockmodel.run(payload=payload{recv_py}{kwargs}, **{side_a!r})\n"
          f"    b = vsockmodel.run(payload=payload{recv_py}{kwargs}, **{side_b!r})\n"
          "    key = 'rtt_us' if a.params['workload'] == 'pingpong' else 'throughput_gbps'\n"
          "    print(payload, f'{100 * (getattr(b, key) / getattr(a, key) - 1):+.1f} %')")
    a_opts = " ".join(f"--a-set {k}={v}" for k, v in side_a.items() if k != "variant")
    b_opts = " ".join(f"--b-set {k}={v}" for k, v in side_b.items() if k != "variant")
    shared = api.command(common)["cli"].replace("python -m vsockmodel run", "").strip()
    parts = ["python -m vsockmodel compare --variants", side_a["variant"], side_b["variant"], a_opts, b_opts,
             '--replications 2 --payload "$p"' + recv, shared]
    cli = f"for p in {' '.join(map(str, payloads))}; do {' '.join(x for x in parts if x)}; done"
    return {"cli": cli, "python": py}


def apart(points, matched=False, config=None, config_b=None) -> str:
    """How far the model's points are from the series' measurements, where the
    settings are its test bed; "" elsewhere."""
    config = api._config(config or {})
    meas = api.measured(config, matched, None if config_b is None else api._config(config_b))
    model = {p["payload"]: p["value"] for p in points}
    out = []
    change = config_b is not None
    for source in sorted({m["source"] for m in meas}):
        rows = [m for m in meas if m["source"] == source and m["payload"] in model]
        if not rows:
            continue
        if change:
            gaps = [(model[m["payload"]] - m["value"], m) for m in rows]
            worst_gap, worst = max(gaps, key=lambda g: abs(g[0]))
            mean = sum(abs(g) for g, _ in gaps) / len(gaps)
            out.append(f"Against {source}: the model's change is {mean:.1f} points from the measured one on "
                       f"average over {len(rows)} payloads, {abs(worst_gap):.1f} at most (at "
                       f"{fmt_size(worst['payload'])}: model {model[worst['payload']]:+.1f} %, measured "
                       f"{worst['value']:+.1f} %).")
        else:
            ratios = [(100 * (model[m["payload"]] / m["value"] - 1), m) for m in rows if m["value"]]
            if not ratios:
                continue
            worst_pct, worst = max(ratios, key=lambda g: abs(g[0]))
            mean = sum(abs(r) for r, _ in ratios) / len(ratios)
            out.append(f"Against {source}: the model is {mean:.0f} % from the measured value on average over "
                       f"{len(ratios)} payloads, {abs(worst_pct):.0f} % at most (at {fmt_size(worst['payload'])}: "
                       f"model {model[worst['payload']]:.3g}, measured {worst['value']:.3g}).")
    return " ".join(out)


def summary(config, points, matched=False, config_b=None) -> str:
    """The sweep's reproducing commands and its distance from the measurements."""
    return api._json({"ok": True, "command": command(config, matched, config_b),
                      "apart": apart(points, matched, config, config_b)})
