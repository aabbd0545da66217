"""Simulation context shared by all actors: clock, randomness, statistics, trace.

How time works
--------------
Every actor (host sender, vhost worker, guest RX worker, reader) is a
generator scheduled on simpy's event heap, like a simpy process (see below).
An actor adds CPU time to ``acc`` with :meth:`Task.work` and only turns it
into a timeout when it must: before it touches state another
actor can see (the socket lock, the receive queue, the virtqueue). Even then it
yields only when another event is scheduled before its own virtual time
``env.now + acc`` (:meth:`Task.sync`); otherwise nothing can happen in between
and it runs ahead. This keeps the event count close to one per interaction,
not one per kernel function, without changing any ordering.

The scheduler is simpy's event heap, stepped by :meth:`Sim.run`. Heap entries
are ``(time, priority, id, what)`` as in simpy; ``what`` is a task (a timeout:
resume it), a :class:`Wakeup`, or a plain simpy event. Tasks are generators
resumed by :meth:`Sim.run` rather than by ``simpy.Process``: a task yields
itself for a timeout it has already scheduled (:meth:`Task.flush`), or the
Wakeup it sleeps on. That is what simpy would do, in the same order, with no
event object per timeout. The tasks read the time and the heap through a
:class:`Clock` (their ``env``), which shares simpy's heap and keeps its time.

Queues between actors carry time stamps (a used buffer is published at a
simulated time, an skb is queued at one), so a consumer takes an entry only
once its own virtual time has passed the stamp. The host side, whose inputs
from the guest (credit, RX buffers) only ever grow, may run far ahead of the
guest; it bounds how far with a lookahead (``Vhost.horizon``).

Noise: every CPU cost is multiplied by a seeded log-normal factor of mean 1
(``jitter_cv``), and every wake-up latency by another (``wake_latency_cv``),
both drawn from precomputed quantile tables so a draw is one random number.
"""

from __future__ import annotations

import functools
import math
import random
import time
from heapq import heappop, heappush
from math import floor   # int() of a non-negative float, but faster
from statistics import NormalDist
from typing import Any, Generator

import simpy
from simpy.core import NORMAL, URGENT

from ..model.costs import Costs
from ..model.params import Params
from .errors import SimulationLimitExceeded
from .stats import Stats

# What a task's main() and its blocking kernel functions are: generators that
# yield the task itself (a timeout it scheduled) or the Wakeup it sleeps on.
Steps = Generator[Any, None, None]


class Wakeup:
    """An event another actor triggers later with a delay: a wake-up in flight.

    ``fire(delay)`` is simpy's ``succeed()`` after ``delay`` ns: the woken task
    runs when the wake-up latency has passed. The sleeping task learns when it
    will run, which lets other actors bound how far ahead they may safely run.
    """

    __slots__ = ("task", "fired", "done", "waiting")

    def __init__(self, task: "Task") -> None:
        self.task = task        # the task that sleeps on it
        self.fired = False      # fire() was called (simpy: triggered)
        self.done = False       # its time has come (simpy: processed)
        self.waiting = False    # the task is blocked on it

    def fire(self, delay: float) -> None:
        env = self.task.env
        self.fired = True
        t = env._now + delay
        self.task.resume_at = t
        # env.schedule(self, NORMAL, delay)
        heappush(env._queue, (t, NORMAL, next(env._eid), self))


@functools.lru_cache(maxsize=16)
def _lognormal_table(cv: float, n: int = 2048) -> tuple[float, ...]:
    """n equally likely quantiles of a log-normal with mean 1 and the given cv.

    Drawing a noise factor is then one uniform random number and an index,
    which keeps noise cheap on the simulation's hot path. The table depends
    only on (cv, n), so runs share it (a tuple: nobody can change it).
    """
    if cv <= 0:
        return (1.0,) * n
    sigma = math.sqrt(math.log1p(cv * cv))
    normal = NormalDist(-sigma * sigma / 2, sigma)
    table = [math.exp(normal.inv_cdf((i + 0.5) / n)) for i in range(n)]
    mean = math.fsum(table) / n    # exact: the same on every Python (3.12 changed sum())
    return tuple(x / mean for x in table)


