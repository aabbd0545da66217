"""The v1 review's scenario: two same-flow packets and a one-slot receive queue.

Review of v1 patch 3 (Stefano Garzarella and Jia Jia): with a small
SO_VM_SOCKETS_BUFFER_SIZE, ``queue_max = buf_alloc / SKB_TRUESIZE(0)`` can be 1.
The first packet takes the only metadata slot; collapse cannot shrink a
one-skb queue; so the second packet is admitted only if the reader dequeues
the first one in between. Per-packet locking releases the socket lock between
the two packets and gives a waiting reader that chance; a lock batch without
the headroom check keeps the lock across both and turns the chance into a
certain ENOBUFS reset. The check ends the batch at the metadata limit and
restores the opportunity (it does not guarantee it).

Here the real RX worker, socket and reader of the model run against a
scripted host that publishes the two packets back to back.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from ..model import kernel
from ..model.params import make_params
from ..model.schema import BY_NAME
from ..model.units import parse_number
from ..sim.engine import Cpu, Sim, Task
from ..sim.guest import VirtioVsock
from ..sim.reader import Reader
from ..sim.sock import GuestSock
from ..sim.virtqueue import Packet, Virtqueue

# A reader thread that wakes almost at once (a polling idle loop on its vCPU),
# as in the review thread's argument; raise it to see every mode reset.
FAST_WAKE_NS = 200.0
ARRIVAL_NS = 5000.0


@dataclass
class StarvationResult:
    variant: str
    buffer: int
    payload: int
    headroom_check: bool
    reader_wake_ns: float
    seed: int
    queue_max: int
    reset: bool
    reason: str
    bytes_received: int
    interleaving: list   # (time ns, actor, event)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["interleaving"] = [{"t_ns": round(t, 1), "actor": a, "event": e} for t, a, e in self.interleaving]
        return d


class _ScriptedHost(Task):
    """Uses two guest buffers at once and signals, like one vhost run of two buffers."""

    def __init__(self, sim: Sim, vq: Virtqueue, payload: int) -> None:
        super().__init__(sim, "vhost", Cpu("host vhost", guest=False))
        self.vq, self.payload = vq, payload

    def main(self):
        yield self.env.timeout(ARRIVAL_NS)
        for i in range(2):
            self.vq.avail -= 1
            self.vq.vhost_add_used(self, Packet(self.payload, i))
        self.sim.log(self.t, "vhost", "publish 2 packets + signal")
        if (yield from self.vq.vhost_notify(self)):
            self.vq.eventfd_signal(self)


def starvation(variant: str = "p1-p3", buffer=1024, payload=256, headroom_check: bool | None = None,
               reader_wake_ns: float = FAST_WAKE_NS, seed: int = 1, **unknown) -> StarvationResult:
    """Run the v1 review's two-packet scenario. Sizes accept '1K'-style strings."""
    if unknown:
        known = sorted(inspect.signature(starvation).parameters.keys() - {"unknown"})
        raise ValueError(f"unknown parameter(s) {sorted(unknown)}; known: {', '.join(known)}")
    reader_wake_ns = parse_number(reader_wake_ns, "reader_wake_ns", 0, 1e9, "[0, 1e9] ns")
    payload = BY_NAME["payload"].coerce(payload)      # read as run() reads it: errors quote the range
    p, costs = make_params(variant=variant, buffer=buffer, payload=payload,
                           headroom_check=headroom_check, seed=seed, trace=True,
                           transfer=2 * payload, recv_size=64 * kernel.KiB)
    if 2 * p.payload > p.buffer:
        raise ValueError(f"payload: two packets of {p.payload} B must fit buffer {p.buffer} B; "
                         f"allowed payload <= {p.buffer // 2}")
    if p.payload > p.buf_payload:
        raise ValueError(f"payload: must fit one RX buffer; allowed [1, {p.buf_payload}]")
    # The reader wakes after reader_wake_ns, context switch included (a fast one
    # polls in its idle loop and never schedules out); noise off: one interleaving.
    costs = costs.with_(vcpu_wake_short_ns=reader_wake_ns, vcpu_wake_long_ns=reader_wake_ns,
                        sleep_ns=0.0, jitter_cv=0.0, wake_latency_cv=0.0)
    sim = Sim(p, costs)
    rx_vq, tx_vq = Virtqueue("rx", p.rx_ring_size), Virtqueue("tx", p.rx_ring_size)
    rx_vq.kick_handler = tx_vq.kick_handler = lambda at: None   # the host sends nothing more
    sk = GuestSock(sim)
    host = _ScriptedHost(sim, rx_vq, p.payload)
    vsock = VirtioVsock(sim, rx_vq, tx_vq, sk, Cpu("guest CPU1", guest=True))
    reader = Reader(sim, sk, tx_vq, Cpu("guest CPU0", guest=True))
    for task in (host, vsock.rx_kworker, vsock.tx_kworker, reader):
        task.start()
    sim.run()
    trace = [(t, a, e + (f" {info}" if info else "")) for t, a, e, info in sim.trace]
    return StarvationResult(
        variant=p.variant, buffer=p.buffer, payload=p.payload, headroom_check=p.check_headroom,
        reader_wake_ns=reader_wake_ns, seed=p.seed, queue_max=kernel.queue_max(p.buffer),
        reset=sim.stats.resets > 0, reason=sim.stats.reset_reason,
        bytes_received=sim.stats.bytes_received, interleaving=trace)

