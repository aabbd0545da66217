"""The host side: the vsock_perf sender and the vhost worker that fills guest buffers.

    Sender.main: vsock_perf's loop of send()
      vsock_connectible_sendmsg          net/vmw_vsock/af_vsock.c
        virtio_transport_get_credit      net/vmw_vsock/virtio_transport_common.c
        virtio_transport_send_pkt_info   (skbs of at most 64 KiB)
          vhost_transport_send_pkt       drivers/vhost/vsock.c: queue, wake the worker
      close(): virtio_transport_shutdown (OP_SHUTDOWN)

    Vhost.main: the vhost worker thread of the device
      vhost_vsock_handle_tx_kick         guest packets: credit updates, replies
      vhost_transport_do_send_pkt        fill guest RX buffers, vhost_add_used(_n), vhost_signal

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
from .engine import Sim, Steps, Task, Wakeup
from .virtqueue import Packet, RxVirtqueue


class HostSkb:
    """An skb on vhost's send_pkt_queue: ``len`` payload bytes, ``offset`` already
    sent, and the ``truesize`` charged to the host socket's sk_wmem_alloc until
    vhost frees it."""

    __slots__ = ("len", "offset", "write", "op", "truesize")

    def __init__(self, length: int, write: int, op: int = kernel.VIRTIO_VSOCK_OP_RW) -> None:
        self.len = length
        self.offset = 0
        self.write = write
        self.op = op
        self.truesize = kernel.tx_skb_truesize(length)


class HostSocket:
    """The host end's credit view (virtio_vsock_sock TX side, under tx_lock).

    Credit learned from guest packets is stamped with the time the vhost thread
    processed them; the sender applies an entry once its own time has passed it.
    """

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

    def virtio_transport_space_update(self, t: float) -> None:
        """For every guest packet vhost had processed by time t: take the peer's
        fwd_cnt and buf_alloc."""
        learned = self.learned
        while learned and learned[0][0] <= t:
            _, fwd_cnt, buf_alloc = learned.popleft()
            self.peer_fwd_cnt = max(self.peer_fwd_cnt, fwd_cnt)
            self.peer_buf_alloc = buf_alloc

    def credit(self) -> int:
        """min(peer_buf_alloc, buf_alloc) - (tx_cnt - peer_fwd_cnt), as in
        virtio_transport_has_space(): a guest buffer larger than the sender's
        own does not widen the window."""
        return min(self.peer_buf_alloc, self.buf_alloc) - (self.tx_cnt - self.peer_fwd_cnt)

    def next_wake(self, t: float) -> float | None:
        """The first sk_write_space() after time t that wakes a sender asleep
        since t, if vhost has got that far; None if not yet."""
        wakes = self.wakes
        while wakes and wakes[0] <= t:
            wakes.popleft()
        return wakes[0] if wakes else None


class Sender(Task):
    """vsock_perf --sender: a loop of send(payload) on the host, blocking on credit.

    vsock_connectible_sendmsg() owns the host socket's lock for the whole
    send(), and releases it only while it waits for credit (release_sock,
    wait_woken, lock_sock). With ``host_lock`` the sender records those
    ownership intervals in ``sock.held`` for vhost, which needs the same lock
    for every guest packet. In ping-pong mode it waits for the guest's reply
    after each send.

    Simplifications of ``host_lock``, which make it the upper bound of the
    lock's effect on vhost: all of a send()'s CPU time counts as owned,
    syscall entry and exit included, so back-to-back sends leave vhost no gap;
    the sender never waits for vhost's own short holds; the lock taken by the
    ping-pong recv() and by the final close is not recorded.

    Invariant vhost relies on: an interval is recorded when it ends
    (release_sock), so the sender never yields between lock_sock and
    release_sock; it yields only after release_sock, or while it waits.
    """

    def __init__(self, sim: Sim, sock: HostSocket, vhost: "Vhost") -> None:
        super().__init__(sim, "sender")
        self.sock = sock
        self.vhost = vhost
        self.blocked: Wakeup | None = None   # waiting for credit, or for a reply
        self.replies: deque = deque()        # ping-pong: (time, bytes) echoed back

    def main(self) -> Steps:
        p, stats = self.sim.p, self.stats
        for write in range(p.writes):
            t_start = self.t
            yield from self.vsock_connectible_sendmsg(write, p.payload)
            stats.writes += 1
            if p.workload == "pingpong":
                yield from self.wait_reply(p.payload)
                stats.rtt.append(self.t - t_start)
        if p.workload == "stream":
            # vsock_perf closes the socket: virtio_transport_release() ->
            # virtio_transport_close() -> virtio_transport_shutdown() sends
            # OP_SHUTDOWN, which needs no credit and follows the last data in
            # order. It is what wakes a reader still waiting for SO_RCVLOWAT bytes.
            self.work(self.c.host_send_ns)
            self.vhost.vhost_transport_send_pkt(self.t, HostSkb(0, p.writes, kernel.VIRTIO_VSOCK_OP_SHUTDOWN))

    # ---- send() ----------------------------------------------------------------------
    def vsock_connectible_sendmsg(self, write: int, payload: int) -> Steps:
        """One send(payload): lock_sock, then skbs as credit allows, waiting for
        more credit with the lock released (vsock_connectible_wait_space)."""
        sock = self.sock
        t = self.t
        if sock.wakes and sock.wakes[0] <= t:
            sock.next_wake(t)                       # wake-ups nobody slept for
        self.work(self.c.host_send_ns)              # the syscall, lock_sock, the credit check
        locked_at: float | None = t                 # lock_sock()
        remaining = payload
        while remaining:
            credit = min(self.virtio_transport_get_credit(), remaining)
            if credit == 0:
                if locked_at is not None:           # release_sock() before waiting
                    self.release_sock(locked_at)
                    locked_at = None
                yield from self.wait_space()
                continue
            if locked_at is None:
                locked_at = self.t                  # lock_sock() after the wait
            self.virtio_transport_send_pkt_info(write, credit)
            remaining -= credit
        self.release_sock(locked_at)

    def virtio_transport_get_credit(self) -> int:
        """Credit only grows from the guest's side, so credit now is credit at our virtual time."""
        self.sock.virtio_transport_space_update(self.t)
        return max(0, self.sock.credit())

    def virtio_transport_send_pkt_info(self, write: int, nbytes: int) -> None:
        """Cut ``nbytes`` into skbs of at most VIRTIO_VSOCK_MAX_PKT_BUF_SIZE and queue each."""
        c, sock, stats = self.c, self.sock, self.stats
        while nbytes:
            chunk = min(nbytes, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)
            self.work(c.host_skb_ns + chunk * c.host_copy_byte_ns)   # alloc, header, copy from user
            sock.tx_cnt += chunk                    # virtio_transport_inc_tx_pkt()
            stats.bytes_sent += chunk
            stats.min_host_credit = min(stats.min_host_credit, sock.credit())
            self.vhost.vhost_transport_send_pkt(self.t, HostSkb(chunk, write))
            nbytes -= chunk

    def release_sock(self, since: float | None) -> None:
        """release_sock() now, after owning the host socket's lock since
        ``since``: the interval vhost's lock_sock() has to wait out (host_lock)."""
        if since is None or not self.sim.p.host_lock:
            return
        end = self.t
        self.sock.held.append((since, end))
        self.sim.log(since, "sender", "lock_held", until=end)

    def wait_space(self) -> Steps:
        """vsock_connectible_wait_space(): no credit; sleep until sk_write_space."""
        self.stats.sender_blocked += 1
        wake = self.sock.next_wake(self.t)
        if wake is not None:
            # vhost has already woken us (sk_write_space on a writeable
            # socket): sleep until then, and look at the credit again.
            self.sleep_until(wake + self.sim.latency(self.c.host_wake_latency_ns))
            return
        if self.behind():
            yield self.flush()                      # vhost may free an skb before our time
            return
        self.blocked = Wakeup(self)
        yield from self.sleep_on(self.blocked)

    # ---- ping-pong -------------------------------------------------------------------
    def wait_reply(self, nbytes: int) -> Steps:
        """recv() of the echoed request."""
        got = 0
        while got < nbytes:
            replies = self.replies
            if replies:
                if replies[0][0] > self.t:
                    self.sleep_until(replies[0][0] + self.sim.latency(self.c.host_wake_latency_ns))
                got += replies.popleft()[1]
                continue
            if self.behind():
                yield self.flush()
                continue
            self.blocked = Wakeup(self)
            yield from self.sleep_on(self.blocked)
        self.work(self.c.host_send_ns)              # the recv() that returns the reply

    def notify(self, t: float) -> None:
        """sk_write_space / sk_data_ready on the host socket at time t."""
        if self.blocked is not None:
            wakeup, self.blocked = self.blocked, None
            wakeup.fire(t - self.sim.now + self.sim.latency(self.c.host_wake_latency_ns))


