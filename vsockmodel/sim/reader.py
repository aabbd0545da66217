"""The guest reader: a program on CPU0 calling blocking recv() (SO_RCVLOWAT = rcvlowat),
and the kernel path its recv() runs.

    vsock_connectible_recvmsg          net/vmw_vsock/af_vsock.c
      lock_sock                        net/core/sock.c (GuestSock)
      vsock_connectible_wait_data      (prepare_to_wait, release_sock, schedule, lock_sock)
      virtio_transport_stream_do_dequeue          net/vmw_vsock/virtio_transport_common.c
        virtio_transport_send_credit_update
      release_sock
"""

from __future__ import annotations

from typing import Callable

from ..model import kernel
from .engine import Cpu, Sim, Steps, Task
from .sock import GuestSock
from .virtqueue import GuestPacket, Virtqueue

WARMUP_FRACTION = 0.1


class Reader(Task):
    def __init__(self, sim: Sim, sk: GuestSock, tx_vq: Virtqueue, cpu: Cpu,
                 cpu1_busy: Callable[[], float] = lambda: 0.0) -> None:
        super().__init__(sim, "reader", cpu)
        self.sk = sk
        self.tx_vq = tx_vq        # the guest's TX queue: credit updates and replies go to vhost
        self.cpu1_busy = cpu1_busy  # CPU1's busy time, which the measurement window starts from

    # ---- the program ------------------------------------------------------------------
    def main(self) -> Steps:
        if self.sim.p.workload == "pingpong":
            yield from self.pingpong()
        else:
            yield from self.stream()

    def stream(self) -> Steps:
        """recv() until the whole transfer has arrived, the peer has closed, or
        the connection was reset; then the run ends."""
        p, stats = self.sim.p, self.stats
        total = p.transfer_bytes
        warmup = int(total * WARMUP_FRACTION)
        while stats.bytes_received < total:
            n = yield from self.recv(p.recv_size)
            if n <= 0:
                break          # reset, or end of stream before every byte arrived (a lost byte)
            if stats.window_t0 is None and stats.bytes_received >= warmup:
                self.open_window()
        stats.end_t = self.t
        self.sim.finish()

    def pingpong(self) -> Steps:
        """Receive each request in full, then send it back (a user-space echo)."""
        p, c, stats = self.sim.p, self.c, self.stats
        for _ in range(p.requests):
            got = 0
            while got < p.payload:
                n = yield from self.recv(min(p.recv_size, p.payload - got))
                if n <= 0:
                    stats.end_t = self.t
                    self.sim.finish()
                    return
                got += n
            yield from self.send(p.payload)
        stats.end_t = self.t
        self.sim.finish()

    def recv(self, length: int) -> Steps:
        """One recv() call, as the program counts it: bytes returned, or -1 on an error."""
        self.stats.recv_calls += 1
        self.sim.count_event()    # the run's bound: a reader taking a byte at a time may never yield
        n = yield from self.vsock_connectible_recvmsg(length)
        if n > 0:
            self.stats.bytes_received += n
            self.stats.recv_sizes.append(n)
        return n

    def open_window(self) -> None:
        """Start measuring after the warm-up (the first WARMUP_FRACTION of the bytes)."""
        stats = self.stats
        stats.window_t0 = self.t
        stats.window_bytes0 = stats.bytes_received
        stats.window_busy0 = self.cpu1_busy()

    # ---- vsock_connectible_recvmsg() --------------------------------------------------
    def vsock_connectible_recvmsg(self, length: int) -> Steps:
        """recv(length) -> __vsock_stream_recvmsg(): lock_sock, wait for data,
        dequeue until SO_RCVLOWAT is met, release_sock. Returns the bytes
        copied, or -ENOBUFS after a reset."""
        c, sk = self.c, self.sk
        self.work(c.recv_syscall_ns)                # the syscall's entry and exit
        yield from sk.lock_sock(self)
        self.work(c.recvmsg_locked_ns)              # checks, notify hooks, wait-queue set-up
        target = min(sk.rcvlowat, length) or 1      # sock_rcvlowat()
        copied = 0
        while True:
            yield from self.vsock_connectible_wait_data()
            if sk.sk_err or sk.rx_bytes == 0:       # reset, or end of stream
                break
            read = yield from self.virtio_transport_stream_do_dequeue(length - copied)
            copied += read
            if read >= target:
                break
            target -= read
        yield from sk.release_sock(self)
        self.log("recv", bytes=copied)
        if sk.sk_err and not copied:
            return -sk.sk_err
        return copied

    def vsock_connectible_wait_data(self) -> Steps:
        """Sleep on sk_sleep(sk) until data, a reset or the peer's shutdown:
        prepare_to_wait, release_sock, schedule_timeout, lock_sock."""
        sk = self.sk
        while True:
            sk.sk_wq.prepare_to_wait(self)
            if sk.rx_bytes or sk.sk_err or sk.peer_shutdown:
                break
            yield from sk.release_sock(self)
            self.log("sleep")
            yield from self.schedule()              # schedule_timeout()
            yield from sk.lock_sock(self)
        sk.sk_wq.finish_wait(self)

    def virtio_transport_stream_do_dequeue(self, length: int) -> Steps:
        """Copy out, free whole skbs, and send a credit update when the rule says so."""
        c, sk = self.c, self.sk
        q = sk.rx_queue
        total = freed = freed_len = 0
        while q:
            skb = q[0]
            n = skb.len - skb.off
            if n > length - total:
                # skb_copy_datagram_iter() of the part that fits; the skb stays.
                skb.off += length - total
                total = length
                break
            total += n                              # skb_copy_datagram_iter()
            skb.off = skb.len
            # virtio_transport_dec_rx_pkt(): fwd_cnt moves only when a whole skb is consumed.
            freed_len += skb.len
            q.popleft()                             # __skb_unlink, consume_skb
            freed += 1
            if total == length:
                break
        sk.rx_bytes -= total
        sk.buf_used -= freed_len
        sk.fwd_cnt += freed_len
        self.work(total * c.copy_to_user_byte_ns + freed * c.dequeue_skb_ns)
        fwd_cnt_delta = sk.fwd_cnt - sk.last_fwd_cnt
        free_space = sk.buf_alloc - fwd_cnt_delta
        low_rx_bytes = sk.rx_bytes < sk.rcvlowat
        if fwd_cnt_delta and (free_space < kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE or low_rx_bytes):
            yield from self.virtio_transport_send_credit_update()
        return total

    def virtio_transport_send_credit_update(self) -> Steps:
        """OP_CREDIT_UPDATE carrying fwd_cnt, sent from the reader's context.

        virtio_transport_send_pkt() (net/vmw_vsock/virtio_transport.c) takes the
        fast path when send_pkt_queue is empty (the guest sends nothing else):
        virtio_transport_send_skb_fast_path() does mutex_trylock(tx_lock),
        virtqueue_add_sgs and virtqueue_kick *in the caller's context*. The
        model always succeeds; in the kernel the trylock fails while tx_work
        holds tx_lock to free used TX buffers, and the update then waits for
        send_pkt_work on a kworker (an approximation: that window is short).
        The caller is virtio_transport_stream_do_dequeue(), under lock_sock(),
        so the kick is paid while the reader still owns the socket: an RX
        worker that wants the lock meanwhile sleeps in __lock_sock.
        """
        sk, c = self.sk, self.c
        self.work(c.credit_update_ns)               # a header-only skb onto the TX queue
        sk.last_fwd_cnt = sk.fwd_cnt                # virtio_transport_inc_tx_pkt()
        # virtqueue_kick(), if vhost wants one: a VM exit (host-mode time: it delays
        # the reader, still under lock_sock, but perf does not count it)
        yield from self.virtio_transport_send_pkt(GuestPacket(kernel.VIRTIO_VSOCK_OP_CREDIT_UPDATE,
                                                              sk.fwd_cnt, sk.buf_alloc), kick_exit_ns=c.vq_kick_ns)

    def send(self, nbytes: int) -> Steps:
        """send() of a ping-pong reply: the syscall, the TX path and the kick (all
        in ``guest_send_ns``)."""
        sk = self.sk
        self.work(self.c.guest_send_ns)
        sk.last_fwd_cnt = sk.fwd_cnt                # every packet carries the socket's credit
        yield from self.virtio_transport_send_pkt(GuestPacket(kernel.VIRTIO_VSOCK_OP_RW, sk.fwd_cnt,
                                                              sk.buf_alloc, nbytes), kick_exit_ns=0.0)

    def virtio_transport_send_pkt(self, pkt: GuestPacket, kick_exit_ns: float) -> Steps:
        """Onto the TX queue, and a kick unless vhost is handling the queue
        already (virtqueue_kick_prepare()); vhost hears of it a VM exit later."""
        vq = self.tx_vq
        vq.virtqueue_add_outbuf(self, pkt)
        if (yield from vq.virtqueue_kick_prepare(self)):
            self.exit_work(kick_exit_ns)
            vq.virtqueue_notify(self, self.c.host_to_guest_latency_ns)
