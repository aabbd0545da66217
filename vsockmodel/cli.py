"""Command line: ``python -m vsockmodel {run,compare,starvation,bench,calibrate,validate}``.

In the style of the OSTEP homework simulators: every run is seeded, echoes its
arguments first, and can hide its answers (``--quiz``) until asked (``-c``).
Parameter names match the Python API (``--recv-size`` is ``recv_size``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import fields

from .model import kernel
from .model.params import BATCH_KNOBS, WORKLOADS, Params, fmt_size, make_params
from .model.variants import VARIANTS


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """--help lists each option's default (except where it has none)."""

    def _get_help_string(self, action):
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _int_arg(text: str):
    """An integer option: its int, or the text as given, so that the model's
    validation names the parameter and its range ("batch_pkts: expected an
    integer in [1, 4096] ...") instead of argparse's bare "invalid int value"."""
    try:
        return int(text)
    except ValueError:
        return text


def _float_arg(text: str):
    """A number option, passed on like _int_arg's when it does not parse."""
    try:
        return float(text)
    except ValueError:
        return text


def _bool_flag(p, name, help_on, default=None):
    dest = name.replace("-", "_")
    p.add_argument(f"--{name}", dest=dest, action="store_true", default=default, help=help_on)
    p.add_argument(f"--no-{name}", dest=dest, action="store_false", help=argparse.SUPPRESS)


def _add_model_args(p, variant: bool = True):
    d = Params()
    if variant:
        p.add_argument("--variant", default=d.variant, help=f"one of: {', '.join(VARIANTS)}")
    p.add_argument("--workload", default=d.workload, help=f"one of: {', '.join(WORKLOADS)}")
    p.add_argument("--payload", default=str(d.payload), help="bytes per host send(), e.g. 64, 4K, 64K; 1 B to 64 MiB")
    p.add_argument("--recv-size", default=str(d.recv_size), help="bytes per guest recv(); 1 B to 64 MiB")
    p.add_argument("--buffer", default=str(d.buffer), help="SO_VM_SOCKETS_BUFFER_SIZE (buf_alloc); 128 B to 64 MiB")
    p.add_argument("--transfer", default=None, help="stream: total bytes, rounded up to whole writes (default: sized for a stable result)")
    p.add_argument("--requests", type=_int_arg, default=d.requests, help="pingpong: round trips")
    p.add_argument("--rx-buf-payload", default=None,
                   help="payload bytes per guest RX buffer (default: the variant's kernel)")
    p.add_argument("--batch-pkts", type=_int_arg, default=d.batch_pkts,
                   help="lock batch limit, packets (p1-p3 and p1-p5 only)")
    p.add_argument("--batch-bytes", default=str(d.batch_bytes),
                   help="lock batch limit, bytes (p1-p3 and p1-p5 only)")
    _bool_flag(p, "headroom-check", "keep the metadata-headroom check (default on for p1-p3/p1-p5; "
               "--no-headroom-check: batch without it, the regression the v1 review argues against)")
    _bool_flag(p, "vhost-used-batch", "publish used buffers with one vhost_add_used_n per run", False)
    _bool_flag(p, "host-lock", "vhost must wait for the host socket's lock, which the sender "
               "owns for each whole send() (the worst case for vhost; default off)", False)
    p.add_argument("--rx-ring-size", type=_int_arg, default=d.rx_ring_size,
                   help="guest RX virtqueue entries, a power of two (QEMU's vhost-vsock: 128)")
    p.add_argument("--rcvlowat", default=str(d.rcvlowat), help="SO_RCVLOWAT, bytes (e.g. 1, 4K)")
    p.add_argument("-s", "--seed", type=_int_arg, default=d.seed, help="random seed")


def _model_kwargs(a) -> dict:
    """The model's parameters from the parsed arguments: every Params field that
    has an option of the same name (``compare`` has no --variant)."""
    return {f.name: getattr(a, f.name) for f in fields(Params) if f.name in a}


