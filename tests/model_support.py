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
