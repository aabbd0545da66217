"""The guest socket: struct sock + vsock_sock + virtio_vsock_sock, and its lock.

The lock follows net/core/sock.c, not a FIFO mutex:

- ``lock_sock`` (lock_sock_nested): if nobody owns the socket, take it at once;
  otherwise sleep on ``sk_lock.wq`` (``__lock_sock``, exclusive wait) and
  re-check ownership when woken.
- ``release_sock``: clear the owner, then ``wake_up(&sk->sk_lock.wq)`` wakes one
  waiter. The waiter runs only after its wake-up latency; if the releasing
  task calls ``lock_sock`` again before that, it gets the lock back (barging)
  and the waiter's wake-up was futile: it goes back to sleep.

The RX worker and the reader both take the lock here.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..model import kernel
from .engine import Sim, Steps, Task, Wakeup

if TYPE_CHECKING:
    from .reader import Reader


class Skb:
    """One rx_queue entry: payload length (hdr->len), bytes already read, tailroom."""

    __slots__ = ("len", "off", "room")

    def __init__(self, length: int, room: int) -> None:
        self.len = length
        self.off = 0          # VIRTIO_VSOCK_SKB_CB(skb)->offset
        self.room = room      # skb_tailroom()


class GuestSock:
    def __init__(self, sim: Sim) -> None:
        p = sim.p
        self.sim = sim
        self.stats = sim.stats
        # sk_lock
        self.owned = False
        self.owner: Task | None = None
        self.owned_since = 0.0
        self.lock_wq: deque = deque()       # (task, Wakeup) sleeping in __lock_sock
        # sk_sleep(sk): the reader waiting for data (prepare_to_wait), or None
        self.sleeper: Wakeup | None = None
        # virtio_vsock_sock, receive side (under rx_lock)
        self.rx_queue: deque[Skb] = deque()
        self.buf_alloc = p.buffer
        self.buf_used = 0
        self.rx_bytes = 0
        self.fwd_cnt = 0
        self.last_fwd_cnt = 0
        self.rcvlowat = p.rcvlowat
        self.queue_max = kernel.queue_max(p.buffer)
        self.done = False                   # SOCK_DONE / reset
        self.peer_shutdown = False          # vsk->peer_shutdown: the host closed
        self.reader: Reader                 # the task that sleeps on sk_sleep(sk) (set by Reader)

    # ---- lock_sock / release_sock ---------------------------------------------------
    def lock_sock(self, task: Task, woken_for_data: bool = False) -> Steps:
        """net/core/sock.c lock_sock(): take the socket, or sleep in
        __lock_sock() until it is free. ``woken_for_data``: the task was woken
        by sk_data_ready or sk_write_space, and a lock it finds owned makes
        that wake-up futile."""
        task.work(self.sim.c.lock_ns)                       # sk_lock.slock, owned = 1
        if task.behind():
            yield task.flush()
        if self.owned:
            yield from self._lock_sock_wait(task, woken_for_data)
        self.owned = True
        self.owner = task
        self.owned_since = task.t
        task.log("lock")

    def _lock_sock_wait(self, task: Task, woken_for_data: bool) -> Steps:
        """__lock_sock(): sleep exclusively on sk_lock.wq until the socket is not owned."""
        stats = self.stats
        t0 = task.t
        if woken_for_data:
            # Woken for data (sk_write_space or sk_data_ready) only to find the lock taken.
            stats.futile_wakeups[task.name] += 1
            task.log("futile_wakeup", why="woken for data, socket owned")
        while self.owned:
            wakeup = Wakeup(task)
            self.lock_wq.append((task, wakeup))
            task.log("lock_wait", owner=self.owner.name if self.owner else None)
            yield from task.sleep_on(wakeup)
            stats.wakeups[task.name] += 1
            if task.behind():
                yield task.flush()
            if self.owned:
                stats.futile_wakeups[task.name] += 1
                task.log("futile_wakeup", why="lock taken again")
        stats.lock_wait[task.name].append(task.t - t0)

    def release_sock(self, task: Task) -> Steps:
        """net/core/sock.c release_sock(): owned = 0, wake one lock waiter."""
        task.work(self.sim.c.unlock_ns)                     # slock, no backlog, owned = 0
        if task.behind():
            yield task.flush()
        t = task.t
        self.stats.lock_hold[task.name].append(t - self.owned_since)
        self.owned = False
        self.owner = None
        task.log("unlock")
        if self.lock_wq:
            waiter, wakeup = self.lock_wq.popleft()
            self.try_to_wake_up(task)
            wakeup.fire(task.acc + self.sim.vcpu_wake(waiter, task.t))

    def try_to_wake_up(self, task: Task) -> None:
        """Wake a task on another, halted vCPU: the waker pays for it."""
        c = self.sim.c
        if c.wakeup_ns:
            task.work(c.wakeup_ns)
        if c.ipi_exit_ns:
            task.exit_work(c.ipi_exit_ns)                   # the IPI's VM exit, if any
        task.wakes_sent += 1

    # ---- the socket's callbacks -------------------------------------------------------
    def sk_data_ready(self, task: Task, via: str = "sk_data_ready") -> None:
        """sock_def_readable(): wake the reader if it sleeps waiting for data.

        The call itself is part of the caller's step cost; waking a sleeper
        costs the waker an extra try_to_wake_up. ``via`` names the callback,
        for the trace.
        """
        wakeup = self.sleeper
        if wakeup is None:
            return
        self.sleeper = None          # autoremove_wake_function
        self.try_to_wake_up(task)
        wakeup.fire(task.acc + self.sim.vcpu_wake(self.reader, task.t))
        task.log("wake_reader", via=via)

    def sk_write_space(self, task: Task, via: str = "sk_write_space") -> None:
        """sock_def_write_space(): wake what sleeps on sk_sleep(sk), the socket being writeable.

        The guest socket sends only credit updates, so it is always writeable,
        and a reader blocked in recv() sleeps on that same wait queue
        (prepare_to_wait() in vsock_connectible_wait_data(): an autoremove
        entry, which ignores the EPOLLOUT key). So a write-space callback wakes
        the reader exactly as sk_data_ready does, whether data came or not. (A
        reader waiting in poll() for POLLIN would filter the key and sleep on.)
        """
        if self.sleeper is not None:
            self.sk_data_ready(task, via=via)

    def vsock_data_ready(self, task: Task) -> None:
        """af_vsock.c vsock_data_ready(): notify once rx_bytes reaches SO_RCVLOWAT."""
        if self.sleeper is not None and (self.rx_bytes >= self.rcvlowat or self.done):
            self.sk_data_ready(task)

    def sk_state_change(self, task: Task) -> None:
        """sock_def_wakeup(): wake the reader whatever is queued."""
        if self.sleeper is not None:
            self.sk_data_ready(task)

    def sk_error_report(self) -> None:
        """After a reset: wake a reader sleeping for data."""
        wakeup, self.sleeper = self.sleeper, None
        if wakeup is not None:
            wakeup.fire(0)