def _applicable(params: dict) -> dict:
    """A run's settings as the echo shows them: the lock-batch knobs as "-" on
    a variant that locks per packet, where they do nothing."""
    if VARIANTS[params["variant"]].batch:
        return params
    return params | {k: "-" for k in BATCH_KNOBS}


def _echo_args(params: dict) -> None:
    for k, v in params.items():
        if k in ("trace",):
            continue
        print(f"ARG {k} {v}")
    print()


def cmd_run(a) -> int:
    from .sim.run import run

    p, _ = make_params(**_model_kwargs(a))   # validate before printing anything
    if a.replications is not None:
        return _run_replicated(a, p)
    if a.jobs is not None:
        raise ValueError("jobs: only used with --replications (worker processes for the seeds)")
    if a.json:
        r = run(**_model_kwargs(a))
        print(json.dumps(r.to_dict(), indent=2, sort_keys=True))
        return 0
    _echo_args(_applicable(p.to_dict()))
    print(f"Each {fmt_size(p.payload)} send() becomes {p.packets_per_write} guest RX buffer(s) of up to "
          f"{p.buf_payload} B payload behind the {kernel.VIRTIO_VSOCK_HDR_SIZE} B header.")
    if a.quiz and not a.compute:
        print("\nQuestions: how many recv() calls per write? How many wake-ups are futile?"
              "\nWhat throughput, and how many guest CPU1 cycles per byte?"
              "\nRun again with -c to see the answers.")
        return 0
    r = run(**_model_kwargs(a))
    rows = [("throughput", f"{r.throughput_gbps:.3f} Gbit/s")]
    if r.rtt_us is not None:
        rows.append(("ping-pong RTT", f"{r.rtt_us:.1f} us (p95 {r.rtt_p95_us:.1f})"))
    rows += [
        ("guest CPU1 cycles per byte", "- (no byte received)" if r.rx_cycles_per_byte is None
         else f"{r.rx_cycles_per_byte:.3f}"),
        ("writes / packets / recv() calls", f"{r.writes} / {r.packets} / {r.recv_calls}"),
        ("recv() calls per write", f"{r.recv_per_write:.3f}"),
        ("bytes sent / received / dropped", f"{r.bytes_sent} / {r.bytes_received} / {r.bytes_dropped}"),
        ("resets", f"{r.resets} {r.reset_reason}".strip()),
        ("wake-ups (futile)", f"{r.wakeups} ({r.futile_wakeups})"),
        ("packets per lock hold (mean / max)", f"{r.batch_pkts['mean']:.1f} / {r.batch_pkts['max']}"),
        ("worker lock hold, mean / p95", "{mean:.2f} / {p95:.2f} us".format(**r.lock_hold_us["worker"])),
        ("reader lock wait, mean / p95", "{mean:.2f} / {p95:.2f} us".format(**r.lock_wait_us["reader"])),
        ("worker lock wait, mean / p95", "{mean:.2f} / {p95:.2f} us".format(**r.lock_wait_us["worker"])),
        ("RX worker CPU utilisation", f"{100 * r.utilization['worker']:.0f} %"),
        ("host sender busy / waits for credit",
         f"{100 * r.utilization['sender']:.0f} % / {r.counters['sender_blocked']}"),
        ("host_lock_waits (vhost slept on the lock)", f"{r.counters['host_lock_waits']}"),
        ("vhost asleep for want of guest RX buffers",
         f"{100 * r.vhost_no_rx_buf_share():.0f} % of the run"),
    ]
    width = max(len(k) for k, _ in rows)
    print("\nAnswers:" if a.quiz else "Results:")
    for k, v in rows:
        print(f"  {k:<{width}}  {v}")
    return 0


# metric -> (name, unit, decimals) in the tables of run --replications and compare
_METRIC_NAMES = {
    "throughput_gbps": ("throughput", "Gbit/s", 3),
    "rx_cycles_per_byte": ("guest CPU1 cycles per byte", "", 3),
    "recv_per_write": ("recv() calls per write", "", 3),
    "futile_wakeups": ("futile wake-ups", "", 0),
    "rtt_us": ("ping-pong RTT, mean", "us", 1),
    "rtt_p95_us": ("ping-pong RTT, p95", "us", 1),
}


