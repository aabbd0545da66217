"""The engine: simpy's clock, the threads and their CPUs, sleeping and waking,
and where threads meet. The kernel's code lives elsewhere; this module is
everything that code needs from a computer.

What a kernel function may do
-----------------------------
``self.work(ns)`` where the kernel does work (CPU time on its CPU, with
noise), ``self.exit_work(ns)`` for a VM exit (time the vCPU spends in the
host), and the kernel's own blocking calls, written ``yield from ...``:
``lock_sock``, waiting for data, waiting for work. Every ``yield from`` marks
a place where this thread meets another; nothing else in a kernel function
is about time.

How time works
--------------
A thread (``Task``) charges CPU time where its code runs, into ``acc``: work
done but not yet turned into simulated time. Its own clock is ``t = now +
acc``. It turns ``acc`` into simulated time (a simpy timeout) only where it
meets another thread, and only if a thread that shares the object (its
``peers``) might act before ``t`` (``Task.preceded``, ``Task.sync``).
Otherwise nothing that matters can happen in between, and it runs ahead. The
places where threads meet are the shared objects' own operations, as in the
kernel: spinlocks (``SpinLock``), wait queues (``WaitQueue``) and wake-ups
(``Sim.try_to_wake_up``), the virtqueues' rings, the work lists. So the event
count stays near one per interaction between threads, not one per kernel
function. Whether a peer might act first is known from when it will run
next, or, if it sleeps, from when the threads that can wake it might
(``Task.earliest_action``): the lookahead.

CPUs
----
Each thread runs on a ``Cpu``, one at a time: on the guest's CPU1 the RX
interrupt and two kworkers share it, and a kworker woken while the other
runs waits for the CPU, with no wake-up latency (the vCPU is awake).

A queue between threads carries time stamps (a used buffer is published at
its producer's clock ``t``), and its consumer takes an entry once its own
clock has passed the stamp. A consumer that finds nothing must make sure
nothing can still arrive before its clock: ``Task.sync`` for a peer that may
act at any time, or a lookahead (``Task.earliest_action``) where the peer is
known to be slower to reach it (a guest packet reaches vhost only after a VM
exit).

Waking
------
One path: ``Sim.try_to_wake_up(task, waker)`` (kernel/sched/core.c), with the
latency model in one place (``Sim.wake_latency``): a guest task whose vCPU
halted wakes after the vCPU does (KVM halt polling, a shallow or a deep host
C-state), a host thread after the host scheduler runs it. Each latency is
drawn from the sleeper's own noise stream (``vsockmodel.sim.noise``).

Only simpy's public API is used: ``Environment.process``, ``timeout``,
``event``, ``peek``, ``step``, ``now``. ``Sim.run`` steps the environment
itself, so that threads read the current time as a plain attribute,
``sim.now``, on their hot path.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Any, Generator

import simpy

from ..model.costs import Costs
from ..model.params import Params
from . import noise
from .errors import SimulationLimitExceeded
from .kvm import HaltPoll
from .stats import Stats, Tracepoints

# A task's main() and its blocking kernel functions: generators of simpy events.
Steps = Generator[Any, Any, Any]

RUNNING, SLEEPING = "running", "sleeping"


class Sim:
    """Clock, noise streams, statistics, trace and bounds of one run, and the scheduler."""

    MAX_EVENTS_PER_PACKET = 60
    MAX_WALL_S = 30.0
    # A trace entry is a few hundred bytes: the cap bounds a traced run's memory
    # (about 200 MB at most); the events after it are not recorded.
    MAX_TRACE_EVENTS = 600_000

    def __init__(self, params: Params, costs: Costs) -> None:
        self.p = params
        self.c = costs
        self.env = simpy.Environment(initial_time=0.0)   # a float clock from the start
        self.stats = Stats()
        self.trace: list | None = [] if params.trace else None
        self.tracepoints = Tracepoints(self)
        self.min_wake_latency = self._min_wake_latency()
        self.finished = self.env.event()
        self.now = 0.0          # env.now, while an event is processed (Sim.run)
        self.events = 0
        # Scheduling events, plus recv() calls (the reader counts them too: a
        # reader taking one byte at a time may run long without yielding).
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

    def noise(self, actor: str, purpose: str) -> Any:
        """The noise stream of one actor: "cpu" (CPU costs) or "wake" (wake-up latencies)."""
        cv = self.c.jitter_cv if purpose == "cpu" else self.c.wake_latency_cv
        return noise.stream(self.p.seed, actor, purpose, cv)

    # ---- the scheduler ----------------------------------------------------------
    def try_to_wake_up(self, task: "Task", waker: "Task | None" = None, at: float | None = None,
                       via: str = "", by: str = "irq", counted: bool = False) -> bool:
        """kernel/sched/core.c try_to_wake_up(): make a sleeping task runnable.

        The wake-up happens at the waker's clock (or at ``at``: an interrupt
        vhost raises at its own time), and the task runs a latency later
        (``wake_latency``). A guest task that wakes one on another vCPU pays
        for it: the run-queue work and, without IPI virtualisation, the IPI's
        VM exit. ``via`` names the callback or interrupt, ``by`` the waker
        when it is not a task paying for it. False if the task was not asleep.
        """
        if task.state is RUNNING:
            return False
        task.state = RUNNING
        task.woken_via = via
        if waker is not None and waker.cpu.guest and task.cpu.guest and waker.cpu is not task.cpu:
            waker.work(self.c.wakeup_ns)
            if not self.p.ipi_virtualization and task.cpu.owner is None:
                waker.exit_work(self.c.ipi_exit_ns)    # the IPI to the halted vCPU traps
            waker.wakes_sent += 1
        t = waker.t if waker is not None else at
        if not counted:                         # (counted already: one that came before it slept)
            self.stats.wakeups[task.name] += 1
            if self.trace is not None:
                self.log(t, waker.name if waker is not None else by, f"wake_{task.name}", via=via)
        if task.wake_event is None:
            # Not in schedule() yet: it goes on without sleeping, unless the
            # wake-up comes after its own clock (the waker runs ahead).
            task.early_wake = max(task.early_wake, t)
            return True
        cpu = task.cpu
        if cpu.owner is not None:
            cpu.runqueue.append((task, t))      # another task runs there: wait for the CPU
            task.waiting_on = cpu
            return True
        if t < task.sleep_at:
            # still finishing its work before it sleeps: it goes on then, without sleeping
            task.slept = False
            self.resume(task, task.sleep_at)
        elif cpu.free_at > t:
            self.resume(task, cpu.free_at)      # the CPU is still busy until then: no halt
        else:
            self.resume(task, t + self.wake_latency(task, t))
        return True

    def resume(self, task: "Task", at: float) -> None:
        """Let a woken task run again at ``at``."""
        task.resume_at = max(at, self.now)
        event, task.wake_event = task.wake_event, None
        delay = at - self.now
        if delay > 0:
            self.env.timeout(delay).callbacks.append(lambda _timeout: event.succeed())
        else:
            event.succeed()

    def wake_latency(self, task: "Task", t: float) -> float:
        """From the wake-up at t until the task runs on its idle CPU: the CPU's way back.

        A halted guest vCPU wakes fast while KVM still polls for it
        (``halt_poll_ns``, ``kvm.HaltPoll``); otherwise the host scheduler
        runs its thread, and with ``deep_cstates`` the longer the vCPU has been
        idle, the deeper the host CPU under it sleeps and the slower it wakes.
        A host thread waits for the host scheduler. (A task woken while
        another runs on its CPU waits for the CPU instead: Cpu.release.)
        """
        c, cpu = self.c, task.cpu
        if not cpu.guest:
            mean = c.host_wake_latency_ns
        else:
            halt_ns = t - cpu.idle_since
            if self.p.halt_poll_ns and cpu.halt_poll.kvm_vcpu_halt(halt_ns):
                mean = c.halt_poll_wake_ns
            elif halt_ns < c.deep_idle_ns or not self.p.deep_cstates:
                mean = c.vcpu_wake_short_ns
            else:
                mean = c.vcpu_wake_long_ns
        return mean * next(task.wake_noise)

    def _min_wake_latency(self) -> float:
        """The shortest latency any wake-up can draw (for lookahead)."""
        c = self.c
        fastest = min(c.vcpu_wake_short_ns, c.vcpu_wake_long_ns, c.host_wake_latency_ns)
        if self.p.halt_poll_ns:
            fastest = min(fastest, c.halt_poll_wake_ns)
        return fastest * min(noise.lognormal_table(c.wake_latency_cv))

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


class Cpu:
    """A CPU tasks run on: a guest vCPU, or a host CPU.

    One task runs on it at a time (``owner``); a task woken while another
    runs waits for it to sleep (``runqueue``), with no wake-up latency: the
    CPU is awake. When no task runs, a guest vCPU halts, and how fast it comes
    back depends on how long it has been idle (``Sim.wake_latency``). An
    interrupt's handler runs on it too (``interrupt``).
    """

    __slots__ = ("name", "guest", "owner", "free_at", "idle_since", "runqueue", "irq_pending",
                 "irq_latched", "halt_poll", "wakers")

    def __init__(self, name: str, guest: bool, halt_poll_ns: float = 0.0) -> None:
        self.name = name
        self.guest = guest
        self.owner: Task | None = None
        self.free_at = 0.0             # when its last task went to sleep
        self.idle_since = 0.0
        self.runqueue: deque = deque()  # (task, ready since): woken, waiting for the CPU
        self.irq_pending = 0.0          # handler time of interrupts that found it idle
        self.irq_latched = False        # an interrupt waits for the halted CPU to run it
        self.halt_poll = HaltPoll(halt_poll_ns)   # the vCPU's KVM halt-polling window
        self.wakers: tuple[Task, ...] = ()        # its tasks: who can hand it over (lookahead)

    def interrupt(self, cost_ns: float) -> bool:
        """An interrupt handler's CPU time: the running task pays it, or the
        next one to run if the CPU was idle. False if the CPU is halted with an
        interrupt already latched: the same vector is pending, one handler runs."""
        if self.owner is not None:
            self.owner.work(cost_ns)
        elif self.irq_latched:
            return False
        else:
            self.irq_pending += cost_ns
            self.irq_latched = True
        return True

    def release(self, task: "Task", at: float) -> None:
        """``task`` sleeps from ``at``: the CPU goes to the first task waiting for it, or idles."""
        if self.owner is task:
            self.owner = None
        self.free_at = at
        if not self.runqueue:
            self.idle_since = at
            return
        nxt, ready = self.runqueue.popleft()
        self.owner = nxt
        sim = nxt.sim
        if ready > at:                 # idle in between: it wakes as from idle
            self.idle_since = at
            start = ready + sim.wake_latency(nxt, ready)
        else:
            start = at
        sim.resume(nxt, start)


class Task:
    """One kernel or user thread: a simpy process that charges CPU time where
    its code runs and turns it into simulated time only where it meets another."""

    def __init__(self, sim: Sim, name: str, cpu: Cpu) -> None:
        self.sim = sim
        self.env = sim.env
        self.c = sim.c
        self.stats = sim.stats
        self.name = name
        self.cpu = cpu
        self.acc = 0.0          # CPU time done but not yet turned into simulated time
        self.busy = 0.0         # total CPU time (what perf's cycles count)
        self.state = RUNNING
        self.wake_event: simpy.Event | None = None   # set while in schedule()
        self.sleep_at = 0.0     # the clock at which it last went to sleep
        self.early_wake = 0.0   # a wake-up that came before schedule(), at the waker's clock
        self.slept = False      # that sleep happened (a wake-up may come before it)
        self.resume_at: float | None = 0.0   # when it next runs; None: asleep, not yet woken
        # What it sleeps on, and so who can wake it (lookahead): a WaitQueue,
        # or anything with a ``wakers`` tuple (a worker thread's list of work).
        self.waiting_on: Any = None
        self.woken_via = ""     # what last woke it (try_to_wake_up's ``via``), until it takes a lock
        self.sleeps = 0         # times it blocked (each costs a context switch pair)
        self.wakes_sent = 0     # wake-ups it paid for (try_to_wake_up across vCPUs)
        self.process: simpy.Process | None = None
        self.cpu_noise = sim.noise(name, "cpu")
        self.wake_noise = sim.noise(name, "wake")

    def log(self, event: str, **info) -> None:
        """Record an event at this task's clock (with trace=True)."""
        if self.sim.trace is not None:
            self.sim.log(self.t, self.name, event, **info)

    def main(self) -> Steps:
        """The thread's body."""
        raise NotImplementedError

    def start(self) -> None:
        self.process = self.env.process(self._body())

    def _body(self) -> Steps:
        if self.cpu.owner is None:
            self.cpu.owner = self
            self.take_interrupt_time()
        yield from self.main()
        self.resume_at = math.inf            # it will not act again
        self.cpu.release(self, self.t)

    @property
    def exited(self) -> bool:
        """main() has returned (the task was started and will not run again)."""
        return self.process is not None and self.process.triggered

    # ---- CPU time -------------------------------------------------------------
    @property
    def t(self) -> float:
        """This task's clock: now plus the work it has not turned into time."""
        return self.sim.now + self.acc

    def work(self, ns: float) -> None:
        """Spend ``ns`` of CPU time (with noise) on this task's CPU."""
        ns *= next(self.cpu_noise)
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
        if ns:
            self.acc += ns * next(self.cpu_noise)

    # ---- meeting other threads (the shared objects call these) -------------------
    def behind(self) -> bool:
        """True if another thread may act before this task's clock: some event
        is due at or before ``now + acc``."""
        return self.acc > 0 and self.env.peek() <= self.sim.now + self.acc

    def flush(self) -> simpy.Timeout:
        """All accumulated work as simulated time: the timeout to yield."""
        delay, self.acc = self.acc, 0.0
        self.resume_at = self.sim.now + delay
        self.sim.count_event()
        return self.env.timeout(delay)

    def preceded(self, peers: tuple["Task", ...]) -> bool:
        """True if one of ``peers`` (the threads that share an object with this
        one) may act before this task's clock; with no peers named, any thread."""
        if self.acc <= 0:
            return False
        t = self.sim.now + self.acc
        if self.env.peek() > t:
            return False                         # nothing at all is due first
        if not peers:
            return True
        for peer in peers:
            if peer is not self and peer.earliest_action(self) <= t:
                return True
        return False

    def sync(self, peers: tuple["Task", ...] = ()) -> Steps:
        """Let every thread (of ``peers``) that may act before this task's clock act first."""
        if self.preceded(peers):
            yield self.flush()

    def earliest_action(self, asking: "Task", _seen: tuple = ()) -> float:
        """The earliest simulated time this task can next act, as ``asking`` sees it.

        A task that will run again knows when (``resume_at``); one asleep can
        act only after one of the wakers of what it sleeps on wakes it, a
        wake-up latency later. The asking task itself can act at its own clock.
        """
        if self is asking:
            return asking.sim.now + asking.acc
        resume = self.resume_at
        if resume is not None:
            now = self.sim.now
            return resume if resume > now else now
        seen = _seen + (self,)
        soonest = math.inf
        waiting_on = self.waiting_on
        for waker in (waiting_on.wakers if waiting_on is not None else ()):
            if waker not in seen:
                t = waker.earliest_action(asking, seen)
                if t < soonest:
                    soonest = t
        return soonest + self.sim.min_wake_latency

    # ---- sleeping -----------------------------------------------------------------
    def set_current_state_sleeping(self) -> None:
        """set_current_state(TASK_INTERRUPTIBLE): from here a wake-up is not lost,
        even if it comes before schedule()."""
        self.state = SLEEPING
        self.early_wake = 0.0

    def schedule(self) -> Steps:
        """kernel/sched/core.c schedule() for a sleeping task: give up the CPU
        until try_to_wake_up(), then pay the context switches (``sleep_ns``).

        The task goes to sleep at its own clock, without first turning its
        work into simulated time: a wake-up that comes before that clock finds
        it still running, and it goes on without sleeping, as one that came
        before schedule() does. Returns at once if the task was woken since it
        set its state.
        """
        woken_at = 0.0
        if self.state is RUNNING:
            woken_at, self.early_wake = self.early_wake, 0.0
            if woken_at <= self.t:
                return                               # woken before it slept: it goes on
            self.state = SLEEPING                    # the wake-up is still to come: sleep till then
        self.sim.count_event()
        self.sleeps += 1
        self.sleep_at = self.sim.now + self.acc
        self.acc = 0.0
        self.resume_at = None                        # asleep, not yet woken
        woken = self.wake_event = self.env.event()
        self.slept = True
        self.cpu.release(self, self.sleep_at)
        if woken_at:           # (this may resume it at once: wake_event is then cleared)
            self.sim.try_to_wake_up(self, at=woken_at, via=self.woken_via, counted=True)
        yield woken
        yield from self.take_cpu()
        if self.slept:
            self.work(self.c.sleep_ns)
        self.take_interrupt_time()

    def take_cpu(self) -> Steps:
        """Run on the CPU again; if another task took it meanwhile, or ran on
        it until later than now (it slept at its own clock), wait for that."""
        cpu = self.cpu
        while True:
            if cpu.owner is not None and cpu.owner is not self:
                self.wake_event = self.env.event()
                self.resume_at = None
                self.waiting_on = cpu
                cpu.runqueue.append((self, self.sim.now))
                yield self.wake_event
            elif cpu.free_at > self.sim.now + self.acc:
                self.idle_until(cpu.free_at)
                yield self.flush()
            else:
                break
        self.waiting_on = None
        cpu.owner = self

    def take_interrupt_time(self) -> None:
        """Pay for the interrupts that came while the CPU was idle (the one that woke it)."""
        cpu = self.cpu
        if cpu.irq_latched:
            self.work(cpu.irq_pending)
            cpu.irq_pending = 0.0
            cpu.irq_latched = False

    def sleep_until_woken_at(self, t: float, counted: bool = False) -> None:
        """Sleep now; the wake-up that ends it is already known to come at t
        (data or credit stamped t): idle until it and its latency have passed,
        then pay the context switches. (For a task alone on its CPU: nothing
        else can run there meanwhile.)"""
        self.cpu.idle_since = self.cpu.free_at = self.t
        self.sleeps += 1
        if not counted:
            self.stats.wakeups[self.name] += 1
        self.idle_until(t + self.sim.wake_latency(self, t))
        self.work(self.c.sleep_ns)
        self.take_interrupt_time()

    def idle_until(self, t: float) -> None:
        """Advance this task's clock to ``t`` without using CPU."""
        if t > self.sim.now + self.acc:
            self.acc = t - self.sim.now