class Vhost(Task):
    """The vhost worker thread of the device.

    One thread serves both virtqueues: the guest RX queue (host to guest data,
    vhost_transport_do_send_pkt) and the guest TX queue (credit updates and
    replies from the guest, vhost_vsock_handle_tx_kick).
    """

    # lock_host_socket()'s and handle_tx()'s reasons for stopping before a guest packet
    WAITED = 1
    MUST_SYNC = 2

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
        self.tx_used = 0                       # guest TX buffers used since the last TX-queue signal
        # Set by the model once every actor exists (Any: a test's stand-in fits too).
        self.worker: Any    # RxWorker: the guest RX worker, for interrupts
        self.sender: Any    # Sender: the host sender, woken by credit and replies
        self.reader: Any    # Reader: the guest task that sends us credit updates and replies
        p, c = sim.p, sim.c
        # vhost_get_vq_desc walks one descriptor per RX buffer, two before the sk_buff layout
        self.desc_ns = c.vhost_pkt_ns + (0 if p.spec.skb else c.vhost_desc_extra_ns)
        # Guest packets reach us at least this long after the guest acts;
        # a halted guest vCPU wakes no sooner than this.
        self.lookahead = c.host_to_guest_latency_ns
        self.min_wake = sim.min_vcpu_wake()

    # ---- what other actors call ---------------------------------------------------------
    def vhost_transport_send_pkt(self, t: float, skb: HostSkb) -> None:
        """Queue the skb (at time t) and wake the worker thread."""
        self.send_pkt_queue.append((t, skb))
        self.uncharged.append((t, skb.truesize))    # skb_set_owner_w()
        if self.idle is not None:
            self._wake(t)

    def kick(self, delay: float) -> None:
        """The guest kicked the RX queue after a refill (vhost_vsock_handle_rx_kick)."""
        if self.idle is not None:
            wakeup, self.idle = self.idle, None
            wakeup.fire(delay)

    def from_guest(self, t: float, fwd_cnt: int, buf_alloc: int, nbytes: int = 0) -> None:
        """A guest TX kick at time t: a credit update, or a reply of nbytes."""
        self.tx_queue.append((t, fwd_cnt, buf_alloc, nbytes))
        if self.idle is not None:
            self._wake(t)

    def _wake(self, t: float) -> None:
        """Wake the idle thread at t, plus the host's wake-up latency."""
        wakeup, self.idle = self.idle, None
        wakeup.fire(t - self.sim.now + self.sim.latency(self.c.host_wake_latency_ns))

    # ---- the host socket's send space -----------------------------------------------------
    def charge_wmem(self, t: float) -> None:
        """Charge sk_wmem_alloc with the skbs the sender had queued by time t
        (skb_set_owner_w). ``t`` never goes back: it is vhost's own time."""
        uncharged = self.uncharged
        while uncharged and uncharged[0][0] <= t:
            self.wmem += uncharged.popleft()[1]

    def sock_writeable(self, t: float) -> bool:
        """include/net/sock.h: sk_wmem_alloc below half of sk_sndbuf, at vhost's time t."""
        self.charge_wmem(t)
        return 1 + self.wmem < self.sock.sndbuf >> 1      # sk_wmem_alloc starts at 1

    def sk_write_space(self, t: float) -> bool:
        """sock_def_write_space() on the host socket at time t: it wakes a
        sender asleep on credit only if the socket is writeable. Returns whether it was."""
        if not self.sock_writeable(t):
            return False
        sender = self.sender
        if sender.blocked is not None:
            sender.notify(t)
        elif sender.resume_at is None or sender.resume_at <= t:
            # Recorded for a sender that has not run up to t yet: it may run out
            # of credit, and fall asleep, before t (Sender.wait_space, next_wake).
            self.sock.wakes.append(t)
        return True

    # ---- how far ahead the host may run ---------------------------------------------------
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
            r = (self.t if w is None else w) + self.min_wake
        return max(r, self.sim.now) + self.lookahead

    # ---- the worker thread -------------------------------------------------------------------
    def main(self) -> Steps:
        vq, q, tx = self.vq, self.send_pkt_queue, self.tx_queue
        while True:
            # vhost_run_work_list() runs one work item at a time: guest packets
            # that arrived during an RX run are handled between runs. Make sure
            # we know every guest packet sent before our virtual time.
            if self.t > self.horizon():
                yield self.flush()
                continue
            if tx and tx[0][0] <= self.t:
                status = self.vhost_vsock_handle_tx_kick()
                if status == self.MUST_SYNC:
                    yield self.flush()              # let the sender catch up
                    continue
                if status:                          # slept on the lock: look again
                    continue
            if not q or not vq.avail:
                if self.behind():
                    yield self.flush()
                    continue
                yield from self.wait_for_work()
                continue
            # Work queued after our virtual time wakes this thread up: idle until
            # then, plus the host's wake-up latency.
            t_queued = q[0][0]
            if t_queued > self.t:
                if tx and tx[0][0] < t_queued:
                    self.sleep_until(tx[0][0] + self.sim.latency(self.c.host_wake_latency_ns))
                    continue
                self.sleep_until(t_queued + self.sim.latency(self.c.host_wake_latency_ns))
            vq.vhost_notify = False                 # vhost_disable_notify()
            self.stats.vhost_runs += 1
            yield from self.vhost_transport_do_send_pkt()

    def wait_for_work(self) -> Steps:
        """Nothing to send to the guest now: idle until the next guest packet,
        or sleep until the sender queues data or the guest posts buffers."""
        q, tx = self.send_pkt_queue, self.tx_queue
        if tx:
            idle_from = self.t
            self.sleep_until(tx[0][0] + self.sim.latency(self.c.host_wake_latency_ns))
            if q:                                   # data queued, no guest buffer
                self.stats.vhost_no_rx_buf_ns += self.t - idle_from
            return
        self.vq.vhost_notify = True                 # vhost_enable_notify()
        # With data queued, the guest's RX ring is what vhost waits for: the
        # guest refills it only when an rx_work run ends.
        starved_since = self.t if q else None
        self.idle = Wakeup(self)
        yield from self.sleep_on(self.idle)
        if starved_since is not None:
            self.stats.vhost_no_rx_buf_ns += self.sim.now - starved_since

    # ---- vhost_transport_do_send_pkt() ----------------------------------------------------------
    def vhost_transport_do_send_pkt(self) -> Steps:
        """One run: fill guest RX buffers from send_pkt_queue until it is empty,
        the ring has no buffer (head == vq->num), or vhost_exceeds_weight();
        then vhost_signal() once."""
        vq, q, c, stats = self.vq, self.send_pkt_queue, self.c, self.stats
        pkts = total_len = 0
        while True:
            # virtio_vsock_skb_dequeue(): none left means vhost_enable_notify()
            # and the end of the run, unless the sender may queue one before our time
            if not q:
                if self.behind():
                    yield self.flush()
                    continue
                vq.vhost_notify = True
                break
            t_queued, skb = q[0]
            if t_queued > self.t:
                vq.vhost_notify = True              # nothing queued yet at our time
                break
            # vhost_get_vq_desc(): head == vq->num (no guest buffer) ends the run
            # too, unless the guest may post one before our time
            if not vq.avail:
                if self.behind():
                    yield self.flush()
                    continue
                vq.vhost_notify = True
                stats.vhost_runs_ring_full += 1
                stats.vhost_ring_full_pkts += pkts
                break
            vq.avail -= 1
            payload_len = min(skb.len - skb.offset, self.sim.p.buf_payload)
            pkt = Packet(payload_len, skb.write, skb.op)
            # the descriptor walk, iov set-up, header and payload copy
            self.work(self.desc_ns + payload_len * c.vhost_copy_byte_ns)
            if self.sim.p.vhost_used_batch:
                self.pending_used.append(pkt)       # [vhost batch]: publish at the end of the run
                if len(self.pending_used) == vq.size:
                    self.vhost_add_used_n()         # used_limit: the ring size
            else:
                self.vhost_add_used(pkt)
            skb.offset += payload_len
            if skb.offset == skb.len:
                q.popleft()
                self.virtio_transport_consume_skb_sent(skb)
            pkts += 1
            total_len += payload_len
            if kernel.vhost_exceeds_weight(pkts, total_len):
                stats.vhost_runs_weight += 1
                break                               # requeue the work
        if self.pending_used:
            self.vhost_add_used_n()
        if pkts:
            self.work(c.vhost_signal_ns)            # vhost_signal(): eventfd to the guest's irqfd
            stats.vhost_signals += 1
            self.log("signal", pkts=pkts)
            self.worker.signal(self.t)

    def vhost_add_used(self, pkt: Packet) -> None:
        """One used element and a used->idx publish."""
        self.work(self.c.vhost_add_used_ns)
        self.vq.publish(self.t, pkt)
        self.stats.used_publishes += 1

    def vhost_add_used_n(self) -> None:
        """[vhost batch]: several used elements and one used->idx update."""
        pkts = self.pending_used
        self.work(self.c.vhost_add_used_ns + (len(pkts) - 1) * self.c.vhost_used_entry_ns)
        t = self.t
        for pkt in pkts:
            self.vq.publish(t, pkt)
        pkts.clear()
        self.stats.used_publishes += 1

    def virtio_transport_consume_skb_sent(self, skb: HostSkb) -> None:
        """consume_skb() -> sock_wfree(): the truesize leaves sk_wmem_alloc, and
        sk_write_space() runs."""
        t = self.t
        self.charge_wmem(t)                         # it was queued by now
        self.wmem -= skb.truesize
        self.sk_write_space(t)

    # ---- guest packets: credit updates and replies ------------------------------------------------
    def vhost_vsock_handle_tx_kick(self) -> int:
        """Each guest packet due reaches the host socket (virtio_transport_recv_pkt there).

        Returns 0 when every packet due has been handled, or lock_host_socket()'s
        reason for stopping early.
        """
        tx, sender = self.tx_queue, self.sender
        status = 0
        while tx and tx[0][0] <= self.t:
            if self.sim.p.host_lock:
                status = self.lock_host_socket()
                if status:
                    break
            _, fwd_cnt, buf_alloc, nbytes = tx.popleft()
            self.log("host_recv_pkt")
            # vhost_get_vq_desc, vhost_vsock_alloc_skb, the copy, and on the host
            # socket: lookup, lock_sock, space_update, sk_write_space; vhost_add_used
            self.work(self.c.vhost_tx_pkt_ns)
            t = self.t
            self.sock.learned.append((t, fwd_cnt, buf_alloc))
            self.stats.guest_tx_pkts += 1
            if not self.sk_write_space(t):
                self.stats.credit_unwriteable += 1
            if nbytes:
                sender.replies.append((t, nbytes))
                sender.notify(t)                    # a reply: sk_data_ready
            self.tx_used += 1
        if self.tx_used and not status:
            # one vhost_signal() once the queue is drained
            self.log("tx_signal", bufs=self.tx_used)
            self.worker.virtio_vsock_tx_done(self.t, self.tx_used)
            self.tx_used = 0
        return status

    def lock_host_socket(self) -> int:
        """lock_sock() on the host socket, for a guest packet: 0 if vhost owns it
        now, WAITED if it slept, MUST_SYNC if it cannot tell yet.

        While vsock_perf is inside send() it owns the lock, and vhost sleeps on
        sk_lock.wq until release_sock() wakes it; it runs a host wake-up latency
        later, and by then a sender still looping on send() owns the lock again
        (the same race as on the guest socket, sock.py): vhost gets it only once
        the sender waits for credit. The sender's ownership is known up to its
        own virtual time; if that is behind ours, the caller lets it run first.
        All of vhost_tx_pkt_ns waits behind the lock (in the kernel the
        descriptor fetch and the copy come before lock_sock), and the sleep
        itself costs vhost no CPU time.
        """
        t = self.t
        held = self.sock.held
        while held and held[0][1] <= t:
            held.popleft()
        if held and held[0][0] <= t:                # __lock_sock(): sleep
            self.sleep_until(held[0][1] + self.sim.latency(self.c.host_wake_latency_ns))
            self.stats.host_lock_waits += 1
            self.sim.log(t, "vhost", "host_lock_wait", until=self.t)
            return self.WAITED
        sender = self.sender
        if not sender.exited and sender.resume_at is not None and sender.resume_at <= t:
            return self.MUST_SYNC
        return 0
