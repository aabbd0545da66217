"""The guest reader: a thread on CPU0 calling blocking recv() (SO_RCVLOWAT = rcvlowat).

recvmsg follows vsock_connectible_recvmsg() / __vsock_stream_recvmsg() in
net/vmw_vsock/af_vsock.c; the dequeue and the credit update follow
virtio_transport_stream_do_dequeue() in virtio_transport_common.c.
"""

from __future__ import annotations

from typing import Any, Generator

from ..model import kernel
from .engine import Sim, Steps, Task, Wakeup
from .sock import GuestSock

WARMUP_FRACTION = 0.1


class Reader(Task):
    __slots__ = ("sk", "host", "worker")

    def __init__(self, sim: Sim, sk: GuestSock, host: Any, worker: Any) -> None:
        super().__init__(sim, "reader")
        self.sk = sk
        sk.reader = self
        # Any: stand-ins fit too (the v1 review's scenario, tests); compiled code checks declared types.
        self.host = host          # receives guest packets: vhost's TX side
        self.worker = worker      # the RX worker, whose busy time the window starts from

    def main(self) -> Steps:
        p, stats = self.sim.p, self.sim.stats
        if p.workload == "pingpong":
            yield from self.pingpong()
            return
        total = p.transfer_bytes
        warmup = int(total * WARMUP_FRACTION)
        while True:
            n = yield from self.recvmsg(p.recv_size)
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
        stats = self.sim.stats
        stats.window_t0 = self.t
        stats.window_bytes0 = stats.bytes_received
        stats.window_busy0 = self.worker.busy

    def pingpong(self) -> Steps:
        """Receive each request in full, then send it back (a user-space echo)."""
        p, c, stats = self.sim.p, self.c, self.sim.stats
        for _ in range(p.requests):
            got = 0
            while got < p.payload:
                n = yield from self.recvmsg(min(p.recv_size, p.payload - got))
                if self.sk.done:
                    return
                got += n
                stats.bytes_received += n
            self.work(c.guest_send_ns)
            ev = self.sync()
            if ev is not None:
                yield ev
            # The reply carries this socket's fwd_cnt and buf_alloc, like every packet.
            self.sk.last_fwd_cnt = self.sk.fwd_cnt
            self.host.from_guest(self.t + c.host_to_guest_latency_ns, self.sk.fwd_cnt,
                                 self.sk.buf_alloc, p.payload)
        stats.end_t = self.t
        self.sim.finish()

    # ---- vsock_connectible_recvmsg() --------------------------------------------
    def recvmsg(self, length: int) -> Generator[Any, None, int]:
        """vsock_connectible_recvmsg() -> __vsock_stream_recvmsg(): lock_sock(),
        wait for data (vsock_connectible_wait_data), dequeue, release_sock().
        A generator returning the number of bytes this recv(length) returns."""
        c, sk, stats = self.c, self.sk, self.stats
        stats.recv_calls += 1
        self.sim.count_event()
        self.work(c.recv_syscall_ns)
        rest = sk.lock_sock(self)
        if rest is not None:
            yield from rest
        self.work(c.recvmsg_locked_ns)
        target = min(sk.rcvlowat, length) or 1              # sock_rcvlowat()
        copied = 0
        while True:
            # vsock_connectible_wait_data()
            while sk.rx_bytes == 0 and not sk.done and not sk.peer_shutdown:
                ev = Wakeup(self)
                sk.sleeper = ev                             # prepare_to_wait(sk_sleep(sk))
                self.work(c.unlock_ns + c.lock_ns)          # release_sock .. lock_sock
                rest = sk.release_sock(self)
                if rest is not None:
                    yield from rest
                if self.trace is not None:
                    self.sim.log(self.t, "reader", "sleep")
                yield from self.sleep_on(ev)                # schedule_timeout()
                stats.wakeups["reader"] += 1
                rest = sk.lock_sock(self, woken_for_data=True)
                if rest is not None:
                    yield from rest
            if sk.done or sk.rx_bytes == 0:                # reset, or end of stream
                break
            read = self.stream_do_dequeue(length - copied)
            if not read:    # rx_bytes > 0 with nothing queued: accounting broke; don't spin
                raise AssertionError(f"rx_bytes is {sk.rx_bytes} but the receive queue is empty")
            copied += read
            if read >= target:
                break
            target -= read
        rest = sk.release_sock(self)
        if rest is not None:
            yield from rest
        if self.trace is not None:
            self.sim.log(self.t, "reader", "recv", bytes=copied)
        return copied

    def stream_do_dequeue(self, length: int) -> int:
        """virtio_transport_stream_do_dequeue(): copy out, free whole skbs, maybe credit."""
        c, sk = self.c, self.sk
        q = sk.rx_queue
        total = freed = freed_len = 0
        while q:
            skb = q[0]
            n = skb.len - skb.off
            if n > length - total:
                # skb_copy_datagram_iter() of the part that fits; the skb stays.
                n = length - total
                skb.off += n
                total += n
                break
            total += n                                      # skb_copy_datagram_iter()
            skb.off = skb.len
            # dec_rx_pkt(): fwd_cnt moves only when a whole skb is consumed.
            freed_len += skb.len
            q.popleft()                                     # __skb_unlink, consume_skb
            freed += 1
            if total == length:
                break
        sk.rx_bytes -= total
        sk.buf_used -= freed_len
        sk.fwd_cnt += freed_len
        self.work(total * c.copy_to_user_byte_ns + freed * c.dequeue_skb_ns)
        stats = self.stats
        stats.bytes_read += total
        if sk.rx_bytes < 0 or stats.bytes_read > stats.bytes_enqueued:
            raise AssertionError("the reader read more than was received")
        fwd_cnt_delta = sk.fwd_cnt - sk.last_fwd_cnt
        free_space = sk.buf_alloc - fwd_cnt_delta
        low_rx_bytes = sk.rx_bytes < sk.rcvlowat
        if fwd_cnt_delta and (free_space < kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE or low_rx_bytes):
            self.send_credit_update()
        return total

    def send_credit_update(self) -> None:
        """virtio_transport_send_credit_update(): OP_CREDIT_UPDATE carrying fwd_cnt.

        virtio_transport_send_pkt() (net/vmw_vsock/virtio_transport.c) takes the
        fast path when send_pkt_queue is empty (the guest sends nothing else):
        virtio_transport_send_skb_fast_path() does mutex_trylock(tx_lock),
        virtqueue_add_sgs and virtqueue_kick *in the caller's context*. The
        model always succeeds; in the kernel the trylock fails while tx_work
        holds tx_lock to free used TX buffers, and the update then waits for
        send_pkt_work on a kworker (an approximation: that window is short, and
        the calibration prices tx_work far below its prior). The caller is virtio_transport_stream_do_dequeue(),
        under lock_sock(), so the kick's VM exit is paid while the reader still
        owns the socket: an RX worker that wants the lock meanwhile sleeps in
        __lock_sock. (Before that fast path, send_pkt_work ran the kick later
        from a kworker on the reader's CPU.)
        """
        sk, c = self.sk, self.c
        self.work(c.credit_update_ns + c.tx_kick_ns)
        sk.last_fwd_cnt = sk.fwd_cnt                        # virtio_transport_inc_tx_pkt()
        self.sim.stats.credit_updates += 1
        self.host.from_guest(self.env._now + self.acc + c.host_to_guest_latency_ns, sk.fwd_cnt,
                             sk.buf_alloc)
