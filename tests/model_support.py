"""Kernel functions of the model outside a run: one guest socket with its RX
worker and reader, to call one function at a time."""

from __future__ import annotations

import vsockmodel as vm
from vsockmodel.sim.engine import Sim
from vsockmodel.sim.guest import RxWorker
from vsockmodel.sim.reader import Reader
from vsockmodel.sim.sock import GuestSock, Skb
from vsockmodel.sim.virtqueue import RxVirtqueue


def guest(buffer=4096, **params):
    """A guest socket and its RX worker (no vhost, no reader)."""
    p, costs = vm.make_params(buffer=buffer, **params)
    sim = Sim(p, costs)
    sk = GuestSock(sim)
    return sk, RxWorker(sim, RxVirtqueue(p.rx_ring_size), sk, None)


class CreditLog:
    """Stands in for vhost's TX side: records the credit updates it receives."""

    def __init__(self):
        self.updates = []

    def from_guest(self, t, fwd_cnt, buf_alloc, nbytes=0):
        self.updates.append(fwd_cnt)


def reader(buffer=4096, **params):
    """A guest socket, its RX worker and its reader; credit updates go to a CreditLog."""
    sk, worker = guest(buffer=buffer, **params)
    host = CreditLog()
    return sk, Reader(worker.sim, sk, host, worker), host


def queue(sk: GuestSock, *lengths: int, offsets: dict | None = None) -> list[Skb]:
    """Put skbs of these lengths on rx_queue, with their bytes accounted as
    virtio_transport_inc_rx_pkt() would; ``offsets`` marks skbs partly read."""
    skbs = [Skb(n, 0) for n in lengths]
    for i, off in (offsets or {}).items():
        skbs[i].off = off
    sk.rx_queue.extend(skbs)
    sk.rx_bytes += sum(s.len - s.off for s in skbs)
    sk.buf_used += sum(s.len for s in skbs)
    sk.stats.bytes_enqueued += sum(s.len for s in skbs)
    return skbs


class SignalLog:
    """Stands in for the RX worker on vhost's side: counts vhost_signal()s."""

    def __init__(self):
        self.signals = 0

    def signal(self, t):
        self.signals += 1


class IdleSender:
    """Stands in for the host sender: nobody waits for send space."""

    blocked = None
    resume_at = None

    def notify(self, t):
        pass


def vhost_alone(used_batch=False, **params):
    """vhost with a plentiful guest ring and credit, a SignalLog worker and an IdleSender."""
    from vsockmodel.sim.host import HostSocket, Vhost

    p, costs = vm.make_params(vhost_used_batch=used_batch, **params)
    vq = RxVirtqueue(p.rx_ring_size)
    vq.avail = 1000                                     # buffers are not the limit here
    vhost = Vhost(Sim(p, costs), vq, HostSocket(peer_buf_alloc=1 << 30))
    vhost.worker = SignalLog()
    vhost.sender = IdleSender()
    return vhost, vq


def drain(steps) -> None:
    """Run a kernel function's generator to its end, outside a simulation (nothing else is scheduled)."""
    for _ in steps:
        pass