def _fmt(metric: str, x: float) -> str:
    return f"{x:.{_METRIC_NAMES[metric][2]}f}"


def _run_replicated(a, p) -> int:
    """``run --replications N``: the mean of each metric over N seeds, with its 95 % interval."""
    from .study.replications import check_jobs, check_replications, cpu_jobs, replicate

    kwargs = _model_kwargs(a)
    check_jobs(a.jobs)
    if a.quiz and not a.compute and not a.json:
        check_replications(a.replications, kwargs)
        _echo_args(_applicable(p.to_dict()) | {"replications": a.replications})
        print(f"The same run with seeds {p.seed} to {p.seed + a.replications - 1}."
              "\n\nQuestions: how much does the throughput vary from seed to seed?"
              "\nHow wide is the 95 % interval of its mean? Run again with -c to see.")
        return 0
    reps = replicate(a.replications, jobs=a.jobs or cpu_jobs(), **kwargs)
    if a.json:
        print(json.dumps(reps.to_dict(), indent=2, sort_keys=True))
        return 0
    rows = []                    # first: a metric without a value is an error, before any output
    for m in reps.metrics:
        e = reps.estimate(m)
        name, unit, _ = _METRIC_NAMES[m]
        rows.append((name, f"{_fmt(m, e.mean)} [{_fmt(m, e.ci_low)}, {_fmt(m, e.ci_high)}] {unit}".rstrip(),
                     f"sd {100 * e.sd / e.mean:.1f} %" if e.mean else ""))
    _echo_args(_applicable(p.to_dict()) | {"replications": a.replications})
    print(f"{a.replications} runs, seeds {reps.seeds[0]} to {reps.seeds[-1]}; "
          "95 % intervals of the mean (Student's t).")
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    print("\nAnswers:" if a.quiz else "\nResults:")
    for k, v, sd in rows:
        print(f"  {k:<{width}}  {v:<{vwidth}}  {sd}")
    return 0


# Parameters ``compare --a-set/--b-set NAME=VALUE`` may set on one side, and their types.
_SETTABLE = {"variant": str, "payload": str, "recv_size": str, "buffer": str, "transfer": str,
             "rx_buf_payload": str, "batch_bytes": str, "batch_pkts": int, "rcvlowat": str,
             "requests": int, "headroom_check": bool, "vhost_used_batch": bool, "host_lock": bool,
             "rx_ring_size": int}


def _parse_sets(items, flag: str) -> dict:
    """``NAME=VALUE`` settings of one side of a comparison (sizes stay strings: '4K')."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in _SETTABLE:
            raise ValueError(f"{flag}: expected NAME=VALUE with NAME one of "
                             f"{', '.join(sorted(_SETTABLE))}; got {item!r}")
        kind, value = _SETTABLE[name], value.strip()
        if kind is bool:
            if value.lower() not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                raise ValueError(f"{flag}: {name} takes true or false; got {value!r}")
            out[name] = value.lower() in ("true", "on", "yes", "1")
        elif kind is int:
            try:
                out[name] = int(value)
            except ValueError:
                raise ValueError(f"{flag}: {name} takes an integer; got {value!r}") from None
        else:
            out[name] = value
    return out


def _echo_compare_args(side_a: dict, side_b: dict, kwargs: dict, replications: int) -> None:
    """The two sides, then every setting: one value if both sides run with it,
    ``A=... B=...`` if a side or its variant's defaults make them differ."""
    from .study.replications import side_label

    pa, pb = (_applicable(make_params(**(kwargs | side))[0].to_dict()) for side in (side_a, side_b))
    echo = {"A": side_label(side_a), "B": side_label(side_b)}
    for k, va in pa.items():
        if k != "variant":
            echo[k] = va if va == pb[k] else f"A={va} B={pb[k]}"
    _echo_args(echo | {"replications": replications})


