"""The guest RX worker: virtio_transport_rx_work() and the receive path it calls.

Function names follow net/vmw_vsock/virtio_transport.c and
virtio_transport_common.c; the batching functions follow the seed series
("vsock/virtio: reduce RX per-packet socket overhead", v2, patches 1-5).
Which path runs is decided by the variant's switches (vsockmodel.variants).
"""

from __future__ import annotations

from collections import deque

from .. import kernel
from .engine import Sim, Task, Wakeup
from .sock import GuestSock, Skb
from .virtqueue import Packet, RxVirtqueue

# SKB_MAX_ORDER(VIRTIO_VSOCK_SKB_HEADROOM, PAGE_ALLOC_COSTLY_ORDER) with 4 KiB
# pages and a 320-byte skb_shared_info: (4096 << 3) - 44 - 320.
MAX_COLLAPSE_LEN = (4096 << 3) - kernel.VIRTIO_VSOCK_SKB_HEADROOM - 320


class RxBatch:
    """struct virtio_transport_rx_batch (seed series, patches 2-5)."""

    __slots__ = ("sk", "pkts", "bytes", "write_space_pending", "data_ready_pending")

    def __init__(self):
        self.sk = None
        self.pkts = 0
        self.bytes = 0
        self.write_space_pending = False
        self.data_ready_pending = False


