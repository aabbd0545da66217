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

from . import __version__
from .model import kernel
from .model.params import make_params
from .model.schema import BY_NAME, NAMES, PARAMETERS
from .model.units import fmt_size
from .model.variants import VARIANTS


# Exit statuses: 0 done; 1 a run stopped by its bounds; 2 bad input (one line on
# stderr, nothing run); 3 quiz --answer judged wrong; 130 interrupted.
WRONG_ANSWER = 3


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


class _Once(argparse.Action):
    """An option that may be given once: a second value for the same setting,
    ``--payload 4K --payload 8K`` or ``--headroom-check --no-headroom-check``,
    is refused naming both, instead of the last one silently winning."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", {})
        value = self.const if self.nargs == 0 else values
        text = " ".join(values) if isinstance(values, list) else values
        this = option_string + ("" if self.nargs == 0 else f" {text}")
        if self.dest in given:
            parser.error(f"{self.dest}: {given[self.dest]} and {this} both set it; give one")
        given[self.dest] = this
        setattr(namespace, self.dest, value)


def _add_model_args(p, skip: tuple[str, ...] = ()) -> None:
    """One option per parameter of the schema (vsockmodel.model.schema), with its
    help, range and default; values reach make_params as text, which validates them."""
    for prm in PARAMETERS:
        if prm.name in skip or prm.name == "trace":
            continue
        default = prm.default_text or ("" if prm.default is None else str(prm.default))
        where = (f" ({' and '.join(prm.applies.variants)} only)" if prm.applies.variants
                 else f" ({prm.applies.workload} only)" if prm.applies.workload else "")
        if prm.kind in ("bool", "tristate"):
            flags = (prm.cli_option, "--no-" + prm.cli_option[2:])
            p.add_argument(flags[0], dest=prm.name, action=_Once, nargs=0, const=True, default=None,
                           help=f"{prm.help}{where}; {flags[1]} to turn it off"
                                + (f" (default: {default})" if default else ""))
            p.add_argument(flags[1], dest=prm.name, action=_Once, nargs=0, const=False,
                           help=argparse.SUPPRESS)
            continue
        flags = (prm.cli_option,) + ((f"-{prm.short}",) if prm.short else ())
        allowed = prm.allowed() if prm.kind != "size" else prm.allowed() + ", e.g. 4K"
        p.add_argument(*flags, dest=prm.name, action=_Once, default=None,
                       metavar=prm.name.upper() if prm.kind != "choice" else "{" + ",".join(prm.choices) + "}",
                       help=f"{prm.help}{where}; {allowed} (default: {default})")


def _model_kwargs(a) -> dict:
    """The parameters given on the command line (the rest keep the schema's defaults)."""
    return {name: getattr(a, name) for name in NAMES if getattr(a, name, None) is not None}


def _echo(p) -> dict:
    """A run's settings as the echo shows them: those that apply to its variant
    and workload; the lock-batch knobs as "-" on a variant that locks per packet."""
    values = p.to_dict()
    shown = {}
    for prm in PARAMETERS:
        if prm.name == "trace" or (prm.applies.workload and prm.applies.workload != p.workload):
            continue
        shown[prm.name] = values[prm.name] if prm.applies.to(p.variant, p.workload) else "-"
    return shown


def _echo_args(params: dict) -> None:
    for k, v in params.items():
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
    _echo_args(_echo(p))
    print(f"Each {fmt_size(p.payload)} send() becomes {p.packets_per_write} guest RX buffer(s) of up to "
          f"{p.buf_payload} B payload behind the {kernel.VIRTIO_VSOCK_HDR_SIZE} B header.")
    if a.quiz and not a.compute:
        if p.workload == "pingpong":
            print("\nQuestions: what is the mean round-trip time, and its 95th percentile?"
                  "\nHow many guest CPU1 cycles per byte? How many wake-ups are futile?")
        else:
            print("\nQuestions: how many recv() calls per write? How many wake-ups are futile?"
                  "\nWhat throughput, and how many guest CPU1 cycles per byte?")
        print("Run again with -c to see the answers.")
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
    from .study.replications import check_jobs, check_replications, replicate, worker_count

    kwargs = _model_kwargs(a)
    jobs = check_jobs(a.jobs)
    [(_, configs)] = check_replications(a.replications, kwargs)     # before printing anything
    replications = len(configs)
    if a.quiz and not a.compute:
        _echo_args(_echo(p) | {"replications": replications})
        what = "round-trip time" if p.workload == "pingpong" else "throughput"
        print(f"The same run with seeds {p.seed} to {p.seed + replications - 1}."
              f"\n\nQuestions: how much does the {what} vary from seed to seed?"
              "\nHow wide is the 95 % interval of its mean? Run again with -c to see.")
        return 0
    reps = replicate(replications, jobs=worker_count(jobs, replications), **kwargs)
    if a.json:
        print(json.dumps(reps.to_dict(), indent=2, sort_keys=True))
        return 0
    rows = []
    for m in reps.metrics:
        name, unit, _ = _METRIC_NAMES[m]
        why = reps.undefined(m)
        if why:                  # a reset stream received nothing: no cycles per byte
            rows.append((name, "-", why))
            continue
        e = reps.estimate(m)
        rows.append((name, f"{_fmt(m, e.mean)} [{_fmt(m, e.ci_low)}, {_fmt(m, e.ci_high)}] {unit}".rstrip(),
                     f"sd {100 * e.sd / e.mean:.1f} %" if e.mean else ""))
    _echo_args(_echo(p) | {"replications": replications})
    print(f"{replications} runs, seeds {reps.seeds[0]} to {reps.seeds[-1]}; "
          "95 % intervals of the mean (Student's t).")
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    print("\nAnswers:" if a.quiz else "\nResults:")
    for k, v, sd in rows:
        print(f"  {k:<{width}}  {v:<{vwidth}}  {sd}")
    return 0


def _parse_sets(items, flag: str) -> dict:
    """``NAME=VALUE`` settings of one side of a comparison, read by the schema's
    rules (sizes stay text: '4K'); a name given twice is refused."""
    out: dict = {}
    settable = [n for n in NAMES if n not in ("workload", "seed", "trace")]
    for item in items or ():
        name, sep, value = item.partition("=")
        name, value = name.strip().replace("-", "_"), value.strip()
        if not sep or name not in settable:
            raise ValueError(f"{flag}: expected NAME=VALUE with NAME one of "
                             f"{', '.join(sorted(settable))}; got {item!r}")
        if name in out:
            raise ValueError(f"{flag}: {name} is set twice ({out[name]!s}, then {value}); give it once")
        if BY_NAME[name].kind in ("bool", "tristate"):
            words = {"true": True, "on": True, "yes": True, "1": True,
                     "false": False, "off": False, "no": False, "0": False}
            if value.lower() not in words:
                raise ValueError(f"{flag}: {name} takes true or false; got {value!r}")
            out[name] = words[value.lower()]
        else:
            out[name] = value
    return out


def _side_args(a) -> tuple[dict, dict]:
    """Side A's and side B's settings: a variant from --variants, and --a-set / --b-set."""
    given = getattr(a, "_given", {})
    sides = []
    for flag, items, variant in (("--a-set", a.a_set, a.variants[0]), ("--b-set", a.b_set, a.variants[1])):
        side = _parse_sets(items, flag)
        if "variant" in side and "variants" in given:
            raise ValueError(f"variant: {given['variants']} and {flag} variant={side['variant']} both "
                             f"set side {flag[2].upper()}'s variant; give one")
        sides.append({"variant": variant} | side)
    return sides[0], sides[1]


def _echo_compare_args(side_a: dict, side_b: dict, kwargs: dict, replications: int) -> None:
    """The two sides, then every setting: one value if both sides run with it,
    ``A=... B=...`` if a side or its variant's defaults make them differ."""
    from .study.replications import side_label

    pa, pb = (_echo(make_params(**(kwargs | side))[0]) for side in (side_a, side_b))
    echo = {"A": side_label(side_a), "B": side_label(side_b)}
    for k, va in pa.items():
        if k != "variant":
            echo[k] = va if va == pb[k] else f"A={va} B={pb[k]}"
    _echo_args(echo | {"replications": replications})


def cmd_compare(a) -> int:
    """Two settings with the same seeds: the paired change and its interval."""
    from .study.replications import check_jobs, check_replications, compare, metrics_for, worker_count

    kwargs = _model_kwargs(a)
    jobs = check_jobs(a.jobs)
    side_a, side_b = _side_args(a)
    checked = check_replications(a.replications, kwargs | side_a, kwargs | side_b,   # before printing anything
                                 labels=("a", "b"))
    replications = len(checked[0][1])                           # the option's text, read as a number
    p, _ = make_params(**(kwargs | side_a))                     # seed and workload: both sides share them
    metric = metrics_for(p.workload)[0]
    if a.quiz and not a.compute:
        _echo_compare_args(side_a, side_b, kwargs, replications)
        print(f"Each seed from {p.seed} to {p.seed + replications - 1} runs A and B: a pair.")
        print(f"\nQuestions: which of A and B has the higher {_METRIC_NAMES[metric][0]}, and by how much?"
              "\nIs the change larger than its 95 % interval, i.e. larger than the noise?"
              "\nRun again with -c to see.")
        return 0
    c = compare(side_a, side_b, replications=replications, jobs=worker_count(jobs, 2 * replications), **kwargs)
    if a.json:
        print(json.dumps(c.to_dict(), indent=2, sort_keys=True))
        return 0
    _echo_compare_args(side_a, side_b, kwargs, replications)
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

    names = ("variant", "buffer", "payload", "headroom_check", "reader_wake_ns", "seed")
    kwargs = {k: getattr(a, k) for k in names if getattr(a, k) is not None}
    r = starvation(**kwargs)
    if a.json:
        print(json.dumps(r.to_dict(), indent=2))
        return 0
    # The values the run used, as `run` echoes them ("1K" -> 1024; the check's default resolved).
    _echo_args({k: getattr(r, k) for k in names})
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


def _counts(p) -> str:
    """Which answers count as right."""
    return f" ({p.tolerance_text} counts as right)."


def cmd_quiz(a) -> int:
    """A seeded problem of a chapter; -c shows the answer, --answer checks one, --key lists many."""
    from .study import quiz

    if a.key is not None:
        if a.seed is not None or a.answer is not None or a.compute:
            raise ValueError("key: --key lists the answers for a range of seeds; give it without "
                             "--seed, --answer and -c")
        seeds = quiz.key_seeds(a.chapter, a.key)
        print(f"Answer key, chapter {a.chapter}, seeds {seeds[0]} to {seeds[-1]} "
              f"(a line as each problem is computed; Ctrl-C stops)", flush=True)
        for p in quiz.key(a.chapter, seeds):      # one problem at a time: the lines are the progress
            print(f"  seed {p.seed:>4}  {p.kind:<28} {p.answer_text:>22}  ({p.tolerance_text})", flush=True)
        return 0
    if a.seed is None:
        raise ValueError("seed: give the problem's seed, e.g. --seed 42 (or --key 1-30 for a key)")
    p = quiz.problem(a.chapter, a.seed)
    result = None if a.answer is None else quiz.check(p, a.answer)   # a bad answer: before printing
    print(f"Chapter {p.chapter}, problem {p.seed} ({p.kind})\n\n{p.question}\n")
    if result is not None:
        verdict = "Right" if result["correct"] else f"Not quite (hint: {p.hint})"
        print(f"{verdict}: the model says {p.answer_text}" + _counts(p) + f"\n{p.explanation}")
        print(f"The model's answer, seeds and all: {p.command}")
        return 0 if result["correct"] else WRONG_ANSWER
    if a.compute:
        print(f"Answer: {p.answer_text}" + _counts(p) + f"\n{p.explanation}")
        print(f"The model's answer, seeds and all: {p.command}")
    else:
        print("Run again with -c to see the answer, or --answer X to check yours.")
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
    from .model.costs import Costs
    from .study import calibrate

    from .study.replications import check_jobs, worker_count

    jobs = worker_count(check_jobs(a.jobs))
    with _progress_bar(a, "calibrate", "run") as bar:
        def progress(stage, i, n):
            bar.set_description(f"calibrate: {stage}")
            bar.total = n
            bar.n = i
            bar.refresh()

        result = calibrate.fit(Costs(), progress=progress, jobs=jobs)
    path = None if a.dry_run else calibrate.write(result)
    if a.json:
        print(json.dumps({k: v for k, v in result.items() if k != "history"}, indent=2))
        return 0
    print("Stage 1: RX worker cost groups fitted to the v1 guest CPU1 cycles per byte "
          "(scale 1 = the prior):")
    lo, hi = calibrate.SCALE_BOUNDS
    for g, v in result["scales"].items():
        bound = f"  AT A BOUND of [{lo:g}, {hi:g}]" if g in result["scales_at_bound"] else ""
        print(f"  {g:<12} {v:6.3f}   ({', '.join(calibrate.GROUPS[g])}){bound}")
    print(f"  cycles per byte over {len(result['rows'])} measurements: rms error {result['rms_pct']:.2f} %")
    tf = result["timing_fit"]
    print(f"\nStage 2: timing priors fitted to the absolute throughputs of {tf['table']} "
          f"({tf['evaluations']} evaluations):")
    for name, t in result["timing"].items():
        bound = "  AT A BOUND" if t["at_bound"] else ""
        print(f"  {name:<20} {t['value']:10.3f}   range [{t['low']:g}, {t['high']:g}]{bound}")
    cols = ", ".join(f"{s} {v:.1f} %" for s, v in tf["rms_pct_by_state"].items())
    print(f"  throughput rms error by column: {cols}")
    for r in tf["rows"]:
        print(f"  {r['state']:<9} {fmt_size(r['payload']):>7}  measured {r['measured']:7.3f}  "
              f"model {r['predicted']:7.3f} Gbit/s  ({r['error_pct']:+5.1f} %)")
    print("\nnot written (--dry-run)" if path is None else f"\nwrote {path}")
    return 0


def cmd_hypotheses(a) -> int:
    """Which story fits the measurements: the hypotheses table."""
    from .study import hypotheses
    from .study.replications import check_jobs, worker_count

    if a.show:
        data = hypotheses.load()
    else:
        jobs = worker_count(check_jobs(a.jobs))
        data = hypotheses.study(a.only, jobs=jobs,
                                progress=lambda name, i, n: print(f"[{i + 1}/{n}] {name}", file=sys.stderr))
        if not (a.only or a.dry_run):
            hypotheses.write(data)
    if a.json:
        print(json.dumps(data, indent=1))
        return 0
    rows = hypotheses.table(data)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    print()
    for f in hypotheses.FINGERPRINTS:
        where = "in-sample" if f.in_sample else "held out"
        print(f"{f.key} ({where}): {f.what}. Measured: {f.measured}.")
    print(f"\nThe default, chosen on the in-sample score only: {data['chosen']}.")
    return 0


def cmd_validate(a) -> int:
    from .study import validate
    from .study.replications import check_jobs, worker_count

    jobs = worker_count(check_jobs(a.jobs))
    with _progress_bar(a, "validate", "run") as bar:
        def progress(i, n):
            bar.total = n
            bar.n = i
            bar.refresh()

        report = validate.validate(jobs=jobs, progress=progress, host_lock=a.host_lock)
    if a.json:
        print(json.dumps(report, indent=2))
    else:
        print(validate.format_report(report))
    return 0


def _add_output_args(p, quiz: bool = True) -> None:
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    if quiz:
        p.add_argument("--quiz", action="store_true",
                       help="print the set-up and the questions only, not the answers")
        p.add_argument("-c", "--compute", action="store_true",
                       help="with --quiz: print the answers too")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m vsockmodel",
                     description="A discrete-event model of the virtio-vsock guest RX path.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("run", help="run the stream or ping-pong workload", formatter_class=_Help,
                       description="Run the model once (or once per seed with --replications).")
    _add_model_args(p)
    _add_output_args(p)
    p.add_argument("--replications", action=_Once, default=None, metavar="N",
                   help="run with this many consecutive seeds (2 to 64, as many as a call's work bound "
                        "allows) and print each "
                        "metric's mean with its 95 %% interval")
    p.add_argument("--jobs", action=_Once, default=None, metavar="N",
                   help="with --replications: worker processes (default: all CPUs; the result "
                        "does not depend on it)")
    p.set_defaults(func=cmd_run, prog=p.prog)

    p = sub.add_parser("compare", help="two variants or settings with the same seeds: the change "
                       "and its 95 %% CI", formatter_class=_Help,
                       description="Run two settings with the same seeds (pairs) and give the change "
                                   "with its 95 % interval.")
    p.add_argument("--variants", nargs=2, metavar=("A", "B"), action=_Once, default=["baseline", "p1-p5"],
                   help=f"the two variants to compare (default: baseline p1-p5); one of: {', '.join(VARIANTS)}")
    _add_model_args(p, skip=("variant",))
    p.add_argument("--a-set", action="append", metavar="NAME=VALUE",
                   help="a parameter only side A has, e.g. batch_pkts=1 (repeatable, once per name)")
    p.add_argument("--b-set", action="append", metavar="NAME=VALUE",
                   help="a parameter only side B has, e.g. vhost_used_batch=true (repeatable, once per name)")
    p.add_argument("--replications", action=_Once, default="8", metavar="N",
                   help="seeds, one pair each (2 to 64, as many as a call's work bound allows)")
    p.add_argument("--jobs", action=_Once, default=None, metavar="N",
                   help="worker processes (default: all CPUs; the result does not depend on it)")
    _add_output_args(p)
    p.set_defaults(func=cmd_compare, prog=p.prog)

    p = sub.add_parser("starvation", help="the v1 review's two-packet metadata-slot scenario",
                       formatter_class=_Help,
                       description="Two same-flow packets reach a receive queue with one metadata "
                                   "slot (seed review of v1 patch 3): is the stream reset?")
    p.add_argument("--variant", action=_Once, default=None, metavar="{" + ",".join(VARIANTS) + "}",
                   help="the kernel (default: p1-p3)")
    p.add_argument("--buffer", action=_Once, default=None, metavar="BUFFER",
                   help="SO_VM_SOCKETS_BUFFER_SIZE; 1K gives queue_max 1 (default: 1K)")
    p.add_argument("--payload", action=_Once, default=None, metavar="PAYLOAD",
                   help="bytes in each of the two packets (default: 256)")
    for flag, value in (("--headroom-check", True), ("--no-headroom-check", False)):
        p.add_argument(flag, dest="headroom_check", action=_Once, nargs=0, const=value, default=None,
                       help=BY_NAME["headroom_check"].help if value else argparse.SUPPRESS)
    p.add_argument("--reader-wake-ns", action=_Once, default=None, metavar="NS",
                   help="the reader's wake-up latency in ns, [0, 1e9] (default: 200, a fast-waking reader)")
    p.add_argument("-s", "--seed", action=_Once, default=None, metavar="SEED",
                   help=BY_NAME["seed"].help + " (default: 1)")
    _add_output_args(p)
    p.set_defaults(func=cmd_starvation, prog=p.prog)

    p = sub.add_parser("quiz", help="a seeded problem of a chapter, answered by the model",
                       description="A chapter and a seed pick a problem, OSTEP-homework style; the "
                                   "model computes its answer. The browser lab shows the same problem "
                                   "for the same seed.",
                       epilog=f"Exit status: 0, or {WRONG_ANSWER} when --answer is judged wrong; "
                              "2 for bad input (nothing printed but one line on stderr).")
    p.add_argument("--chapter", action=_Once, required=True, metavar="N", help="the chapter, 1 to 6")
    p.add_argument("-s", "--seed", action=_Once, default=None, metavar="SEED",
                   help="the problem's seed, 0 to 2147483647")
    p.add_argument("-c", "--compute", action="store_true", help="print the answer and the explanation")
    p.add_argument("--answer", action=_Once, default=None, metavar="X",
                   help=f"a number to check: exit status 0 if right, "
                        f"{WRONG_ANSWER} if wrong")
    p.add_argument("--key", action=_Once, default=None, metavar="FIRST-LAST",
                   help="print the answer key for a range of seeds, e.g. 1-30 (at most 60 seeds, a line "
                        "as each is computed)")
    p.set_defaults(func=cmd_quiz, prog=p.prog)

    p = sub.add_parser("calibrate", help="fit the RX worker's costs to the v1 CPU1 cycles/byte "
                       "tables and three timing priors to one throughput table; rewrites "
                       "vsockmodel/model/data/costs.json",
                       description="Stage 1 fits the RX worker's cost groups to the v1 guest CPU1 "
                                   "cycles-per-byte tables; stage 2 fits three timing priors, within "
                                   "their ranges, to the absolute throughputs of v1_all_fixed64k. "
                                   "Then rewrites vsockmodel/model/data/costs.json "
                                   "(--dry-run: print only).")
    _add_output_args(p, quiz=False)
    p.add_argument("--dry-run", action="store_true", help="fit and print, but do not write costs.json")
    p.add_argument("--jobs", action=_Once, default=None, metavar="N",
                   help="worker processes (default: all CPUs; the result does not depend on it)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_calibrate, prog=p.prog)

    p = sub.add_parser("validate", help="predicted vs measured gains for every measured table of the series",
                       description="Run the model on every configuration of the series' tables and "
                                   "score its predictions against the measurements.")
    _add_output_args(p, quiz=False)
    p.add_argument("--jobs", action=_Once, default=None, metavar="N",
                   help="worker processes (default: all CPUs)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    for flag, value in (("--host-lock", True), ("--no-host-lock", False)):
        p.add_argument(flag, dest="host_lock", action=_Once, nargs=0, const=value, default=False,
                       help="run the model with the host socket's lock (see run --help)"
                       if value else argparse.SUPPRESS)
    p.set_defaults(func=cmd_validate, prog=p.prog)

    p = sub.add_parser("hypotheses", help="which mechanism fits the measurements: each hypothesis "
                       "fitted and scored on the fingerprints",
                       description="Fit every hypothesis (the schema's advanced switches) as the "
                                   "calibration's protocol allows, score each on the in-sample "
                                   "table and on the measurements' fingerprints, and write "
                                   "vsockmodel/study/data/hypotheses.json (about 15 minutes on two "
                                   "cores). --show prints the stored study without running.")
    p.add_argument("--show", action="store_true", help="print the stored study's table")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="run only this hypothesis (repeatable); nothing is written")
    p.add_argument("--dry-run", action="store_true", help="run, print, write nothing")
    p.add_argument("--jobs", action=_Once, default=None, metavar="N",
                   help="worker processes (default: 2)")
    p.add_argument("--json", action="store_true", help="print the study as JSON")
    p.set_defaults(func=cmd_hypotheses, prog=p.prog)

    p = sub.add_parser("bench", help="simulated packets per second vs a bare simpy loop, run "
                       "stability, widget latency",
                       description="Speed benchmark: the model against a bare simpy loop, default "
                                   "runs' wall time and spread, and an explorer's update latency.")
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=cmd_bench, prog=p.prog)
    parser.commands = tuple(sub.choices)    # for main()'s error on an option before the command
    return parser


