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
from typing import Any

from ..model import kernel
from ..model.kernel import vhost_exceeds_weight
from .engine import Sim, Steps, Task, Wakeup
from .virtqueue import Packet, RxVirtqueue


class HostSkb:
    """An skb on vhost's send_pkt_queue: ``len`` payload bytes, ``offset`` already
    sent, and the ``truesize`` charged to the host socket's sk_wmem_alloc until
    vhost frees it (kernel.tx_skb_truesize, unless the caller knows it)."""

    __slots__ = ("len", "offset", "write", "op", "truesize")

    def __init__(self, length: int, write: int, op: int = kernel.VIRTIO_VSOCK_OP_RW,
                 truesize: int = -1) -> None:
        self.len = length
        self.offset = 0
        self.write = write
        self.op = op
        self.truesize = truesize if truesize >= 0 else kernel.tx_skb_truesize(length)


class HostSocket:
    """The host end's credit view (virtio_vsock_sock TX side, under tx_lock).

    Credit learned from guest packets is stamped with the time the vhost thread
    processed them; the sender applies an entry once its own time has passed it.
    """

    __slots__ = ("tx_cnt", "peer_fwd_cnt", "peer_buf_alloc", "buf_alloc", "learned", "held",
                 "sndbuf", "wakes")

    def __init__(self, peer_buf_alloc: int, buf_alloc: int = kernel.VSOCK_DEFAULT_BUFFER_SIZE) -> None:
        self.tx_cnt = 0
        self.peer_fwd_cnt = 0
        self.peer_buf_alloc = peer_buf_alloc
        # The host socket's own buffer: vsock_perf sets --vsk-size on the
        # receiver only, so the sender keeps the 256 KiB default.
        self.buf_alloc = buf_alloc
        self.learned: deque = deque()   # (time, fwd_cnt, buf_alloc)
        # The sender's lock_sock .. release_sock intervals, (start, end), oldest
        # first, recorded when the host socket's lock is modelled (host_lock).
        self.held: deque = deque()
        # sk_sndbuf, and the times vhost called sk_write_space() while the socket
        # was writeable, oldest first: each wakes a sender asleep on credit
        # then (sock_def_write_space). Kept until the sender's time passes them.
        self.sndbuf = kernel.SK_SNDBUF_DEFAULT
        self.wakes: deque = deque()

    def space_update(self, t: float) -> None:
        """virtio_transport_space_update() for every guest packet vhost had
        processed by time t: take the peer's fwd_cnt and buf_alloc."""
        learned = self.learned
        while learned and learned[0][0] <= t:
            _, fwd_cnt, buf_alloc = learned.popleft()
            if fwd_cnt > self.peer_fwd_cnt:                 # max(): no call
                self.peer_fwd_cnt = fwd_cnt
            self.peer_buf_alloc = buf_alloc

    def credit(self) -> int:
        """min(peer_buf_alloc, buf_alloc) - (tx_cnt - peer_fwd_cnt), as in
        virtio_transport_has_space(): a guest buffer larger than the sender's
        own does not widen the window. May not go below zero."""
        peer, own = self.peer_buf_alloc, self.buf_alloc
        return (peer if peer < own else own) - (self.tx_cnt - self.peer_fwd_cnt)  # min(): no call

    def has_space(self) -> int:
        """virtio_transport_has_space()."""
        credit = self.credit()
        return credit if credit > 0 else 0                  # max(0, credit): no call

    def next_wake(self, t: float) -> float | None:
        """The first sk_write_space() after time t that wakes a sender asleep
        since t, if vhost has got that far; None if not yet."""
        wakes = self.wakes
        while wakes and wakes[0] <= t:
            wakes.popleft()
        return wakes[0] if wakes else None


