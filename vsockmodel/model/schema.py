"""The parameters of one run, in one place: names, kinds, ranges, defaults, units, help.

Everything that takes a run's parameters reads this table:

- ``vsockmodel.run`` / ``make_params`` / ``Params`` validate with it;
- the command line (``python -m vsockmodel run ...``) builds its options from it;
- the browser lab builds its controls from ``to_json()``.

So a knob added here appears in all three at once, with the same name, range
and error message. Rules that tie two parameters together (``rcvlowat`` and
``buffer``, the work bound on ``transfer``) live in ``vsockmodel.model.params``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import kernel
from .budget import MAX_WORK
from .units import MiB, fmt_count, fmt_range, fmt_size, fmt_size_exact, parse_int, parse_size, quote
from .variants import VARIANTS

WORKLOADS = ("stream", "pingpong")
COPY_MODELS = ("linear", "two-rate")

# A call's work is bounded before it runs: vsockmodel.model.budget estimates it
# from the parameters (MAX_WORK work units, about ten seconds; Sim.MAX_WALL_S
# stops a runaway run).
MAX_REQUESTS = 100_000
MAX_SIZE = 64 * MiB
MAX_SEED = 2**63 - 1
MAX_BATCH_PKTS = 4096
# Guest RX ring sizes: a split virtqueue's size is a power of two (the virtio
# spec; vhost accepts up to 32768, QEMU's devices up to VIRTQUEUE_MAX_SIZE,
# 1024). The bounds are the model's choice: wide enough for what-ifs.
MIN_RING, MAX_RING = 8, 4096
DEFAULT_REQUESTS = 300
MAX_HALT_POLL_NS = 1_000_000    # KVM accepts any value; beyond a millisecond nothing changes here

BATCHING = tuple(name for name, v in VARIANTS.items() if v.batch)
PER_PACKET = tuple(name for name, v in VARIANTS.items() if not v.batch)


@dataclass(frozen=True)
class Applies:
    """When a parameter has an effect; elsewhere it must keep its default."""

    variants: tuple[str, ...] = ()   # empty: every variant
    workload: str = ""               # empty: both workloads
    reason: str = ""                 # why it does nothing elsewhere

    def to(self, variant: str, workload: str) -> bool:
        return ((not self.variants or variant in self.variants)
                and (not self.workload or workload == self.workload))


_LOCK_BATCH = Applies(
    variants=BATCHING,
    reason=f"{' and '.join(PER_PACKET)} take lock_sock once per packet: no lock batch to limit or end")


@dataclass(frozen=True)
class Parameter:
    """One parameter of a run.

    ``kind``: "choice" (one of ``choices``), "size" (bytes, '4K'-style text
    accepted), "int", "bool", or "tristate" (True, False or None: None lets
    the variant decide). ``lo``/``hi`` bound sizes and integers; ``hi`` may be
    None where another rule bounds it (``transfer``). ``optional``: None means
    "the default" (written in ``default_text``).
    """

    name: str
    kind: str
    default: Any
    help: str
    unit: str = ""
    choices: tuple = ()
    lo: int | None = None
    hi: int | None = None
    optional: bool = False
    default_text: str = ""
    power_of_two: bool = False
    log_scale: bool = False          # a slider for it moves on a log scale
    applies: Applies = field(default_factory=Applies)
    group: str = "run"               # how the lab groups its controls
    short: str = ""                  # a one-letter command-line alias

    # ---- the allowed range, as errors and help quote it ---------------------
    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "tristate":
            return "true, false, or unset (the variant's default)"
        unit = f" {self.unit}" if self.unit and self.kind != "size" else ""
        fmt = fmt_size_exact if self.kind == "size" else fmt_count
        if self.hi is None:
            return f"at least {fmt(self.lo)}{unit}, at most what the work bound allows"
        text = f"{fmt_range(self.lo, self.hi, self.kind == 'size')}{unit}"
        if self.power_of_two:
            text = f"powers of two in {text}"
        return text

    # ---- reading a value ------------------------------------------------------
    def coerce(self, value) -> Any:
        """The value in its canonical type, range-checked; ValueError naming the parameter."""
        if value is None and (self.optional or self.kind == "tristate"):
            return None
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ValueError(f"{self.name}: unknown {self.name} {quote(value)}; choose one of "
                                 f"{', '.join(self.choices)}")
            return value
        if self.kind in ("bool", "tristate"):
            if not isinstance(value, bool):
                raise ValueError(f"{self.name}: expected True or False, got {quote(value)}"
                                 + (" (or None: the variant's default)" if self.kind == "tristate" else ""))
            return value
        if self.kind == "size":
            n = parse_size(value, self.name, self.allowed())
        else:
            n = parse_int(value, self.name, self.allowed())
        return self.check_range(n, value)

    def check_range(self, n: int, given=None) -> int:
        """``n`` if it is in range; else ValueError quoting the reader's own text
        ("65M (68,157,440 bytes)") as well as the number."""
        unit = f" {self.unit}" if self.unit else ""
        if n < self.lo or (self.hi is not None and n > self.hi):
            what = fmt_count(n, unit)
            if isinstance(given, str) and given.strip() != f"{n}" and len(given.strip()) <= 20:
                what = f"{given.strip()} ({what})"
            raise ValueError(f"{self.name}: {what} is out of range; allowed {self.allowed()}")
        if self.power_of_two and n & (n - 1):
            raise ValueError(f"{self.name}: {fmt_count(n)} is not a power of two; allowed {self.allowed()}")
        return n

    def format_value(self, value) -> str:
        """A value as every surface prints it: sizes "64 KiB" (exact), counts "4,096"."""
        if self.kind == "size" and isinstance(value, int):
            return fmt_size_exact(value)
        if self.kind == "int" and isinstance(value, int):
            return fmt_count(value)
        return str(value)

    @property
    def cli_option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def to_json(self) -> dict:
        return {
            "name": self.name, "kind": self.kind, "default": self.default, "help": self.help,
            "unit": self.unit, "choices": list(self.choices), "lo": self.lo, "hi": self.hi,
            "optional": self.optional, "default_text": self.default_text,
            "power_of_two": self.power_of_two, "log_scale": self.log_scale,
            "allowed": self.allowed(), "group": self.group, "cli_option": self.cli_option,
            "applies": {"variants": list(self.applies.variants), "workload": self.applies.workload,
                        "reason": self.applies.reason},
        }


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("variant", "choice", "baseline", group="kernel", choices=tuple(VARIANTS),
              help="the kernel: pre-skb, baseline (sk_buff, per-packet lock), p1-p3 (lock batch), "
                   "p1-p5 (+ coalesced callbacks)"),
    Parameter("workload", "choice", "stream", group="workload", choices=WORKLOADS,
              help="stream: a bulk transfer; pingpong: one request and its echo at a time"),
    Parameter("payload", "size", 4096, group="workload", unit="bytes", lo=1, hi=MAX_SIZE, log_scale=True,
              help="bytes per host send() (vsock_perf --buf-size)"),
    Parameter("recv_size", "size", 64 * kernel.KiB, group="workload", unit="bytes", lo=1, hi=MAX_SIZE,
              log_scale=True, help="bytes per guest recv(): 64 KiB, or the write size for the series' "
                                   "fixed-syscall test"),
    Parameter("buffer", "size", kernel.VSOCK_DEFAULT_BUFFER_SIZE, group="socket", unit="bytes",
              lo=kernel.VSOCK_DEFAULT_BUFFER_MIN_SIZE, hi=MAX_SIZE, log_scale=True,
              help="the guest socket's buffer, SO_VM_SOCKETS_BUFFER_SIZE (buf_alloc); "
                   "the kernel minimum is 128 B"),
    Parameter("transfer", "size", None, group="workload", unit="bytes", lo=1, hi=None, optional=True,
              log_scale=True, default_text="sized for a stable result (about 8000 packets)",
              applies=Applies(workload="stream", reason="a ping-pong runs a number of round trips (requests)"),
              help="stream: total bytes, rounded up to whole writes"),
    Parameter("requests", "int", DEFAULT_REQUESTS, group="workload", unit="round trips", lo=1,
              hi=MAX_REQUESTS, log_scale=True,
              applies=Applies(workload="pingpong", reason="a stream sends a number of bytes (transfer)"),
              help="pingpong: round trips"),
    Parameter("rx_buf_payload", "size", None, group="kernel", unit="bytes", lo=1,
              hi=kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE, optional=True, log_scale=True,
              default_text="the variant's kernel: 3732 B (sk_buff, 6.17+), 4096 B (pre-skb)",
              help="payload bytes per guest RX buffer"),
    Parameter("batch_pkts", "int", kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_PKTS, group="batch",
              unit="packets", lo=1, hi=MAX_BATCH_PKTS, log_scale=True, applies=_LOCK_BATCH,
              help="lock batch limit in packets (patch 2: 64)"),
    Parameter("batch_bytes", "size", kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES, group="batch",
              unit="bytes", lo=1, hi=MAX_SIZE, log_scale=True, applies=_LOCK_BATCH,
              help="lock batch limit in bytes (patch 2: 64 KiB)"),
    Parameter("headroom_check", "tristate", None, group="batch", applies=_LOCK_BATCH,
              default_text="on for p1-p3 and p1-p5",
              help="end a lock batch before the receive queue's metadata budget runs out "
                   "(off: the regression the v1 review argues against)"),
    Parameter("vhost_used_batch", "bool", False, group="host",
              help="vhost publishes used buffers with one vhost_add_used_n() per run "
                   "(the vhost patch), not one vhost_add_used() per buffer"),
    Parameter("host_lock", "bool", False, group="host",
              help="vhost waits for the host socket's lock, which the sender owns for each "
                   "whole send() (the upper bound of that effect)"),
    Parameter("rx_ring_size", "int", kernel.RX_RING_SIZE, group="kernel", unit="entries",
              lo=MIN_RING, hi=MAX_RING, power_of_two=True, log_scale=True,
              help="guest RX virtqueue entries (QEMU's vhost-vsock offers 128)"),
    Parameter("rcvlowat", "size", 1, group="socket", unit="bytes", lo=1, hi=MAX_SIZE, log_scale=True,
              help="SO_RCVLOWAT: bytes a blocking recv() waits for (at most the buffer size)"),
    # ---- the mechanisms the sources leave open: named hypotheses (chapter 6 scores them) ----
    Parameter("halt_poll_ns", "int", 0, group="advanced", unit="ns", lo=0, hi=MAX_HALT_POLL_NS,
              help="KVM halt polling on the host: how long a halted vCPU's thread polls before it "
                   "schedules out (virt/kvm/kvm_main.c, the halt_poll_ns module parameter; x86's "
                   "default is 200000; 0: off)"),
    Parameter("ipi_virtualization", "bool", False, group="advanced",
              help="the host posts a guest's IPIs without a VM exit (Intel IPIv, AMD AVIC); off: "
                   "each wake-up of a halted vCPU costs the waking vCPU an exit (ipi_exit_ns)"),
    Parameter("deep_cstates", "bool", True, group="advanced",
              help="a host CPU under a vCPU idle longer than deep_idle_ns enters a deep C-state, "
                   "and that vCPU wakes slowly (vcpu_wake_long_ns); off: every wake-up is shallow"),
    Parameter("copy_model", "choice", "linear", group="advanced", choices=COPY_MODELS,
              help="the host's copies (the sender's from user memory, vhost's into guest buffers): "
                   "linear (one cost per byte) or two-rate (the first copy_hot_bytes of each copy "
                   "cheap, from the caches, at copy_hot_byte_ns; the rest at the copy's own cost "
                   "per byte)"),
    Parameter("seed", "int", 1, group="run", lo=0, hi=MAX_SEED, short="s",
              help="random seed: the same seed gives the same run"),
    Parameter("trace", "bool", False, group="run",
              help="record the run's events (Result.trace)"),
)

BY_NAME: dict[str, Parameter] = {p.name: p for p in PARAMETERS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
# Patch 2's lock-batch settings: they do nothing on a variant that locks per packet.
BATCH_KNOBS = tuple(p.name for p in PARAMETERS if p.applies is _LOCK_BATCH)


def check_applies(values: dict) -> None:
    """A parameter set away from its default where it has no effect is an error,
    not a silent no-op: "batch_pkts: 8 has no effect on variant 'baseline' ..."."""
    variant, workload = values["variant"], values["workload"]
    for p in PARAMETERS:
        value = values.get(p.name, p.default)
        if value == p.default or p.applies.to(variant, workload):
            continue
        where = (f"variant {variant!r}" if p.applies.variants and variant not in p.applies.variants
                 else f"workload {workload!r}")
        keep = "unset" if p.default is None else f"the default, {p.format_value(p.default)}"
        only = (f"it applies to {' and '.join(p.applies.variants)}" if p.applies.variants
                else f"it applies to workload {p.applies.workload!r}")
        raise ValueError(f"{p.name}: {value!r} has no effect on {where} ({p.applies.reason}); "
                         f"{only} (allowed here: {keep})")


def to_json() -> dict:
    """The schema for the browser lab and other clients: every parameter, in order."""
    return {"parameters": [p.to_json() for p in PARAMETERS],
            "variants": {name: v.summary for name, v in VARIANTS.items()},
            "max_work": MAX_WORK}


def default_values() -> dict:
    return {p.name: p.default for p in PARAMETERS}

