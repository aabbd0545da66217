"""The simulation's clock, random streams, statistics and limits, on simpy.

How time works
--------------
Every actor (host sender, vhost worker, guest RX worker, reader) is a simpy
process: a generator that yields simpy events. A thread's CPU time is charged
where its code runs, with :meth:`Task.work`, into ``acc``: work done but not
yet turned into simulated time. Turning it into time costs a simpy timeout,
so an actor does that only when it must: before it touches state another
actor can see (the socket lock, the receive queue, the virtqueue), and only
if another event is due before its own virtual time ``env.now + acc``::

    if self.behind():
        yield self.flush()

Otherwise nothing can happen in between, and it runs ahead. This keeps the
event count near one per interaction between actors, not one per kernel
function, without changing any ordering.

A thread that blocks sleeps on a :class:`Wakeup`, which another actor fires
with a latency (the wake-up of a halted vCPU, say).

Queues between actors carry time stamps (a used buffer is published at a
simulated time, an skb is queued at one), so a consumer takes an entry only
once its own virtual time has passed the stamp. The host side, whose inputs
from the guest (credit, RX buffers) only ever grow, may run ahead of the
guest; it bounds how far with a lookahead (``Vhost.horizon``).

Noise: every CPU cost is multiplied by a seeded log-normal factor of mean 1
(``jitter_cv``), and every wake-up latency by another (``wake_latency_cv``),
both drawn from precomputed quantile tables. The two come from two random
streams of the run's seed; CPU-cost factors are drawn a few thousand at a
time, as a run charges about ten costs per packet.

Only simpy's public API is used: ``Environment.process``, ``timeout``,
``event``, ``peek``, ``step``, ``now``. :meth:`Sim.run` steps the environment
itself so that the actors can read the current time as a plain attribute,
``sim.now`` (the time of the event being processed), on their hot path.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
import time
from statistics import NormalDist
from typing import Any, Generator

import simpy

from ..model.costs import Costs
from ..model.params import Params
from .errors import SimulationLimitExceeded
from .kvm import HaltPoll
from .stats import Stats

# A task's main() and its blocking kernel functions: generators of simpy events.
Steps = Generator[Any, Any, Any]


@functools.lru_cache(maxsize=16)
def _lognormal_table(cv: float, n: int = 2048) -> tuple[float, ...]:
    """n equally likely quantiles of a log-normal with mean 1 and the given cv.

    Drawing a noise factor is then one uniform random number and an index.
    The table depends only on (cv, n), so runs share it.
    """
    if cv <= 0:
        return (1.0,) * n
    sigma = math.sqrt(math.log1p(cv * cv))
    normal = NormalDist(-sigma * sigma / 2, sigma)
    table = [math.exp(normal.inv_cdf((i + 0.5) / n)) for i in range(n)]
    mean = math.fsum(table) / n    # exact: the same on every Python (3.12 changed sum())
    return tuple(x / mean for x in table)


class Sim:
    """Clock, random streams, statistics and limits of one run."""

    MAX_EVENTS_PER_PACKET = 60
    MAX_WALL_S = 30.0
    TABLE = 2048
    # A trace entry is a few hundred bytes: the cap bounds a traced run's memory
    # (about 200 MB at most); the events after it are not recorded.
    MAX_TRACE_EVENTS = 600_000

    def __init__(self, params: Params, costs: Costs) -> None:
        self.p = params
        self.c = costs
        self.env = simpy.Environment(initial_time=0.0)   # a float clock from the start
        self.rng = random.Random(params.seed)            # wake-up latencies
        self.stats = Stats()
        self.trace: list | None = [] if params.trace else None
        self.finished = self.env.event()
        self._wake = _lognormal_table(costs.wake_latency_cv, self.TABLE)
        # CPU-cost noise factors, an endless stream: next(sim.jitter) is one factor.
        self.jitter = self._noise_stream(random.Random(f"{params.seed}/cpu"),
                                         _lognormal_table(costs.jitter_cv, self.TABLE))
        self.now = 0.0          # env.now, while an event is processed (Sim.run)
        self.events = 0
        # Scheduling events, plus recv() calls (Reader.recvmsg counts them too:
        # a reader taking one byte at a time may run long without yielding).
        self.max_events = self.MAX_EVENTS_PER_PACKET * params.work + 10_000
        self._wall_deadline = time.perf_counter() + self.MAX_WALL_S

    def run(self) -> None:
        """``env.run(until=self.finished)``, keeping ``self.now`` equal to the
        time of the event being processed. Raises RuntimeError ("No scheduled
        events left ...") if everything waits for ever first, as simpy does."""
        env, finished = self.env, self.finished
        while not finished.processed:
            if env.peek() == math.inf:
                raise RuntimeError(f'No scheduled events left but "until" event was not '
                                   f'triggered: {finished}')
            self.now = env.peek()
            env.step()

    @property
    def done(self) -> bool:
        return self.finished.triggered

    def finish(self) -> None:
        if not self.finished.triggered:
            self.finished.succeed()

    # ---- randomness -----------------------------------------------------------
    @staticmethod
    def _noise_stream(rng: random.Random, table: tuple[float, ...], chunk: int = 4096):
        """Factors drawn uniformly from ``table``, ``chunk`` at a time."""
        return itertools.chain.from_iterable(rng.choices(table, k=chunk) for _ in itertools.count())

    def latency(self, mean: float) -> float:
        """A wake-up latency with seeded noise (log-normal with the configured cv)."""
        return mean * self._wake[int(self.rng.random() * self.TABLE)]

    def vcpu_wake(self, sleeper: "Task", t: float, halted_since: float | None = None) -> float:
        """Latency until a guest task asleep since ``halted_since`` (by default
        ``sleeper.slept_at``) runs, if woken at t.

        Each task has its vCPU to itself, so when it sleeps its vCPU halts. A
        wake-up while KVM still polls for the halted vCPU (``kvm.HaltPoll``)
        skips the host scheduler. Otherwise: the longer the vCPU has been idle,
        the deeper the host CPU under it sleeps, and the slower the wake-up.
        """
        c = self.c
        halt_ns = t - (sleeper.slept_at if halted_since is None else halted_since)
        if c.halt_poll_ns and sleeper.halt_poll.kvm_vcpu_halt(halt_ns):
            return self.latency(c.halt_poll_wake_ns)
        shallow = halt_ns < c.deep_idle_ns
        return self.latency(c.vcpu_wake_short_ns if shallow else c.vcpu_wake_long_ns)

    def min_vcpu_wake(self) -> float:
        """The shortest wake-up latency a halted vCPU can draw."""
        c = self.c
        fastest = min(c.vcpu_wake_short_ns, c.vcpu_wake_long_ns)
        if c.halt_poll_ns:
            fastest = min(fastest, c.halt_poll_wake_ns)
        return fastest * min(self._wake)

    # ---- trace ----------------------------------------------------------------
    def log(self, t: float, actor: str, event: str, **info) -> None:
        """Record an event of the run (with trace=True)."""
        trace = self.trace
        if trace is not None:
            if len(trace) < self.MAX_TRACE_EVENTS:
                trace.append((t, actor, event, info))
            else:
                self.stats.trace_truncated = True

    # ---- bounds ---------------------------------------------------------------
    def count_event(self) -> None:
        """One more unit of work towards the run's bounds (checked every 4096)."""
        self.events += 1
        if not self.events & 4095:
            if self.events > self.max_events:
                raise SimulationLimitExceeded(
                    f"run exceeded {self.max_events} scheduling events; stopping")
            if time.perf_counter() > self._wall_deadline:
                raise SimulationLimitExceeded(
                    f"run exceeded {self.MAX_WALL_S:.0f} s of wall time; stopping")


class Wakeup:
    """A wake-up in flight: an event a sleeping task waits on, which another
    actor fires with a delay (the sleeper's wake-up latency).

    The sleeper learns when it will run (``resume_at``), which lets other actors
    bound how far ahead they may safely run.
    """

    __slots__ = ("task", "event", "fired")

    def __init__(self, task: "Task") -> None:
        self.task = task
        self.event = task.env.event()
        self.fired = False

    def fire(self, delay: float) -> None:
        """Wake the task ``delay`` ns from now."""
        self.fired = True
        self.task.resume_at = self.task.sim.now + delay
        if delay > 0:
            self.task.env.timeout(delay).callbacks.append(self._arrive)
        else:
            self.event.succeed()

    def _arrive(self, _timeout) -> None:
        self.event.succeed()


class Task:
    """One kernel or user thread: a simpy process that charges CPU time where
    its code runs and turns it into simulated time only when it must."""

    def __init__(self, sim: Sim, name: str) -> None:
        self.sim = sim
        self.env = sim.env
        self.c = sim.c
        self.stats = sim.stats
        self.name = name
        self.acc = 0.0          # CPU time done but not yet turned into simulated time
        self.busy = 0.0         # total CPU time (what perf's cycles count)
        self.slept_at = 0.0     # when this task last went to sleep
        self.halt_poll = HaltPoll(sim.c.halt_poll_ns)   # its vCPU's, if it is a guest task
        self.resume_at: float | None = 0.0   # when it next runs; None: asleep, not yet woken
        self.sleeps = 0         # times it blocked (each costs a context switch pair)
        self.wakes_sent = 0     # wake-ups it paid for (try_to_wake_up + IPI)
        self.process: simpy.Process | None = None
        self._jitter = sim.jitter

    def log(self, event: str, **info) -> None:
        """Record an event at this task's virtual time (with trace=True)."""
        if self.sim.trace is not None:
            self.sim.log(self.t, self.name, event, **info)

    def main(self) -> Steps:
        """The thread's body."""
        raise NotImplementedError

    def start(self) -> None:
        self.process = self.env.process(self.main())

    @property
    def exited(self) -> bool:
        """main() has returned (the task was started and will not run again)."""
        return self.process is not None and self.process.triggered

    # ---- CPU time -------------------------------------------------------------
    @property
    def t(self) -> float:
        """This task's virtual time: now plus the work it has not turned into time."""
        return self.sim.now + self.acc

    def work(self, ns: float) -> None:
        """Spend ``ns`` of CPU time (with noise) on this task's CPU."""
        ns *= next(self._jitter)
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
        self.acc += ns * next(self._jitter)

    def idle_until(self, t: float) -> None:
        """Advance this task's virtual time to ``t`` without using CPU."""
        if t > self.sim.now + self.acc:
            self.acc = t - self.sim.now

    def sleep_until(self, t: float) -> None:
        """Sleep until ``t``, a wake-up already known (data or credit that will
        have arrived by then): idle, then pay the context switches, as sleep_on."""
        self.slept_at = self.t
        self.idle_until(t)
        self.sleeps += 1
        self.work(self.c.sleep_ns)

    # ---- turning CPU time into simulated time ----------------------------------
    def behind(self) -> bool:
        """True if another actor may act before this task's virtual time:
        some event is due at or before ``now + acc``."""
        return self.acc > 0 and self.env.peek() <= self.sim.now + self.acc

    def flush(self) -> simpy.Timeout:
        """All accumulated work as simulated time: the timeout to yield."""
        delay, self.acc = self.acc, 0.0
        self.resume_at = self.sim.now + delay
        self.sim.count_event()
        return self.env.timeout(delay)

    def sleep_on(self, wakeup: Wakeup) -> Steps:
        """Flush, then sleep until ``wakeup`` fires; then the context switches.

        The task runs again when the waker's latency has passed (``fire``), and
        schedule() out and back in costs it ``sleep_ns`` of CPU time before it
        goes on.
        """
        if self.acc:
            yield self.flush()
        self.sim.count_event()
        self.sleeps += 1
        self.slept_at = self.sim.now
        if not wakeup.fired:
            self.resume_at = None                           # asleep, not yet woken
        yield wakeup.event
        self.work(self.c.sleep_ns)