class Clock:
    """simpy's clock and event heap as the tasks see them: the Environment's own
    heap list and id counter, and its time, which Sim.run keeps equal to
    ``env.now``. A compiled class, so reading the time on the hot path is a
    field access rather than a lookup in the Environment's __dict__."""

    __slots__ = ("_now", "_queue", "_eid")

    def __init__(self, env: simpy.Environment) -> None:
        self._now: float = float(env._now)
        self._queue: list = env._queue  # simpy's heap, which also takes Tasks and Wakeups here
        self._eid: Any = env._eid


class Sim:
    """Clock, random streams, statistics and limits of one run."""

    __slots__ = ("p", "c", "env", "clock", "rng", "stats", "trace", "finished", "done", "_jitter", "_wake",
                 "yields", "max_yields", "_wall_deadline")

    MAX_EVENTS_PER_PACKET = 60
    MAX_WALL_S = 30.0
    TABLE = 2048

    def __init__(self, params: Params, costs: Costs) -> None:
        self.p = params
        self.c = costs
        self.env = simpy.Environment(initial_time=0.0)   # a float clock from the start
        self.clock = Clock(self.env)
        self.rng = random.Random(params.seed)
        self.stats = Stats()
        self.trace: list | None = [] if params.trace else None
        self.finished = self.env.event()
        self.done = False   # finished has been triggered (cheaper to test than the event)
        self._jitter = _lognormal_table(costs.jitter_cv, self.TABLE)
        self._wake = _lognormal_table(costs.wake_latency_cv, self.TABLE)
        self.yields = 0
        # Scheduling events, plus recv() calls (Reader.recvmsg counts them too:
        # a reader taking one byte at a time may run long without yielding).
        self.max_yields = self.MAX_EVENTS_PER_PACKET * params.work + 10_000
        self._wall_deadline = time.perf_counter() + self.MAX_WALL_S

    # ---- the scheduler --------------------------------------------------------
    def run(self) -> None:
        """``env.run(until=self.finished)``, stepping the heap directly.

        Events are taken in simpy's order (time, priority, id). Raises
        RuntimeError("No scheduled events left ...") like simpy when the heap
        runs dry before the run is finished.
        """
        env, clock, finished = self.env, self.clock, self.finished
        queue = env._queue
        while True:
            try:
                t, _, _, ev = heappop(queue)
            except IndexError:
                raise RuntimeError(f'No scheduled events left but "until" event was not '
                                   f'triggered: {finished}') from None
            env._now = clock._now = t
            if ev.__class__ is Wakeup:
                ev.done = True
                if not ev.waiting:
                    continue
                task = ev.task
            elif isinstance(ev, Task):
                task = ev                                   # its timeout
            else:
                # A simpy event: sim.finished, or a scripted actor's simpy process.
                # simpy marks an event processed by dropping its callback list.
                callbacks, ev.callbacks = ev.callbacks, None  # type: ignore[assignment]
                for callback in callbacks:
                    callback(ev)
                if ev is finished:
                    return
                if not ev._ok and not ev._defused:
                    raise ev._value
                continue
            # Resume the task: run main() until it waits on its next timeout
            # (it yields itself, already scheduled by flush) or on a Wakeup.
            try:
                ev = task._send(None)
            except StopIteration:
                task._send = None
                continue
            if ev is not task:
                task.sleep(ev)

    # ---- randomness -----------------------------------------------------------
    def latency(self, mean: float) -> float:
        """A wake-up latency with seeded noise (log-normal with the configured cv)."""
        return mean * self._wake[floor(self.rng.random() * self.TABLE)]

    def vcpu_wake(self, sleeper: "Task", t: float) -> float:
        """Latency until a guest task asleep since ``sleeper.slept_at`` runs, if woken at t.

        Each task has its vCPU to itself, so when it sleeps its vCPU halts. The
        longer the vCPU has been idle, the deeper the host CPU under it sleeps,
        and the slower the wake-up.
        """
        c = self.c
        mean = c.vcpu_wake_short_ns if t - sleeper.slept_at < c.deep_idle_ns else c.vcpu_wake_long_ns
        return mean * self._wake[floor(self.rng.random() * self.TABLE)]   # self.latency(mean)

    # ---- trace ----------------------------------------------------------------
    # A trace entry is a few hundred bytes: the cap bounds a traced run's memory
    # (about 200 MB at most); the events after it are not recorded.
    MAX_TRACE_EVENTS = 600_000

    def log(self, t: float, actor: str, event: str, **info) -> None:
        trace = self.trace
        if trace is not None:
            if len(trace) < self.MAX_TRACE_EVENTS:
                trace.append((t, actor, event, info))
            else:
                self.stats.trace_truncated = True

    # ---- bounds ---------------------------------------------------------------
    def check_limits(self) -> None:
        """Called every 4096 scheduling events (Task.flush, Task.sleep): stop a runaway run."""
        if self.yields > self.max_yields:
            raise SimulationLimitExceeded(
                f"run exceeded {self.max_yields} scheduling events; stopping")
        if time.perf_counter() > self._wall_deadline:
            raise SimulationLimitExceeded(
                f"run exceeded {self.MAX_WALL_S:.0f} s of wall time; stopping")

    def count_event(self) -> None:
        """One more unit of work towards the run's bounds (checked every 4096)."""
        self.yields += 1
        if not self.yields & 4095:
            self.check_limits()

    def stats_drop(self, nbytes: int) -> None:
        self.stats.bytes_dropped_rx += nbytes

    def finish(self) -> None:
        if not self.done:
            self.done = True
            self.finished.succeed()


