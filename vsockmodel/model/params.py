"""Parameters of one run, validated when they are made.

The names, kinds, ranges and help of every parameter are in
``vsockmodel.model.schema``; this module adds the rules that tie parameters
together (SO_RCVLOWAT against the buffer, the work bound on a run) and what
follows from a set of parameters (packets per write, the run's length).
``Params(...)`` and ``make_params(...)`` both validate: a Params that exists
is a run the model accepts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction

from . import budget, kernel
from .costs import Costs, default_costs
from .budget import MAX_WORK
from .schema import (BATCH_KNOBS, BY_NAME, DEFAULT_REQUESTS, MAX_REQUESTS, MAX_SEED, MAX_SIZE,
                     NAMES, PARAMETERS, WORKLOADS, check_applies)
from .units import check_int, fmt_range, fmt_size, fmt_size_exact, parse_size
from .variants import VARIANTS, Variant

__all__ = ["Params", "make_params", "parse_size", "fmt_size", "BATCH_KNOBS", "WORKLOADS", "MAX_WORK",
           "MAX_REQUESTS", "MAX_SEED", "MAX_SIZE", "DEFAULT_STREAM_PACKETS", "DEFAULT_MIN_WRITES"]

# Costs charged on the path every packet takes, on every variant and workload.
# With all of them 0 a run takes no simulated time: no throughput, no time
# shares (tests/test_hostile_defects.py checks that each one alone makes time pass).
PATH_COSTS = ("host_send_ns", "host_skb_ns", "host_copy_byte_ns", "vhost_pkt_ns", "vhost_copy_byte_ns",
              "vhost_add_used_ns", "vhost_signal_ns", "irq_ns", "worker_run_ns", "get_buf_ns",
              "vq_kick_ns", "recv_pkt_ns", "lookup_ns", "lock_ns", "unlock_ns",
              "space_update_ns", "write_space_ns", "enqueue_ns",
              "recv_syscall_ns", "recvmsg_locked_ns", "dequeue_skb_ns", "copy_to_user_byte_ns")

# Default length of a stream run: enough packets for a throughput that is
# stable to about 1-2 % (`python -m vsockmodel bench` measures it).
DEFAULT_STREAM_PACKETS = 8000
DEFAULT_MIN_WRITES = 60


@dataclass(frozen=True)
class Params:
    """Everything one simulation run depends on. Validated on creation
    (``vsockmodel.model.schema``); sizes accept '4K'-style text."""

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
    halt_poll_ns: int = 0           # KVM halt polling window (host)
    ipi_virtualization: bool = False  # IPIs without a VM exit (IPIv / AVIC); the study's choice: off
    deep_cstates: bool = True       # long-idle host CPUs sleep deeply
    copy_model: str = "linear"      # the host copies: linear or two-rate (the study's choice)
    seed: int = 1
    trace: bool = False

    def __post_init__(self) -> None:
        for p in PARAMETERS:                       # kinds and ranges, in the schema's order
            object.__setattr__(self, p.name, p.coerce(getattr(self, p.name)))
        check_applies(self.__dict__)
        _check_rcvlowat(self)
        _check_work(self)                          # before rounding: errors quote the value given
        if self.transfer is not None:              # a stream is whole writes: round up
            object.__setattr__(self, "transfer", math.ceil(self.transfer / self.payload) * self.payload)
        if self.work_units > MAX_WORK:
            raise AssertionError(f"work bound broken: {self.work_units} > {MAX_WORK}")   # by construction

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
        """The run's packets (an upper bound) plus its recv() calls (the fewest
        the transfer needs): what the simulator's event bound counts."""
        return max(1, self.max_packets) + self.min_recv_calls

    @property
    def work_per_write(self) -> Fraction:
        """Work units of one write (one request in a ping-pong): vsockmodel.model.budget."""
        return budget.per_write(self)

    @property
    def work_units(self) -> int:
        """The run's estimated work, in the units MAX_WORK bounds (vsockmodel.model.budget)."""
        return budget.run_work(self)

    @property
    def max_writes(self) -> int:
        """The most writes (requests) that keep a run within MAX_WORK (at least one)."""
        return max(1, budget.max_writes(self))

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
    """Validate keyword arguments into Params, and the Costs to use (``costs``:
    a Costs, or a dict of overrides of the defaults).

    Raises ValueError naming the parameter and its allowed range.
    """
    costs = kwargs.pop("costs", None)
    unknown = set(kwargs) - set(NAMES)
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; known: "
                         f"{', '.join(sorted((*NAMES, 'costs')))}")
    p = Params(**kwargs)
    if costs is None:
        costs = default_costs()
    elif isinstance(costs, dict):
        costs = default_costs().with_dict(costs)
    elif not isinstance(costs, Costs):
        raise ValueError(f"costs: expected a Costs or a dict of cost overrides, got {type(costs).__name__}")
    check_path_costs(costs)
    return p, costs


