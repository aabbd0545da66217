"""The host side: the vsock_perf sender and the vhost worker that fills guest buffers.

Both are host threads running in parallel. They talk through time-stamped
queues: the sender stamps each skb with the time it was queued, vhost stamps
each used buffer with the time it was published, and a reader of a queue only
takes entries whose stamp has passed. Credit and RX buffers only ever grow
from the guest's side, so the host can run ahead of the guest while it has
both, and needs to synchronise only when it is about to block.
"""

from __future__ import annotations

from collections import deque

from .. import kernel
from .engine import Sim, Task, Wakeup
from .virtqueue import Packet, RxVirtqueue


class HostSkb:
    """An skb on vhost's send_pkt_queue: ``len`` payload bytes, ``offset`` already sent."""

    __slots__ = ("len", "offset", "write")

    def __init__(self, length: int, write: int):
        self.len = length
        self.offset = 0
        self.write = write


class HostSocket:
    """The host end's credit view (virtio_vsock_sock TX side, under tx_lock)."""

    def __init__(self, peer_buf_alloc: int):
        self.tx_cnt = 0
        self.peer_fwd_cnt = 0
        self.peer_buf_alloc = peer_buf_alloc

    def credit(self) -> int:
        """peer_buf_alloc - (tx_cnt - peer_fwd_cnt): may not go below zero."""
        return self.peer_buf_alloc - (self.tx_cnt - self.peer_fwd_cnt)

    def has_space(self) -> int:
        """virtio_transport_has_space()."""
        return max(0, self.credit())


class Sender(Task):
    """vsock_perf --sender: a loop of send(payload) on the host, blocking on credit.

    In ping-pong mode it waits for the guest's reply after each send.
    """

    def __init__(self, sim: Sim, sock: HostSocket, vhost: "Vhost"):
        super().__init__(sim, "sender")
        self.sock = sock
        self.vhost = vhost
        self.credit_wait: Wakeup | None = None   # blocked in vsock_connectible_sendmsg
        self.reply_wait: Wakeup | None = None    # ping-pong: waiting in recv()
        self.reply_bytes = 0

    def main(self):
        p, c, stats, sock = self.sim.p, self.c, self.sim.stats, self.sock
        skb_ns, copy_ns = c.host_skb_ns, c.host_copy_byte_ns
        max_skb = kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE
        for write in range(p.writes):
            t_start = self.t
            self.work(c.host_send_ns)
            remaining = p.payload
            while remaining:
                # virtio_transport_get_credit(): credit only grows from the guest's
                # side, so having some now means having it at our virtual time.
                credit = min(remaining, sock.has_space())
                if credit == 0:
                    ev = self.sync()
                    if ev is not None:
                        yield ev
                        continue
                    stats.sender_blocked += 1
                    self.credit_wait = Wakeup(self.env)
                    yield from self.sleep_on(self.credit_wait)
                    continue
                # virtio_transport_send_pkt_info(): skbs of at most 64 KiB
                while credit:
                    chunk = min(credit, max_skb)
                    self.work(skb_ns + chunk * copy_ns)
                    sock.tx_cnt += chunk
                    stats.bytes_sent += chunk
                    self.vhost.queue(self.t, HostSkb(chunk, write))
                    credit -= chunk
                    remaining -= chunk
                stats.min_host_credit = min(stats.min_host_credit, sock.credit())
            stats.writes += 1
            if p.workload == "pingpong":
                yield from self.wait_reply(p.payload)
                stats.rtt.append(self.t - t_start)

    def wait_reply(self, nbytes: int):
        while self.reply_bytes < nbytes:
            self.reply_wait = Wakeup(self.env)
            yield from self.sleep_on(self.reply_wait)
        self.reply_bytes -= nbytes
        self.work(self.c.host_send_ns)  # the recv() that returns the reply

    # ---- called from the guest's events -------------------------------------------
    def credit_update(self, fwd_cnt: int, buf_alloc: int) -> None:
        """A guest packet carrying credit arrives (virtio_transport_space_update)."""
        self.sock.peer_fwd_cnt = max(self.sock.peer_fwd_cnt, fwd_cnt)
        self.sock.peer_buf_alloc = buf_alloc
        if self.credit_wait is not None and self.sock.has_space() > 0:
            ev, self.credit_wait = self.credit_wait, None
            # sk_write_space on the host wakes the blocked sender
            ev.fire(self.sim.latency(self.c.host_wake_latency_ns))

    def reply(self, nbytes: int) -> None:
        self.reply_bytes += nbytes
        if self.reply_wait is not None:
            ev, self.reply_wait = self.reply_wait, None
            ev.fire(self.sim.latency(self.c.host_wake_latency_ns))