def cmd_compare(a) -> int:
    """Two settings with the same seeds: the paired change and its interval."""
    from .study.replications import check_jobs, check_replications, compare, cpu_jobs, metrics_for

    kwargs = _model_kwargs(a)
    check_jobs(a.jobs)
    side_a = {"variant": a.variants[0], **_parse_sets(a.a_set, "--a-set")}
    side_b = {"variant": a.variants[1], **_parse_sets(a.b_set, "--b-set")}
    check_replications(a.replications, kwargs | side_a, kwargs | side_b,   # before printing anything
                       labels=("a", "b"))
    p, _ = make_params(**(kwargs | side_a))                     # seed and workload: both sides share them
    metric = metrics_for(p.workload)[0]
    if a.quiz and not a.compute and not a.json:
        _echo_compare_args(side_a, side_b, kwargs, a.replications)
        print(f"Each seed from {p.seed} to {p.seed + a.replications - 1} runs A and B: a pair.")
        print(f"\nQuestions: which of A and B has the higher {_METRIC_NAMES[metric][0]}, and by how much?"
              "\nIs the change larger than its 95 % interval, i.e. larger than the noise?"
              "\nRun again with -c to see.")
        return 0
    c = compare(side_a, side_b, replications=a.replications, jobs=a.jobs or cpu_jobs(), **kwargs)
    if a.json:
        print(json.dumps(c.to_dict(), indent=2, sort_keys=True))
        return 0
    _echo_compare_args(side_a, side_b, kwargs, a.replications)
    la, lb = c.a, c.b
    ca, cb = (la, lb) if max(len(la), len(lb)) <= 10 else ("A", "B")
    name, unit, _ = _METRIC_NAMES[metric]
    print(f"{name} ({unit}), one pair per seed:" if unit else f"{name}, one pair per seed:")
    print(f"  {'seed':>6}  {ca:>10}  {cb:>10}  {'change':>8}")
    for s, x, y in zip(c.seeds, c.values_a, c.values_b):
        print(f"  {s:>6}  {_fmt(metric, x):>10}  {_fmt(metric, y):>10}  {100 * (y / x - 1):+7.1f} %")
    lo, hi = c.change_ci
    ea, eb = c.runs_a.estimate(metric), c.runs_b.estimate(metric)
    print(f"  {'mean':>6}  {_fmt(metric, ea.mean):>10}  {_fmt(metric, eb.mean):>10}  {c.change_pct:+7.1f} %")
    print(f"\n{'Answer' if a.quiz else 'Change'}: {lb} vs {la}: {c.change_pct:+.1f} % "
          f"[{lo:+.1f} %, {hi:+.1f} %] (95 % CI from the paired log ratios)")
    return 0


def cmd_starvation(a) -> int:
    from .scenarios.starvation import starvation

    kwargs = dict(variant=a.variant, buffer=a.buffer, payload=a.payload,
                  headroom_check=a.headroom_check, reader_wake_ns=a.reader_wake_ns, seed=a.seed)
    r = starvation(**kwargs)
    if a.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    # The values the run used, as `run` echoes them ("1K" -> 1024; the check's default resolved).
    _echo_args({k: getattr(r, k, v) for k, v in kwargs.items()})
    if VARIANTS[r.variant].metadata_budget:
        slots = (f"queue_max = buffer / SKB_TRUESIZE(0) = {r.buffer} / {kernel.SKB_TRUESIZE_0} "
                 f"= {r.queue_max}")
    else:
        slots = f"{r.variant} has no metadata budget: only buf_used + len <= buffer ({r.buffer})"
    print(f"{slots}; two {r.payload} B packets of one flow arrive back to back; the reader is waiting.")
    if a.quiz and not a.compute:
        print("\nQuestion: is the connection reset with ENOBUFS? Run again with -c to see.")
        return 0
    print("\nInterleaving:")
    for t, actor, event in r.interleaving:
        print(f"  {t / 1000:9.3f} us  {actor:<7} {event}")
    verdict = f"RESET ({r.reason})" if r.reset else f"no reset: both packets received ({r.bytes_received} B)"
    print(f"\nAnswer: {verdict}")
    return 0


