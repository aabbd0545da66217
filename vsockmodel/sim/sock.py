"""The guest socket: struct sock + vsock_sock + virtio_vsock_sock, its lock and its callbacks.

The lock follows net/core/sock.c, not a FIFO mutex:

- ``lock_sock`` (lock_sock_nested): under ``sk_lock.slock``, take the socket
  if nobody owns it; otherwise sleep on ``sk_lock.wq`` (``__lock_sock``, an
  exclusive wait) and look again when woken.
- ``release_sock``: under ``slock``, clear the owner, then wake one waiter.
  The waiter runs only after its wake-up latency; if the releasing task calls
  ``lock_sock`` again before that, it gets the lock back (barging) and the
  waiter's wake-up was futile: it goes back to sleep.

The socket's wait queue ``sk_sleep(sk)`` holds a reader blocked in recv();
``sk_data_ready`` and ``sk_write_space`` wake it. They run where the caller
has just met the other threads (under lock_sock, or right after a ring or
spinlock operation), so the wait queue's state is that of the caller's clock.
"""

from __future__ import annotations

from collections import defaultdict, deque

from ..model import kernel
from .engine import Sim, SpinLock, Steps, Task, WaitQueue

# Wake-ups that come for the socket's sake: one that finds the lock owned was futile.
SOCKET_WAKEUPS = ("sk_data_ready", "sk_write_space", "sock_wfree", "release_sock", "sk_state_change")


class Skb:
    """One rx_queue entry: payload length (hdr->len), bytes already read, tailroom."""

    __slots__ = ("len", "off", "room")

    def __init__(self, length: int, room: int) -> None:
        self.len = length
        self.off = 0          # VIRTIO_VSOCK_SKB_CB(skb)->offset
        self.room = room      # skb_tailroom()


class LockStat:
    """What the socket lock records about itself (as CONFIG_LOCK_STAT would):
    hold and wait times per task, and wake-ups that found it taken."""

    def __init__(self, sim: Sim, guest: bool = True) -> None:
        self.stats = sim.stats
        # The guest socket's holds and waits are the run's results; the host's are kept apart.
        self.hold = sim.stats.lock_hold if guest else defaultdict(list)
        self.wait = sim.stats.lock_wait if guest else defaultdict(list)
        self.tracepoints = sim.tracepoints if guest else None
        self.trace = sim.trace
        self.since = 0.0                 # when the owner took it

    def acquired(self, task: Task, waited_from: float | None) -> None:
        t = task.t
        self.since = t
        if waited_from is not None:
            self.wait[task.name].append(t - waited_from)
        task.woken_via = ""
        if self.trace is not None:
            task.log("lock")

    def contended(self, task: Task, owner: Task) -> None:
        """The task goes to sleep in __lock_sock: a wake-up that brought it here was futile."""
        if task.woken_via in SOCKET_WAKEUPS:
            self.stats.futile_wakeups[task.name] += 1
            if self.trace is not None:
                task.log("futile_wakeup", why=f"woken by {task.woken_via}, socket owned")
        task.woken_via = ""
        if self.trace is not None:
            task.log("lock_wait", owner=owner.name)

    def released(self, task: Task) -> None:
        self.hold[task.name].append(task.t - self.since)
        if self.trace is not None:
            task.log("unlock")
        if self.tracepoints is not None:
            self.tracepoints.lock_released(task)