class Vhost(Task):
    """The vhost worker running vhost_transport_do_send_pkt() for the guest RX queue."""

    def __init__(self, sim: Sim, vq: RxVirtqueue):
        super().__init__(sim, "vhost")
        self.vq = vq
        self.send_pkt_queue: deque = deque()   # (time queued, HostSkb)
        self.idle: Wakeup | None = None
        self.worker = None   # the guest RX worker, for interrupts (set by the model)

    def queue(self, t: float, skb: HostSkb) -> None:
        """vhost_transport_send_pkt(): queue the skb and wake the worker thread."""
        self.send_pkt_queue.append((t, skb))
        if self.idle is not None:
            ev, self.idle = self.idle, None
            ev.fire(t - self.env._now + self.sim.latency(self.c.host_wake_latency_ns))

    def kick(self, delay: float) -> None:
        """The guest kicked the RX queue after a refill (vhost_vsock_handle_rx_kick)."""
        if self.idle is not None:
            ev, self.idle = self.idle, None
            ev.fire(delay)

    def main(self):
        vq, c = self.vq, self.c
        q = self.send_pkt_queue
        while True:
            if not q or not vq.avail:
                ev = self.sync()
                if ev is not None:
                    yield ev
                    continue
                vq.vhost_notify = True                  # vhost_enable_notify()
                self.idle = Wakeup(self.env)
                yield from self.sleep_on(self.idle)
                continue
            # Work queued after our virtual time wakes this thread up: idle until
            # then, plus the host's wake-up latency.
            t_queued = q[0][0]
            if t_queued > self.t:
                self.idle_until(t_queued + self.sim.latency(c.host_wake_latency_ns))
            vq.vhost_notify = False                     # vhost_disable_notify()
            yield from self.do_send_pkt()

    def do_send_pkt(self):
        """One run of vhost_transport_do_send_pkt(), bounded by vhost_exceeds_weight()."""
        p, c, vq, stats = self.sim.p, self.c, self.vq, self.sim.stats
        q = self.send_pkt_queue
        pkt_ns = c.vhost_pkt_ns + (0 if p.spec.skb else c.vhost_desc_extra_ns)
        copy_ns, add_used_ns = c.vhost_copy_byte_ns, c.vhost_add_used_ns
        buf_payload = p.buf_payload
        used_batch = p.vhost_used_batch
        pkts = total_len = 0
        pending: list[Packet] = []   # vhost_used_batch: heads not yet published
        stats.vhost_runs += 1
        while True:
            if not q:
                ev = self.sync()                        # the sender may be behind us
                if ev is not None:
                    yield ev
                if not q:
                    break
            t_queued, skb = q[0]
            if t_queued > self.t:
                break                                   # queue empty at our time: run ends
            if not vq.avail:
                ev = self.sync()
                if ev is not None:
                    yield ev
                if not vq.avail:
                    break                               # no guest buffer: wait for a kick
            vq.avail -= 1                               # vhost_get_vq_desc()
            payload_len = min(skb.len - skb.offset, buf_payload)   # the split
            pkt = Packet(payload_len, skb.write)
            if used_batch:
                self.work(pkt_ns + payload_len * copy_ns)
                pending.append(pkt)
                if len(pending) == vq.size:             # used_limit: the ring size
                    self._add_used_n(pending)
                    pending = []
            else:
                # copy header + payload, then vhost_add_used(): publish one element
                self.work(pkt_ns + add_used_ns + payload_len * copy_ns)
                vq.publish(self.env._now + self.acc, pkt)
                stats.used_publishes += 1
            skb.offset += payload_len
            if skb.offset == skb.len:
                q.popleft()
            pkts += 1
            total_len += payload_len
            if pkts >= kernel.VHOST_VSOCK_PKT_WEIGHT or total_len >= kernel.VHOST_VSOCK_WEIGHT:
                break                                   # vhost_exceeds_weight(): requeue
        if pending:
            self._add_used_n(pending)
        if pkts:
            self.work(c.vhost_signal_ns)
            stats.vhost_signals += 1
            self.sim.log(self.t, "vhost", "signal", pkts=pkts)
            self.worker.signal(self.t)                  # vhost_signal()

    def _add_used_n(self, pkts: list[Packet]) -> None:
        """vhost_add_used_n(): several used elements and one used->idx update."""
        self.work(self.c.vhost_add_used_ns + (len(pkts) - 1) * self.c.vhost_used_entry_ns)
        t = self.t
        for pkt in pkts:
            self.vq.publish(t, pkt)
        self.sim.stats.used_publishes += 1