def cmd_bench(a) -> int:
    from .bookkit import bench as widget_bench
    from .study import bench

    m = bench.measure(a.quick)
    m["widget"] = widget_bench.widget_update_ms(10 if a.quick else 30)
    if a.json:
        print(json.dumps(m, indent=2))
        return 0
    bench.report(m)
    widget_bench.report(m["widget"])
    return 0


def _progress_bar(a, what: str, unit: str):
    """A progress bar on stderr: only on a terminal, never with --quiet."""
    from tqdm import tqdm

    return tqdm(desc=what, unit=unit, file=sys.stderr, leave=False,
                disable=True if a.quiet else None)   # None: off when stderr is not a tty


def cmd_calibrate(a) -> int:
    from .study import calibrate
    from .model.costs import Costs

    with _progress_bar(a, "calibrate", "config") as bar:
        def progress(it, i, n):
            bar.set_description(f"calibrate, iteration {it + 1}")
            bar.total = n
            bar.n = i
            bar.refresh()

        result = calibrate.fit(Costs(), progress=progress)
    path = None if a.dry_run else calibrate.write(result)
    if a.json:
        print(json.dumps({k: v for k, v in result.items() if k != "history"}, indent=2))
        return 0
    print("Fitted group scales (1 = the prior):")
    for g, v in result["scales"].items():
        print(f"  {g:<12} {v:6.3f}   ({', '.join(calibrate.GROUPS[g])})")
    print(f"\nCycles per byte refit over {len(result['rows'])} measurements: "
          f"rms error {result['rms_pct']:.2f} %")
    for r in result["rows"]:
        print(f"  {r['table']:<16} {r['state']:<9} {fmt_size(r['payload']):>7}  measured "
              f"{r['measured']:7.3f}  model {r['predicted']:7.3f}  ({r['error_pct']:+5.1f} %)")
    print("\nnot written (--dry-run)" if path is None else f"\nwrote {path}")
    return 0


