"""The guest RX worker: virtio_transport_rx_work() and the receive path it calls.

One method per kernel function, under the kernel's name, read top to bottom
as the kernel runs them:

    virtio_transport_rx_work                       net/vmw_vsock/virtio_transport.c
      virtqueue_get_buf
      virtio_transport_recv_pkt                    net/vmw_vsock/virtio_transport_common.c
        virtio_transport_recv_pkt_find_socket
        lock_sock                                  net/core/sock.c (GuestSock)
        virtio_transport_recv_pkt_locked
          virtio_transport_space_update, sk_write_space
          virtio_transport_recv_connected
            virtio_transport_recv_enqueue
              virtio_transport_inc_rx_pkt
            vsock_data_ready
        release_sock
      out: virtio_vsock_rx_fill

With the series' batching (v2, patches 2-5; ``Variant.batch``), rx_work calls
virtio_transport_recv_pkt_batch() instead, which keeps one lock_sock across a
bounded run of packets and ends it in virtio_transport_rx_batch_finish().
Which path runs is decided by the variant's switches (vsockmodel.model.variants).

Each function charges its own CPU cost (``self.work``) where it runs; the cost
names are in vsockmodel.model.costs.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..model import kernel
from .engine import Sim, Steps, Task, Wakeup
from .sock import GuestSock, Skb
from .virtqueue import Packet, RxVirtqueue


def _can_collapse(skb: Skb) -> bool:
    """virtio_transport_can_collapse(): not partly read, not already large
    (STREAM packets carry no SEQ_EOM)."""
    return skb.off == 0 and skb.len < kernel.MAX_COLLAPSE_LEN


def _collapse_size(items: list, i: int) -> int:
    """virtio_transport_collapse_size(): bytes of the run of collapsible skbs
    from items[i] on that fit one new skb."""
    target = items[i].len - items[i].off
    for skb in items[i + 1:]:
        if not _can_collapse(skb):
            break
        n = skb.len - skb.off
        if n > kernel.MAX_COLLAPSE_LEN - target:
            break
        target += n
    return target


class RxBatch:
    """struct virtio_transport_rx_batch (the series, patches 2-5)."""

    def __init__(self) -> None:
        self.sk: GuestSock | None = None   # the socket locked for the batch, or None
        self.pkts = 0
        self.bytes = 0
        self.write_space_pending = False   # patch 4
        self.data_ready_pending = False    # patch 5


class RxWorker(Task):
    """The kworker of CPU1's virtio_vsock workqueue: rx_work and tx_work."""

    def __init__(self, sim: Sim, vq: RxVirtqueue, sk: GuestSock, vhost: Any) -> None:
        super().__init__(sim, "worker")
        self.vq = vq
        self.sk = sk
        self.vhost = vhost               # Any: the v1 review's scripted host fits too
        p = sim.p
        self.spec = p.spec               # the variant's switches
        self.batch = RxBatch()
        self.batch_max_pkts = p.batch_pkts
        self.batch_max_bytes = p.batch_bytes
        self.check_headroom = p.check_headroom
        # Bytes an RX buffer holds behind its header: virtio_vsock_pkt's buf_len,
        # or an skb's tailroom when empty (with its kmalloc slack).
        self.skb_room = kernel.rx_skb_room(p.buf_payload) if self.spec.skb else p.buf_payload
        self.irq: Wakeup | None = None   # asleep, waiting for virtio_vsock_rx_done
        self.irq_at: float | None = None # an interrupt that came while the worker was busy
        self.signals: deque = deque()    # vhost signals seen while callbacks were off
        self.rx_due = False              # woken by an RX interrupt: rx_work is queued
        self.tx_pending: deque = deque() # TX interrupts: (time, guest buffers vhost has used)
        self.held_pkts = 0               # packets handled under the current lock_sock
        self.held_bytes = 0              # and their payload

    # ---- interrupts, raised by vhost ------------------------------------------------
    def signal(self, ts: float) -> None:
        """vhost_signal() on the RX queue at time ts: an interrupt if callbacks are enabled then.

        vhost may run ahead of the guest, so ts can lie in the guest's future.
        While callbacks are off the signal is kept: if the worker re-enables
        callbacks before ts, the interrupt still fires at ts.
        """
        if self.vq.cb_enabled_at is None:
            self.signals.append(ts)
        else:
            self.virtio_vsock_rx_done(ts)

    def virtio_vsock_rx_done(self, ts: float) -> None:
        """The RX interrupt: queue_work(rx_work).

        With VIRTIO_RING_F_EVENT_IDX the device interrupts once and then not
        again until the driver re-enables callbacks.
        """
        self.vq.cb_enabled_at = None
        self.stats.irqs += 1
        if self.irq is not None:
            # CPU1 is idle: the interrupt has to wake the halted vCPU first.
            wakeup, self.irq = self.irq, None
            self.rx_due = True
            wakeup.fire(ts - self.sim.now + self.sim.vcpu_wake(self, ts))
        else:
            self.irq_at = ts           # arrives while the worker is still busy

    def virtio_vsock_tx_done(self, ts: float, bufs: int) -> None:
        """vhost_signal() on the TX queue at time ts, after vhost used ``bufs``
        guest TX buffers (credit updates, replies): queue_work(tx_work).

        The series' test bed pins the device's interrupt to CPU1, so the TX
        interrupt lands where the RX worker runs, and its work item goes on the
        same per-CPU workqueue. vhost emits its signals in time order, so an
        idle worker can be woken for this one without missing an earlier RX interrupt.
        """
        self.tx_pending.append((ts, bufs))
        if self.irq is not None:
            wakeup, self.irq = self.irq, None
            wakeup.fire(ts - self.sim.now + self.sim.vcpu_wake(self, ts))

    def virtqueue_enable_cb(self) -> bool:
        """virtqueue_enable_cb(): False if used buffers arrived meanwhile."""
        t = self.t
        if self.vq.has_used(t):
            return False
        self.vq.cb_enabled_at = t
        signals = self.signals
        while signals and signals[0] < t:
            signals.popleft()
        if signals:
            self.virtio_vsock_rx_done(signals.popleft())
        return True

    # ---- the kworker ---------------------------------------------------------------
    def main(self) -> Steps:
        """Run rx_work and tx_work as their interrupts queue them, in order."""
        tx = self.tx_pending
        while True:
            if self.irq_at is not None:
                if self.irq_at > self.t:
                    self.idle_to(self.irq_at)       # the interrupt comes after the worker went idle
                self.irq_at = None
                self.rx_due = True
            elif not self.rx_due:
                if not tx:
                    self.irq = Wakeup(self)
                    yield from self.sleep_on(self.irq)
                    self.stats.wakeups["worker"] += 1
                elif tx[0][0] > self.t:
                    self.idle_to(tx[0][0])          # only a TX interrupt ahead
            if tx and tx[0][0] <= self.t:
                yield from self.virtio_transport_tx_work()
            if self.rx_due:
                self.rx_due = False
                self.work(self.c.irq_ns)            # the interrupt's entry, queue_work, exit
                self.log("rx_work")
                yield from self.virtio_transport_rx_work()

    def idle_to(self, ts: float) -> None:
        """Sleep until an interrupt at ts, known in advance, has woken the halted vCPU
        (halted from now: our own time, not when we last slept)."""
        self.sleep_until(ts + self.sim.vcpu_wake(self, ts, halted_since=self.t))
        self.stats.wakeups["worker"] += 1

    # ---- virtio_transport_tx_work() ----------------------------------------------------
    def virtio_transport_tx_work(self) -> Steps:
        """Free the guest's TX buffers that vhost has used.

        One run for all the buffers freed since the last (they pile up while
        rx_work runs). An sk_buff is charged to the socket that sent it
        (skb_set_owner_w), so freeing it ends in sock_wfree() -> sk_write_space():
        a reader asleep in recv() wakes up though no data came. A
        virtio_vsock_pkt was plain memory.
        """
        tx, t = self.tx_pending, self.t
        irqs = bufs = 0
        # With VIRTIO_RING_F_EVENT_IDX, vhost's later signals do not cross the
        # used_event the driver set when it last re-enabled callbacks (at the
        # end of the previous tx_work run): one interrupt per run.
        while tx and tx[0][0] <= t:
            bufs += tx.popleft()[1]
            irqs = 1
        # virtio_vsock_tx_done's interrupt; per buffer virtqueue_get_buf,
        # virtio_transport_consume_skb_sent and a share of the kworker run
        self.work(irqs * self.c.tx_irq_ns + bufs * self.c.tx_work_ns)
        self.stats.tx_irqs += irqs
        self.stats.tx_done += bufs
        self.stats.tx_work_runs += 1
        self.log("tx_work", bufs=bufs)
        if self.spec.skb:
            if self.behind():
                yield self.flush()
            self.sk.sk_write_space(self, via="sock_wfree")

    # ---- virtio_transport_rx_work() ----------------------------------------------------
    def virtio_transport_rx_work(self) -> Steps:
        vq, batch = self.vq, self.batch
        self.work(self.c.worker_run_ns)             # the kworker runs the work item
        while True:
            vq.cb_enabled_at = None                 # virtqueue_disable_cb()
            while True:
                pkt = yield from self.virtqueue_get_buf()
                if pkt is None:
                    break
                if not self.spec.batch:
                    yield from self.virtio_transport_recv_pkt(pkt)
                else:
                    # patch 2: a packet that would take the batch past its byte limit starts a new one
                    if batch.sk is not None and pkt.len > self.batch_max_bytes - batch.bytes:
                        yield from self.virtio_transport_rx_batch_finish()
                    yield from self.virtio_transport_recv_pkt_batch(pkt)
                    if batch.sk is not None:
                        batch.pkts += 1
                        batch.bytes += pkt.len
                        if batch.pkts >= self.batch_max_pkts or batch.bytes >= self.batch_max_bytes:
                            yield from self.virtio_transport_rx_batch_finish()
                if self.sim.done:                   # the run ended (the last byte, or a reset)
                    return
            if self.virtqueue_enable_cb():
                break
        # out:
        yield from self.virtio_transport_rx_batch_finish()
        if vq.rx_buf_nr < vq.rx_buf_max_nr // 2:
            yield from self.virtio_vsock_rx_fill()

    def virtqueue_get_buf(self) -> Steps:
        """The oldest buffer vhost has published by now, or None.

        Before giving up, let vhost run up to our time: it may publish one first.
        """
        used = self.vq.used
        while not used or used[0][0] > self.t:
            if not self.behind():
                return None
            yield self.flush()
        self.vq.rx_buf_nr -= 1
        pkt = used.popleft()[1]
        stats = self.stats
        stats.packets += 1
        if pkt.op != kernel.VIRTIO_VSOCK_OP_RW:
            stats.control_packets += 1
        stats.payload_bytes += pkt.len
        # virtqueue_get_buf, the length checks, virtio_vsock_skb_put, the tap;
        # per byte, the cache footprint of a full buffer
        self.work(self.c.get_buf_ns + pkt.len * self.c.rx_byte_ns)
        return pkt

    # ---- virtio_vsock_rx_fill() -----------------------------------------------------------
    def virtio_vsock_rx_fill(self) -> Steps:
        """Post an empty buffer in every free slot (one allocation and one sg
        each; two of each for virtio_vsock_pkt), then virtqueue_kick() if
        vhost asked to be notified."""
        c, vq, stats = self.c, self.vq, self.stats
        n = vq.free_slots()
        if n <= 0:
            return
        per_buf = c.rx_fill_buf_ns + (0 if self.spec.skb else c.pre_skb_fill_extra_ns)
        self.work(n * per_buf)
        stats.refills += 1              # counted with the work: a run may end before the post
        stats.refill_bufs += n
        if self.behind():
            yield self.flush()
        vq.avail += n
        vq.rx_buf_nr += n
        vq.rx_buf_max_nr = max(vq.rx_buf_max_nr, vq.rx_buf_nr)
        if vq.vhost_notify:
            self.exit_work(c.vq_kick_ns)            # virtqueue_kick(): a VM exit (MMIO notify)
            stats.kicks += 1
            self.vhost.kick(self.acc + c.host_to_guest_latency_ns)

    # ---- virtio_transport_recv_pkt(): one lookup and one lock per packet ----------------
    def virtio_transport_recv_pkt(self, pkt: Packet) -> Steps:
        self.work(self.c.recv_pkt_ns)               # address decode, trace, type checks, skb owner
        sk = self.virtio_transport_recv_pkt_find_socket()
        yield from sk.lock_sock(self)
        self.held_pkts = self.held_bytes = 0
        self.virtio_transport_recv_pkt_locked(pkt, None)
        yield from self.release_sock(sk)            # then sock_put()

    def virtio_transport_recv_pkt_find_socket(self) -> GuestSock:
        """vsock_find_connected_socket_net(): the hash-bucket walk and sock_hold
        (the matching sock_put is in the same cost)."""
        self.work(self.c.lookup_ns)
        return self.sk

    # ---- virtio_transport_recv_pkt_batch() (patches 2-5) ----------------------------------
    def virtio_transport_recv_pkt_batch(self, pkt: Packet) -> Steps:
        batch = self.batch
        if pkt.op != kernel.VIRTIO_VSOCK_OP_RW:
            # Only STREAM/RW packets can share a socket lock.
            yield from self.virtio_transport_rx_batch_finish()
            yield from self.virtio_transport_recv_pkt(pkt)
            return
        self.work(self.c.recv_pkt_ns)               # init_addrs, trace, skb owner
        if batch.sk is not None:
            if self.spec.reuse_lookup and self.virtio_transport_recv_pkt_batchable():
                # patch 3: the same flow as the batch: no lookup, stay under its lock
                if not self.virtio_transport_recv_pkt_locked(pkt, batch):
                    yield from self.virtio_transport_rx_batch_finish()
                return
            if not self.spec.reuse_lookup:
                sk = self.virtio_transport_recv_pkt_find_socket()   # then sock_put: the batch holds one
                if sk is batch.sk and self.virtio_transport_recv_pkt_batchable():
                    if not self.virtio_transport_recv_pkt_locked(pkt, batch):
                        yield from self.virtio_transport_rx_batch_finish()
                    return
            yield from self.virtio_transport_rx_batch_finish()
        sk = self.virtio_transport_recv_pkt_find_socket()
        yield from sk.lock_sock(self)
        self.held_pkts = self.held_bytes = 0
        # Under sk_callback_lock: sockmap removal restores the native protocol
        # under it, so this first eligibility check is serialised with that.
        start_batch = self.virtio_transport_recv_pkt_batchable()
        if start_batch:
            batch.sk = sk                           # patch 4: set before processing
        batchable = self.virtio_transport_recv_pkt_locked(pkt, batch if start_batch else None)
        if start_batch and batchable:
            return                                  # keep the lock and the lookup reference
        if start_batch:
            yield from self.virtio_transport_rx_batch_finish()
        else:
            yield from self.release_sock(sk)        # then sock_put()

    def virtio_transport_recv_pkt_batchable(self) -> bool:
        """May the socket stay locked for another packet? Established STREAM,
        native protocol (no sockmap), not SOCK_DONE, and (the headroom check)
        room for one more skb's metadata."""
        sk = self.sk
        if sk.done:
            return False
        if self.check_headroom:
            return kernel.rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc)
        return True

    def virtio_transport_rx_batch_finish(self) -> Steps:
        """Deliver the coalesced callbacks and unlock (an empty batch: nothing)."""
        batch = self.batch
        sk = batch.sk
        if sk is None:
            return
        write_space, data_ready = batch.write_space_pending, batch.data_ready_pending
        batch.sk = None
        batch.pkts = batch.bytes = 0
        batch.write_space_pending = batch.data_ready_pending = False
        if write_space:
            self.work(self.c.write_space_ns)        # patch 4: one sk_write_space, before release_sock
            if self.behind():
                yield self.flush()
            sk.sk_write_space(self)
        yield from self.release_sock(sk)            # then sock_put()
        if data_ready:
            sk.sk_data_ready(self)                  # patch 5: after release_sock

    def release_sock(self, sk: GuestSock) -> Steps:
        """release_sock() at the end of a lock hold, recorded as one batch."""
        self.stats.batch_pkts.append(self.held_pkts)
        self.stats.batch_bytes.append(self.held_bytes)
        if self.spec.batch:
            self.log("batch_end", pkts=self.held_pkts)
        yield from sk.release_sock(self)

    # ---- virtio_transport_recv_pkt_locked(): the work done under lock_sock ---------------
    def virtio_transport_recv_pkt_locked(self, pkt: Packet, batch: RxBatch | None) -> bool:
        """Patch 1 of the series (the v2 posting) splits this helper, and the
        lookup, out of virtio_transport_recv_pkt() without changing what they
        do; in mainline the same code is inline there and in
        virtio_transport_recv_connected().

        Returns whether the socket can stay locked for another packet (only
        asked of a batch)."""
        sk = self.sk
        self.held_pkts += 1
        self.held_bytes += pkt.len
        if sk.done:                                 # SOCK_DONE: reset, free
            self.stats.bytes_dropped_rx += pkt.len
            return False
        self.virtio_transport_space_update()
        # sk_write_space(): the guest sends no data, so its send space is
        # always available and the callback runs for every packet, unless
        # patch 4 coalesces it into one at the end of the batch.
        if batch is not None and self.spec.coalesce_write_space:
            batch.write_space_pending = True
        else:
            self.work(self.c.write_space_ns)
            sk.sk_write_space(self)
        if not self.virtio_transport_recv_connected(pkt, batch):
            return False
        return batch is not None and self.virtio_transport_recv_pkt_batchable()

    def virtio_transport_space_update(self) -> None:
        """Take the peer's credit from the header (tx_lock). It runs under
        lock_sock in every variant: ce7536bc7398 (5.11) moved it after the
        lock and the SOCK_DONE check, long before the sk_buff conversion."""
        self.work(self.c.space_update_ns)

    def virtio_transport_recv_connected(self, pkt: Packet, batch: RxBatch | None) -> bool:
        """The TCP_ESTABLISHED state: OP_RW enqueues, OP_SHUTDOWN records the
        peer's shutdown. False when the socket cannot take more (shutdown, reset)."""
        sk = self.sk
        if pkt.op != kernel.VIRTIO_VSOCK_OP_RW:
            # OP_SHUTDOWN: record it, sk->sk_state_change(): wake the reader.
            sk.peer_shutdown = True
            sk.sk_state_change(self)
            return False
        if not self.virtio_transport_recv_enqueue(pkt):
            self.virtio_transport_reset(pkt)
            return False
        self.vsock_data_ready(batch)
        return True

    def vsock_data_ready(self, batch: RxBatch | None) -> None:
        """af_vsock.c: sk_data_ready() once rx_bytes reaches SO_RCVLOWAT.

        Patch 5 turns it into a flag and one deferred callback per batch; the
        model charges half the callback per packet for the flag and the
        deferred call together (a prior: no table isolates the split).
        """
        sk, c = self.sk, self.c
        if batch is not None and self.spec.defer_data_ready:
            self.work(c.data_ready_ns / 2)
            if sk.rx_bytes >= sk.rcvlowat:
                batch.data_ready_pending = True
            return
        self.work(c.data_ready_ns)
        sk.vsock_data_ready(self)

    # ---- virtio_transport_recv_enqueue() ---------------------------------------------------
    def virtio_transport_recv_enqueue(self, pkt: Packet) -> bool:
        """Collapse a full queue, charge the packet (inc_rx_pkt), then
        tail-copy it or queue its skb. False: refused."""
        sk, stats = self.sk, self.stats
        q = sk.rx_queue
        length = pkt.len
        self.work(self.c.enqueue_ns)                # rx_lock, inc_rx_pkt, __skb_queue_tail
        if self.spec.metadata_budget and len(q) >= sk.queue_max:
            self.virtio_transport_collapse_rx_queue(len(q) + 2 - sk.queue_max)
        if not self.virtio_transport_inc_rx_pkt(length):
            return False
        stats.bytes_enqueued += length
        stats.max_buf_used = max(stats.max_buf_used, sk.buf_used)
        # Tail-copy into the last skb when it has room (GOOD_COPY_LEN).
        if length <= kernel.GOOD_COPY_LEN and q:
            last = q[-1]
            if length < last.room if self.spec.skb else length <= last.room:
                last.len += length
                last.room -= length
                # memcpy into the tail, then kfree_skb(skb) here, on the worker's CPU
                self.work(length * self.c.tail_copy_byte_ns + self.c.tail_free_ns)
                stats.tail_copies += 1
                stats.tail_copy_bytes += length
                self.log("tail_copy", len=length, qlen=len(q))
                return True
        q.append(Skb(length, self.skb_room - length))
        stats.skbs_queued += 1
        stats.max_qlen = max(stats.max_qlen, len(q))
        self.log("enqueue", len=length, qlen=len(q))
        return True

    def virtio_transport_inc_rx_pkt(self, length: int) -> bool:
        """Charge ``length`` payload bytes to the receive budget, or refuse the packet.

        sk_buff: the payload budget (buf_used + len <= buf_alloc) and, since
        c6087c5aaad6, the metadata budget of one more queued skb
        (rx_skb_has_headroom). virtio_vsock_pkt [OLD]: rx_bytes only.
        """
        sk = self.sk
        buf_used = sk.buf_used + length
        if self.spec.metadata_budget:
            if buf_used > sk.buf_alloc or not kernel.rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc):
                return False
        elif sk.rx_bytes + length > sk.buf_alloc:
            # (The old code lowered rx_bytes only when a whole packet was read;
            # the model's reader lowers it per byte, as kernels since
            # 45ca7e9f0730 do. The sender obeys credit, so this never binds.)
            return False
        sk.rx_bytes += length
        sk.buf_used = buf_used
        return True

    def virtio_transport_collapse_rx_queue(self, min_to_free: int) -> None:
        """Copy runs of queued skbs into fewer, right-sized linear skbs (best effort).

        As in the kernel: skbs already partly read, or of MAX_COLLAPSE_LEN or
        more, are kept; each new skb is sized by virtio_transport_collapse_size()
        to hold a whole run (up to MAX_COLLAPSE_LEN) and filled to capacity; no
        new one is started once ``min_to_free`` skbs are saved. A queue of one
        skb cannot shrink: it has nothing to merge with.
        """
        q = self.sk.rx_queue
        stats, c = self.stats, self.c
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

    def virtio_transport_reset(self, pkt: Packet) -> None:
        """recv_connected() after inc_rx_pkt fails: the ENOBUFS reset (a4f0b001782b)."""
        sk, stats = self.sk, self.stats
        sk.done = True
        stats.resets += 1
        stats.reset_reason = (f"ENOBUFS: rx_queue had {len(sk.rx_queue)} skb(s), buf_used "
                              f"{sk.buf_used} of {sk.buf_alloc}")
        stats.bytes_dropped_rx += pkt.len
        self.log("reset", qlen=len(sk.rx_queue))
        sk.sk_error_report()
        self.sim.finish()