class RxWorker(Task):
    def __init__(self, sim: Sim, vq: RxVirtqueue, sk: GuestSock, vhost):
        super().__init__(sim, "worker")
        self.vq = vq
        self.sk = sk
        self.vhost = vhost
        self.batch = RxBatch()
        self.irq: Wakeup | None = None   # asleep, waiting for virtio_vsock_rx_done
        self.pending = False             # queue_work() while the work was running
        self.held_pkts = 0               # packets handled under the current lock_sock

    # ---- the interrupt ----------------------------------------------------------
    def interrupt(self, by: Task) -> None:
        """vhost_signal() reaching virtio_vsock_rx_done(): queue_work(rx_work).

        With VIRTIO_RING_F_EVENT_IDX the device raises one interrupt and then no
        more until the driver re-enables callbacks.
        """
        vq = self.vq
        if not vq.cb_enabled:
            return
        vq.cb_enabled = False
        self.sim.stats.irqs += 1
        if self.irq is not None:
            ev, self.irq = self.irq, None
            # CPU1 is idle: the interrupt has to wake the halted vCPU first.
            ev.fire(by.acc + self.sim.latency(self.c.vcpu_wake_latency_ns))
        else:
            self.pending = True

    def main(self):
        c = self.c
        while True:
            if not self.pending:
                self.irq = Wakeup(self.env)
                yield from self.sleep_on(self.irq)
                self.sim.stats.wakeups["worker"] += 1
            self.pending = False
            self.work(c.irq_ns)
            self.sim.log(self.t, "worker", "rx_work")
            yield from self.rx_work()

    # ---- virtio_transport_rx_work() --------------------------------------------
    def rx_work(self):
        c, p, vq, stats = self.c, self.sim.p, self.vq, self.sim.stats
        batching = p.spec.batch
        self.work(c.worker_run_ns)
        while True:
            ev = self.sync()
            if ev is not None:
                yield ev
            vq.cb_enabled = False                           # virtqueue_disable_cb()
            while True:
                pkt = vq.get_buf(self.t)                    # virtqueue_get_buf()
                if pkt is None:
                    ev = self.sync()
                    if ev is not None:
                        yield ev
                        continue
                    break
                stats.packets += 1
                self.work(c.get_buf_ns + pkt.len * c.rx_byte_ns)
                if batching:
                    yield from self.rx_one_batched(pkt)
                else:
                    yield from self.recv_pkt(pkt)
                if self.sim.finished.triggered:
                    return
            ev = self.sync()
            if ev is not None:
                yield ev
            vq.cb_enabled = True                            # virtqueue_enable_cb()
            if not vq.has_used(self.t):
                break
        # out:
        yield from self.rx_batch_finish()
        if vq.rx_buf_nr < vq.rx_buf_max_nr // 2:
            yield from self.rx_fill()

    def rx_one_batched(self, pkt: Packet):
        """The per-packet part of rx_work with patch 2: bound the batch, then receive."""
        p, batch = self.sim.p, self.batch
        if batch.sk is not None and pkt.len > p.batch_bytes - batch.bytes:
            yield from self.rx_batch_finish()
        yield from self.recv_pkt_batch(pkt)
        if batch.sk is not None:
            batch.pkts += 1
            batch.bytes += pkt.len
            if batch.pkts >= p.batch_pkts or batch.bytes >= p.batch_bytes:
                yield from self.rx_batch_finish()

    # ---- virtio_vsock_rx_fill() --------------------------------------------------
    def rx_fill(self):
        c, vq, stats = self.c, self.vq, self.sim.stats
        n = vq.free_slots()
        if n <= 0:
            return
        per_buf = c.rx_fill_buf_ns + (0 if self.sim.p.spec.skb else c.pre_skb_fill_extra_ns)
        self.work(n * per_buf)
        ev = self.sync()
        if ev is not None:
            yield ev
        vq.avail += n
        vq.rx_buf_nr += n
        vq.rx_buf_max_nr = max(vq.rx_buf_max_nr, vq.rx_buf_nr)
        stats.refills += 1
        if vq.vhost_notify:                                 # virtqueue_kick() needs a VM exit
            self.work(c.vq_kick_ns)
            stats.kicks += 1
            self.vhost.kick(self.acc + self.c.host_to_guest_latency_ns)

    # ---- virtio_transport_recv_pkt(): one lookup and one lock per packet -------
    def recv_pkt(self, pkt: Packet):
        c, sk = self.c, self.sk
        self.work(c.recv_pkt_ns + c.lookup_ns)              # decode, trace, find_socket
        if not self.sim.p.spec.space_update_under_lock:
            self.work(c.space_update_ns)                    # [OLD]: before lock_sock
        yield from sk.lock_sock(self)
        self.held_pkts = 0
        self.recv_pkt_locked(pkt, batch=None)
        yield from self.release(sk)

    # ---- virtio_transport_recv_pkt_batch() (patches 2-5) ---------------------------
    def recv_pkt_batch(self, pkt: Packet):
        c, p, sk, batch = self.c, self.sim.p, self.sk, self.batch
        if batch.sk is not None:
            if p.spec.reuse_lookup and self.recv_pkt_batchable():
                # Patch 3: same flow as the batch: skip the lookup and its reference.
                self.work(c.recv_pkt_ns)
                if not self.recv_pkt_locked(pkt, batch=batch):
                    yield from self.rx_batch_finish()
                return
            yield from self.rx_batch_finish()
        self.work(c.recv_pkt_ns + c.lookup_ns)              # virtio_transport_recv_pkt_find_socket
        yield from sk.lock_sock(self)
        self.held_pkts = 0
        start_batch = self.recv_pkt_batchable()             # under sk_callback_lock
        if start_batch:
            batch.sk = sk                                   # patch 4: set before processing
        batchable = self.recv_pkt_locked(pkt, batch=batch if start_batch else None)
        if start_batch and batchable:
            return                                          # keep the lock and the reference
        if start_batch:
            yield from self.rx_batch_finish()
        else:
            yield from self.release(sk)

    def recv_pkt_batchable(self) -> bool:
        """virtio_transport_recv_pkt_batchable(): may the socket stay locked?"""
        sk = self.sk
        if sk.done:
            return False
        if self.sim.p.check_headroom:
            return kernel.rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc)
        return True

    def recv_pkt_locked(self, pkt: Packet, batch: RxBatch | None) -> bool:
        """virtio_transport_recv_pkt_locked(): the work done under lock_sock.

        Returns whether the socket can stay locked for another packet.
        """
        c, spec, sk = self.c, self.sim.p.spec, self.sk
        self.held_pkts += 1
        if sk.done:                                         # SOCK_DONE: reset, free
            self.sim.stats_drop(pkt.len)
            return False
        if spec.space_update_under_lock:
            self.work(c.space_update_ns)                    # virtio_transport_space_update
        # The guest sends no data, so its send space is always available.
        if batch is not None and spec.coalesce_write_space and self.recv_pkt_batchable():
            batch.write_space_pending = True                # patch 4
        else:
            self.work(c.write_space_ns)                     # sk->sk_write_space(sk)
        # virtio_transport_recv_connected(), OP_RW:
        if not self.recv_enqueue(pkt):
            self.reset(pkt)
            return False
        if batch is not None and spec.defer_data_ready:
            self.work(c.data_ready_ns / 2)                  # has_data check only
            if sk.rx_bytes >= sk.rcvlowat:
                batch.data_ready_pending = True             # patch 5
        else:
            sk.vsock_data_ready(self)
        return batch is not None and self.recv_pkt_batchable()

    def rx_batch_finish(self):
        """virtio_transport_rx_batch_finish(): deliver coalesced callbacks, unlock."""
        batch = self.batch
        sk = batch.sk
        if sk is None:
            return
        if batch.write_space_pending:
            self.work(self.c.write_space_ns)                # vsk->default_write_space(sk)
        data_ready = batch.data_ready_pending
        batch.sk = None
        batch.pkts = batch.bytes = 0
        batch.write_space_pending = batch.data_ready_pending = False
        yield from self.release(sk)
        if data_ready:
            sk.sk_data_ready(self)                          # after release_sock (patch 5)

    def release(self, sk: GuestSock):
        stats = self.sim.stats
        stats.batch_pkts.append(self.held_pkts)
        yield from sk.release_sock(self)                    # then sock_put()

    # ---- virtio_transport_recv_enqueue() ------------------------------------------
    def recv_enqueue(self, pkt: Packet) -> bool:
        c, p, sk, stats = self.c, self.sim.p, self.sk, self.sim.stats
        q = sk.rx_queue
        length = pkt.len
        self.work(c.enqueue_ns)
        metadata = p.spec.metadata_budget
        if metadata and len(q) >= sk.queue_max:
            self.collapse_rx_queue(len(q) + 2 - sk.queue_max)
        # virtio_transport_inc_rx_pkt()
        if metadata:
            if sk.buf_used + length > sk.buf_alloc or not kernel.rx_skb_has_headroom(len(q), sk.buf_alloc):
                return False
        elif sk.rx_bytes + length > sk.buf_alloc:
            return False
        sk.rx_bytes += length
        sk.buf_used += length
        stats.bytes_enqueued += length
        if sk.buf_used > stats.max_buf_used:
            stats.max_buf_used = sk.buf_used
        # Tail-copy into the last skb when it has room (GOOD_COPY_LEN).
        if length <= kernel.GOOD_COPY_LEN and q:
            last = q[-1]
            room_ok = length < last.room if p.spec.skb else length <= last.room
            if room_ok:
                last.len += length
                last.room -= length
                self.work(length * c.tail_copy_byte_ns)
                stats.tail_copies += 1
                return True
        q.append(Skb(length, p.buf_payload - length))
        stats.skbs_queued += 1
        if len(q) > stats.max_qlen:
            stats.max_qlen = len(q)
        return True

    def collapse_rx_queue(self, min_to_free: int) -> None:
        """virtio_transport_collapse_rx_queue(): merge runs of small skbs (best effort).

        Skbs already partly read and skbs of MAX_COLLAPSE_LEN or more are left
        alone. A queue of one skb cannot shrink.
        """
        q = self.sk.rx_queue
        self.sim.stats.collapses += 1
        merged: deque[Skb] = deque()
        saved = 0
        for skb in q:
            prev = merged[-1] if merged else None
            if (saved < min_to_free and prev is not None and prev.off == 0 and skb.off == 0
                    and prev.len + skb.len < MAX_COLLAPSE_LEN):
                prev.len += skb.len
                prev.room = 0
                self.work(skb.len * self.c.tail_copy_byte_ns)
                saved += 1
            else:
                merged.append(skb)
        self.sk.rx_queue = merged

    def reset(self, pkt: Packet) -> None:
        """recv_connected() after inc_rx_pkt fails: ENOBUFS reset (a4f0b001782b)."""
        sk, stats = self.sk, self.sim.stats
        sk.done = True
        stats.resets += 1
        stats.reset_reason = (f"ENOBUFS: rx_queue had {len(sk.rx_queue)} skb(s), buf_used "
                              f"{sk.buf_used} of {sk.buf_alloc}")
        self.sim.stats_drop(pkt.len)
        self.sim.log(self.t, "worker", "reset", qlen=len(sk.rx_queue))
        sk.error_report()
        self.sim.finish()
