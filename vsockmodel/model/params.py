"""Parameters of one run, validated once at the API boundary.

The same names are used by ``vsockmodel.run``, by the command line
(``--recv-size`` for ``recv_size``) and by the book's widgets.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import asdict, dataclass, replace
from fractions import Fraction

from . import kernel
from .costs import Costs, default_costs
from .variants import VARIANTS, Variant

WORKLOADS = ("stream", "pingpong")

# A run's work is bounded in packets plus recv() calls (Params.work): each
# costs from a few to about twenty microseconds of wall time, so no accepted
# run takes more than about ten seconds (Sim.MAX_WALL_S stops a runaway one).
MAX_WORK = 400_000
MAX_REQUESTS = 100_000
MAX_SIZE = 64 * kernel.MiB
MAX_SEED = 2**63 - 1
# Guest RX ring sizes: a split virtqueue's size is a power of two (the virtio
# spec; vhost accepts up to 32768, QEMU's devices up to VIRTQUEUE_MAX_SIZE,
# 1024). The bounds are the model's choice: wide enough for what-ifs.
MIN_RING, MAX_RING = 8, 4096

# Default length of a stream run: enough packets for a throughput that is
# stable to about 1-2 % (`python -m vsockmodel bench` measures it).
DEFAULT_STREAM_PACKETS = 8000
DEFAULT_MIN_WRITES = 60
DEFAULT_REQUESTS = 300

# Spaces only (no tabs or newlines): "4 K", "64KiB", "512B", "4096.0", "1.5K".
# ASCII digits only.
_SIZE_RE = re.compile(r" *(-?\d+(?:\.\d+)?) *([KMG]?)(?:i?B)? *", re.IGNORECASE | re.ASCII)
_UNITS = {"": 1, "K": kernel.KiB, "M": kernel.MiB, "G": kernel.GiB}


def parse_size(text, name: str = "size", allowed: str = "") -> int:
    """'4K' -> 4096, '64KiB' -> 65536, '1M', '2G', '512', '512B'; integers pass through.
    A decimal is accepted when it is a whole number of bytes ('4096.0', '1.5K'),
    as a float is from Python.

    ``allowed`` (e.g. "[1, 64 MiB] bytes") is quoted when ``text`` is not a size.
    """
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        return int(text)                  # int, or a numpy integer from a notebook
    if isinstance(text, float) and text.is_integer():
        return int(text)
    m = None if isinstance(text, bool) else _SIZE_RE.fullmatch(str(text))
    where = f"; allowed {allowed}" if allowed else ""
    if not m:
        raise ValueError(f"{name}: cannot read {text!r} as a size; use bytes with an optional "
                         f"K, M or G suffix (binary), e.g. 4K or 65536{where}")
    size = Fraction(m.group(1)) * _UNITS[m.group(2).upper()]
    if size.denominator != 1:
        raise ValueError(f"{name}: {text!r} is not a whole number of bytes{where}")
    return int(size)


def _check_int(name: str, value, lo: int, hi: int, what: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer in [{lo}, {hi}]{what}, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{name}: {value} is out of range; allowed [{lo}, {hi}]{what}")
    return value


def fmt_size(n: int) -> str:
    for unit, factor in (("GiB", kernel.GiB), ("MiB", kernel.MiB), ("KiB", kernel.KiB)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Params:
    """Everything one simulation run depends on (validated)."""

    variant: str = "baseline"
    workload: str = "stream"
    payload: int = 4096             # bytes per host send() (vsock_perf --buf-size)
    recv_size: int = 64 * kernel.KiB  # bytes per guest recv()
    buffer: int = kernel.VSOCK_DEFAULT_BUFFER_SIZE  # SO_VM_SOCKETS_BUFFER_SIZE (buf_alloc)
    transfer: int | None = None     # stream: total bytes (default: sized for a stable result)
    requests: int = DEFAULT_REQUESTS  # pingpong: round trips
    rx_buf_payload: int | None = None  # payload per guest RX buffer (default: the variant's kernel)
    batch_pkts: int = kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_PKTS
    batch_bytes: int = kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES
    headroom_check: bool | None = None  # default: on for the batching variants
    vhost_used_batch: bool = False  # [vhost batch]: vhost_add_used_n once per run
    host_lock: bool = False         # vhost waits out the sender's send() for the host socket's lock
    rx_ring_size: int = kernel.RX_RING_SIZE  # guest RX virtqueue entries (QEMU's vhost-vsock: 128)
    rcvlowat: int = 1               # SO_RCVLOWAT
    seed: int = 1
    trace: bool = False

    # ---- derived -------------------------------------------------------------
    @property
    def spec(self) -> Variant:
        return VARIANTS[self.variant]

    @property
    def buf_payload(self) -> int:
        return self.rx_buf_payload or self.spec.rx_buf_payload

    @property
    def check_headroom(self) -> bool:
        return self.spec.batch if self.headroom_check is None else self.headroom_check

    @property
    def packets_per_write(self) -> int:
        """Guest RX buffers one send() fills when credit is plentiful.

        virtio_transport_send_pkt_info() makes skbs of at most 64 KiB, and
        vhost_transport_do_send_pkt() splits each across guest buffers of
        buf_payload bytes.
        """
        full, rest = divmod(self.payload, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)
        per_skb = math.ceil(kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE / self.buf_payload)
        return full * per_skb + (math.ceil(rest / self.buf_payload) if rest else 0)

    @property
    def max_packets_per_write(self) -> int:
        """An upper bound on the packets of one write: a buffer smaller than a
        write makes the sender split it by credit into more, smaller packets."""
        chunk = min(self.buf_payload, self.buffer)
        return max(self.packets_per_write, math.ceil(self.payload / chunk))

    @property
    def max_packets(self) -> int:
        """An upper bound on packets in the run."""
        return self.writes * self.max_packets_per_write

    @property
    def min_recv_calls(self) -> int:
        """A lower bound on recv() calls in the run: each returns at most recv_size bytes."""
        if self.workload == "pingpong":
            return self.requests * math.ceil(self.payload / self.recv_size)
        return math.ceil(self.transfer_bytes / self.recv_size)

    @property
    def work(self) -> int:
        """What MAX_WORK bounds: the run's packets (an upper bound) plus its
        recv() calls (the fewest the transfer needs: each returns at most recv_size)."""
        return max(1, self.max_packets) + self.min_recv_calls

    @property
    def work_per_write(self) -> float:
        """Packets plus recv() calls per write (per request in a ping-pong)."""
        calls = self.payload / self.recv_size
        if self.workload == "pingpong":
            calls = math.ceil(calls)      # each request is read on its own
        return self.max_packets_per_write + calls

    @property
    def max_writes(self) -> int:
        """The most writes that keep a run within MAX_WORK (at least one)."""
        # MAX_WORK - 1: room for rounding the last recv() call up
        return max(1, math.floor((MAX_WORK - 1) / self.work_per_write))

    @property
    def writes(self) -> int:
        if self.workload == "pingpong":
            return self.requests
        return math.ceil(self.transfer_bytes / self.payload)

    def transfer_for(self, packets: int) -> int:
        """Bytes of a stream run of about ``packets`` packets: whole writes, at
        least DEFAULT_MIN_WRITES of them (the default run, the calibration's and
        the validation's runs are all sized this way)."""
        return max(DEFAULT_MIN_WRITES, math.ceil(packets / self.packets_per_write)) * self.payload

    @property
    def transfer_bytes(self) -> int:
        """The stream's bytes: ``transfer`` (whole writes: make_params rounds it up), or the default."""
        if self.transfer is not None:
            return self.transfer
        writes = self.transfer_for(DEFAULT_STREAM_PACKETS) // self.payload
        return min(writes, self.max_writes) * self.payload

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(transfer=self.transfer_bytes if self.workload == "stream" else None,
                 rx_buf_payload=self.buf_payload, headroom_check=self.check_headroom)
        return d


def make_params(**kwargs) -> tuple[Params, Costs]:
    """Validate keyword arguments into Params (+ the Costs to use).

    Raises ValueError naming the parameter and its allowed range.
    """
    costs = kwargs.pop("costs", None)
    known = {f for f in Params.__dataclass_fields__}
    unknown = set(kwargs) - known
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; known: {', '.join(sorted(known | {'costs'}))}")

    variant = kwargs.get("variant", Params.variant)
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"variant: unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    workload = kwargs.get("workload", Params.workload)
    if not isinstance(workload, str) or workload not in WORKLOADS:
        raise ValueError(f"workload: unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")

    sizes: dict[str, int] = {}
    for name in ("payload", "recv_size", "buffer", "batch_bytes", "rcvlowat", "transfer",
                 "rx_buf_payload"):
        if name in kwargs and not (kwargs[name] is None and name in _OPTIONAL_SIZES):
            sizes[name] = parse_size(kwargs[name], name, _SIZE_RANGES[name])
    kwargs.update(sizes)
    for name in ("batch_pkts", "seed", "requests", "rx_ring_size"):
        value = kwargs.get(name)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            kwargs[name] = int(value)     # a numpy integer from a notebook is an integer too

    p = Params(**kwargs)
    _check_workload_knobs(p)
    _check_int("payload", p.payload, 1, MAX_SIZE, " bytes")
    _check_int("recv_size", p.recv_size, 1, MAX_SIZE, " bytes")
    _check_int("buffer", p.buffer, kernel.VSOCK_DEFAULT_BUFFER_MIN_SIZE, MAX_SIZE,
               " bytes (the kernel minimum is 128)")
    if p.rx_buf_payload is not None:
        _check_int("rx_buf_payload", p.rx_buf_payload, 1, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE, " bytes")
    _check_int("batch_pkts", p.batch_pkts, 1, 4096, " packets")
    _check_int("batch_bytes", p.batch_bytes, 1, MAX_SIZE, " bytes")
    _check_int("rcvlowat", p.rcvlowat, 1, p.buffer,
               " bytes (vsock_set_rcvlowat refuses values above the buffer size)")
    if min(p.rcvlowat, p.recv_size) >= p.buffer:
        # __vsock_stream_recvmsg(): target = sock_rcvlowat() = min(rcvlowat, len);
        # target >= stream_rcvhiwat (the buffer size) fails every recv() with ENOMEM.
        raise ValueError(f"rcvlowat: a recv() of recv_size={p.recv_size} would wait for "
                         f"{min(p.rcvlowat, p.recv_size)} bytes, not below buffer={p.buffer} "
                         f"(the kernel fails it with ENOMEM); allowed [1, {p.buffer - 1}] bytes "
                         f"when recv_size >= buffer")
    _check_int("seed", p.seed, 0, MAX_SEED)
    _check_int("requests", p.requests, 1, MAX_REQUESTS)
    _check_int("rx_ring_size", p.rx_ring_size, MIN_RING, MAX_RING,
               f" entries, a power of two (a split virtqueue's size); QEMU's vhost-vsock offers "
               f"{kernel.RX_RING_SIZE}")
    if p.rx_ring_size & (p.rx_ring_size - 1):
        raise ValueError(f"rx_ring_size: {p.rx_ring_size} is not a power of two; allowed powers of "
                         f"two in [{MIN_RING}, {MAX_RING}] entries")
    for name in ("vhost_used_batch", "host_lock", "trace"):
        if not isinstance(getattr(p, name), bool):
            raise ValueError(f"{name}: expected True or False, got {getattr(p, name)!r}")
    if p.headroom_check is not None and not isinstance(p.headroom_check, bool):
        raise ValueError(f"headroom_check: expected True, False or None, got {p.headroom_check!r}")
    _check_batch_knobs(p)
    if p.transfer is not None:     # a stream is whole writes: round up to the next one
        if p.transfer < 1:         # (parse_size made it an int; _check_work bounds it above)
            raise ValueError(f"transfer: {p.transfer} is out of range; allowed at least 1 byte "
                             f"(rounded up to whole writes)")
        p = replace(p, transfer=math.ceil(p.transfer / p.payload) * p.payload)
    _check_work(p)

    if costs is None:
        costs = default_costs()
    elif isinstance(costs, dict):
        costs = default_costs().with_dict(costs)
    elif not isinstance(costs, Costs):
        raise ValueError(f"costs: expected a Costs or a dict of cost overrides, got {type(costs).__name__}")
    return p, costs


# What parse_size quotes when a size cannot be read (make_params checks the values).
_SIZE_RANGES = {
    "payload": f"[1, {fmt_size(MAX_SIZE)}] bytes", "recv_size": f"[1, {fmt_size(MAX_SIZE)}] bytes",
    "buffer": f"[{kernel.VSOCK_DEFAULT_BUFFER_MIN_SIZE}, {fmt_size(MAX_SIZE)}] bytes",
    "batch_bytes": f"[1, {fmt_size(MAX_SIZE)}] bytes", "rcvlowat": "[1, buffer] bytes",
    "transfer": "at least 1 (rounded up to whole writes), at most what the work bound allows",
    "rx_buf_payload": f"[1, {fmt_size(kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)}] bytes",
}
_OPTIONAL_SIZES = ("transfer", "rx_buf_payload")     # None means "the default"


def _check_workload_knobs(p: Params) -> None:
    """transfer sizes a stream, requests a ping-pong: each would do nothing in the other."""
    if p.workload == "pingpong" and p.transfer is not None:
        raise ValueError(f"transfer: {p.transfer} has no effect on workload 'pingpong', which "
                         f"runs `requests` round trips (allowed here: unset)")
    if p.workload == "stream" and p.requests != Params.requests:
        raise ValueError(f"requests: {p.requests} has no effect on workload 'stream', which "
                         f"sends `transfer` bytes (allowed here: the default, {Params.requests})")


# Patch 2's lock-batch settings: they do nothing on a variant that locks per packet.
BATCH_KNOBS = ("batch_pkts", "batch_bytes", "headroom_check")


def _check_batch_knobs(p: Params) -> None:
    """The lock-batch knobs belong to patch 2's loop; a variant without it takes
    lock_sock once per packet, so a knob set there would silently do nothing."""
    if p.spec.batch:
        return
    batching = " and ".join(name for name, v in VARIANTS.items() if v.batch)
    for name in BATCH_KNOBS:
        value, default = getattr(p, name), getattr(Params, name)
        if value != default:
            allowed = ("unset: leave out --headroom-check and --no-headroom-check" if default is None
                       else f"the default, {default}")
            raise ValueError(
                f"{name}: {value!r} has no effect on variant {p.variant!r}, whose RX worker takes "
                f"lock_sock once per packet (no lock batch to limit or end); it applies to "
                f"{batching} (allowed here: {allowed})")


def _check_work(p: Params) -> None:
    """Bound a run's work to MAX_WORK packets plus recv() calls, so that no
    accepted run can take minutes. Each error quotes a limit that is accepted."""
    unit = "request" if p.workload == "pingpong" else "write"
    packets = p.max_packets_per_write
    calls = math.ceil(p.payload / p.recv_size)      # the fewest recv() calls for one of them
    if packets + calls > MAX_WORK:                  # a single write or request is too much
        if packets >= MAX_WORK:
            chunk = min(p.buf_payload, p.buffer)
            raise ValueError(
                f"payload: one {fmt_size(p.payload)} {unit} is {packets} packets of at most {chunk} "
                f"bytes (rx_buf_payload, or buffer when smaller); allowed fewer than {MAX_WORK} "
                f"packets per run: a smaller payload, or a larger buffer or rx_buf_payload")
        least = math.ceil(p.payload / (MAX_WORK - packets))
        raise ValueError(
            f"recv_size: one {fmt_size(p.payload)} {unit} read {p.recv_size} bytes at a time is "
            f"{packets} packets plus {calls} recv() calls; allowed at most {MAX_WORK} per run, "
            f"i.e. recv_size >= {least} bytes here")
    per_unit = (f"{packets} packets and {p.work_per_write - packets:.4g} recv() calls "
                f"per {fmt_size(p.payload)} {unit}")
    if p.workload == "pingpong":
        _check_int("requests", p.requests, 1, min(MAX_REQUESTS, p.max_writes),
                   f" round trips (at most {MAX_WORK} packets plus recv() calls per run: {per_unit})")
    elif p.transfer is not None:
        _check_int("transfer", p.transfer, p.payload, p.max_writes * p.payload,
                   f" bytes (at least one write; at most {MAX_WORK} packets plus recv() calls "
                   f"per run: {per_unit}; a larger recv_size allows more)")
    if p.work > MAX_WORK:
        raise AssertionError(f"work bound broken: {p.work} > {MAX_WORK}")   # by construction
