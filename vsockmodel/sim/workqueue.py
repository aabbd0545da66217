"""Work items and the threads that run them.

Two kernel mechanisms, one model: the guest's workqueues (kernel/workqueue.c:
``queue_work()`` puts a ``work_struct`` on a pool's list, a kworker runs it)
and vhost's worker (drivers/vhost/vhost.c: ``vhost_vq_work_queue()`` /
``vhost_poll_queue()`` put a ``vhost_work`` on the worker's list, the
``vhost_worker()`` thread runs it). In both, queueing a work item that is
already pending does nothing, and the thread runs its pending items in the
order they were queued, sleeping when there are none.

Queueing carries a time stamp (an interrupt raised at vhost's clock, a kick
that reaches the host a VM exit later), and a thread runs an item once its
own clock has reached the stamp. Where a producer may still queue an item
stamped earlier than one already pending, the list looks ahead
(``producers``): the thread may not run past the earliest time such an item
could come.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from typing import Callable

from .engine import RUNNING, SLEEPING, Cpu, Sim, Steps, Task


class Work:
    """A work item: ``struct work_struct`` or ``struct vhost_work``."""

    __slots__ = ("name", "func", "pending", "stamp", "later", "runs", "requeued")

    def __init__(self, name: str, func: Callable[[], Steps]) -> None:
        self.name = name
        self.func = func
        self.pending = False    # WORK_STRUCT_PENDING / VHOST_WORK_QUEUED
        self.stamp = 0.0        # when it was queued
        # Times it was queued again while pending, after its stamp: a producer
        # that runs ahead of the thread asks for the item at times the pending
        # run may not reach; what that run leaves, it runs again for.
        self.later: list[float] = []
        self.runs = 0
        self.requeued = 0       # runs that gave way to run again (vhost_exceeds_weight)


class WorkerThread(Task):
    """A thread that runs queued work: a kworker, or vhost's worker.

    ``producers``: (task, delay) pairs that may queue work here, an item
    arriving at least ``delay`` after its producer acts (lookahead).
    """

    def __init__(self, sim: Sim, name: str, cpu: Cpu,
                 producers: tuple[tuple[Task, float], ...] = ()) -> None:
        super().__init__(sim, name, cpu)
        self.items: list[tuple[float, int, Work]] = []      # (stamp, order, work): a heap
        self._order = itertools.count()
        self.producers = producers
        self.wakers: tuple[Task, ...] = ()   # who queues work here (set when the run is wired)
        self.current: Work | None = None

    @property
    def alone_on_cpu(self) -> bool:
        """Nothing else runs on this thread's CPU (so it may idle without giving it up)."""
        return len(self.cpu.wakers) <= 1

    # ---- the producer's side ----------------------------------------------------------
    def queue(self, work: Work, at: float, by: str = "irq") -> bool:
        """queue_work() / vhost_work_queue() at time ``at`` (``by``: who, for the
        trace): False if already pending."""
        if work.pending:
            if at > work.stamp:
                bisect.insort(work.later, at)
            return False
        work.pending = True
        work.stamp = at
        heapq.heappush(self.items, (at, next(self._order), work))
        if self.state is SLEEPING:
            self.sim.try_to_wake_up(self, at=at, via=work.name, by=by)
        return True

    def requeue(self, work: Work) -> None:
        """The running item gives way and asks to run again (vhost_poll_queue()
        after vhost_exceeds_weight())."""
        work.requeued += 1
        self.queue(work, self.t)

    # ---- the thread --------------------------------------------------------------------
    def main(self) -> Steps:
        """worker_thread() / vhost_worker(): run pending work, sleep when there is none."""
        while True:
            work = yield from self.next_work()
            self.current = work
            work.runs += 1
            started = self.t
            yield from work.func()
            self.current = None
            later = work.later
            if later:
                # Asked for, while pending, for a time after this run began: the
                # run may not have seen what was asked for then. Run again, at
                # that time or now, whichever is later.
                while later and later[0] <= started:
                    later.pop(0)
                if later and not work.pending:
                    self.queue(work, max(later.pop(0), self.t))

    def horizon(self) -> float:
        """The earliest stamp a producer may still give a new item."""
        soonest = math.inf
        for producer, delay in self.producers:
            t = producer.earliest_action(self) + delay
            if t < soonest:
                soonest = t
        return soonest

    def next_work(self) -> Steps:
        """The next item to run, at this thread's clock, sleeping until there is one."""
        items = self.items
        while True:
            horizon = self.horizon()
            if items and items[0][0] <= horizon and (items[0][0] <= self.t or self.alone_on_cpu):
                at, _, work = heapq.heappop(items)
                work.pending = False
                if at > self.t:
                    start = self.t
                    self.sleep_until_woken_at(at)          # its interrupt or kick is on the way
                    self.idle_time(start, self.t)
                return work
            if self.t > horizon and self.acc:
                yield self.flush()                         # a producer may act first
                continue
            # Nothing to run, and nothing can come before our clock: sleep until
            # queue() wakes us (or the first pending item's time comes).
            self.state = SLEEPING
            self.waiting_on = self
            if items:
                first = items[0][0]
                self.env.timeout(max(0.0, first - self.sim.now)).callbacks.append(
                    lambda _timeout, at=first: self.sim.try_to_wake_up(self, at=at, via="pending work"))
            idle_from = self.t
            yield from self.schedule()
            self.state = RUNNING
            self.waiting_on = None
            self.idle_time(idle_from, self.sim.now)

    def idle_time(self, start: float, end: float) -> None:
        """Statistics: the thread had no work from ``start`` to ``end`` (a hook)."""
