"""The guest socket: struct sock + vsock_sock + virtio_vsock_sock, and its lock.

The lock follows net/core/sock.c, not a FIFO mutex:

- ``lock_sock`` (lock_sock_nested): if nobody owns the socket, take it at once;
  otherwise sleep on ``sk_lock.wq`` (``__lock_sock``, exclusive wait) and
  re-check ownership when woken.
- ``release_sock``: clear the owner, then ``wake_up(&sk->sk_lock.wq)`` wakes one
  waiter. The waiter runs only after its wake-up latency; if the releasing
  task calls ``lock_sock`` again before that, it gets the lock back (barging)
  and the waiter's wake-up was futile: it goes back to sleep.
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
    __slots__ = ("sim", "env", "stats", "trace", "owned", "owner", "owned_since", "lock_wq",
                 "sleeper", "rx_queue", "buf_alloc", "buf_used", "rx_bytes", "fwd_cnt",
                 "last_fwd_cnt", "rcvlowat", "queue_max", "done", "peer_shutdown", "reader")

    def __init__(self, sim: Sim) -> None:
        p = sim.p
        self.sim = sim
        self.env = sim.clock
        self.stats = sim.stats
        self.trace = sim.trace              # the trace list, or None
        # sk_lock
        self.owned = False
        self.owner: Task | None = None
        self.owned_since = 0.0
        self.lock_wq: deque = deque()      # (task, Wakeup) sleeping in __lock_sock
        # sk_sleep(sk): the reader waiting for data (prepare_to_wait), or None
        self.sleeper: Wakeup | None = None
        # virtio_vsock_sock receive side (under rx_lock)
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

    # ---- lock_sock / release_sock ---------------------------------------------
    # The caller charges the CPU cost of the calls; these functions only move
    # ownership, so the hot path stays cheap. Like RxWorker's per-packet
    # functions, lock_sock and release_sock return None when they finished
    # without having to wait, or a generator the caller runs (``yield from``)
    # to finish the call: after a sync, or for a contended lock.
    def lock_sock(self, task: Task, woken_for_data: bool = False) -> Steps | None:
        """net/core/sock.c lock_sock(): None, or a generator that waits for the lock."""
        if self.owned or task.behind():
            return self._lock_sock_wait(task, woken_for_data)
        self.take(task)
        return None

    def _lock_sock_wait(self, task: Task, woken_for_data: bool) -> Steps:
        """lock_sock() after a sync, sleeping in __lock_sock if the socket is owned."""
        ev = task.sync()
        if ev is not None:
            yield ev
        if self.owned:
            yield from self.lock_sock_slow(task, woken_for_data)
        self.take(task)

    def take(self, task: Task) -> None:
        """lock_sock_nested() when nobody owns the socket: owned = 1."""
        self.owned = True
        self.owner = task
        self.owned_since = task.env._now + task.acc
        if self.trace is not None:
            self.sim.log(self.owned_since, task.name, "lock")

    def lock_sock_slow(self, task: Task, woken_for_data: bool = False) -> Steps:
        """__lock_sock(): sleep exclusively on sk_lock.wq until not owned."""
        stats = self.sim.stats
        env = task.env
        t0 = env._now + task.acc                            # task.t
        if woken_for_data:
            # Woken for data (sk_write_space or sk_data_ready) only to find the lock taken.
            stats.futile_wakeups[task.name] += 1
            if self.sim.trace is not None:
                self.sim.log(t0, task.name, "futile_wakeup", why="woken for data, socket owned")
        while self.owned:
            ev = Wakeup(task)
            self.lock_wq.append((task, ev))
            if self.sim.trace is not None:
                self.sim.log(task.t, task.name, "lock_wait", owner=self.owner.name if self.owner else None)
            yield from task.sleep_on(ev)
            stats.wakeups[task.name] += 1
            ev2 = task.sync()
            if ev2 is not None:
                yield ev2
            if self.owned:
                stats.futile_wakeups[task.name] += 1
                if self.sim.trace is not None:
                    self.sim.log(task.t, task.name, "futile_wakeup", why="lock taken again")
        stats.lock_wait[task.name].append(env._now + task.acc - t0)

    def release_sock(self, task: Task) -> Steps | None:
        """Sync, then release(): None if no sync was needed, else a generator."""
        if task.behind():
            return self._release_sock_wait(task)
        self.release(task)
        return None

    def _release_sock_wait(self, task: Task) -> Steps:
        yield task.flush()
        self.release(task)

    def release(self, task: Task) -> None:
        """net/core/sock.c release_sock(): owned = 0, wake one lock waiter."""
        t = task.env._now + task.acc
        self.stats.lock_hold[task.name].append(t - self.owned_since)
        self.owned = False
        self.owner = None
        if self.trace is not None:
            self.sim.log(t, task.name, "unlock")
        if self.lock_wq:
            waiter, wev = self.lock_wq.popleft()
            self._pay_wakeup(task)
            wev.fire(task.acc + self.sim.vcpu_wake(waiter, task.env._now + task.acc))

    def _pay_wakeup(self, task: Task) -> None:
        """try_to_wake_up() of a task on another, halted vCPU, paid by the waker."""
        c = self.sim.c
        if c.wakeup_ns:
            task.work(c.wakeup_ns)
        if c.ipi_exit_ns:
            task.exit_work(c.ipi_exit_ns)                   # the IPI's VM exit, if any
        task.wakes_sent += 1

    # ---- sk_data_ready ---------------------------------------------------------
    def sk_data_ready(self, task: Task, via: str = "sk_data_ready") -> None:
        """sock_def_readable(): wake the reader if it sleeps waiting for data.

        The call itself is part of the caller's step cost; waking a sleeper
        costs the waker an extra try_to_wake_up. ``via`` names the callback, for
        the trace.
        """
        ev = self.sleeper
        if ev is None:
            return
        self.sleeper = None          # autoremove_wake_function
        self._pay_wakeup(task)
        ev.fire(task.acc + self.sim.vcpu_wake(self.reader, task.env._now + task.acc))
        if self.sim.trace is not None:
            self.sim.log(task.t, task.name, "wake_reader", via=via)

    def write_space(self, task: Task, via: str = "sk_write_space") -> None:
        """sock_def_write_space(): wake what sleeps on sk_sleep(sk), the socket being writeable.

        The guest socket sends only credit updates, so it is always writeable,
        and a reader blocked in recv() sleeps on that same wait queue
        (prepare_to_wait() in vsock_connectible_wait_data(): an autoremove entry,
        which ignores the EPOLLOUT key). So a write-space callback wakes the
        reader exactly as sk_data_ready does, whether data came or not. (A
        reader waiting in poll() for POLLIN would filter the key and sleep on.)
        ``via`` names the caller, for the trace.
        """
        if self.sleeper is not None:
            self.sk_data_ready(task, via=via)

    def vsock_data_ready(self, task: Task) -> None:
        """af_vsock.c vsock_data_ready(): notify once rx_bytes reaches SO_RCVLOWAT.

        sk_data_ready() does nothing when no reader sleeps, so that is tested
        first: the common case then costs no call.
        """
        if self.sleeper is not None and (self.rx_bytes >= self.rcvlowat or self.done):
            self.sk_data_ready(task)

    def state_change(self, task: Task) -> None:
        """sock_def_wakeup() (sk->sk_state_change): wake the reader whatever is queued."""
        if self.sleeper is not None:
            self.sk_data_ready(task)

    def error_report(self) -> None:
        """sk_error_report() after a reset: wake a reader sleeping for data."""
        ev, self.sleeper = self.sleeper, None
        if ev is not None:
            ev.fire(0)
