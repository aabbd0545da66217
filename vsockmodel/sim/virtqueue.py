"""A split virtqueue, seen from both sides.

The guest driver (drivers/virtio/virtio_ring.c) posts buffers, kicks the
device, takes used buffers back and turns its interrupt on and off; the vhost
device (drivers/vhost/vhost.c) takes posted buffers, returns them used and
signals the guest. The rings are shared memory, so each operation is a place
where the two sides meet, and the rings carry time stamps: a buffer used at
vhost's clock is seen by the guest once its own clock has passed that time.

The device-side bookkeeping the book reports (buffers posted and used,
used-index writes, kicks, signals, runs that found the ring empty) is kept
here, by the ring, not by the kernel functions that use it.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter, deque
from typing import Any, Callable

from ..model import kernel
from .engine import Steps, Task


class Packet:
    """One guest RX buffer as filled by vhost: a header plus ``len`` payload bytes."""

    __slots__ = ("len", "write", "op")

    def __init__(self, length: int, write: int, op: int = kernel.VIRTIO_VSOCK_OP_RW) -> None:
        self.len = length
        self.write = write    # index of the host send() it belongs to
        self.op = op          # hdr->op: OP_RW (data) or OP_SHUTDOWN


class GuestPacket:
    """A packet the guest sends (virtio_transport_send_pkt): it carries the
    socket's credit, as every packet does, and ``nbytes`` of payload (a reply)."""

    __slots__ = ("op", "fwd_cnt", "buf_alloc", "nbytes")

    def __init__(self, op: int, fwd_cnt: int, buf_alloc: int, nbytes: int = 0) -> None:
        self.op = op
        self.fwd_cnt = fwd_cnt
        self.buf_alloc = buf_alloc
        self.nbytes = nbytes