def cmd_validate(a) -> int:
    from .study import validate
    from .study.replications import check_jobs

    check_jobs(a.jobs)
    with _progress_bar(a, "validate", "run") as bar:
        def progress(i, n):
            bar.total = n
            bar.n = i
            bar.refresh()

        report = validate.validate(jobs=a.jobs, progress=progress, host_lock=a.host_lock)
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        print(validate.format_report(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m vsockmodel",
                     description="A discrete-event model of the virtio-vsock guest RX path.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("run", help="run the stream or ping-pong workload", formatter_class=_Help)
    _add_model_args(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiz", action="store_true", help="print the set-up and questions only")
    p.add_argument("-c", "--compute", action="store_true", help="with --quiz: print the answers")
    p.add_argument("--replications", type=_int_arg, default=None,
                   help="run with this many consecutive seeds (2 to 64) and print each "
                        "metric's mean with its 95 %% interval")
    p.add_argument("--jobs", type=_int_arg, default=None, help="with --replications: worker processes "
                   "(default: all CPUs; the result does not depend on it)")
    p.set_defaults(func=cmd_run, prog=p.prog)

    p = sub.add_parser("compare", help="two variants or settings with the same seeds: the change "
                       "and its 95 %% CI", formatter_class=_Help)
    p.add_argument("--variants", nargs=2, metavar=("A", "B"), default=["baseline", "p1-p5"],
                   help=f"the two variants to compare (default: baseline p1-p5); one of: {', '.join(VARIANTS)}")
    _add_model_args(p, variant=False)
    p.add_argument("--a-set", action="append", metavar="NAME=VALUE",
                   help="a parameter only side A has, e.g. batch_pkts=1 (repeatable)")
    p.add_argument("--b-set", action="append", metavar="NAME=VALUE",
                   help="a parameter only side B has, e.g. vhost_used_batch=true (repeatable)")
    p.add_argument("--replications", type=_int_arg, default=8, help="seeds, one pair each (2 to 64; default 8)")
    p.add_argument("--jobs", type=_int_arg, default=None, help="worker processes (default: all CPUs)")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--quiz", action="store_true", help="print the set-up and questions only")
    p.add_argument("-c", "--compute", action="store_true", help="with --quiz: print the answers")
    p.set_defaults(func=cmd_compare, prog=p.prog)

    p = sub.add_parser("starvation", help="the v1 review's two-packet metadata-slot scenario",
                       formatter_class=_Help)
    p.add_argument("--variant", default="p1-p3", help=f"one of: {', '.join(VARIANTS)}")
    p.add_argument("--buffer", default="1K", help="SO_VM_SOCKETS_BUFFER_SIZE; 1K gives queue_max 1")
    p.add_argument("--payload", default="256", help="bytes in each of the two packets")
    _bool_flag(p, "headroom-check", "keep the metadata-headroom check (--no-headroom-check: batch without it, "
               "the regression the v1 review argues against)")
    p.add_argument("--reader-wake-ns", type=_float_arg, default=200.0,
                   help="reader wake-up latency in ns (default 200: a fast-waking reader)")
    p.add_argument("-s", "--seed", type=_int_arg, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiz", action="store_true")
    p.add_argument("-c", "--compute", action="store_true")
    p.set_defaults(func=cmd_starvation, prog=p.prog)

    p = sub.add_parser("calibrate", help="fit the RX worker's costs to the v1 CPU1 cycles/byte tables")
    p.add_argument("--json", action="store_true")
    p.add_argument("--dry-run", action="store_true", help="fit and print, but do not write costs.json")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_calibrate, prog=p.prog)

    p = sub.add_parser("validate", help="predicted vs measured gains for every measured table of the series")
    p.add_argument("--json", action="store_true")
    p.add_argument("--jobs", type=_int_arg, default=None, help="worker processes (default: all CPUs)")
    p.add_argument("-q", "--quiet", action="store_true")
    _bool_flag(p, "host-lock", "run the model with the host socket's lock (see run --help)", False)
    p.set_defaults(func=cmd_validate, prog=p.prog)

    p = sub.add_parser("bench", help="simulated packets per second vs a bare simpy loop")
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench, prog=p.prog)
    parser.commands = tuple(sub.choices)    # for main()'s error on an option before the command
    return parser


# Options whose value may be negative (then refused with the parameter's range):
# argparse would take "-4K" for an option and report a missing value instead.
_VALUE_OPTIONS = ("--payload", "--recv-size", "--buffer", "--transfer", "--rx-buf-payload",
                  "--batch-pkts", "--batch-bytes", "--rcvlowat", "--requests", "--rx-ring-size",
                  "-s", "--seed", "--replications", "--jobs", "--reader-wake-ns")


def _attach_negative_values(argv: list[str]) -> list[str]:
    """["--payload", "-4K"] -> ["--payload=-4K"], so that the value reaches validation."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in _VALUE_OPTIONS and len(nxt) > 1 and nxt[0] == "-" and (nxt[1].isdigit() or nxt[1] == "."):
            out.append(f"{arg}={nxt}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def main(argv=None) -> int:
    from .sim.errors import Deadlock, SimulationLimitExceeded

    parser = build_parser()
    argv = _attach_negative_values(list(sys.argv[1:] if argv is None else argv))
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        print(f"{parser.prog}: error: {argv[0]}: expected a command first, one of: "
              f"{', '.join(parser.commands)}", file=sys.stderr)
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra:                                       # reported by the subcommand, as its other errors
        print(f"{args.prog}: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    if getattr(args, "quiz", False) and getattr(args, "json", False) and not args.compute:
        print(f"{args.prog}: error: --quiz hides the answers and --json prints them; "
              f"use one or the other (or --quiz -c)", file=sys.stderr)
        return 2
    try:
        status = args.func(args)
        sys.stdout.flush()                          # a closed pipe shows up here, not at exit
        return status
    except ValueError as exc:                       # bad input: one line, like argparse
        print(f"{args.prog}: error: {exc}", file=sys.stderr)
        return 2
    except (SimulationLimitExceeded, Deadlock) as exc:   # a run that went wrong: one line
        print(f"{args.prog}: run stopped: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:                         # the output's reader left (`| head`)
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
