"""The host side: the vsock_perf sender, its socket, and the vhost worker that fills guest buffers.

    Sender.main: vsock_perf's loop of send()
      vsock_connectible_sendmsg          net/vmw_vsock/af_vsock.c
        virtio_transport_get_credit      net/vmw_vsock/virtio_transport_common.c
        virtio_transport_send_pkt_info   (skbs of at most 64 KiB)
          vhost_transport_send_pkt       drivers/vhost/vsock.c: queue, and queue send_pkt_work
      close(): virtio_transport_shutdown (OP_SHUTDOWN)

    Vhost: the device's vhost worker thread, running its work items
      vhost_transport_send_pkt_work / vhost_vsock_handle_rx_kick
        vhost_transport_do_send_pkt      fill guest RX buffers, vhost_add_used(_n), vhost_signal
      vhost_vsock_handle_tx_kick         guest packets: credit updates, replies
        virtio_transport_recv_pkt        on the host socket (HostSocket)

Both are host threads running in parallel. The sender's skbs and the credit
the host socket learns carry time stamps: a thread takes an entry once its
own clock has passed the stamp.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..model import kernel
from .engine import Cpu, Sim, SpinLock, Steps, Task, WaitQueue
from .sock import LockStat
from .virtqueue import GuestPacket, Packet, Virtqueue
from .workqueue import Work, WorkerThread


class HostSkb:
    """An skb on vhost's send_pkt_queue: ``len`` payload bytes, ``offset`` already
    sent, and the ``truesize`` charged to the host socket's sk_wmem_alloc until
    vhost frees it."""

    __slots__ = ("len", "offset", "write", "op", "truesize", "queued_at")

    def __init__(self, length: int, write: int, op: int = kernel.VIRTIO_VSOCK_OP_RW) -> None:
        self.len = length
        self.offset = 0
        self.write = write
        self.op = op
        self.truesize = kernel.tx_skb_truesize(length)
        self.queued_at = 0.0


class SkbQueue:
    """vsock->send_pkt_queue (an sk_buff_head under its spinlock), time-stamped.

    Only the sender adds, at its own clock, so stamps never go back: the head
    is the first skb vhost can ever see, and vhost needs to meet the sender
    only when it finds nothing.
    """

    def __init__(self) -> None:
        self.skbs: deque[HostSkb] = deque()
        self.producers: tuple[Task, ...] = ()       # who queues (set when the run is wired)

    def virtio_vsock_skb_queue_tail(self, task: Task, skb: HostSkb) -> None:
        skb.queued_at = task.t
        self.skbs.append(skb)

    def virtio_vsock_skb_dequeue(self, task: Task) -> Steps:
        """The first skb queued by the task's clock, or None."""
        skbs = self.skbs
        while not skbs:
            if not task.preceded(self.producers):
                return None
            yield task.flush()                  # the sender may queue one before our clock
        if skbs[0].queued_at > task.t:
            return None
        return skbs.popleft()

    def virtio_vsock_skb_queue_head(self, skb: HostSkb) -> None:
        self.skbs.appendleft(skb)

    def __len__(self) -> int:
        return len(self.skbs)


