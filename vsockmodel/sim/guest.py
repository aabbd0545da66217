"""The guest's virtio-vsock driver: its interrupts and work items, and the receive path they run.

One method per kernel function, under the kernel's name, read top to bottom
as the kernel runs them:

    virtio_vsock_rx_done                           net/vmw_vsock/virtio_transport.c
      queue_work(rx_work)
    virtio_transport_rx_work
      virtqueue_get_buf                            (the ring: vsockmodel.sim.virtqueue)
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
    virtio_vsock_tx_done -> queue_work(tx_work)
    virtio_transport_tx_work

With the series' batching (v2, patches 2-5; ``Variant.batch``), rx_work calls
virtio_transport_recv_pkt_batch() instead, which keeps one lock_sock across a
bounded run of packets and ends it in virtio_transport_rx_batch_finish().
Which path runs is decided by the variant's switches (vsockmodel.model.variants).

Each function charges its own CPU cost (``self.work``) where it runs; the cost
names are in vsockmodel.model.costs. ``self`` is the kworker running the work
item; the device's state is ``self.vsock`` (struct virtio_vsock).
"""

from __future__ import annotations

from collections import deque

from ..model import kernel
from .engine import Cpu, Sim, Steps
from .sock import GuestSock, Skb
from .virtqueue import GuestPacket, Packet, Virtqueue
from .workqueue import Work, WorkerThread


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


class VirtioVsock:
    """struct virtio_vsock: the guest device's queues, counters and work items,
    and its interrupt.

    The device has one MSI-X vector for all its queues (QEMU's vhost-vsock-pci
    offers 3 vectors, too few for one per queue plus the configuration, so
    vp_find_vqs() falls back to a shared one): an interrupt for either queue
    runs vring_interrupt() on each, and each queue with used buffers gets its
    callback. The interrupt and both work items are pinned to CPU1, as on the
    series' test bed. The virtio_vsock workqueue is a bound, concurrency-managed
    one: a second kworker runs a pending work item while the first one sleeps
    (in __lock_sock, say), on the same CPU.
    """

    def __init__(self, sim: Sim, rx_vq: Virtqueue, tx_vq: Virtqueue, sk: GuestSock, cpu: Cpu) -> None:
        p = sim.p
        self.sim = sim
        self.c = sim.c
        self.cpu = cpu                          # CPU1: the interrupt and the work items
        self.rx_vq = rx_vq
        self.tx_vq = tx_vq
        self.sk = sk                            # the one connected socket (the lookup's answer)
        self.rx_buf_nr = rx_vq.num
        self.rx_buf_max_nr = rx_vq.num
        self.batch = RxBatch()
        self.spec = p.spec                      # the variant's switches
        self.metadata_budget = p.spec.metadata_budget
        self.batch_max_pkts = p.batch_pkts
        self.batch_max_bytes = p.batch_bytes
        self.check_headroom = p.check_headroom
        # Bytes an RX buffer holds behind its header: virtio_vsock_pkt's buf_len,
        # or an skb's tailroom when empty (with its kmalloc slack).
        self.skb_room = kernel.rx_skb_room(p.buf_payload) if self.spec.skb else p.buf_payload
        self.rx_kworker = Kworker(sim, "worker", self, cpu)
        self.tx_kworker = Kworker(sim, "tx worker", self, cpu)
        self.rx_work = Work("rx_work", self.rx_kworker.virtio_transport_rx_work)
        self.tx_work = Work("tx_work", self.tx_kworker.virtio_transport_tx_work)
        rx_vq.callback = self.virtio_vsock_rx_done
        tx_vq.callback = self.virtio_vsock_tx_done
        rx_vq.irq = tx_vq.irq = self.vp_vring_interrupt
        self.interrupts = 0
        self.coalesced = 0      # MSI-X messages that found the vector already pending

    def vp_vring_interrupt(self, at: float) -> None:
        """The shared vector's handler on CPU1 at ``at``: vring_interrupt() for each queue.

        While CPU1 is halted with this vector already pending, a second MSI-X
        message sets the same bit again: one handler will run, and it sees
        both queues (the pending interrupt is coalesced, not counted twice).
        """
        coalesced = not self.cpu.interrupt(self.c.irq_ns)
        if coalesced:
            self.coalesced += 1
        else:
            self.interrupts += 1
        self.rx_vq.vring_interrupt(at, coalesced)
        self.tx_vq.vring_interrupt(at, coalesced)

    def virtio_vsock_rx_done(self, at: float) -> None:
        self.rx_kworker.queue(self.rx_work, at)     # queue_work(virtio_vsock_workqueue, &vsock->rx_work)

    def virtio_vsock_tx_done(self, at: float) -> None:
        self.tx_kworker.queue(self.tx_work, at)