def check_path_costs(costs: Costs) -> None:
    """A run needs some cost on the path every packet takes, or no simulated time passes."""
    if not any(getattr(costs, name) > 0 for name in PATH_COSTS):
        raise ValueError(f"costs: every cost on the path each packet takes is 0 ({', '.join(PATH_COSTS[:3])} "
                         f"and {len(PATH_COSTS) - 3} more, vsockmodel.model.params.PATH_COSTS): a run would "
                         f"take no simulated time and have no throughput; allowed: at least one of them "
                         f"above 0")


def _check_rcvlowat(p: Params) -> None:
    if p.rcvlowat > p.buffer:
        raise ValueError(f"rcvlowat: {fmt_size_exact(p.rcvlowat)} is out of range; allowed [1 B, buffer] = "
                         f"{fmt_range(1, p.buffer, size=True)} (vsock_set_rcvlowat refuses values above the "
                         f"buffer size)")
    if min(p.rcvlowat, p.recv_size) >= p.buffer:
        # __vsock_stream_recvmsg(): target = sock_rcvlowat() = min(rcvlowat, len);
        # target >= stream_rcvhiwat (the buffer size) fails every recv() with ENOMEM.
        raise ValueError(f"rcvlowat: a recv() of recv_size={fmt_size_exact(p.recv_size)} would wait for "
                         f"{fmt_size_exact(min(p.rcvlowat, p.recv_size))}, not below "
                         f"buffer={fmt_size_exact(p.buffer)} "
                         f"(the kernel fails it with ENOMEM); allowed {fmt_range(1, p.buffer - 1, size=True)} "
                         f"when recv_size >= buffer")


def _check_work(p: Params) -> None:
    """Bound a run's estimated work to MAX_WORK units (vsockmodel.model.budget),
    so that no accepted run takes much more than ten seconds, on any machine.
    Each error names the parameter to change and quotes a limit that is accepted."""
    unit = "request" if p.workload == "pingpong" else "write"
    one = p.work_per_write
    if one > MAX_WORK:                              # a single write or request is too much
        reads = budget.PER_READ * Fraction(p.payload, p.recv_size)
        rest = one - reads
        if rest < MAX_WORK:                         # a larger recv() alone makes it fit: name recv_size
            least = math.ceil(budget.PER_READ * p.payload / (MAX_WORK - rest))
            raise ValueError(
                f"recv_size: one {fmt_size(p.payload)} {unit} read {p.recv_size} bytes at a time would take "
                f"{math.ceil(one):,} work units ({budget.seconds(one)}); allowed at most {MAX_WORK:,} "
                f"per run, i.e. recv_size >= {least} bytes here")
        chunk = min(p.buf_payload, p.buffer)
        raise ValueError(
            f"payload: one {fmt_size(p.payload)} {unit} is {p.max_packets_per_write:,} packets of at most "
            f"{chunk} bytes (rx_buf_payload, or buffer when smaller), {math.ceil(one):,} work units "
            f"({budget.seconds(one)}); allowed at most {MAX_WORK:,} per run: a smaller payload, or "
            f"a larger buffer or rx_buf_payload")
    per_unit = f"{float(one):,.1f} work units per {fmt_size(p.payload)} {unit}"
    if p.workload == "pingpong":
        check_int("requests", p.requests, 1, min(MAX_REQUESTS, p.max_writes),
                  f" round trips (a run may take at most {MAX_WORK:,} work units, about 10 s: {per_unit})")
    elif p.transfer is not None:
        most = p.max_writes * p.payload
        reads = budget.PER_READ * Fraction(p.payload, p.recv_size)
        hint = "; a larger recv_size allows more" if 2 * reads > one else ""
        if p.transfer > most:
            raise ValueError(
                f"transfer: {fmt_size_exact(p.transfer)} is out of range; allowed "
                f"{fmt_range(1, most, size=True)} (rounded up to whole writes; a run may take at most "
                f"{MAX_WORK:,} work units, about 10 s: {per_unit}{hint})")
