"""A lens a reader can compute by hand: the receive path as a pipeline of stages.

A stream through a pipeline goes as fast as its slowest stage, so the time
per write is the largest of the stages' times per write. Four stages do the
work, each on its own CPU:

- the host sender: ``S(s) = send + s * copy``, a fixed cost per send() and
  its copy from user memory;
- vhost: ``V(s)``, its copy into the guest's buffers: cheap for the first
  ``hot_bytes`` of a write, which the caches hold, and ``stream`` per byte
  beyond (two rates: the patched column's two slopes);
- the guest RX worker: ``W(s) = n(s) * worker``, per packet (it does not
  touch the payload);
- in the baseline, the socket lock's hand-off: every packet takes the lock
  against a reader that is woken for it, which costs the worker ``handoff``
  per packet, and vhost ``per_write`` per write (the credit updates that the
  reader's extra recv() calls send, which vhost's one thread handles between
  its runs).

Patched: ``T = max(S, V, W)``; baseline: ``T = max(S, V + per_write, W + n * handoff)``.

Every parameter is read off the in-sample table (v1, all patches, fixed
64 KiB recv()) with the arithmetic shown in ``derive()``: it describes that
table, it predicts nothing. What it shows is which stage sets the pace where,
and so why the gain is largest at small writes: there the baseline pays the
hand-off on every packet, while the patched kernel is held by the sender.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..model import kernel
from . import measurements

TABLE = "v1_all_fixed64k"


def packets(payload: int, buf_payload: int = kernel.RX_BUF_PAYLOAD_6_17) -> int:
    """Guest buffers per write: 64 KiB skbs, each split into buffers of buf_payload."""
    full, rest = divmod(payload, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)
    per_skb = math.ceil(kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE / buf_payload)
    return full * per_skb + (math.ceil(rest / buf_payload) if rest else 0)


HOT_BYTES = 256      # a stated choice: how much of a write vhost copies from the caches
HOT_NS = 0.05        # and at what cost per byte (about 20 GB/s)


@dataclass(frozen=True)
class Lens:
    send_us: float          # the sender's fixed cost per write
    copy_ns: float          # its copy from user memory, per byte
    hot_bytes: int          # vhost copies this much of a write from the caches,
    hot_ns: float           # at this cost per byte,
    stream_ns: float        # and the rest at this one
    worker_us: float        # the RX worker per packet
    handoff_us: float       # baseline: the lock hand-off per packet
    per_write_us: float     # baseline: vhost's extra work per write (credit updates)

    def stages(self, payload: int, variant: str) -> dict[str, float]:
        """Each stage's time per write, us."""
        n = packets(payload)
        hot = min(payload, self.hot_bytes)
        sender = self.send_us + payload * self.copy_ns / 1000
        vhost = (hot * self.hot_ns + (payload - hot) * self.stream_ns) / 1000
        worker = n * self.worker_us
        if variant == "baseline":
            vhost += self.per_write_us
            worker += n * self.handoff_us
        return {"sender": sender, "vhost": vhost, "worker": worker}

    def time_per_write(self, payload: int, variant: str) -> tuple[float, str]:
        """The slowest stage's time per write, us, and its name."""
        st = self.stages(payload, variant)
        slowest = max(st, key=st.get)
        return st[slowest], slowest


def _us(payload: int, gbps: float) -> float:
    return payload * 8 / gbps / 1000


def derive() -> tuple[Lens, list[str]]:
    """The lens's parameters from the in-sample table, and the arithmetic, step by step."""
    base = measurements.values(TABLE, "baseline", "throughput_gbps")
    patched = measurements.values(TABLE, "p1-p5", "throughput_gbps")
    t_b = {p: _us(p, g) for p, g in base.items()}
    t_p = {p: _us(p, g) for p, g in patched.items()}
    steps = []
    # The patched kernel at 64 B-1 KiB: the sender (one packet per write, and
    # the worker's CPU time is below it): a line through 64 B and 1 KiB.
    hot_ns = 1000 * (t_p[1024] - t_p[64]) / (1024 - 64)
    send_us = t_p[64] - 64 * hot_ns / 1000
    steps.append(f"sender: the patched column from 64 B ({t_p[64]:.2f} us) to 1 KiB ({t_p[1024]:.2f} us) "
                 f"is a line: {send_us:.2f} us per write + {hot_ns:.2f} ns per byte")
    # The patched kernel at 4-64 KiB: per byte, one slope (vhost, or the sender's page copies).
    stream_ns = 1000 * (t_p[65536] - t_p[4096]) / (65536 - 4096)
    steps.append(f"per byte beyond the caches: the patched column from 4 KiB ({t_p[4096]:.2f} us) to "
                 f"64 KiB ({t_p[65536]:.1f} us) rises {stream_ns:.2f} ns per byte")
    # The worker: the patched CPU1 cycles per packet at 64 B (one packet per write).
    cycles = measurements.values("v1_all_cycles", "p1-p5", "cycles_per_byte")
    ghz = 2.4
    worker_us = cycles[64] * 64 / ghz / 1000
    steps.append(f"worker: {cycles[64] * 64:.0f} CPU1 cycles per packet (patched, 64 B) at {ghz} GHz "
                 f"= {worker_us:.2f} us per packet")
    # The baseline at 256 B-1 KiB is flat: the worker plus the hand-off, per packet.
    flat = sum(t_b[p] for p in (256, 512, 1024)) / 3
    handoff_us = flat - worker_us
    steps.append(f"hand-off: the baseline is flat at {flat:.2f} us per write from 256 B to 1 KiB "
                 f"(one packet each), {handoff_us:.2f} us more than the worker's CPU time")
    # At 4 KiB and above the baseline is slower than the patched by a time per write.
    per_write = sum(t_b[p] - t_p[p] for p in (4096, 16384, 65536)) / 3
    steps.append(f"per write: baseline minus patched at 4, 16 and 64 KiB averages {per_write:.2f} us")
    steps.append(f"vhost copies the first {HOT_BYTES} B of a write from the caches at {HOT_NS} ns "
                 f"per byte (a stated choice), the rest at {stream_ns:.2f} ns per byte")
    lens = Lens(send_us=send_us, copy_ns=hot_ns, hot_bytes=HOT_BYTES, hot_ns=HOT_NS,
                stream_ns=stream_ns, worker_us=worker_us, handoff_us=handoff_us, per_write_us=per_write)
    return lens, steps


def table() -> list[dict]:
    """The lens beside the measurements: time per write, the pacing stage, the gain."""
    lens, _ = derive()
    base = measurements.values(TABLE, "baseline", "throughput_gbps")
    patched = measurements.values(TABLE, "p1-p5", "throughput_gbps")
    rows = []
    for p in sorted(base):
        tb, sb = lens.time_per_write(p, "baseline")
        tp, sp = lens.time_per_write(p, "p1-p5")
        mb, mp = _us(p, base[p]), _us(p, patched[p])
        rows.append({"payload": p, "baseline_us": tb, "baseline_stage": sb, "patched_us": tp,
                     "patched_stage": sp, "gain_pct": 100 * (tb / tp - 1),
                     "measured_baseline_us": mb, "measured_patched_us": mp,
                     "measured_gain_pct": 100 * (mb / mp - 1)})
    return rows
