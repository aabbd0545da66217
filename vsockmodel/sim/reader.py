"""The guest reader: a thread on CPU0 calling blocking recv() (SO_RCVLOWAT = rcvlowat).

    vsock_connectible_recvmsg          net/vmw_vsock/af_vsock.c
      lock_sock                        net/core/sock.c (GuestSock)
      vsock_connectible_wait_data      (release_sock, schedule_timeout, lock_sock)
      virtio_transport_stream_do_dequeue          net/vmw_vsock/virtio_transport_common.c
        virtio_transport_send_credit_update
      release_sock
"""

from __future__ import annotations

from typing import Any

from ..model import kernel
from .engine import Sim, Steps, Task, Wakeup
from .sock import GuestSock

WARMUP_FRACTION = 0.1


class Reader(Task):
    def __init__(self, sim: Sim, sk: GuestSock, host: Any, worker: Any) -> None:
        super().__init__(sim, "reader")
        self.sk = sk
        sk.reader = self
        self.host = host          # receives guest packets: vhost's TX side (Any: the scenario's stand-in)
        self.worker = worker      # the RX worker, whose busy time the measurement window starts from

    def main(self) -> Steps:
        if self.sim.p.workload == "pingpong":
            yield from self.pingpong()
        else:
            yield from self.stream()

    def stream(self) -> Steps:
        """recv() until the whole transfer has arrived (or the stream was reset)."""
        p, stats = self.sim.p, self.stats
        total = p.transfer_bytes
        warmup = int(total * WARMUP_FRACTION)
        while True:
            n = yield from self.vsock_connectible_recvmsg(p.recv_size)
            if self.sk.done:
                return
            if n == 0:
                # End of stream before every byte arrived: a lost byte. Stop and
                # let the byte accounting show it.
                stats.end_t = self.t
                self.sim.finish()
                return
            stats.bytes_received += n
            stats.recv_sizes.append(n)
            if stats.window_t0 is None and stats.bytes_received >= warmup:
                self.open_window()
            if stats.bytes_received >= total:
                stats.end_t = self.t
                self.sim.finish()
                return

    def open_window(self) -> None:
        """Start measuring after the warm-up (the first WARMUP_FRACTION of the bytes)."""
        stats = self.stats
        stats.window_t0 = self.t
        stats.window_bytes0 = stats.bytes_received
        stats.window_busy0 = self.worker.busy

    def pingpong(self) -> Steps:
        """Receive each request in full, then send it back (a user-space echo)."""
        p, c, stats = self.sim.p, self.c, self.stats
        for _ in range(p.requests):
            got = 0
            while got < p.payload:
                n = yield from self.vsock_connectible_recvmsg(min(p.recv_size, p.payload - got))
                if self.sk.done:
                    return
                got += n
                stats.bytes_received += n
            self.work(c.guest_send_ns)              # send(): the syscall, the TX path, the kick
            if self.behind():
                yield self.flush()
            # The reply carries this socket's fwd_cnt and buf_alloc, like every packet.
            self.sk.last_fwd_cnt = self.sk.fwd_cnt
            self.host.from_guest(self.t + c.host_to_guest_latency_ns, self.sk.fwd_cnt,
                                 self.sk.buf_alloc, p.payload)
        stats.end_t = self.t
        self.sim.finish()

    # ---- vsock_connectible_recvmsg() --------------------------------------------------
    def vsock_connectible_recvmsg(self, length: int) -> Steps:
        """recv(length) -> __vsock_stream_recvmsg(): lock_sock, wait for data,
        dequeue until SO_RCVLOWAT is met, release_sock. Returns the bytes copied."""
        c, sk, stats = self.c, self.sk, self.stats
        stats.recv_calls += 1
        self.sim.count_event()
        self.work(c.recv_syscall_ns)                # the syscall's entry and exit
        yield from sk.lock_sock(self)
        self.work(c.recvmsg_locked_ns)              # checks, notify hooks, wait-queue set-up
        target = min(sk.rcvlowat, length) or 1      # sock_rcvlowat()
        copied = 0
        while True:
            yield from self.vsock_connectible_wait_data()
            if sk.done or sk.rx_bytes == 0:         # reset, or end of stream
                break
            read = self.virtio_transport_stream_do_dequeue(length - copied)
            if not read:    # rx_bytes > 0 with nothing queued: accounting broke; don't spin
                raise AssertionError(f"rx_bytes is {sk.rx_bytes} but the receive queue is empty")
            copied += read
            if read >= target:
                break
            target -= read
        yield from sk.release_sock(self)
        self.log("recv", bytes=copied)
        return copied

    def vsock_connectible_wait_data(self) -> Steps:
        """Sleep on sk_sleep(sk) until data, a reset or the peer's shutdown:
        prepare_to_wait, release_sock, schedule_timeout, lock_sock."""
        sk = self.sk
        while sk.rx_bytes == 0 and not sk.done and not sk.peer_shutdown:
            wakeup = Wakeup(self)
            sk.sleeper = wakeup                     # prepare_to_wait(sk_sleep(sk))
            yield from sk.release_sock(self)
            self.log("sleep")
            yield from self.sleep_on(wakeup)        # schedule_timeout()
            self.stats.wakeups["reader"] += 1
            yield from sk.lock_sock(self, woken_for_data=True)

    def virtio_transport_stream_do_dequeue(self, length: int) -> int:
        """Copy out, free whole skbs, and send a credit update when the rule says so."""
        c, sk, stats = self.c, self.sk, self.stats
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
        stats.bytes_read += total
        if sk.rx_bytes < 0 or stats.bytes_read > stats.bytes_enqueued:
            raise AssertionError("the reader read more than was received")
        fwd_cnt_delta = sk.fwd_cnt - sk.last_fwd_cnt
        free_space = sk.buf_alloc - fwd_cnt_delta
        low_rx_bytes = sk.rx_bytes < sk.rcvlowat
        if fwd_cnt_delta and (free_space < kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE or low_rx_bytes):
            self.virtio_transport_send_credit_update()
        return total

    def virtio_transport_send_credit_update(self) -> None:
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
        # virtio_transport_alloc_skb() and virtqueue_add_sgs() on the TX queue: the
        # same allocation and sg as one buffer of virtio_vsock_rx_fill(), so its cost
        self.work(c.rx_fill_buf_ns)
        # virtqueue_kick(): the same notify as rx_fill's kick, a VM exit (host-mode
        # time: it delays the reader, still under lock_sock, but perf does not count it)
        self.exit_work(c.vq_kick_ns)
        sk.last_fwd_cnt = sk.fwd_cnt                # virtio_transport_inc_tx_pkt()
        self.stats.credit_updates += 1
        self.host.from_guest(self.t + c.host_to_guest_latency_ns, sk.fwd_cnt, sk.buf_alloc)
