"""Parameters of one run, validated once at the API boundary.

The same names are used by ``vsockmodel.run``, by the command line
(``--recv-size`` for ``recv_size``) and by the book's widgets.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from . import kernel
from .costs import Costs, default_costs
from .variants import VARIANTS, Variant

WORKLOADS = ("stream", "pingpong")

# Bounds that keep one run well under a few seconds of wall time.
MAX_PACKETS = 1_000_000
MAX_REQUESTS = 100_000
MAX_SIZE = 64 * kernel.MiB

# Default length of a stream run: enough packets for a throughput that is
# stable to about 1-2 % (`python -m vsockmodel bench` measures it).
DEFAULT_STREAM_PACKETS = 8000
DEFAULT_MIN_WRITES = 60
DEFAULT_REQUESTS = 300

_SIZE_RE = re.compile(r"^\s*(-?\d+)\s*([KMG]?)(?:i?B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": kernel.KiB, "M": kernel.MiB, "G": kernel.GiB}


def parse_size(text, name: str = "size") -> int:
    """'4K' -> 4096, '64KiB' -> 65536, '1M', '2G', '512', '512B'; ints pass through."""
    if isinstance(text, bool):
        raise ValueError(f"{name}: expected a size in bytes, got {text!r}")
    if isinstance(text, int):
        return text
    if isinstance(text, float) and text.is_integer():
        return int(text)
    m = _SIZE_RE.match(str(text))
    if not m:
        raise ValueError(f"{name}: cannot read {text!r} as a size; use bytes with an optional "
                         f"K, M or G suffix (binary), e.g. 4K or 65536")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def _check_int(name: str, value, lo: int, hi: int, what: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name}: expected an integer{what} in [{lo}, {hi}], got {value!r}")
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
    vhost_used_batch: bool = False  # seed 002: vhost_add_used_n once per run
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
    def max_packets(self) -> int:
        """An upper bound on packets in the run: a buffer smaller than a write
        makes the sender split it by credit into more, smaller packets."""
        chunk = min(self.buf_payload, self.buffer)
        per_write = max(self.packets_per_write, math.ceil(self.payload / chunk))
        return self.writes * per_write

    @property
    def writes(self) -> int:
        if self.workload == "pingpong":
            return self.requests
        return math.ceil(self.transfer_bytes / self.payload)

    @property
    def transfer_bytes(self) -> int:
        if self.transfer is not None:
            return self.transfer
        writes = max(DEFAULT_MIN_WRITES, math.ceil(DEFAULT_STREAM_PACKETS / self.packets_per_write))
        return writes * self.payload

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
    if variant not in VARIANTS:
        raise ValueError(f"variant: unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    workload = kwargs.get("workload", Params.workload)
    if workload not in WORKLOADS:
        raise ValueError(f"workload: unknown workload {workload!r}; choose one of {', '.join(WORKLOADS)}")

    sizes = {}
    for name in ("payload", "recv_size", "buffer", "batch_bytes"):
        if name in kwargs:
            sizes[name] = parse_size(kwargs[name], name)
    for name in ("transfer", "rx_buf_payload"):
        if kwargs.get(name) is not None:
            sizes[name] = parse_size(kwargs[name], name)
    kwargs.update(sizes)

    p = Params(**kwargs)
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
    _check_int("seed", p.seed, 0, 2**63 - 1)
    _check_int("requests", p.requests, 1, MAX_REQUESTS)
    for name in ("vhost_used_batch", "trace"):
        if not isinstance(getattr(p, name), bool):
            raise ValueError(f"{name}: expected True or False, got {getattr(p, name)!r}")
    if p.headroom_check is not None and not isinstance(p.headroom_check, bool):
        raise ValueError(f"headroom_check: expected True, False or None, got {p.headroom_check!r}")
    if p.transfer is not None:
        _check_int("transfer", p.transfer, p.payload, 2**62, " bytes (at least one payload)")
    packets = p.max_packets
    if packets > MAX_PACKETS:
        raise ValueError(
            f"transfer: {p.transfer_bytes} bytes of {p.payload}-byte writes is {packets} packets; "
            f"allowed at most {MAX_PACKETS} packets per run (about 10 s of wall time), "
            f"i.e. transfer <= {MAX_PACKETS * p.payload // (packets // p.writes)} bytes")

    if costs is None:
        costs = default_costs()
    elif isinstance(costs, dict):
        costs = default_costs().with_(**costs)
    elif not isinstance(costs, Costs):
        raise ValueError(f"costs: expected a Costs or a dict of cost overrides, got {type(costs).__name__}")
    return p, costs