class Virtqueue:
    """One virtqueue of the device: its rings and its notifications both ways."""

    def __init__(self, name: str, num: int) -> None:
        self.name = name
        self.num = num
        # Buffers the guest has posted (avail ring) and the device not yet taken:
        # empty RX buffers are a count; guest packets carry a time stamp.
        self.avail = num if name == "rx" else 0
        self.avail_pkts: deque[tuple[float, Any]] = deque()
        self.used: deque[tuple[float, Any]] = deque()   # (publish time, buffer), oldest first
        # Does the guest want an interrupt (virtqueue_enable_cb(), and with
        # VIRTIO_RING_F_EVENT_IDX its used_event, until one has come)? A log of
        # (time, wanted), in time order: each side writes it at its own clock.
        self.cb_log = FlagLog(True)
        self.callback: Callable[[float], None] | None = None   # vq->callback, from the interrupt
        self.irq: Callable[[float], None] | None = None         # the device's interrupt (irqfd)
        # Does the device want a kick (vhost_enable_notify / vhost_disable_notify)?
        # A log of (time, wanted), like cb_log.
        self.notify_log = FlagLog(True)
        self.kick_handler: Callable[[float], None] | None = None   # the device's poll (ioeventfd)
        # The threads on each side (set when the run is wired): whom a side meets.
        self.driver: tuple[Task, ...] = ()
        self.device: tuple[Task, ...] = ()
        # bookkeeping
        self.posted = 0          # buffers posted by the guest (after the first fill)
        self.add_calls = 0       # virtqueue_add_inbufs() calls: refills of the RX ring
        self.posted_ops: Counter = Counter()   # guest packets posted, by hdr->op
        self.taken = 0           # used buffers taken back by the guest
        self.taken_bytes = 0
        self.taken_ops: Counter = Counter()     # by hdr->op
        self.used_idx_writes = 0  # used->idx updates (vhost_add_used / _n calls)
        self.kicks = 0
        self.signalled = 0        # vhost_signal() calls
        self.irqs = 0             # interrupts the guest took for this queue
        self.ring_empty = 0       # vhost_get_vq_desc() found no buffer (head == vq->num)

    # ---- guest side ----------------------------------------------------------------
    def virtqueue_add_inbufs(self, task: Task, n: int) -> Steps:
        """virtqueue_add_sgs() of ``n`` empty buffers (one each), visible to vhost from now."""
        yield from task.sync(self.device)
        self.avail += n
        self.posted += n
        self.add_calls += 1

    def virtqueue_add_outbuf(self, task: Task, pkt: GuestPacket) -> None:
        """virtqueue_add_sgs() of one guest packet, in the ring from the task's clock."""
        self.avail_pkts.append((task.t, pkt))
        self.posted += 1
        self.posted_ops[pkt.op] += 1

    def virtqueue_kick_prepare(self, task: Task) -> Steps:
        """Does the device want a kick (it has not set VRING_USED_F_NO_NOTIFY)?
        The flag is in shared memory: the guest meets the device here."""
        yield from task.sync(self.device)
        return self.notify_log.at(task.t)

    def virtqueue_notify(self, task: Task, delay: float) -> None:
        """Kick the device: it hears of it ``delay`` later (the VM exit and the ioeventfd)."""
        self.kicks += 1
        self.kick_handler(task.t + delay)

    def virtqueue_get_buf(self, task: Task) -> Steps:
        """The oldest buffer vhost has used by the task's clock, or None. Before
        giving up, let vhost run up to that clock: it may use one first."""
        used = self.used
        while not used or used[0][0] > task.t:
            if not task.preceded(self.device):
                return None
            yield task.flush()
        buf = used.popleft()[1]
        self.taken += 1
        self.taken_bytes += getattr(buf, "len", 0)
        self.taken_ops[getattr(buf, "op", None)] += 1
        return buf

    def has_used(self, t: float) -> bool:
        """A used buffer is published by t (virtqueue_enable_cb()'s check, more_used())."""
        return bool(self.used) and self.used[0][0] <= t

    def _cb_set(self, t: float, wanted: bool) -> None:
        self.cb_log.set(t, wanted)

    def cb_wanted(self, t: float) -> bool:
        """Does the guest want an interrupt at time t?"""
        return self.cb_log.at(t)

    def virtqueue_disable_cb(self, task: Task) -> None:
        """Interrupts off (with EVENT_IDX, used_event = 0: no crossing for 64K buffers)."""
        self._cb_set(task.t, False)

    def virtqueue_enable_cb(self, task: Task) -> bool:
        """Interrupts on (used_event = last_used_idx); False if used buffers
        arrived meanwhile (virtqueue_poll()), and the driver goes on polling."""
        t = task.t
        self._cb_set(t, True)
        return not self.has_used(t)

    def vring_interrupt(self, ts: float, coalesced: bool = False) -> None:
        """The interrupt reached this queue at ts: vq->callback, if it has used buffers
        (more_used()); a shared vector runs every queue's. A message coalesced
        into a pending one is not a handler run of its own (not counted)."""
        if not self.has_used(ts):
            return
        if not coalesced:
            self.irqs += 1
        self.callback(ts)

    # ---- device side ----------------------------------------------------------------
    def vhost_get_vq_desc(self, dev: Task) -> Steps:
        """Take the next empty buffer the guest has posted; False if none
        (head == vq->num). Before giving up, let the guest run up to the
        device's clock: it may post some first."""
        while not self.avail:
            if not dev.preceded(self.driver):
                self.ring_empty += 1
                return False
            yield dev.flush()
        self.avail -= 1
        return True

    def vhost_get_guest_packet(self, dev: Task) -> Steps:
        """vhost_get_vq_desc() on a queue of guest packets: the next one posted
        by the device's clock, or None. Before giving up, let the guest run up
        to that clock: it may post one first (vhost_enable_notify()'s re-check)."""
        pkts = self.avail_pkts
        while not pkts:
            if not dev.preceded(self.driver):
                return None
            yield dev.flush()
        if pkts[0][0] > dev.t:
            return None
        return pkts.popleft()[1]

    def vhost_add_used(self, dev: Task, buf: Any) -> None:
        """One used element and a used->idx publish, at the device's clock."""
        self.used.append((dev.t, buf))
        self.used_idx_writes += 1

    def vhost_add_used_n(self, dev: Task, bufs: list) -> None:
        """Several used elements and one used->idx update."""
        t = dev.t
        self.used.extend((t, buf) for buf in bufs)
        self.used_idx_writes += 1

    def vhost_notify(self, dev: Task) -> Steps:
        """drivers/vhost/vhost.c vhost_notify(): does the guest want an interrupt?
        It reads used_event from guest memory, so the device meets the driver here.
        With VIRTIO_RING_F_EVENT_IDX, after one interrupt the used index does not
        cross used_event again until the driver re-enables callbacks."""
        yield from dev.sync(self.driver)
        t = dev.t
        if not self.cb_wanted(t):
            return False
        self._cb_set(t, False)
        return True

    def eventfd_signal(self, dev: Task) -> None:
        """The call eventfd: KVM's irqfd injects the device's interrupt at the device's clock."""
        self.signalled += 1
        self.irq(dev.t)

    def vhost_enable_notify(self, dev: Task) -> None:
        self.notify_log.set(dev.t, True)

    def vhost_disable_notify(self, dev: Task) -> None:
        self.notify_log.set(dev.t, False)


class FlagLog:
    """A flag in shared memory that each side writes at its own clock: its
    recent values by time, so a side can read it as it was at its clock."""

    KEEP = 8                     # only the recent past is ever asked about

    __slots__ = ("entries", "writes")

    def __init__(self, value: bool) -> None:
        self.entries: list[tuple[float, int, bool]] = [(0.0, 0, value)]
        self.writes = itertools.count(1)     # of two writes at the same time, the later holds

    def set(self, t: float, value: bool) -> None:
        bisect.insort(self.entries, (t, next(self.writes), value))
        if len(self.entries) > self.KEEP:
            del self.entries[:-self.KEEP]

    def at(self, t: float) -> bool:
        """The flag's value at time t."""
        entries = self.entries
        i = bisect.bisect_right(entries, (t, math.inf))
        return i > 0 and entries[i - 1][2]