def _value_options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """Every option string, and those that take a value, over all subcommands."""
    options, valued = set(), set()
    for action in parser._subparsers._group_actions[0].choices.values():   # noqa: SLF001
        for act in action._actions:                                        # noqa: SLF001
            options.update(act.option_strings)
            if act.nargs != 0 and act.option_strings:
                valued.update(act.option_strings)
    return options, valued


def _attach_values(argv: list[str], parser) -> list[str]:
    """["--payload", "-4K"] -> ["--payload=-4K"]: a value that starts with "-"
    (a negative number, "-inf") reaches validation instead of argparse's
    "expected one argument"."""
    options, valued = _value_options(parser)
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg, nxt = argv[i], argv[i + 1] if i + 1 < len(argv) else ""
        if arg in valued and nxt.startswith("-") and nxt not in options:
            out.append(f"{arg}={nxt}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def main(argv=None) -> int:
    from .sim.errors import Deadlock, SimulationLimitExceeded
    from .study.calibrate import CalibrationWriteError

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        print(f"{parser.prog}: error: {argv[0]}: expected a command first, one of: "
              f"{', '.join(parser.commands)}", file=sys.stderr)
        return 2
    try:
        args, extra = parser.parse_known_args(_attach_values(argv, parser))
    except SystemExit as exc:                       # --help, or an error argparse printed
        return exc.code if isinstance(exc.code, int) else 2
    if extra:                                       # reported by the subcommand, as its other errors
        print(f"{args.prog}: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    quiz, compute = getattr(args, "quiz", False), getattr(args, "compute", False)
    if quiz and getattr(args, "json", False):
        print(f"{args.prog}: error: --quiz hides the answers and --json prints them; "
              f"use one or the other", file=sys.stderr)
        return 2
    if compute and hasattr(args, "quiz") and not quiz:
        print(f"{args.prog}: error: -c prints a quiz's answers: use it with --quiz", file=sys.stderr)
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
    except CalibrationWriteError as exc:
        print(f"{args.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:                         # the output's reader left (`| head`)
        # Point stdout at /dev/null so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
