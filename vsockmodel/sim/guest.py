"""The guest RX worker: virtio_transport_rx_work() and the receive path it calls.

Function names follow net/vmw_vsock/virtio_transport.c and
virtio_transport_common.c; the batching functions follow the series
("vsock/virtio: reduce RX per-packet socket overhead", v2, patches 1-5).
Which path runs is decided by the variant's switches (vsockmodel.variants).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..model import kernel
from .engine import Sim, Steps, Task, Wakeup
from .sock import GuestSock, Skb
from .virtqueue import Packet, RxVirtqueue

MAX_COLLAPSE_LEN = kernel.MAX_COLLAPSE_LEN
GOOD_COPY_LEN = kernel.GOOD_COPY_LEN
OP_RW = kernel.VIRTIO_VSOCK_OP_RW
rx_skb_has_headroom = kernel.rx_skb_has_headroom


def _can_collapse(skb: "Skb") -> bool:
    """virtio_transport_can_collapse(): not partly read, not already large
    (STREAM packets carry no SEQ_EOM)."""
    return skb.off == 0 and skb.len < MAX_COLLAPSE_LEN


def _collapse_size(items: list, i: int) -> int:
    """virtio_transport_collapse_size(): bytes of the run of collapsible skbs
    from items[i] on that fit one new skb."""
    target = items[i].len - items[i].off
    for skb in items[i + 1:]:
        if not _can_collapse(skb):
            break
        n = skb.len - skb.off
        if n > MAX_COLLAPSE_LEN - target:
            break
        target += n
    return target


class RxBatch:
    """struct virtio_transport_rx_batch (batching series, patches 2-5)."""

    __slots__ = ("sk", "pkts", "bytes", "write_space_pending", "data_ready_pending")

    def __init__(self) -> None:
        self.sk: GuestSock | None = None   # the socket locked for the batch, or None
        self.pkts = 0
        self.bytes = 0
        self.write_space_pending = False
        self.data_ready_pending = False


class RxWorker(Task):
    __slots__ = ("vq", "sk", "vhost", "batch", "irq", "irq_at", "rx_due", "signals", "tx_pending",
                 "held_pkts",
                 "held_bytes", "check_headroom", "batch_pkts", "batch_bytes", "metadata_budget",
                 "skb_room", "skb", "coalesce_write_space", "defer_data_ready", "batching",
                 "tail_copy_byte_ns", "tail_free_ns", "cost_lookup", "cost_locked", "cost_batch_first",
                 "cost_batched", "cost_finish", "cost_finish_ws")

    def __init__(self, sim: Sim, vq: RxVirtqueue, sk: GuestSock, vhost: Any) -> None:
        super().__init__(sim, "worker")
        self.vq = vq
        self.sk = sk
        # Any, not Vhost: the v1 review's scripted host and the tests' stand-ins fit too
        # (compiled code checks declared types).
        self.vhost = vhost
        self.batch = RxBatch()
        self.irq: Wakeup | None = None   # asleep, waiting for virtio_vsock_rx_done
        self.irq_at: float | None = None # an interrupt that came while the worker was busy
        self.signals: deque = deque()    # vhost signals seen while callbacks were off
        self.rx_due = False              # woken by an RX interrupt: rx_work is queued
        self.tx_pending: deque = deque() # TX interrupts: (time, guest buffers vhost has used)
        self.held_pkts = 0               # packets handled under the current lock_sock
        self.held_bytes = 0              # and their payload
        spec, c = sim.p.spec, sim.c
        self.check_headroom = sim.p.check_headroom
        self.batch_pkts = sim.p.batch_pkts
        self.batch_bytes = sim.p.batch_bytes
        self.metadata_budget = spec.metadata_budget
        # Bytes an RX buffer can hold behind its header: virtio_vsock_pkt's
        # buf_len, or an skb's tailroom when empty (with its kmalloc slack).
        buf_payload = sim.p.buf_payload
        self.skb_room = kernel.rx_skb_room(buf_payload) if spec.skb else buf_payload
        self.skb = spec.skb
        self.coalesce_write_space = spec.coalesce_write_space
        self.defer_data_ready = spec.defer_data_ready
        self.batching = spec.batch
        self.tail_copy_byte_ns = c.tail_copy_byte_ns
        self.tail_free_ns = c.tail_free_ns
        # CPU cost of each step, summed once (ns before noise). Names follow the
        # kernel functions each sum stands for.
        # virtio_transport_space_update() runs under lock_sock in every variant:
        # ce7536bc7398 (5.11) moved it after the lock and the SOCK_DONE check,
        # long before the sk_buff conversion.
        space_update = c.space_update_ns
        # Patch 5 turns the per-packet vsock_data_ready() into a flag and one
        # deferred callback per batch; the model charges half the callback per
        # packet for both (a prior: no table isolates the split).
        data_ready = c.data_ready_ns / 2 if spec.defer_data_ready else c.data_ready_ns
        write_space = 0.0 if spec.coalesce_write_space else c.write_space_ns
        # virtio_transport_recv_pkt() up to lock_sock: decode, trace, find_socket
        self.cost_lookup = c.recv_pkt_ns + c.lookup_ns
        # per-packet path, lock_sock .. release_sock
        self.cost_locked = (c.lock_ns + space_update + c.write_space_ns + c.enqueue_ns
                            + c.data_ready_ns + c.unlock_ns)
        # first packet of a batch, under the lock (the unlock is paid at finish)
        self.cost_batch_first = c.lock_ns + space_update + write_space + c.enqueue_ns + data_ready
        # later same-flow packets of a batch: no lock; no lookup with patch 3
        # (without it, patch 2 looks the socket up again and drops the extra
        # reference: find_socket, then sock_put)
        self.cost_batched = (c.recv_pkt_ns + (0.0 if spec.reuse_lookup else c.lookup_ns)
                             + space_update + write_space + c.enqueue_ns + data_ready)
        # virtio_transport_rx_batch_finish(): release_sock, sock_put (+ one write_space)
        self.cost_finish = c.unlock_ns
        self.cost_finish_ws = c.unlock_ns + c.write_space_ns

    # ---- the interrupt ----------------------------------------------------------
    def signal(self, ts: float) -> None:
        """vhost_signal() at time ts: an interrupt if callbacks are enabled then.

        vhost may run ahead of the guest, so ts can lie in the guest's future.
        While callbacks are off the signal is kept: if the worker re-enables
        callbacks before ts, the interrupt still fires at ts.
        """
        if self.vq.cb_enabled_at is None:
            self.signals.append(ts)
        else:
            self.raise_irq(ts)

    def raise_irq(self, ts: float) -> None:
        """virtio_vsock_rx_done(): queue_work(rx_work).

        With VIRTIO_RING_F_EVENT_IDX the device interrupts once and then not
        again until the driver re-enables callbacks.
        """
        self.vq.cb_enabled_at = None
        self.sim.stats.irqs += 1
        if self.irq is not None:
            # CPU1 is idle: the interrupt has to wake the halted vCPU first.
            ev, self.irq = self.irq, None
            self.rx_due = True
            ev.fire(ts - self.env._now + self.sim.vcpu_wake(self, ts))
        else:
            self.irq_at = ts           # arrives while the worker is still busy

    def tx_signal(self, ts: float, bufs: int) -> None:
        """vhost_signal() on the TX queue at time ts, after vhost used ``bufs``
        guest TX buffers (credit updates, replies): virtio_vsock_tx_done().

        The series' test bed pins the device's interrupt to CPU1, so the TX interrupt lands
        where the RX worker runs, and its work item (tx_work) goes on the same
        per-CPU workqueue. vhost emits its signals in time order, so an idle
        worker can be woken for this one without missing an earlier RX interrupt.
        """
        self.tx_pending.append((ts, bufs))
        if self.irq is not None:
            ev, self.irq = self.irq, None
            ev.fire(ts - self.env._now + self.sim.vcpu_wake(self, ts))

    def enable_cb(self) -> bool:
        """virtqueue_enable_cb(): False if used buffers arrived meanwhile."""
        t = self.env._now + self.acc
        if self.vq.has_used(t):
            return False
        self.vq.cb_enabled_at = t
        signals = self.signals
        while signals and signals[0] < t:
            signals.popleft()
        if signals:
            self.raise_irq(signals.popleft())
        return True

    def main(self) -> Steps:
        """The kworker of CPU1's virtio_vsock workqueue: rx_work and tx_work, in order."""
        c, stats = self.c, self.sim.stats
        tx = self.tx_pending
        while True:
            if self.irq_at is not None:
                if self.irq_at > self.t:
                    # The interrupt comes after the worker went idle.
                    self.idle_to(self.irq_at)
                self.irq_at = None
                self.rx_due = True
            elif not self.rx_due:
                if not tx:
                    self.irq = Wakeup(self)
                    yield from self.sleep_on(self.irq)
                    stats.wakeups["worker"] += 1
                elif tx[0][0] > self.t:
                    self.idle_to(tx[0][0])          # only a TX interrupt ahead
            if tx and tx[0][0] <= self.t:
                yield from self.tx_work()
            if self.rx_due:
                self.rx_due = False
                self.work(c.irq_ns)
                if self.sim.trace is not None:
                    self.sim.log(self.t, "worker", "rx_work")
                yield from self.rx_work()

    def idle_to(self, ts: float) -> None:
        """Sleep until an interrupt at ts, known in advance, has woken the halted vCPU."""
        self.slept_at = self.t
        self.idle_until(ts + self.sim.vcpu_wake(self, ts))
        self.busy += self.c.sleep_ns
        self.sleeps += 1
        self.sim.stats.wakeups["worker"] += 1

    # ---- virtio_transport_tx_work() ----------------------------------------------
    def tx_work(self) -> Steps:
        """virtio_vsock_tx_done() and virtio_transport_tx_work(): free the guest's TX
        buffers that vhost has used.

        It runs once for all the buffers freed since its last run (they pile
        up while rx_work runs), after one interrupt. Costs: tx_irq_ns per interrupt, tx_work_ns per
        buffer (virtqueue_get_buf(), virtio_transport_consume_skb_sent(), and a
        share of the worker run and of the send_pkt_work pass it queues).
        An sk_buff is charged to the socket that sent it (skb_set_owner_w), so
        freeing it ends in sock_wfree() -> sk_write_space(): a reader asleep in
        recv() wakes up though no data came. A virtio_vsock_pkt was plain memory.
        """
        c, stats, tx = self.c, self.stats, self.tx_pending
        t = self.env._now + self.acc
        irqs = bufs = 0
        # With VIRTIO_RING_F_EVENT_IDX, vhost's later signals do not cross the
        # used_event the driver set when it last re-enabled callbacks (at the
        # end of the previous tx_work run): one interrupt per run, however many
        # signals vhost sent meanwhile.
        while tx and tx[0][0] <= t:
            bufs += tx.popleft()[1]
            irqs = 1
        self.work(irqs * c.tx_irq_ns + bufs * c.tx_work_ns)
        stats.tx_irqs += irqs
        stats.tx_done += bufs
        stats.tx_work_runs += 1
        if self.sim.trace is not None:
            self.sim.log(self.t, "worker", "tx_work", bufs=bufs)
        if self.skb:
            ev = self.sync()
            if ev is not None:
                yield ev
            self.sk.write_space(self, via="sock_wfree")

    # ---- virtio_transport_rx_work() --------------------------------------------
    # The per-packet functions below return None when they finished without
    # having to wait, or a generator that finishes the packet when they must
    # (a sync with another actor, a contended lock_sock). The common case then
    # costs no generator at all, which keeps a run fast.
    def rx_work(self) -> Steps:
        c, vq, stats, sim = self.c, self.vq, self.stats, self.sim
        batching = self.batching
        fixed_ns, byte_ns = c.get_buf_ns, c.rx_byte_ns
        env, used = self.env, vq.used
        self.work(c.worker_run_ns)
        while True:
            vq.cb_enabled_at = None                         # virtqueue_disable_cb()
            while True:
                # virtqueue_get_buf(): the oldest buffer vhost has published by now
                if not used or used[0][0] > env._now + self.acc:
                    ev = self.sync()
                    if ev is not None:
                        yield ev
                        continue
                    break
                vq.rx_buf_nr -= 1
                pkt = used.popleft()[1]
                stats.packets += 1
                if pkt.op != OP_RW:
                    stats.control_packets += 1
                stats.payload_bytes += pkt.len
                # get_buf, length checks, rx_put, tap: charged with the next step
                if batching:
                    rest = self.recv_pkt_batch(pkt, fixed_ns + pkt.len * byte_ns)
                else:
                    rest = self.recv_pkt(pkt, fixed_ns + pkt.len * byte_ns)
                if rest is not None:
                    yield from rest
                if sim.done:                                # sim.finished triggered
                    return
            if self.enable_cb():
                break
        # out:
        yield from self.rx_batch_finish()
        if vq.rx_buf_nr < vq.rx_buf_max_nr // 2:
            yield from self.rx_fill()

    # ---- virtio_vsock_rx_fill() --------------------------------------------------
    def rx_fill(self) -> Steps:
        """virtio_vsock_rx_fill(): post an empty buffer in every free slot (one
        allocation and one sg each; two of each for virtio_vsock_pkt), then
        virtqueue_kick() if vhost asked to be notified."""
        c, vq, stats = self.c, self.vq, self.sim.stats
        n = vq.free_slots()
        if n <= 0:
            return
        per_buf = c.rx_fill_buf_ns + (0 if self.sim.p.spec.skb else c.pre_skb_fill_extra_ns)
        self.work(n * per_buf)
        stats.refills += 1              # counted with the work: a run may end before the post
        stats.refill_bufs += n
        ev = self.sync()
        if ev is not None:
            yield ev
        vq.avail += n
        vq.rx_buf_nr += n
        vq.rx_buf_max_nr = max(vq.rx_buf_max_nr, vq.rx_buf_nr)
        if vq.vhost_notify:                                 # virtqueue_kick() needs a VM exit
            self.exit_work(c.vq_kick_ns)                    # MMIO notify: host-mode time
            stats.kicks += 1
            self.vhost.kick(self.acc + self.c.host_to_guest_latency_ns)

    # ---- virtio_transport_recv_pkt(): one lookup and one lock per packet -------
    def recv_pkt(self, pkt: Packet, pre: float) -> Steps | None:
        """virtio_transport_recv_pkt() for one packet: lookup, lock_sock(), the
        locked work (recv_pkt_locked), release_sock(), sock_put()."""
        sk = self.sk
        self.work(pre + self.cost_lookup)                   # decode, trace, find_socket
        if sk.owned or self.behind():
            return self._recv_pkt_waiting(pkt)
        sk.take(self)                                       # lock_sock()
        self.held_pkts = self.held_bytes = 0
        self.work(self.cost_locked)                         # space_update .. release_sock
        self.recv_pkt_locked(pkt, None)
        if self.behind():
            return self._release_after_sync(sk)
        self.release(sk)                                    # release_sock(), sock_put()
        return None

    def _recv_pkt_waiting(self, pkt: Packet) -> Steps:
        """recv_pkt() when lock_sock() may have to wait."""
        sk = self.sk
        ev = self.sync()
        if ev is not None:
            yield ev
        if sk.owned:
            yield from sk.lock_sock_slow(self)              # lock_sock(): contended
        sk.take(self)
        self.held_pkts = self.held_bytes = 0
        self.work(self.cost_locked)                         # space_update .. release_sock
        self.recv_pkt_locked(pkt, None)
        ev = self.sync()
        if ev is not None:
            yield ev
        self.release(sk)                                    # release_sock(), sock_put()

    def _release_after_sync(self, sk: GuestSock) -> Steps:
        ev = self.sync()
        if ev is not None:
            yield ev
        self.release(sk)

    # ---- virtio_transport_recv_pkt_batch() (patches 2-5), with rx_work's bounds ----
    def recv_pkt_batch(self, pkt: Packet, pre: float) -> Steps | None:
        batch = self.batch
        if pkt.op != OP_RW:
            return self._recv_pkt_not_rw(pkt, pre)
        if batch.sk is not None:
            # rx_work: a packet that would take the batch past its byte limit
            # starts a new batch.
            if pkt.len <= self.batch_bytes - batch.bytes and self.recv_pkt_batchable():
                # Same flow as the batch: stay under its lock (patch 3: no lookup).
                self.work(pre + self.cost_batched)
                if not self.recv_pkt_locked(pkt, batch):
                    return self.rx_batch_finish()
                return self._count_in_batch(pkt)
            return self._recv_pkt_batch_new(pkt, pre, finish_first=True)
        return self._recv_pkt_batch_new(pkt, pre, finish_first=False)

    def _recv_pkt_not_rw(self, pkt: Packet, pre: float) -> Steps:
        """Only STREAM/RW packets share a socket lock: finish the batch, then the
        per-packet virtio_transport_recv_pkt() (patch 2)."""
        yield from self.rx_batch_finish()
        rest = self.recv_pkt(pkt, pre)
        if rest is not None:
            yield from rest

    def _count_in_batch(self, pkt: Packet) -> Steps | None:
        """rx_work after recv_pkt_batch(): count the packet, finish at the limits."""
        batch = self.batch
        if batch.sk is None:
            return None
        batch.pkts += 1
        batch.bytes += pkt.len
        if batch.pkts >= self.batch_pkts or batch.bytes >= self.batch_bytes:
            return self.rx_batch_finish()
        return None

    def _recv_pkt_batch_new(self, pkt: Packet, pre: float, finish_first: bool) -> Steps:
        """Look the socket up, lock it, and start a batch if the socket allows it."""
        sk, batch = self.sk, self.batch
        if finish_first:
            yield from self.rx_batch_finish()
        self.work(pre + self.cost_lookup)                   # virtio_transport_recv_pkt_find_socket
        ev = self.sync()
        if ev is not None:
            yield ev
        if sk.owned:
            yield from sk.lock_sock_slow(self)
        sk.take(self)                                       # lock_sock()
        self.held_pkts = self.held_bytes = 0
        start_batch = self.recv_pkt_batchable()             # under sk_callback_lock
        if start_batch:
            batch.sk = sk                                   # patch 4: set before processing
            self.work(self.cost_batch_first)
        else:
            self.work(self.cost_locked)
        batchable = self.recv_pkt_locked(pkt, batch if start_batch else None)
        if start_batch and batchable:
            rest = self._count_in_batch(pkt)                # keep the lock and the reference
            if rest is not None:
                yield from rest
            return
        if start_batch:
            yield from self.rx_batch_finish()
        else:
            yield from self._release_after_sync(sk)

    def recv_pkt_batchable(self) -> bool:
        """virtio_transport_recv_pkt_batchable(): may the socket stay locked?"""
        sk = self.sk
        if sk.done:
            return False
        if self.check_headroom:
            return rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc)
        return True

    def recv_pkt_locked(self, pkt: Packet, batch: RxBatch | None) -> bool:
        """virtio_transport_recv_pkt_locked(): the work done under lock_sock.

        Patch 1 of the series (the v2 posting) splits this helper, and the lookup
        (virtio_transport_recv_pkt_find_socket()), out of
        virtio_transport_recv_pkt() without changing what they do; in mainline
        the same code is inline there and in virtio_transport_recv_connected().

        The CPU cost was charged by the caller. Returns whether the socket can
        stay locked for another packet.
        """
        sk = self.sk
        self.held_pkts += 1
        self.held_bytes += pkt.len
        if sk.done:                                         # SOCK_DONE: reset, free
            self.sim.stats_drop(pkt.len)
            return False
        # virtio_transport_space_update(), then sk_write_space(): the guest sends
        # no data, so its send space is always available and the callback runs
        # for every packet, unless patch 4 defers it to the end of the batch.
        if batch is not None and self.coalesce_write_space:
            batch.write_space_pending = True
        elif sk.sleeper is not None:
            sk.write_space(self)                            # wakes a reader asleep in recv()
        if pkt.op != OP_RW:
            # virtio_transport_recv_connected(), OP_SHUTDOWN: record the peer's
            # shutdown and sk->sk_state_change(): wake the reader.
            sk.peer_shutdown = True
            sk.state_change(self)
            return False
        # virtio_transport_recv_connected(), OP_RW:
        if not self.recv_enqueue(pkt):
            self.reset(pkt)
            return False
        if batch is not None and self.defer_data_ready:
            if sk.rx_bytes >= sk.rcvlowat:
                batch.data_ready_pending = True             # patch 5
        elif sk.sleeper is not None:                        # else nobody to notify
            sk.vsock_data_ready(self)
        return batch is not None and self.recv_pkt_batchable()

    def rx_batch_finish(self) -> Steps:
        """virtio_transport_rx_batch_finish(): deliver coalesced callbacks, unlock."""
        batch = self.batch
        sk = batch.sk
        if sk is None:
            return
        write_space = batch.write_space_pending
        self.work(self.cost_finish_ws if write_space else self.cost_finish)
        data_ready = batch.data_ready_pending
        batch.sk = None
        batch.pkts = batch.bytes = 0
        batch.write_space_pending = batch.data_ready_pending = False
        ev = self.sync()
        if ev is not None:
            yield ev
        if write_space:
            sk.write_space(self)                            # patch 4: before release_sock
        self.release(sk)
        if data_ready:
            sk.sk_data_ready(self)                          # after release_sock (patch 5)

    def release(self, sk: GuestSock) -> None:
        stats = self.stats
        stats.batch_pkts.append(self.held_pkts)
        stats.batch_bytes.append(self.held_bytes)
        if self.trace is not None and self.batching:
            self.sim.log(self.t, "worker", "batch_end", pkts=self.held_pkts)
        sk.release(self)

    # ---- virtio_transport_recv_enqueue() ------------------------------------------
    def recv_enqueue(self, pkt: Packet) -> bool:
        """virtio_transport_recv_enqueue(): collapse a full queue, charge the
        packet (inc_rx_pkt), then tail-copy it or queue its skb. False: refused."""
        sk, stats = self.sk, self.stats
        q = sk.rx_queue
        length = pkt.len
        if self.metadata_budget and len(q) >= sk.queue_max:
            self.collapse_rx_queue(len(q) + 2 - sk.queue_max)
        if not self.inc_rx_pkt(length):
            return False
        stats.bytes_enqueued += length
        if sk.buf_used > stats.max_buf_used:
            stats.max_buf_used = sk.buf_used
        # Tail-copy into the last skb when it has room (GOOD_COPY_LEN).
        if length <= GOOD_COPY_LEN and q:
            last = q[-1]
            if length < last.room if self.skb else length <= last.room:
                last.len += length
                last.room -= length
                # memcpy into the tail, then kfree_skb(skb) here, on the worker's CPU
                self.work(length * self.tail_copy_byte_ns + self.tail_free_ns)
                stats.tail_copies += 1
                stats.tail_copy_bytes += length
                if self.trace is not None:
                    self.sim.log(self.t, "worker", "tail_copy", len=length, qlen=len(q))
                return True
        q.append(Skb(length, self.skb_room - length))
        stats.skbs_queued += 1
        qlen = len(q)
        if qlen > stats.max_qlen:
            stats.max_qlen = qlen
        if self.trace is not None:
            self.sim.log(self.t, "worker", "enqueue", len=length, qlen=qlen)
        return True

    def inc_rx_pkt(self, length: int) -> bool:
        """virtio_transport_inc_rx_pkt(): charge ``length`` payload bytes to the
        receive budget, or refuse the packet.

        sk_buff: the payload budget (buf_used + len <= buf_alloc) and, since
        c6087c5aaad6, the metadata budget of one more queued skb
        (rx_skb_has_headroom). virtio_vsock_pkt [OLD]: rx_bytes only.
        """
        sk = self.sk
        buf_used = sk.buf_used + length
        if self.metadata_budget:
            if buf_used > sk.buf_alloc or not rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc):
                return False
        elif sk.rx_bytes + length > sk.buf_alloc:
            # (The old code lowered rx_bytes only when a whole packet was read;
            # the model's reader lowers it per byte, as kernels since
            # 45ca7e9f0730 do. The sender obeys credit, so this never binds.)
            return False
        sk.rx_bytes += length
        sk.buf_used = buf_used
        return True

    def collapse_rx_queue(self, min_to_free: int) -> None:
        """virtio_transport_collapse_rx_queue(): copy runs of queued skbs into fewer,
        right-sized linear skbs (best effort).

        As in the kernel: skbs already partly read, or of MAX_COLLAPSE_LEN or more,
        are kept; each new skb is sized by virtio_transport_collapse_size() to
        hold a whole run (up to MAX_COLLAPSE_LEN) and filled to capacity; no new
        one is started once ``min_to_free`` skbs are saved. A queue of one skb
        cannot shrink: it has nothing to merge with.
        """
        q = self.sk.rx_queue
        stats, c = self.sim.stats, self.c
        stats.collapses += 1
        items = list(q)
        merged: list[Skb] = []
        new_skb: Skb | None = None
        saved = 0
        i = 0
        while i < len(items):
            skb = items[i]
            src_len = skb.len - skb.off
            if not _can_collapse(skb):
                if new_skb is not None:                 # finalize, keep the order
                    merged.append(new_skb)
                    new_skb = None
                    saved -= 1
                merged.append(skb)
                i += 1
                continue
            if new_skb is not None and src_len > new_skb.room:
                merged.append(new_skb)
                new_skb = None
                saved -= 1
            if new_skb is None:
                if saved >= min_to_free:
                    break                               # the rest stays as it is
                alloc = _collapse_size(items, i)
                if alloc <= src_len:                    # nothing to merge with
                    merged.append(skb)
                    i += 1
                    continue
                # virtio_vsock_alloc_linear_skb(alloc + header): its tailroom is
                # what kmalloc gives, slack included, like an RX buffer's
                new_skb = Skb(0, kernel.rx_skb_room(alloc))
                self.work(c.tail_free_ns)               # an allocation, about a kfree_skb
                stats.collapse_allocs += 1
            new_skb.len += src_len                      # skb_copy_bits()
            new_skb.room -= src_len
            self.work(src_len * c.tail_copy_byte_ns + c.tail_free_ns)   # + consume_skb()
            stats.tail_copy_bytes += src_len
            stats.collapsed_skbs += 1
            saved += 1
            i += 1
        if new_skb is not None:
            merged.append(new_skb)
        q.clear()
        q.extend(merged)
        q.extend(items[i:])                             # skb_queue_splice() at the head

    def reset(self, pkt: Packet) -> None:
        """recv_connected() after inc_rx_pkt fails: ENOBUFS reset (a4f0b001782b)."""
        sk, stats = self.sk, self.sim.stats
        sk.done = True
        stats.resets += 1
        stats.reset_reason = (f"ENOBUFS: rx_queue had {len(sk.rx_queue)} skb(s), buf_used "
                              f"{sk.buf_used} of {sk.buf_alloc}")
        self.sim.stats_drop(pkt.len)
        if self.sim.trace is not None:
            self.sim.log(self.t, "worker", "reset", qlen=len(sk.rx_queue))
        sk.error_report()
        self.sim.finish()