class Task:
    """One kernel or user thread: accumulates CPU time and syncs when needed."""

    # Slots, here and in the actors: attribute access on the hot path is faster.
    __slots__ = ("sim", "env", "c", "stats", "trace", "name", "acc", "busy", "slept_at",
                 "resume_at", "sleeps", "wakes_sent", "_noise", "_rand", "_n", "_queue", "_send")

    def __init__(self, sim: Sim, name: str) -> None:
        self.sim = sim
        self.env = sim.clock     # env._now, env._queue: simpy's, read through the Clock
        self.c = sim.c
        self.stats = sim.stats
        self.trace = sim.trace   # the trace list, or None when not tracing
        self.name = name
        self.acc = 0.0    # CPU time done but not yet turned into simulated time
        self.busy = 0.0   # total CPU time, for cycles-per-byte
        self.slept_at = 0.0  # when this task last went to sleep
        self.resume_at: float | None = 0.0  # when it next runs; None: asleep, not yet woken
        self.sleeps = 0      # times it blocked (each costs a context switch pair)
        self.wakes_sent = 0  # wake-ups it paid for (try_to_wake_up + IPI)
        self._noise = sim._jitter
        self._rand = sim.rng.random
        self._n = float(sim.TABLE)   # a float: random() * n is then a float product, faster
        # simpy's event heap, (time, priority, id, event) entries: queue[0][0]
        # is env.peek() without the method call, on the hot path of behind().
        self._queue = sim.clock._queue
        self._send: Any = None    # main()'s generator.send once started; None once it returned

    def main(self) -> Steps:
        """The thread's body: yields the task itself (a timeout it scheduled with
        :meth:`flush`) or the :class:`Wakeup` it sleeps on."""
        raise NotImplementedError

    # ---- the generator that runs the task (instead of simpy.Process) -------------
    def start(self) -> None:
        """env.process(self.main()): run main() from the current time, first."""
        self._send = self.main().send
        env = self.env
        heappush(self._queue, (env._now, URGENT, next(env._eid), self))

    def sleep(self, ev: Wakeup) -> None:
        """main() yielded ``ev`` (sleep_on): asleep on it from now, a context
        switch pair. A Wakeup whose time has already come does not block."""
        sim, c, env = self.sim, self.c, self.env
        while True:
            sim.yields += 1                                 # one more scheduling event
            if not sim.yields & 4095:
                sim.check_limits()
            self.busy += c.sleep_ns
            self.sleeps += 1
            self.slept_at = env._now
            if not ev.done:
                ev.waiting = True
                if not ev.fired:
                    self.resume_at = None                   # asleep, not yet woken
                return
            try:
                nxt = self._send(None)
            except StopIteration:
                self._send = None
                return
            if nxt is self:                                 # a timeout: scheduled by flush
                return
            ev = nxt                                        # another Wakeup

    @property
    def exited(self) -> bool:
        """main() has returned (the task was started and will not run again)."""
        return self._send is None

    @property
    def t(self) -> float:
        """This task's virtual time: env.now plus the work it has not yielded."""
        return self.env._now + self.acc

    def work(self, ns: float) -> None:
        """Spend ``ns`` of CPU time (with noise) on this task's CPU."""
        ns *= self._noise[floor(self._rand() * self._n)]
        self.acc += ns
        self.busy += ns

    def exit_work(self, ns: float) -> None:
        """Spend ``ns`` of the vCPU's time in a VM exit (host mode).

        The vCPU cannot run guest code meanwhile, so this delays the task like
        :meth:`work`, but guest perf does not count it: KVM's vPMU programs its
        host perf events with ``exclude_host = 1`` (arch/x86/kvm/pmu.c,
        pmc_reprogram_counter), so cycles spent handling the exit are missing
        from the guest's cycles-per-byte tables. Not added to ``busy``.
        """
        self.acc += ns * self._noise[floor(self._rand() * self._n)]

    def idle_until(self, t: float) -> None:
        """Advance this task's virtual time to ``t`` without using CPU (it sleeps)."""
        if t > self.env._now + self.acc:
            self.acc = t - self.env._now

    def behind(self) -> bool:
        """True if another actor may act before this task's virtual time:
        some event is scheduled at or before ``env.now + acc``."""
        acc, queue = self.acc, self._queue
        if acc and queue:
            return queue[0][0] <= self.env._now + acc
        return False

    def sync(self) -> "Task | None":
        """A timeout to yield before touching shared state, or None when safe.

        Safe means no other event is scheduled before this task's virtual time,
        so nobody can observe or change shared state in between.
        """
        acc, queue = self.acc, self._queue
        if acc and queue and queue[0][0] <= self.env._now + acc:
            return self.flush()
        return None

    def flush(self) -> "Task":
        """Turn all accumulated work into simulated time (always a timeout).

        Schedules the task's resumption, as ``env.timeout(acc)`` would, and
        returns the task itself for main() to yield.
        """
        env, sim = self.env, self.sim
        t = self.resume_at = env._now + self.acc
        heappush(self._queue, (t, NORMAL, next(env._eid), self))
        self.acc = 0.0
        sim.yields += 1                                     # one more scheduling event
        if not sim.yields & 4095:
            sim.check_limits()
        return self

    def sleep_on(self, ev: Wakeup) -> tuple:
        """Flush, then sleep until ``ev`` fires: the events for main() to
        ``yield from``.

        The task goes to sleep when it yields ``ev`` (see :meth:`sleep`). The
        context switches cost CPU time (counted in ``busy``) but do not delay
        the wake-up: the time until the task runs again is the wake-up latency
        the waker chose when it fired ``ev``.
        """
        if self.acc:
            return (self.flush(), ev)
        return (ev,)