class Sender(Task):
    """vsock_perf --sender: a loop of send(payload) on the host, blocking on credit.

    vsock_connectible_sendmsg() (net/vmw_vsock/af_vsock.c) owns the host
    socket's lock for the whole send(), and releases it only while it waits for
    credit (release_sock, wait_woken, lock_sock). With ``host_lock`` the sender
    records those ownership intervals in ``sock.held`` for vhost, which needs
    the same lock for every guest packet. In ping-pong mode it waits for the
    guest's reply after each send.

    Simplifications of ``host_lock``, which make it the upper bound of the
    lock's effect on vhost: all of a send()'s CPU time counts as owned,
    syscall entry and exit included, so back-to-back sends leave vhost no gap;
    the sender never waits for vhost's own short holds; the lock taken by the
    ping-pong recv() and by the final close is not recorded.

    Invariant vhost relies on: an interval is recorded when it ends
    (release_sock), so the sender never yields between lock_sock and
    release_sock; it yields only after release_sock, or while it waits.
    """

    __slots__ = ("sock", "vhost", "blocked", "replies")

    def __init__(self, sim: Sim, sock: HostSocket, vhost: "Vhost") -> None:
        super().__init__(sim, "sender")
        self.sock = sock
        self.vhost = vhost
        self.blocked: Wakeup | None = None   # waiting for credit, or for a reply
        self.replies: deque = deque()        # ping-pong: (time, bytes) echoed back

    def main(self) -> Steps:
        p, c, stats, sock = self.sim.p, self.c, self.sim.stats, self.sock
        skb_ns, copy_ns = c.host_skb_ns, c.host_copy_byte_ns
        max_skb = kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE
        env, payload, send_ns = self.env, p.payload, c.host_send_ns
        one_skb_ns = send_ns + skb_ns + payload * copy_ns   # a write that fits one skb
        one_skb_truesize = kernel.tx_skb_truesize(payload)
        wakes = sock.wakes
        pingpong = p.workload == "pingpong"
        queue = self.vhost.queue
        host_lock = p.host_lock
        for write in range(p.writes):
            t_start = env._now + self.acc
            if wakes and wakes[0] <= t_start:               # wake-ups nobody slept for
                sock.next_wake(t_start)
            if payload <= max_skb:
                if sock.learned:
                    sock.space_update(t_start)
                credit = sock.credit()
                if credit >= payload:
                    # The common case: credit for the whole write, one skb.
                    self.work(one_skb_ns)
                    if host_lock:
                        self.release_sock(t_start)          # owned since the send() began
                    sock.tx_cnt += payload
                    stats.bytes_sent += payload
                    if credit - payload < stats.min_host_credit:
                        stats.min_host_credit = credit - payload
                    queue(env._now + self.acc, HostSkb(payload, write, truesize=one_skb_truesize))
                    stats.writes += 1
                    if pingpong:
                        yield from self.wait_reply(payload)
                        stats.rtt.append(self.t - t_start)
                    continue
            self.work(send_ns)
            locked_at: float | None = t_start               # lock_sock()
            remaining = payload
            while remaining:
                # virtio_transport_get_credit(): credit only grows from the guest's
                # side, so having some now means having it at our virtual time.
                sock.space_update(env._now + self.acc)
                credit = sock.has_space()
                if credit > remaining:                      # min(): no call
                    credit = remaining
                if credit == 0:
                    if locked_at is not None:
                        if host_lock:                       # release_sock(), wait_woken()
                            self.release_sock(locked_at)
                        locked_at = None
                    stats.sender_blocked += 1
                    wake = sock.next_wake(env._now + self.acc)
                    if wake is not None:
                        # vhost has already woken us (sk_write_space on a writeable
                        # socket): sleep until then, and look at the credit again.
                        self.idle_until(wake + self.sim.latency(c.host_wake_latency_ns))
                        continue
                    ev = self.sync()
                    if ev is not None:
                        yield ev
                        continue
                    yield from self.block()                 # vsock_connectible_sendmsg waits
                    continue
                if locked_at is None:
                    locked_at = env._now + self.acc         # lock_sock() after the wait
                # virtio_transport_send_pkt_info(): skbs of at most 64 KiB
                while credit:
                    chunk = credit if credit < max_skb else max_skb   # min(): no call
                    self.work(skb_ns + chunk * copy_ns)
                    sock.tx_cnt += chunk
                    stats.bytes_sent += chunk
                    if sock.credit() < stats.min_host_credit:
                        stats.min_host_credit = sock.credit()
                    queue(env._now + self.acc, HostSkb(chunk, write))
                    credit -= chunk
                    remaining -= chunk
            if host_lock:
                assert locked_at is not None                # taken again before the last skb
                self.release_sock(locked_at)
            stats.writes += 1
            if pingpong:
                yield from self.wait_reply(p.payload)
                stats.rtt.append(self.t - t_start)
        if not pingpong:
            # vsock_perf closes the socket: virtio_transport_release() ->
            # virtio_transport_close() -> virtio_transport_shutdown() sends
            # OP_SHUTDOWN, which needs no credit and follows the last data in order. It is
            # what wakes a reader still waiting for SO_RCVLOWAT bytes at the end.
            self.work(send_ns)
            queue(env._now + self.acc, HostSkb(0, p.writes, kernel.VIRTIO_VSOCK_OP_SHUTDOWN))

    def release_sock(self, since: float) -> None:
        """release_sock() now, after owning the host socket's lock since ``since``
        (the interval vhost's lock_sock() has to wait out)."""
        end = self.env._now + self.acc
        self.sock.held.append((since, end))
        if self.trace is not None:
            self.sim.log(since, "sender", "lock_held", until=end)

    def block(self) -> Steps:
        self.blocked = Wakeup(self)
        yield from self.sleep_on(self.blocked)

    def wait_reply(self, nbytes: int) -> Steps:
        got = 0
        while got < nbytes:
            replies = self.replies
            if replies:
                if replies[0][0] > self.t:
                    self.idle_until(replies[0][0] + self.sim.latency(self.c.host_wake_latency_ns))
                got += replies.popleft()[1]
                continue
            ev = self.sync()
            if ev is not None:
                yield ev
                continue
            yield from self.block()
        self.work(self.c.host_send_ns)  # the recv() that returns the reply

    def notify(self, t: float) -> None:
        """sk_write_space / sk_data_ready on the host socket at time t."""
        if self.blocked is not None:
            ev, self.blocked = self.blocked, None
            ev.fire(t - self.env._now + self.sim.latency(self.c.host_wake_latency_ns))


