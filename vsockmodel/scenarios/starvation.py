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
from ..sim.engine import Sim
from ..sim.guest import RxWorker
from ..sim.reader import Reader
from ..sim.sock import GuestSock
from ..sim.virtqueue import Packet, RxVirtqueue

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


class _ScriptedHost:
    """Publishes two packets at once and signals, like one vhost run of two buffers."""

    def __init__(self, sim: Sim, vq: RxVirtqueue, payload: int):
        self.sim, self.vq, self.payload = sim, vq, payload
        self.worker = None

    def main(self):
        yield self.sim.env.timeout(ARRIVAL_NS)
        t = self.sim.env.now
        for i in range(2):
            self.vq.avail -= 1
            self.vq.publish(t, Packet(self.payload, i))
        self.sim.stats.bytes_sent += 2 * self.payload
        self.sim.log(t, "vhost", "publish 2 packets + signal")
        self.worker.signal(t)

    def kick(self, delay: float) -> None:
        pass


class _NoHost:
    """The reader's credit updates go nowhere: the host sends nothing more."""

    def from_guest(self, t: float, fwd_cnt: int, buf_alloc: int, nbytes: int = 0) -> None:
        pass


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
    vq = RxVirtqueue()
    sk = GuestSock(sim)
    host = _ScriptedHost(sim, vq, p.payload)
    worker = RxWorker(sim, vq, sk, host)
    host.worker = worker
    reader = Reader(sim, sk, _NoHost(), worker)
    sim.env.process(host.main())      # a plain simpy process
    worker.start()
    reader.start()
    sim.run()
    trace = [(t, a, e + (f" {info}" if info else "")) for t, a, e, info in sim.trace]
    return StarvationResult(
        variant=p.variant, buffer=p.buffer, payload=p.payload, headroom_check=p.check_headroom,
        reader_wake_ns=reader_wake_ns, seed=p.seed, queue_max=kernel.queue_max(p.buffer),
        reset=sim.stats.resets > 0, reason=sim.stats.reset_reason,
        bytes_received=sim.stats.bytes_received, interleaving=trace)