class HostSocket:
    """The host end of the connection: struct sock + virtio_vsock_sock, TX side.

    Credit learned from guest packets is stamped with vhost's clock; the
    sender takes an entry once its own clock has passed it. The socket's lock
    is modelled only with ``host_lock``: vhost then waits for it while
    vsock_perf owns it inside send().
    """

    def __init__(self, sim: Sim, peer_buf_alloc: int, buf_alloc: int = kernel.VSOCK_DEFAULT_BUFFER_SIZE) -> None:
        self.sim = sim
        self.c = sim.c
        self.modelled_lock = sim.p.host_lock
        self.slock = SpinLock("host sk_lock.slock")
        self.owner: Task | None = None
        self.lock_wq = WaitQueue("host sk_lock.wq")
        self.lock_stat = LockStat(sim, guest=False)
        self.sk_wq = WaitQueue("host sk_sleep")    # the sender, waiting for credit or a reply
        self.tx_cnt = 0
        self.peer_fwd_cnt = 0
        self.peer_buf_alloc = peer_buf_alloc
        # The host socket's own buffer: vsock_perf sets --vsk-size on the
        # receiver only, so the sender keeps the 256 KiB default.
        self.buf_alloc = buf_alloc
        self.learned: deque = deque()   # (time, fwd_cnt, buf_alloc)
        self.replies: deque = deque()   # ping-pong: (time, bytes) received from the guest
        # sk_wmem_alloc: the truesize of skbs queued and not yet freed by vhost,
        # as of vhost's clock (the sender may run ahead: charges are stamped).
        self.sndbuf = kernel.SK_SNDBUF_DEFAULT
        self.wmem = 0
        self.uncharged: deque = deque()  # (time queued, truesize), oldest first

    # ---- the lock (host_lock) ----------------------------------------------------------
    def lock_sock(self, task: Task) -> Steps:
        """net/core/sock.c lock_sock(), as on the guest socket (only with host_lock:
        otherwise no steps at all)."""
        return self._lock_sock(task) if self.modelled_lock else ()

    def release_sock(self, task: Task) -> Steps:
        return self._release_sock(task) if self.modelled_lock else ()

    def _lock_sock(self, task: Task) -> Steps:
        yield from self.slock.spin_lock(task)
        waited_from = None
        if self.owner is not None:
            waited_from = task.t
            while self.owner is not None:
                self.lock_stat.contended(task, self.owner)
                self.lock_wq.prepare_to_wait(task, exclusive=True)
                yield from task.schedule()
                yield from self.slock.spin_lock(task)
            self.lock_wq.finish_wait(task)
            self.sim.stats.host_lock_waits += 1
        self.owner = task
        self.lock_stat.acquired(task, waited_from)

    def _release_sock(self, task: Task) -> Steps:
        yield from self.slock.spin_lock(task)
        self.lock_stat.released(task)
        self.owner = None
        if self.lock_wq.active():
            self.lock_wq.wake_up(task, via="release_sock")

    # ---- credit -------------------------------------------------------------------------
    def virtio_transport_get_credit(self, task: Task, want: int) -> int:
        """min(want, has_space) at the task's clock, taken (tx_cnt grows when sent)."""
        learned, t = self.learned, task.t
        while learned and learned[0][0] <= t:
            _, fwd_cnt, buf_alloc = learned.popleft()
            self.peer_fwd_cnt = max(self.peer_fwd_cnt, fwd_cnt)
            self.peer_buf_alloc = buf_alloc
        return max(0, min(want, self.virtio_transport_has_space()))

    def virtio_transport_has_space(self) -> int:
        """min(peer_buf_alloc, buf_alloc) - (tx_cnt - peer_fwd_cnt): a guest
        buffer larger than the sender's own does not widen the window."""
        return min(self.peer_buf_alloc, self.buf_alloc) - (self.tx_cnt - self.peer_fwd_cnt)

    # ---- sk_wmem_alloc -------------------------------------------------------------------
    def skb_set_owner_w(self, task: Task, skb: HostSkb) -> None:
        self.uncharged.append((task.t, skb.truesize))

    def sock_wfree(self, task: Task, skb: HostSkb) -> None:
        """consume_skb() -> sock_wfree(): the truesize leaves sk_wmem_alloc, then sk_write_space()."""
        self._charge(task.t)
        self.wmem -= skb.truesize
        self.sk_write_space(task)

    def _charge(self, t: float) -> None:
        uncharged = self.uncharged
        while uncharged and uncharged[0][0] <= t:
            self.wmem += uncharged.popleft()[1]

    def sock_writeable(self, task: Task) -> bool:
        """include/net/sock.h: sk_wmem_alloc below half of sk_sndbuf."""
        self._charge(task.t)
        return 1 + self.wmem < self.sndbuf >> 1      # sk_wmem_alloc starts at 1

    # ---- callbacks ----------------------------------------------------------------------
    def sk_write_space(self, task: Task) -> bool:
        """sock_def_write_space(): wake a sender asleep on credit, if the socket is
        writeable. Returns whether it was."""
        if not self.sock_writeable(task):
            return False
        # In the kernel the sender checks its credit and joins the wait queue
        # under lock_sock, which vhost takes too; without host_lock the model
        # does not serialise them, so the question waits for vhost's clock.
        if self.sk_wq.has_sleeper_or_may(task):
            self.sk_wq.wake_up(task, via="sk_write_space")
        return True

    def sk_data_ready(self, task: Task) -> None:
        """sock_def_readable(): a reply arrived."""
        if self.sk_wq.has_sleeper_or_may(task):                # as in sk_write_space
            self.sk_wq.wake_up(task, via="sk_data_ready")

    # ---- a guest packet, in vhost's context ----------------------------------------------------
    def virtio_transport_recv_pkt(self, task: Task, pkt: GuestPacket) -> Steps:
        """The host's receive path for a guest packet: lock_sock, space_update,
        sk_write_space, and for data (a ping-pong reply) the queue and sk_data_ready."""
        yield from self.lock_sock(task)
        self.learned.append((task.t, pkt.fwd_cnt, pkt.buf_alloc))    # virtio_transport_space_update()
        if not self.sk_write_space(task):
            task.stats.credit_unwriteable += 1
        if pkt.nbytes:
            self.replies.append((task.t, pkt.nbytes))                 # virtio_transport_recv_enqueue()
            self.sk_data_ready(task)
        yield from self.release_sock(task)