class Vhost(Task):
    """The vhost worker thread of the device.

    One thread serves both virtqueues: the guest RX queue
    (vhost_transport_do_send_pkt, host to guest data) and the guest TX queue
    (vhost_vsock_handle_tx_kick: credit updates and replies from the guest).
    """

    __slots__ = ("vq", "sock", "send_pkt_queue", "tx_queue", "idle", "pending_used", "worker",
                 "sender", "reader", "lookahead", "pkt_ns", "buf_payload", "used_batch", "min_wake",
                 "copy_ns", "pkt_add_used_ns", "host_lock", "tx_used", "wmem", "uncharged")

    def __init__(self, sim: Sim, vq: RxVirtqueue, sock: HostSocket) -> None:
        super().__init__(sim, "vhost")
        self.vq = vq
        self.sock = sock
        self.send_pkt_queue: deque = deque()   # (time queued, HostSkb)
        # The host socket's sk_wmem_alloc, as of vhost's time: the truesize of the
        # queued skbs, charged once vhost's time reaches the time they were queued
        # (the sender may run ahead). ``uncharged``: (time queued, truesize), oldest first.
        self.wmem = 0
        self.uncharged: deque = deque()
        self.tx_queue: deque = deque()         # (time kicked, fwd_cnt, buf_alloc, reply bytes)
        self.idle: Wakeup | None = None
        self.pending_used: list[Packet] = []   # filled buffers not yet in the used ring
        # Set by the model once every actor exists. Typed Any so that a test
        # may put a stand-in there (the compiled class checks declared types).
        self.worker: Any    # RxWorker: the guest RX worker, for interrupts
        self.sender: Any    # Sender: the host sender, woken by credit and replies
        self.reader: Any    # Reader: the guest task that sends us credit updates and replies
        # Guest packets reach us at least this long after the guest acts.
        self.lookahead = sim.c.host_to_guest_latency_ns
        p, c = sim.p, sim.c
        self.pkt_ns = c.vhost_pkt_ns + (0 if p.spec.skb else c.vhost_desc_extra_ns)
        self.buf_payload = p.buf_payload
        self.used_batch = p.vhost_used_batch
        self.host_lock = p.host_lock
        self.tx_used = 0     # guest TX buffers used since the last TX-queue signal
        self.copy_ns = c.vhost_copy_byte_ns                    # per payload byte copied
        self.pkt_add_used_ns = self.pkt_ns + c.vhost_add_used_ns   # per buffer, vhost_add_used
        self.min_wake = min(sim.c.vcpu_wake_short_ns, sim.c.vcpu_wake_long_ns) * min(sim._wake)

    def queue(self, t: float, skb: HostSkb) -> None:
        """vhost_transport_send_pkt(): queue the skb and wake the worker thread."""
        self.send_pkt_queue.append((t, skb))
        self.uncharged.append((t, skb.truesize))
        if self.idle is not None:
            self._wake(self.idle, t)

    def charge_wmem(self, t: float) -> None:
        """Charge sk_wmem_alloc with the skbs the sender had queued by time t
        (skb_set_owner_w). ``t`` never goes back: it is vhost's own time."""
        uncharged = self.uncharged
        while uncharged and uncharged[0][0] <= t:
            self.wmem += uncharged.popleft()[1]

    def sock_writeable(self, t: float) -> bool:
        """sock_writeable() (include/net/sock.h) of the host socket at vhost's
        time t: sk_wmem_alloc below half of sk_sndbuf."""
        self.charge_wmem(t)
        return 1 + self.wmem < self.sock.sndbuf >> 1      # sk_wmem_alloc starts at 1

    def write_space(self, t: float) -> bool:
        """sk->sk_write_space() = sock_def_write_space() on the host socket at
        time t: it wakes a sender asleep on credit only if the socket is
        writeable. Returns whether it was."""
        if not self.sock_writeable(t):
            return False
        sender = self.sender
        if sender.blocked is not None:
            sender.notify(t)
        else:
            # Recorded for a sender that has not run up to t yet: it may run out
            # of credit, and fall asleep, before t (Sender.main, next_wake).
            r = sender.resume_at
            if r is None or r <= t:
                self.sock.wakes.append(t)
        return True

    def kick(self, delay: float) -> None:
        """The guest kicked the RX queue after a refill (vhost_vsock_handle_rx_kick)."""
        if self.idle is not None:
            ev, self.idle = self.idle, None
            ev.fire(delay)

    def from_guest(self, t: float, fwd_cnt: int, buf_alloc: int, nbytes: int = 0) -> None:
        """A guest TX kick at time t: a credit update, or a reply of nbytes."""
        self.tx_queue.append((t, fwd_cnt, buf_alloc, nbytes))
        if self.idle is not None:
            self._wake(self.idle, t)

    def _wake(self, ev: Wakeup, t: float) -> None:
        """Wake the idle thread, asleep on ``ev`` (self.idle)."""
        self.idle = None
        ev.fire(t - self.env._now + self.sim.latency(self.c.host_wake_latency_ns))

    def horizon(self) -> float:
        """How far ahead this thread may run without missing a guest packet.

        Only the reader sends us packets, and only when it runs. If it is
        asleep and nobody has woken it yet, only the RX worker can (after a
        wake-up latency), and the worker itself is either scheduled or waiting
        for our next interrupt.
        """
        r = self.reader.resume_at
        if r is None:
            w = self.worker.resume_at
            if w is None:
                w = self.t
            r = w + self.min_wake
        now = self.env._now
        return (r if r >= now else now) + self.lookahead    # max(r, now): no call

    # host_lock_sock() and handle_tx(): why vhost stopped before a guest packet
    WAITED = 1
    MUST_SYNC = 2

    def host_lock_sock(self) -> int:
        """lock_sock() on the host socket, for virtio_transport_recv_pkt(): 0 if
        vhost owns it now, WAITED if it slept, MUST_SYNC if it cannot tell yet.

        While vsock_perf is inside send() it owns the lock, and vhost sleeps on
        sk_lock.wq until release_sock() wakes it; it runs a host wake-up latency
        later, and by then a sender still looping on send() owns the lock again
        (the same race as on the guest socket, sock.py): vhost gets it only once
        the sender waits for credit. The sender's ownership is known up to its
        own virtual time; if that is behind ours, the caller lets it run first.
        All of vhost_tx_pkt_ns waits behind the lock (in the kernel the
        descriptor fetch and the copy come before lock_sock), and the sleep
        itself costs vhost no CPU time. The extra synchronisations change the
        order of random draws, so a run with ``host_lock`` differs slightly
        from one without even when vhost never waits.
        """
        t = self.env._now + self.acc
        held = self.sock.held
        while held and held[0][1] <= t:
            held.popleft()
        if held and held[0][0] <= t:                        # __lock_sock(): sleep
            self.idle_until(held[0][1] + self.sim.latency(self.c.host_wake_latency_ns))
            self.stats.host_lock_waits += 1
            if self.trace is not None:
                self.sim.log(t, "vhost", "host_lock_wait", until=self.env._now + self.acc)
            return self.WAITED
        sender = self.sender
        known = sender.resume_at
        if not sender.exited and known is not None and known <= t:
            return self.MUST_SYNC
        return 0

    def handle_tx(self) -> int:
        """vhost_vsock_handle_tx_kick(): each guest packet reaches the host socket.

        Returns 0 when every packet due has been handled, or host_lock_sock()'s
        reason for stopping early.
        """
        tx, env, sender = self.tx_queue, self.env, self.sender
        status = 0
        while tx and tx[0][0] <= env._now + self.acc:
            if self.host_lock:
                status = self.host_lock_sock()
                if status:
                    break
            _, fwd_cnt, buf_alloc, nbytes = tx.popleft()
            if self.trace is not None:
                self.sim.log(env._now + self.acc, "vhost", "host_recv_pkt")
            self.work(self.c.vhost_tx_pkt_ns)
            t = env._now + self.acc
            self.sock.learned.append((t, fwd_cnt, buf_alloc))
            self.stats.guest_tx_pkts += 1
            # virtio_transport_recv_pkt(): space_update, then sk_write_space
            if not self.write_space(t):
                self.stats.credit_unwriteable += 1
            if nbytes:
                sender.replies.append((t, nbytes))
                sender.notify(t)                        # a reply: sk_data_ready
            self.tx_used += 1
        if self.tx_used and not status:
            # vhost_add_used() per buffer (in vhost_tx_pkt_ns), one vhost_signal()
            # when the queue is drained
            if self.trace is not None:
                self.sim.log(env._now + self.acc, "vhost", "tx_signal", bufs=self.tx_used)
            self.worker.tx_signal(env._now + self.acc, self.tx_used)
            self.tx_used = 0
        return status

    def main(self) -> Steps:
        vq, c, env = self.vq, self.c, self.env
        q, tx = self.send_pkt_queue, self.tx_queue
        while True:
            # vhost_run_work_list() runs one work item at a time: guest packets
            # that arrived during an RX run are handled between runs. Make sure
            # we know every guest packet sent before our virtual time.
            t = env._now + self.acc
            if t > self.horizon():
                yield self.flush()
                continue
            if tx and tx[0][0] <= t:
                status = self.handle_tx()
                if status == self.MUST_SYNC:
                    yield self.flush()                      # let the sender catch up
                    continue
                if status:                                  # slept on the lock: look again
                    continue
            if not q or not vq.avail:
                ev = self.sync()
                if ev is not None:
                    yield ev
                    continue
                if tx:
                    # Nothing to send to the guest yet: idle until its next packet.
                    idle_from = env._now + self.acc
                    self.idle_until(tx[0][0] + self.sim.latency(c.host_wake_latency_ns))
                    if q:                               # data queued, no guest buffer
                        self.stats.vhost_no_rx_buf_ns += env._now + self.acc - idle_from
                    continue
                vq.vhost_notify = True                  # vhost_enable_notify()
                # With data queued, the guest's RX ring is what vhost waits for:
                # the guest refills it only when an rx_work run ends.
                starved_since = env._now + self.acc if q else None
                self.idle = Wakeup(self)
                yield from self.sleep_on(self.idle)
                if starved_since is not None:
                    self.stats.vhost_no_rx_buf_ns += env._now - starved_since
                continue
            # Work queued after our virtual time wakes this thread up: idle until
            # then, plus the host's wake-up latency.
            t_queued = q[0][0]
            if t_queued > env._now + self.acc:
                if tx and tx[0][0] < t_queued:
                    self.idle_until(tx[0][0] + self.sim.latency(c.host_wake_latency_ns))
                    continue
                self.idle_until(t_queued + self.sim.latency(c.host_wake_latency_ns))
            vq.vhost_notify = False                     # vhost_disable_notify()
            self.stats.vhost_runs += 1
            rest = self.do_send_pkt(0, 0)
            if rest is not None:
                yield from rest

    def do_send_pkt(self, pkts: int, total_len: int) -> Steps | None:
        """One run of vhost_transport_do_send_pkt(), bounded by vhost_exceeds_weight(),
        from its ``pkts``-th buffer (``total_len`` bytes so far) on.

        Like the RX worker's per-packet functions, it returns None when the run
        ended without having to wait, or a generator that finishes the run
        after a sync: most runs then cost no generator at all.
        """
        vq, stats, env, q = self.vq, self.stats, self.env, self.send_pkt_queue
        buf_payload, copy_ns = self.buf_payload, self.copy_ns
        while True:
            if not q:
                if self.behind():                       # the sender may be behind us
                    return self._do_send_pkt_after_sync(pkts, total_len)
                vq.vhost_notify = True                  # vhost_enable_notify(): queue empty
                break
            t_queued, skb = q[0]
            if t_queued > env._now + self.acc:
                vq.vhost_notify = True                  # queue empty at our time: run ends
                break
            if not vq.avail:
                if self.behind():                       # a refill may be behind us
                    return self._do_send_pkt_after_sync(pkts, total_len)
                vq.vhost_notify = True                  # no guest buffer: wait for a kick
                break
            vq.avail -= 1                               # vhost_get_vq_desc()
            payload_len = skb.len - skb.offset          # the split
            if payload_len > buf_payload:
                payload_len = buf_payload
            pkt = Packet(payload_len, skb.write, skb.op)
            if self.used_batch:
                self.work(self.pkt_ns + payload_len * copy_ns)
                pending = self.pending_used             # heads not yet published
                pending.append(pkt)
                if len(pending) == vq.size:             # used_limit: the ring size
                    self._add_used_n(pending)
            else:
                # copy header + payload, then vhost_add_used(): publish one element
                self.work(self.pkt_add_used_ns + payload_len * copy_ns)
                vq.used.append((env._now + self.acc, pkt))
                stats.used_publishes += 1
            skb.offset += payload_len
            if skb.offset == skb.len:
                q.popleft()
                # virtio_transport_consume_skb_sent() -> consume_skb() -> sock_wfree():
                # the truesize leaves sk_wmem_alloc, and sk_write_space() runs
                t_free = env._now + self.acc
                self.charge_wmem(t_free)                # it was queued by now
                self.wmem -= skb.truesize
                self.write_space(t_free)
            pkts += 1
            total_len += payload_len
            if vhost_exceeds_weight(pkts, total_len):
                break                                   # requeue the work
        if self.pending_used:
            self._add_used_n(self.pending_used)
        if pkts:
            self.work(self.c.vhost_signal_ns)
            stats.vhost_signals += 1
            if self.sim.trace is not None:
                self.sim.log(self.t, "vhost", "signal", pkts=pkts)
            self.worker.signal(env._now + self.acc)     # vhost_signal()
        return None

    def _do_send_pkt_after_sync(self, pkts: int, total_len: int) -> Steps:
        """The rest of a run that had to let other actors catch up first."""
        yield self.flush()
        rest = self.do_send_pkt(pkts, total_len)
        if rest is not None:
            yield from rest

    def _add_used_n(self, pkts: list[Packet]) -> None:
        """vhost_add_used_n(): several used elements and one used->idx update."""
        self.work(self.c.vhost_add_used_ns + (len(pkts) - 1) * self.c.vhost_used_entry_ns)
        t = self.t
        for pkt in pkts:
            self.vq.publish(t, pkt)
        pkts.clear()
        self.sim.stats.used_publishes += 1