class Kworker(WorkerThread):
    """A kworker of CPU1's virtio_vsock workqueue, running the driver's work items."""

    def __init__(self, sim: Sim, name: str, vsock: VirtioVsock, cpu: Cpu) -> None:
        super().__init__(sim, name, cpu)
        self.vsock = vsock

    # ---- virtio_transport_tx_work() ----------------------------------------------------
    def virtio_transport_tx_work(self) -> Steps:
        """Free the guest's TX buffers that vhost has used.

        An sk_buff is charged to the socket that sent it (skb_set_owner_w), so
        freeing it ends in sock_wfree() -> sk_write_space(): a reader asleep in
        recv() wakes up though no data came. A virtio_vsock_pkt was plain memory.
        """
        vsock, c = self.vsock, self.c
        vq = vsock.tx_vq
        self.work(c.worker_run_ns)                  # the kworker runs the work item
        while True:
            vq.virtqueue_disable_cb(self)
            while True:
                buf = yield from vq.virtqueue_get_buf(self)
                if buf is None:
                    break
                # virtio_transport_consume_skb_sent(): consume_skb() -> sock_wfree()
                self.work(c.tx_work_ns)
                if vsock.spec.skb:
                    vsock.sk.sk_write_space(self, via="sock_wfree")
            if vq.virtqueue_enable_cb(self):
                break

    # ---- virtio_transport_rx_work() ----------------------------------------------------
    def virtio_transport_rx_work(self) -> Steps:
        vsock = self.vsock
        vq, batch = vsock.rx_vq, vsock.batch
        self.work(self.c.worker_run_ns)             # the kworker runs the work item
        while True:
            vq.virtqueue_disable_cb(self)
            while True:
                pkt = yield from vq.virtqueue_get_buf(self)
                if pkt is None:
                    break
                vsock.rx_buf_nr -= 1
                # virtio_vsock_skb_rx_put(), the length checks, the tap
                self.work(self.c.get_buf_ns)
                if not vsock.spec.batch:
                    yield from self.virtio_transport_recv_pkt(pkt)
                else:
                    # patch 2: a packet that would take the batch past its byte limit starts a new one
                    if batch.sk is not None and pkt.len > vsock.batch_max_bytes - batch.bytes:
                        yield from self.virtio_transport_rx_batch_finish()
                    yield from self.virtio_transport_recv_pkt_batch(pkt)
                    if batch.sk is not None:
                        batch.pkts += 1
                        batch.bytes += pkt.len
                        if batch.pkts >= vsock.batch_max_pkts or batch.bytes >= vsock.batch_max_bytes:
                            yield from self.virtio_transport_rx_batch_finish()
            if vq.virtqueue_enable_cb(self):
                break
        # out:
        yield from self.virtio_transport_rx_batch_finish()
        if vsock.rx_buf_nr < vsock.rx_buf_max_nr // 2:
            yield from self.virtio_vsock_rx_fill()

    # ---- virtio_vsock_rx_fill() -----------------------------------------------------------
    def virtio_vsock_rx_fill(self) -> Steps:
        """Post an empty buffer in every free slot (one allocation and one sg
        each; two of each for virtio_vsock_pkt), then virtqueue_kick()."""
        c, vsock = self.c, self.vsock
        vq = vsock.rx_vq
        n = vq.num - vsock.rx_buf_nr                # vq->num_free
        if n <= 0:
            return
        per_buf = c.rx_fill_buf_ns + (0 if vsock.spec.skb else c.pre_skb_fill_extra_ns)
        self.work(n * per_buf)
        yield from vq.virtqueue_add_inbufs(self, n)
        vsock.rx_buf_nr += n
        vsock.rx_buf_max_nr = max(vsock.rx_buf_max_nr, vsock.rx_buf_nr)
        if (yield from vq.virtqueue_kick_prepare(self)):     # virtqueue_kick()
            self.exit_work(c.vq_kick_ns)            # virtqueue_notify(): a VM exit (MMIO notify)
            vq.virtqueue_notify(self, c.host_to_guest_latency_ns)

    # ---- virtio_transport_recv_pkt(): one lookup and one lock per packet ----------------
    def virtio_transport_recv_pkt(self, pkt: Packet) -> Steps:
        self.work(self.c.recv_pkt_ns)               # address decode, trace, type checks, skb owner
        sk = self.virtio_transport_recv_pkt_find_socket()
        yield from sk.lock_sock(self)
        self.virtio_transport_recv_pkt_locked(sk, pkt, None)
        yield from sk.release_sock(self)            # then sock_put()

    def virtio_transport_recv_pkt_find_socket(self) -> GuestSock:
        """vsock_find_connected_socket_net(): the hash-bucket walk and sock_hold
        (the matching sock_put is in the same cost)."""
        self.work(self.c.lookup_ns)
        return self.vsock.sk

    # ---- virtio_transport_recv_pkt_batch() (patches 2-5) ----------------------------------
    def virtio_transport_recv_pkt_batch(self, pkt: Packet) -> Steps:
        vsock = self.vsock
        batch = vsock.batch
        if pkt.op != kernel.VIRTIO_VSOCK_OP_RW:
            # Only STREAM/RW packets can share a socket lock.
            yield from self.virtio_transport_rx_batch_finish()
            yield from self.virtio_transport_recv_pkt(pkt)
            return
        self.work(self.c.recv_pkt_ns)               # init_addrs, trace, skb owner
        if batch.sk is not None:
            if vsock.spec.reuse_lookup and self.virtio_transport_recv_pkt_batchable(batch.sk):
                # patch 3: the same flow as the batch: no lookup, stay under its lock
                if not self.virtio_transport_recv_pkt_locked(batch.sk, pkt, batch):
                    yield from self.virtio_transport_rx_batch_finish()
                return
            yield from self.virtio_transport_rx_batch_finish()
        sk = self.virtio_transport_recv_pkt_find_socket()
        yield from sk.lock_sock(self)
        # Under sk_callback_lock: sockmap removal restores the native protocol
        # under it, so this first eligibility check is serialised with that.
        self.work(self.c.callback_lock_ns)
        start_batch = self.virtio_transport_recv_pkt_batchable(sk)
        if start_batch:
            batch.sk = sk                           # patch 4: set before processing
        batchable = self.virtio_transport_recv_pkt_locked(sk, pkt, batch if start_batch else None)
        if start_batch and batchable:
            return                                  # keep the lock and the lookup reference
        if start_batch:
            yield from self.virtio_transport_rx_batch_finish()
        else:
            yield from sk.release_sock(self)        # then sock_put()

    def virtio_transport_recv_pkt_batchable(self, sk: GuestSock) -> bool:
        """May the socket stay locked for another packet? Established STREAM,
        native protocol (no sockmap), not SOCK_DONE, and (the headroom check)
        room for one more skb's metadata."""
        if sk.done:
            return False
        if self.vsock.check_headroom:
            return kernel.rx_skb_has_headroom(len(sk.rx_queue), sk.buf_alloc)
        return True

    def virtio_transport_rx_batch_finish(self) -> Steps:
        """Deliver the coalesced callbacks and unlock (an empty batch: nothing)."""
        vsock, c = self.vsock, self.c
        batch = vsock.batch
        sk = batch.sk
        if sk is None:
            return
        write_space, data_ready = batch.write_space_pending, batch.data_ready_pending
        batch.sk = None
        batch.pkts = batch.bytes = 0
        batch.write_space_pending = batch.data_ready_pending = False
        if write_space:
            self.work(c.write_space_ns)             # patch 4: one sk_write_space, before release_sock
            sk.sk_write_space(self)
        if vsock.spec.defer_data_ready:
            self.work(c.callback_lock_ns)           # patch 5: vsock_rx_cb_is_native() under sk_callback_lock
        yield from sk.release_sock(self)            # then sock_put()
        if data_ready:
            self.work(c.data_ready_ns)              # patch 5: one sock_def_readable(), after release_sock
            sk.sk_data_ready(self)

    # ---- virtio_transport_recv_pkt_locked(): the work done under lock_sock ---------------
    def virtio_transport_recv_pkt_locked(self, sk: GuestSock, pkt: Packet, batch: RxBatch | None) -> bool:
        """Patch 1 of the series (the v2 posting) splits this helper, and the
        lookup, out of virtio_transport_recv_pkt() without changing what they
        do; in mainline the same code is inline there and in
        virtio_transport_recv_connected().

        Returns whether the socket can stay locked for another packet (only
        asked of a batch)."""
        if sk.done:                                 # SOCK_DONE: reset, free
            sk.sk_drops += pkt.len
            return False
        self.virtio_transport_space_update()
        # sk_write_space(): the guest sends no data, so its send space is
        # always available and the callback runs for every packet, unless
        # patch 4 coalesces it into one at the end of the batch.
        if batch is not None and self.vsock.spec.coalesce_write_space:
            batch.write_space_pending = True
        else:
            self.work(self.c.write_space_ns)
            sk.sk_write_space(self)
        if not self.virtio_transport_recv_connected(sk, pkt, batch):
            return False
        return batch is not None and self.virtio_transport_recv_pkt_batchable(sk)

    def virtio_transport_space_update(self) -> None:
        """Take the peer's credit from the header (tx_lock). It runs under
        lock_sock in every variant: ce7536bc7398 (5.11) moved it after the
        lock and the SOCK_DONE check, long before the sk_buff conversion."""
        self.work(self.c.space_update_ns)

    def virtio_transport_recv_connected(self, sk: GuestSock, pkt: Packet, batch: RxBatch | None) -> bool:
        """The TCP_ESTABLISHED state: OP_RW enqueues, then vsock_data_ready();
        OP_SHUTDOWN records the peer's shutdown. False when the socket cannot
        take more (shutdown, reset).

        Patch 5: in a batch, the readable notification becomes a flag, set once
        the low watermark is met; one sock_def_readable() follows when the
        batch unlocks (virtio_transport_rx_batch_finish)."""
        c = self.c
        if pkt.op != kernel.VIRTIO_VSOCK_OP_RW:
            # OP_SHUTDOWN: record it, sk->sk_state_change(): wake the reader.
            sk.peer_shutdown = True
            sk.sk_state_change(self)
            return False
        if not self.virtio_transport_recv_enqueue(sk, pkt):
            self.virtio_transport_reset(sk, pkt)
            return False
        if batch is not None and self.vsock.spec.defer_data_ready:
            self.work(c.data_ready_flag_ns)         # READ_ONCE(sk->sk_data_ready), the flag
            if not batch.data_ready_pending and (sk.rx_bytes >= sk.rcvlowat or sk.done):
                batch.data_ready_pending = True
        else:
            self.work(c.data_ready_ns)
            sk.vsock_data_ready(self)
        return True

    # ---- virtio_transport_recv_enqueue() ---------------------------------------------------
    def virtio_transport_recv_enqueue(self, sk: GuestSock, pkt: Packet) -> bool:
        """Collapse a full queue, charge the packet (inc_rx_pkt), then
        tail-copy it or queue its skb. False: refused."""
        q = sk.rx_queue
        length = pkt.len
        self.work(self.c.enqueue_ns)                # rx_lock, inc_rx_pkt, __skb_queue_tail
        if self.vsock.metadata_budget and len(q) >= sk.queue_max:
            self.virtio_transport_collapse_rx_queue(sk, len(q) + 2 - sk.queue_max)
        if not self.virtio_transport_inc_rx_pkt(sk, length):
            return False
        # Tail-copy into the last queued skb, if this packet is small and fits.
        if length <= kernel.GOOD_COPY_LEN and q:
            last = q[-1]
            if self.vsock.spec.skb:
                fits = length < last.room           # skb->len < skb_tailroom(last_skb)
            else:
                fits = length <= last.room          # pkt->len <= last_pkt->buf_len - last_pkt->len
            if fits:
                last.len += length                  # memcpy(skb_put(last_skb, len), ...)
                last.room -= length
                # then kfree_skb(skb), here on the worker's CPU
                self.work(length * self.c.tail_copy_byte_ns + self.c.tail_free_ns)
                self.sim.tracepoints.tail_copy(self, sk, length)
                return True
        q.append(Skb(length, self.vsock.skb_room - length))    # __skb_queue_tail()
        self.sim.tracepoints.enqueue(self, sk, length)
        return True

    def virtio_transport_inc_rx_pkt(self, sk: GuestSock, length: int) -> bool:
        """Charge ``length`` payload bytes to the receive budget, or refuse the packet.

        sk_buff: the payload budget (buf_used + len <= buf_alloc) and, since
        c6087c5aaad6, the metadata budget of one more queued skb
        (rx_skb_has_headroom). virtio_vsock_pkt [OLD]: rx_bytes only.
        """
        buf_used = sk.buf_used + length
        if self.vsock.metadata_budget:
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

    def virtio_transport_collapse_rx_queue(self, sk: GuestSock, min_to_free: int) -> None:
        """Copy runs of queued skbs into fewer, right-sized linear skbs (best effort).

        As in the kernel: skbs already partly read, or of MAX_COLLAPSE_LEN or
        more, are kept; each new skb is sized by virtio_transport_collapse_size()
        to hold a whole run (up to MAX_COLLAPSE_LEN) and filled to capacity; no
        new one is started once ``min_to_free`` skbs are saved. A queue of one
        skb cannot shrink: it has nothing to merge with.
        """
        q = sk.rx_queue
        c = self.c
        items = list(q)
        merged: list[Skb] = []
        new_skb: Skb | None = None
        saved = copied = allocs = copied_bytes = 0
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
                allocs += 1
            new_skb.len += src_len                      # skb_copy_bits()
            new_skb.room -= src_len
            self.work(src_len * c.tail_copy_byte_ns + c.tail_free_ns)   # + consume_skb()
            saved += 1
            copied += 1
            copied_bytes += src_len
            i += 1
        if new_skb is not None:
            merged.append(new_skb)
        q.clear()
        q.extend(merged)
        q.extend(items[i:])                             # skb_queue_splice() at the head
        self.sim.tracepoints.collapse(self, copied, allocs, copied_bytes)

    def virtio_transport_reset(self, sk: GuestSock, pkt: Packet) -> None:
        """recv_connected() after inc_rx_pkt fails: the ENOBUFS reset
        (a4f0b001782b): reset to the peer, close, sk_err, sk_error_report()."""
        sk.done = True
        sk.sk_err = kernel.ENOBUFS
        sk.sk_drops += pkt.len
        self.sim.tracepoints.reset(self, sk)
        sk.sk_error_report(self)