class Sender(Task):
    """vsock_perf --sender: a loop of send(payload) on the host, blocking on credit.

    vsock_connectible_sendmsg() owns the host socket's lock for the whole
    send(), and releases it only while it waits for credit (release_sock,
    wait_woken, lock_sock). In ping-pong mode it waits for the guest's reply
    after each send.
    """

    def __init__(self, sim: Sim, sock: HostSocket, vhost: "Vhost", cpu: Cpu) -> None:
        super().__init__(sim, "sender", cpu)
        self.sock = sock
        self.vhost = vhost

    def main(self) -> Steps:
        p, stats = self.sim.p, self.stats
        for write in range(p.writes):
            t_start = self.t
            yield from self.vsock_connectible_sendmsg(write, p.payload)
            stats.writes += 1
            if p.workload == "pingpong":
                yield from self.recv_reply(p.payload)
                stats.rtt.append(self.t - t_start)
        if p.workload == "stream":
            # vsock_perf closes the socket: virtio_transport_release() ->
            # virtio_transport_close() -> virtio_transport_shutdown() sends
            # OP_SHUTDOWN, which needs no credit and follows the last data in
            # order. It is what wakes a reader still waiting for SO_RCVLOWAT bytes.
            self.work(self.c.host_send_ns)
            self.vhost.vhost_transport_send_pkt(self, HostSkb(0, p.writes, kernel.VIRTIO_VSOCK_OP_SHUTDOWN))

    # ---- send() ----------------------------------------------------------------------
    def vsock_connectible_sendmsg(self, write: int, payload: int) -> Steps:
        """One send(payload): lock_sock, then skbs as credit allows, waiting for
        more credit with the lock released (the wait loop of vsock_connectible_sendmsg)."""
        sock = self.sock
        self.work(self.c.host_send_ns)              # the syscall, lock_sock, the credit check
        yield from sock.lock_sock(self)
        remaining = payload
        while remaining:
            credit = sock.virtio_transport_get_credit(self, remaining)
            if credit == 0:
                yield from self.vsock_connectible_wait_space()
                continue
            self.virtio_transport_send_pkt_info(write, credit)
            remaining -= credit
        yield from sock.release_sock(self)

    def vsock_connectible_wait_space(self) -> Steps:
        """No credit: add_wait_queue, release_sock, wait_woken (sk_write_space), lock_sock."""
        sock = self.sock
        self.stats.sender_blocked += 1
        sock.sk_wq.prepare_to_wait(self)
        yield from sock.release_sock(self)
        yield from self.schedule()
        sock.sk_wq.finish_wait(self)
        yield from sock.lock_sock(self)

    def virtio_transport_send_pkt_info(self, write: int, nbytes: int) -> None:
        """Cut ``nbytes`` into skbs of at most VIRTIO_VSOCK_MAX_PKT_BUF_SIZE and queue each."""
        c, sock, stats = self.c, self.sock, self.stats
        while nbytes:
            chunk = min(nbytes, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)
            self.work(c.host_skb_ns + self.vhost.copy_cost(chunk, c.host_copy_byte_ns))   # alloc, header, copy from user
            sock.tx_cnt += chunk                    # virtio_transport_inc_tx_pkt()
            skb = HostSkb(chunk, write)
            sock.skb_set_owner_w(self, skb)
            stats.min_host_credit = min(stats.min_host_credit, sock.virtio_transport_has_space())
            self.vhost.vhost_transport_send_pkt(self, skb)
            nbytes -= chunk

    # ---- ping-pong -------------------------------------------------------------------
    def recv_reply(self, nbytes: int) -> Steps:
        """recv() of the echoed request."""
        sock = self.sock
        got = 0
        while got < nbytes:
            replies = sock.replies
            if replies and replies[0][0] <= self.t:
                got += replies.popleft()[1]
                continue
            if replies:
                self.sleep_until_woken_at(replies[0][0])    # it has arrived by then
                continue
            sock.sk_wq.prepare_to_wait(self)
            yield from self.schedule()
            sock.sk_wq.finish_wait(self)
        self.work(self.c.host_send_ns)              # the recv() that returns the reply