class SpinLock:
    """A spinlock (or any shared cache line): where threads on different CPUs meet.

    Taking it brings the taker's clock into step with the other threads that
    take it (``peers``, set when the run is wired; none named: every thread):
    whoever may act first acts first. It is held for a few instructions, so
    nobody waits for it here.
    """

    __slots__ = ("name", "peers")

    def __init__(self, name: str, peers: tuple[Task, ...] = ()) -> None:
        self.name = name
        self.peers = peers

    def spin_lock(self, task: Task) -> Steps:
        """Take it: the steps to ``yield from`` (none, or a wait for the threads
        that may take it first). No generator when none may: taking an
        uncontended lock should cost next to nothing."""
        if task.preceded(self.peers):
            return self._wait(task)
        return ()

    def _wait(self, task: Task) -> Steps:
        # Time the task gains while it waits (an interrupt's handler) can let
        # a peer act first again: wait until none may.
        while task.preceded(self.peers):
            yield task.flush()

    def spin_unlock(self, task: Task) -> None:
        pass


class WaitQueue:
    """include/linux/wait.h: tasks asleep until something happens.

    ``prepare_to_wait`` adds a task (exclusive waiters are woken one at a
    time, after every non-exclusive one); ``wake_up`` runs at the waker's
    clock, under the queue's own lock in the kernel: a place where threads
    meet. Every waiter is removed when woken (autoremove_wake_function).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        # Set when the run is wired: who may sleep here and who may wake them
        # (the lookahead: none named means anyone).
        self.peers: tuple[Task, ...] = ()
        self.wakers: tuple[Task, ...] = ()
        self.waiters: list[tuple[Task, bool]] = []     # (task, exclusive)

    def prepare_to_wait(self, task: Task, exclusive: bool = False) -> None:
        if not any(w is task for w, _ in self.waiters):
            self.waiters.append((task, exclusive))
        task.waiting_on = self
        task.set_current_state_sleeping()

    def finish_wait(self, task: Task) -> None:
        task.state = RUNNING
        task.waiting_on = None
        self.waiters = [(w, x) for w, x in self.waiters if w is not task]

    def active(self) -> bool:
        """waitqueue_active()"""
        return bool(self.waiters)

    def has_sleeper_or_may(self, waker: Task) -> bool:
        """skwq_has_sleeper() for a waker that has not met the sleepers: true if a
        task sleeps here, or if one of the peers may still come to sleep here
        before the waker's clock (``wake_up`` then decides at that clock)."""
        return bool(self.waiters) or waker.preceded(self.peers)

    def wake_up(self, waker: Task, via: str = "") -> None:
        """__wake_up(): wake every non-exclusive waiter and the first exclusive one.

        The waker's callers have just met the other threads (under lock_sock,
        or right after a ring or spinlock operation), so the waiters seen now
        are those at the waker's clock. If another event is due first all the
        same, the decision waits for the waker's clock (and the waker is not
        charged for it).
        """
        if waker.preceded(self.peers):
            t = waker.t
            waker.env.timeout(t - waker.sim.now).callbacks.append(
                lambda _timeout: self._wake_up(None, t, via, waker.name))
            return
        self._wake_up(waker, waker.t, via, waker.name)

    def _wake_up(self, waker: Task | None, t: float, via: str, by: str) -> None:
        if not self.waiters:
            return
        woken, kept, exclusive_done = [], [], False
        for task, exclusive in self.waiters:
            if exclusive and exclusive_done:
                kept.append((task, exclusive))
                continue
            woken.append(task)
            exclusive_done = exclusive_done or exclusive
        self.waiters = kept
        for task in woken:
            task.sim.try_to_wake_up(task, waker, at=t, via=via, by=by)