class GuestSock:
    def __init__(self, sim: Sim) -> None:
        p = sim.p
        self.sim = sim
        self.c = sim.c
        self.stats = sim.stats
        # sk_lock
        self.slock = SpinLock("sk_lock.slock")
        self.owner: Task | None = None           # sk_lock.owned (the model keeps who)
        self.lock_wq = WaitQueue("sk_lock.wq")
        self.lock_stat = LockStat(sim)
        # sk_sleep(sk): a reader blocked in recv()
        self.sk_wq = WaitQueue("sk_sleep")
        # virtio_vsock_sock, receive side (under rx_lock)
        self.rx_queue: deque[Skb] = deque()
        self.buf_alloc = p.buffer
        self.buf_used = 0
        self.rx_bytes = 0
        self.fwd_cnt = 0
        self.last_fwd_cnt = 0
        self.rcvlowat = p.rcvlowat               # sk->sk_rcvlowat
        self.queue_max = kernel.queue_max(p.buffer)
        self.done = False                        # SOCK_DONE / reset
        self.sk_err = 0                          # ENOBUFS after a reset
        self.sk_drops = 0                        # bytes refused or dropped after the reset
        self.peer_shutdown = False               # vsk->peer_shutdown: the host closed

    # ---- lock_sock / release_sock ---------------------------------------------------
    def lock_sock(self, task: Task) -> Steps:
        """net/core/sock.c lock_sock(): take the socket, or sleep in __lock_sock()."""
        yield from self.slock.spin_lock(task)
        waited_from = None
        if self.owner is not None:
            waited_from = task.t
            yield from self.lock_sock_wait(task)
        self.owner = task                                    # sk_lock.owned = 1
        task.work(self.c.lock_ns)
        self.lock_stat.acquired(task, waited_from)

    def lock_sock_wait(self, task: Task) -> Steps:
        """__lock_sock(): sleep exclusively on sk_lock.wq until the socket is not owned."""
        while self.owner is not None:
            self.lock_stat.contended(task, self.owner)
            self.lock_wq.prepare_to_wait(task, exclusive=True)
            self.slock.spin_unlock(task)
            yield from task.schedule()
            yield from self.slock.spin_lock(task)
        self.lock_wq.finish_wait(task)

    def release_sock(self, task: Task) -> Steps:
        """net/core/sock.c release_sock(): owned = 0, then wake one lock waiter."""
        yield from self.slock.spin_lock(task)
        self.lock_stat.released(task)
        self.owner = None                                    # sock_release_ownership()
        task.work(self.c.unlock_ns)
        if self.lock_wq.active():
            self.lock_wq.wake_up(task, via="release_sock")
        self.slock.spin_unlock(task)

    # ---- the socket's callbacks -------------------------------------------------------
    def sk_data_ready(self, task: Task) -> None:
        """sock_def_readable(): wake what sleeps on sk_sleep(sk), if anything does.

        The call itself is part of the caller's step cost; each task woken
        costs the waker a try_to_wake_up().
        """
        self.sim.tracepoints.sk_data_ready(task)               # trace_sk_data_ready()
        self.wake_sleepers(task, "sk_data_ready")

    def wake_sleepers(self, task: Task, via: str) -> None:
        if self.sk_wq.active():                              # skwq_has_sleeper()
            self.sk_wq.wake_up(task, via=via)

    def sk_write_space(self, task: Task, via: str = "sk_write_space") -> None:
        """sock_def_write_space(): wake what sleeps on sk_sleep(sk), the socket being writeable.

        The guest socket sends only credit updates, so it is always writeable,
        and a reader blocked in recv() sleeps on that same wait queue
        (prepare_to_wait() in vsock_connectible_wait_data(): an autoremove
        entry, which ignores the EPOLLOUT key). So a write-space callback wakes
        the reader exactly as sk_data_ready does, whether data came or not. (A
        reader waiting in poll() for POLLIN would filter the key and sleep on.)
        """
        self.wake_sleepers(task, via)

    def vsock_data_ready(self, task: Task) -> None:
        """af_vsock.c vsock_data_ready(): notify once rx_bytes reaches SO_RCVLOWAT."""
        if self.rx_bytes >= self.rcvlowat or self.done:
            self.sk_data_ready(task)

    def sk_state_change(self, task: Task) -> None:
        """sock_def_wakeup(): wake the reader whatever is queued."""
        self.wake_sleepers(task, "sk_state_change")

    def sk_error_report(self, task: Task) -> None:
        """sock_def_error_report(): after a reset, wake a reader sleeping for data."""
        self.wake_sleepers(task, "sk_error_report")