class Vhost(WorkerThread):
    """The device's vhost worker thread (drivers/vhost/vhost.c vhost_worker()).

    One thread serves both virtqueues: the guest RX queue (host to guest data,
    vhost_transport_do_send_pkt) and the guest TX queue (credit updates and
    replies from the guest, vhost_vsock_handle_tx_kick).
    """

    def __init__(self, sim: Sim, rx_vq: Virtqueue, tx_vq: Virtqueue, sock: HostSocket, cpu: Cpu) -> None:
        super().__init__(sim, "vhost", cpu)
        self.rx_vq = rx_vq
        self.tx_vq = tx_vq
        self.sock = sock
        self.send_pkt_queue = SkbQueue()
        self.pending_used: list[Packet] = []     # [vhost batch]: filled, not yet in the used ring
        p, c = sim.p, sim.c
        self.buf_payload = p.buf_payload
        self.used_batch = p.vhost_used_batch
        self.two_rate_copy = p.copy_model == "two-rate"
        # vhost_get_vq_desc walks one descriptor per RX buffer, two before the sk_buff layout
        self.desc_ns = c.vhost_pkt_ns + (0 if p.spec.skb else c.vhost_desc_extra_ns)
        self.send_pkt_work = Work("send_pkt_work", self.vhost_transport_do_send_pkt)
        self.rx_kick = Work("rx_kick", self.vhost_transport_do_send_pkt)   # vhost_vsock_handle_rx_kick
        self.tx_kick = Work("tx_kick", self.vhost_vsock_handle_tx_kick)
        rx_vq.kick_handler = lambda at: self.queue(self.rx_kick, at, by="guest kick")
        tx_vq.kick_handler = lambda at: self.queue(self.tx_kick, at, by="guest kick")

    # ---- what the sender calls -------------------------------------------------------------
    def vhost_transport_send_pkt(self, sender: Task, skb: HostSkb) -> None:
        """Queue the skb, then vhost_vq_work_queue(send_pkt_work)."""
        self.send_pkt_queue.virtio_vsock_skb_queue_tail(sender, skb)
        self.queue(self.send_pkt_work, sender.t, by=sender.name)

    # ---- vhost_transport_do_send_pkt() ----------------------------------------------------------
    def vhost_transport_do_send_pkt(self) -> Steps:
        """One run: fill guest RX buffers from send_pkt_queue until it is empty,
        the ring has no buffer (head == vq->num), or vhost_exceeds_weight();
        then vhost_signal() once."""
        vq, c = self.rx_vq, self.c
        queue = self.send_pkt_queue
        vq.vhost_disable_notify(self)               # we are already processing the queue
        pkts = total_len = 0
        while True:
            skb = yield from queue.virtio_vsock_skb_dequeue(self)
            if skb is None:
                vq.vhost_enable_notify(self)
                break
            if not (yield from vq.vhost_get_vq_desc(self)):
                queue.virtio_vsock_skb_queue_head(skb)       # head == vq->num: no guest buffer
                vq.vhost_enable_notify(self)
                break
            payload_len = min(skb.len - skb.offset, self.buf_payload)
            # the descriptor walk, iov set-up, header and payload copy
            self.work(self.desc_ns + self.copy_cost(payload_len, c.vhost_copy_byte_ns))
            pkt = Packet(payload_len, skb.write, skb.op)
            if self.used_batch:
                self.pending_used.append(pkt)       # [vhost batch]: publish at the end of the run
                if len(self.pending_used) == vq.num:
                    self.vhost_add_used_n()         # used_limit: the ring size
            else:
                self.work(c.vhost_add_used_ns)
                vq.vhost_add_used(self, pkt)
            skb.offset += payload_len
            if skb.offset < skb.len:
                queue.virtio_vsock_skb_queue_head(skb)       # the rest goes in the next buffer
            else:
                self.virtio_transport_consume_skb_sent(skb)
            pkts += 1
            total_len += payload_len
            if kernel.vhost_exceeds_weight(pkts, total_len):
                self.requeue(self.rx_kick)          # vhost_poll_queue(): run again later
                break
        if self.pending_used:
            self.vhost_add_used_n()
        if pkts:
            self.log("run", pkts=pkts)
            yield from self.vhost_signal(vq)

    def vhost_signal(self, vq: Virtqueue) -> Steps:
        """drivers/vhost/vhost.c: eventfd_signal() if vhost_notify() finds that the
        guest wants an interrupt (its callbacks are on, the used index crossed used_event)."""
        if (yield from vq.vhost_notify(self)):
            self.work(self.c.vhost_signal_ns)       # eventfd_signal() -> the guest's irqfd
            self.log("signal", vq=vq.name)
            vq.eventfd_signal(self)

    def copy_cost(self, nbytes: int, byte_ns: float) -> float:
        """A copy on the host of ``nbytes`` at ``byte_ns`` per byte, or (copy_model
        two-rate) cheap for the part the caches hold and at ``byte_ns`` beyond it."""
        c = self.c
        if self.two_rate_copy:
            hot = min(nbytes, c.copy_hot_bytes)
            return hot * c.copy_hot_byte_ns + (nbytes - hot) * byte_ns
        return nbytes * byte_ns

    def vhost_add_used_n(self) -> None:
        """[vhost batch]: several used elements and one used->idx update."""
        pkts = self.pending_used
        self.work(self.c.vhost_add_used_ns + (len(pkts) - 1) * self.c.vhost_used_entry_ns)
        self.rx_vq.vhost_add_used_n(self, pkts)
        self.pending_used = []

    def virtio_transport_consume_skb_sent(self, skb: HostSkb) -> None:
        """consume_skb() -> sock_wfree(): the truesize leaves sk_wmem_alloc, and
        sk_write_space() runs."""
        self.sock.sock_wfree(self, skb)

    # ---- guest packets: credit updates and replies ------------------------------------------------
    def vhost_vsock_handle_tx_kick(self) -> Steps:
        """Each guest packet on the TX queue reaches the host socket
        (virtio_transport_recv_pkt there); then one vhost_signal(). The guest
        need not kick while this runs (vhost_disable_notify)."""
        vq = self.tx_vq
        added = False
        vq.vhost_disable_notify(self)
        while True:
            pkt = yield from vq.vhost_get_guest_packet(self)
            if pkt is None:
                vq.vhost_enable_notify(self)
                break
            self.log("host_recv_pkt")
            # vhost_get_vq_desc, vhost_vsock_alloc_skb, the copy, and on the host
            # socket: lookup, lock_sock, space_update, sk_write_space; vhost_add_used
            self.work(self.c.vhost_tx_pkt_ns)
            yield from self.sock.virtio_transport_recv_pkt(self, pkt)
            vq.vhost_add_used(self, pkt)
            added = True
        if added:
            yield from self.vhost_signal(vq)

    # ---- statistics ----------------------------------------------------------------------
    def idle_time(self, start: float, end: float) -> None:
        """Time asleep with data queued but no guest RX buffer to put it in: the
        RX ring's stop-and-go (the guest refills it only when an rx_work run ends)."""
        if len(self.send_pkt_queue) and not self.rx_vq.avail:
            self.stats.vhost_no_rx_buf_ns += end - start
