"""The simulation engine (vsockmodel.sim.engine) on its own: how time, wake-ups,
CPUs, noise, errors and bounds behave, with tasks far simpler than the model's
actors."""

from __future__ import annotations

import itertools
import statistics

import pytest

import vsockmodel as vm
from vsockmodel.sim import noise
from vsockmodel.sim.engine import SLEEPING, Cpu, Sim, Task, WaitQueue
from vsockmodel.sim.errors import SimulationLimitExceeded

SHORT = 5000.0      # vcpu_wake_short_ns in these tests
HOST = 3000.0       # host_wake_latency_ns


def _sim(seed: int = 1, **costs) -> Sim:
    """A Sim without noise, whose wake-up latencies are easy to tell apart."""
    p, c = vm.make_params(payload=64, transfer=64 * 100, seed=seed)
    defaults = dict(jitter_cv=0.0, wake_latency_cv=0.0, vcpu_wake_short_ns=SHORT,
                    vcpu_wake_long_ns=40_000.0, host_wake_latency_ns=HOST, sleep_ns=0.0,
                    wakeup_ns=0.0)
    return Sim(p, c.with_(**{**defaults, **costs}))


class Script(Task):
    """A task that runs a given generator function."""

    def __init__(self, sim, name, body, cpu=None):
        super().__init__(sim, name, cpu or Cpu(f"cpu of {name}", guest=True))
        self.body = body

    def main(self):
        yield from self.body(self)


def _sleep(task, wq):
    """Sleep on a wait queue until woken (prepare_to_wait, schedule, finish_wait)."""
    wq.prepare_to_wait(task)
    yield from task.schedule()
    wq.finish_wait(task)


# ---- time ----------------------------------------------------------------------------------

def test_work_runs_ahead_until_another_event_is_due():
    sim, log = _sim(), []

    def a(task):
        task.work(100)
        assert not task.behind() and task.t == 100 and sim.now == 0   # nothing else is due yet
        b_task.start()                                                # b is due now
        assert task.behind()
        yield task.flush()
        log.append(("a", sim.now))
        sim.finish()

    def b(task):
        log.append(("b", sim.now))
        yield task.flush()

    a_task = Script(sim, "a", a)
    b_task = Script(sim, "b", b)
    a_task.start()
    sim.run()
    assert log == [("b", 0.0), ("a", 100.0)]


def test_sync_waits_only_for_the_peers_that_may_act_first():
    # A peer asleep with nobody to wake it cannot act before our clock: no wait.
    sim, log = _sim(), []

    def a(task):
        task.work(100)
        yield from task.sync((sleeper,))
        log.append(("a alone", sim.now))      # the sleeper could not act first: ran ahead
        yield from task.sync()                 # anyone: the other task is due at 50
        log.append(("a", sim.now))
        sim.finish()

    def other(task):
        task.work(50)
        yield task.flush()
        log.append(("other", sim.now))

    sleeper = Script(sim, "sleeper", lambda task: _sleep(task, WaitQueue("nobody")))
    sleeper.start()
    Script(sim, "a", a).start()
    Script(sim, "other", other).start()
    sim.run()
    assert log == [("a alone", 0.0), ("other", 50.0), ("a", 100.0)]


def test_events_at_the_same_time_run_in_the_order_they_were_scheduled():
    sim, log = _sim(), []

    def body(task):
        task.work(50)
        yield task.flush()
        log.append(task.name)
        if len(log) == 3:
            sim.finish()

    for name in ("x", "y", "z"):
        Script(sim, name, body).start()
    sim.run()
    assert log == ["x", "y", "z"]


# ---- waking ---------------------------------------------------------------------------------

def test_a_wakeup_resumes_the_sleeper_after_its_latency_and_it_knows_when():
    # try_to_wake_up() at the waker's clock; the halted vCPU runs the task a
    # (shallow) wake-up latency later, and resume_at says when from the wake-up on.
    sim, log, wq = _sim(), [], WaitQueue("wq")

    def sleeper(task):
        yield from _sleep(task, wq)
        log.append(("woken", sim.now, task.woken_via))
        sim.finish()

    def waker(task):
        task.work(10)
        yield task.flush()
        wq.wake_up(task, via="test")
        log.append(("resume_at", s.resume_at))

    s = Script(sim, "sleeper", sleeper)
    s.start()
    Script(sim, "waker", waker, Cpu("host", guest=False)).start()
    sim.run()
    assert log == [("resume_at", 10 + SHORT), ("woken", 10 + SHORT, "test")]
    assert s.sleeps == 1 and sim.stats.wakeups["sleeper"] == 1


def test_a_host_thread_wakes_after_the_host_schedulers_latency():
    sim, log, wq = _sim(), [], WaitQueue("wq")

    def sleeper(task):
        yield from _sleep(task, wq)
        log.append(sim.now)
        sim.finish()

    def waker(task):
        task.work(10)
        yield task.flush()
        wq.wake_up(task)

    Script(sim, "host thread", sleeper, Cpu("host", guest=False)).start()
    Script(sim, "waker", waker, Cpu("host 2", guest=False)).start()
    sim.run()
    assert log == [10 + HOST]


def test_a_woken_task_pays_its_context_switches_before_it_goes_on():
    # schedule() out and back in: sleep_ns of CPU time, counted as busy, after the wake-up.
    sim, log, wq = _sim(sleep_ns=1200.0), [], WaitQueue("wq")

    def sleeper(task):
        yield from _sleep(task, wq)
        log.append((sim.now, task.t, task.busy))
        sim.finish()

    def waker(task):
        task.work(500)
        yield task.flush()
        wq.wake_up(task)

    Script(sim, "sleeper", sleeper).start()
    Script(sim, "waker", waker, Cpu("host", guest=False)).start()
    sim.run()
    assert log == [(500 + SHORT, 500 + SHORT + 1200, 1200)]


def test_a_wakeup_before_the_sleepers_own_clock_costs_no_latency_and_no_context_switch():
    # The sleeper ran ahead to 1000 before it called schedule(); a wake-up at
    # 500 finds it still running, as one before schedule() does: it goes on at
    # its own clock, with no wake-up latency and no schedule out and in.
    sim, log, wq = _sim(sleep_ns=1200.0), [], WaitQueue("wq")

    def sleeper(task):
        task.work(1000)
        yield from _sleep(task, wq)
        log.append((sim.now, task.t, task.busy))
        sim.finish()

    def waker(task):
        task.work(500)
        yield task.flush()
        wq.wake_up(task)

    s = Script(sim, "sleeper", sleeper)
    s.start()
    Script(sim, "waker", waker, Cpu("host", guest=False)).start()
    sim.run()
    assert log == [(1000.0, 1000.0, 1000.0)]


def test_a_wakeup_before_schedule_is_not_lost():
    # set_current_state(TASK_INTERRUPTIBLE) first: a wake-up between it and
    # schedule() makes schedule() return at once.
    sim, wq = _sim(), WaitQueue("wq")

    def body(task):
        wq.prepare_to_wait(task)
        wq.wake_up(task)                     # say, from an interrupt on this CPU
        yield from task.schedule()
        wq.finish_wait(task)
        task.work(1)
        yield task.flush()
        sim.finish()

    s = Script(sim, "t", body)
    s.start()
    sim.run()
    assert sim.now == 1 and s.sleeps == 0


def test_a_vcpu_idle_longer_than_deep_idle_ns_wakes_slowly():
    # The longer a vCPU halts, the deeper the host CPU under it sleeps.
    for idle, latency in ((49_000, SHORT), (60_000, 40_000)):
        sim, log, wq = _sim(deep_idle_ns=50_000.0), [], WaitQueue("wq")

        def sleeper(task):
            yield from _sleep(task, wq)
            log.append(sim.now)
            sim.finish()

        def waker(task, idle=idle):
            task.work(idle)
            yield task.flush()
            wq.wake_up(task)

        Script(sim, "sleeper", sleeper).start()
        Script(sim, "waker", waker, Cpu("host", guest=False)).start()
        sim.run()
        assert log == [idle + latency]


def test_an_exclusive_wake_up_wakes_one_waiter_and_every_non_exclusive_one():
    # __wake_up(nr_exclusive = 1): every non-exclusive waiter, then the first exclusive one.
    sim, wq = _sim(), WaitQueue("wq")
    tasks = [Script(sim, name, lambda task: iter(())) for name in ("x1", "n", "x2")]
    for task, exclusive in zip(tasks, (True, False, True)):
        wq.prepare_to_wait(task, exclusive=exclusive)
        task.wake_event = sim.env.event()              # as if asleep in schedule()
    waker = Script(sim, "waker", lambda task: iter(()), Cpu("host", guest=False))
    wq.wake_up(waker)
    assert [t.name for t, _ in wq.waiters] == ["x2"]
    assert sim.stats.wakeups == {"x1": 1, "n": 1}


# ---- CPUs -------------------------------------------------------------------------------------

def test_a_task_woken_while_another_runs_on_its_cpu_waits_for_it_without_latency():
    # Two tasks on one CPU never run at once: B, woken at 100 while A runs,
    # runs when A sleeps (at 500), at once: the CPU is awake, nothing to wake.
    sim, log, wq = _sim(), [], WaitQueue("wq")
    cpu = Cpu("guest CPU1", guest=True)

    def a(task):
        task.work(100)
        yield task.flush()
        wq.wake_up(task)
        task.work(400)
        yield from _sleep(task, WaitQueue("never"))     # A sleeps at 500

    def b(task):
        yield from _sleep(task, wq)
        log.append(("b runs", sim.now, cpu.owner is task))
        sim.finish()

    B = Script(sim, "b", b, cpu)
    B.start()
    A = Script(sim, "a", a, cpu)
    A.start()
    sim.run()
    assert log == [("b runs", 500.0, True)]


def test_a_wakeup_due_later_does_not_hold_an_idle_cpu_against_one_due_sooner():
    # B is woken for 10,000 (an interrupt vhost raised at its own, later
    # clock); C, on the same idle CPU, is woken at 100. The CPU is idle until
    # 10,000: C runs at 100 plus its wake-up latency, and B when it is due.
    sim, log = _sim(), []
    cpu = Cpu("guest CPU1", guest=True)
    wq_b, wq_c = WaitQueue("b"), WaitQueue("c")

    def sleeper(wq):
        def body(task):
            yield from _sleep(task, wq)
            log.append((task.name, sim.now))
            task.work(1000)
            yield task.flush()
        return body

    def waker(task):
        sim.try_to_wake_up(b, at=10_000, via="irq")
        task.work(100)
        yield task.flush()
        wq_c.wake_up(task)
        task.work(100_000)
        yield task.flush()
        sim.finish()

    b = Script(sim, "b", sleeper(wq_b), cpu)
    c = Script(sim, "c", sleeper(wq_c), cpu)
    b.start()
    c.start()
    Script(sim, "waker", waker, Cpu("host", guest=False)).start()
    sim.run()
    assert log[0] == ("c", 100 + SHORT)


def test_a_task_woken_before_its_own_clock_does_not_run_beside_the_task_it_handed_the_cpu():
    # A runs ahead to 1000 and sleeps there; B, woken at 50 while A ran, gets
    # the CPU at 1000. A wake-up of A at 500 (before A's sleep) must not make
    # A and B run at once: one of them waits for the other.
    sim, log = _sim(), []
    cpu = Cpu("guest CPU1", guest=True)
    wq_a, wq_b = WaitQueue("a"), WaitQueue("b")

    def runs(task, wq, first=0):
        task.work(first)
        yield from _sleep(task, wq)
        start = sim.now
        task.work(2000)
        yield task.flush()
        log.append((start, sim.now))

    def a(task):
        task.work(100)
        yield task.flush()
        yield from runs(task, wq_a, first=900)

    def waker(task):
        task.work(50)
        yield task.flush()
        wq_b.wake_up(task)                  # A owns the CPU: B waits for it
        task.work(450)
        yield task.flush()
        wq_a.wake_up(task)                  # at 500, before A's sleep at 1000
        task.work(10_000)
        yield task.flush()
        sim.finish()

    Script(sim, "a", a, cpu).start()
    Script(sim, "b", lambda task: runs(task, wq_b), cpu).start()
    Script(sim, "waker", waker, Cpu("host", guest=False)).start()
    sim.run()
    (a0, a1), (b0, b1) = sorted(log)
    assert a1 <= b0 or b1 <= a0, f"both ran at once: {log}"


def test_a_wakeup_on_the_same_cpu_costs_the_waker_nothing_and_across_vcpus_costs_it_the_ipi():
    # try_to_wake_up() of a task on another vCPU: the waker pays wakeup_ns and,
    # without IPI virtualisation, the IPI's VM exit when that vCPU is halted.
    # The exit delays the waker but is host-mode time: not in its busy time.
    for ipi_virtualization, extra in ((True, 0.0), (False, 1500.0)):
        p, c = vm.make_params(payload=64, ipi_virtualization=ipi_virtualization)
        sim = Sim(p, c.with_(jitter_cv=0.0, wake_latency_cv=0.0, wakeup_ns=700.0, ipi_exit_ns=1500.0))
        cpu1 = Cpu("guest CPU1", guest=True)
        waker = Script(sim, "waker", lambda task: iter(()), cpu1)
        cpu1.owner = waker
        same = Script(sim, "same", lambda task: iter(()), cpu1)
        other = Script(sim, "other", lambda task: iter(()), Cpu("guest CPU0", guest=True))
        for task in (same, other):
            task.state = SLEEPING
            task.wake_event = sim.env.event()
        sim.try_to_wake_up(same, waker)
        assert (waker.acc, waker.busy) == (0.0, 0.0)
        sim.try_to_wake_up(other, waker)               # CPU0 is halted (no owner)
        assert (waker.acc, waker.busy, waker.wakes_sent) == (700.0 + extra, 700.0, 1)


def test_an_interrupt_is_charged_to_the_running_task_or_to_the_next_one_after_a_halt():
    sim = _sim()
    cpu = Cpu("guest CPU1", guest=True)
    task = Script(sim, "t", lambda task: iter(()), cpu)
    cpu.interrupt(300.0)                               # halted: pending until a task runs
    assert (cpu.irq_pending, task.busy) == (300.0, 0.0)
    cpu.owner = task
    cpu.interrupt(200.0)
    assert task.busy == 200.0


# ---- errors and bounds ---------------------------------------------------------------------

def test_an_exception_in_a_task_surfaces_as_itself():
    sim = _sim()

    def broken(task):
        yield task.flush()
        raise KeyError("boom")

    Script(sim, "broken", broken).start()
    with pytest.raises(KeyError, match="boom"):
        sim.run()


def test_nothing_left_to_happen_is_reported():
    sim = _sim()
    Script(sim, "w", lambda task: _sleep(task, WaitQueue("nobody"))).start()
    with pytest.raises(RuntimeError, match="No scheduled events left"):
        sim.run()


def test_a_deadlocked_run_is_reported_as_deadlock(monkeypatch):
    # simulate() turns "nothing left to happen" into Deadlock, naming where the bytes are.
    from vsockmodel.sim import run as run_module
    monkeypatch.setattr(run_module.Sender, "main", lambda self: iter(()))   # sends nothing, never closes
    with pytest.raises(vm.Deadlock, match="nothing left to happen after 0 of 0 bytes"):
        vm.run(payload=64, transfer=640)


def _spins(task):
    while True:
        task.work(1)
        yield task.flush()


def test_a_runaway_run_stops_at_its_event_bound():
    sim = _sim()
    sim.max_events = 5000
    Script(sim, "spin", _spins).start()
    with pytest.raises(SimulationLimitExceeded, match="scheduling events"):
        sim.run()
    assert sim.events <= 5000 + 4096                      # checked every 4096 events


def test_a_runaway_run_stops_at_its_wall_time_bound():
    sim = _sim()
    sim._wall_deadline = 0.0                # already past: the first check stops it
    Script(sim, "spin", _spins).start()
    with pytest.raises(SimulationLimitExceeded, match="wall time"):
        sim.run()


# ---- noise: one stream per actor and purpose ------------------------------------------------

def test_cpu_noise_has_mean_one_and_the_configured_spread():
    p, c = vm.make_params(seed=3)
    sim = Sim(p, c.with_(jitter_cv=0.2, wake_latency_cv=0.6))
    for purpose, cv in (("cpu", 0.2), ("wake", 0.6)):
        xs = list(itertools.islice(sim.noise("worker", purpose), 40_000))
        assert statistics.fmean(xs) == pytest.approx(1.0, abs=0.01)
        assert statistics.stdev(xs) == pytest.approx(cv, rel=0.05)
        assert min(xs) > 0
    # exactly mean 1 over the table: a cost's expected value is the cost
    assert statistics.fmean(noise.lognormal_table(0.2)) == pytest.approx(1.0, abs=1e-12)
    # no noise at all when the spread is 0
    assert set(itertools.islice(Sim(p, c.with_(jitter_cv=0.0)).noise("worker", "cpu"), 100)) == {1.0}


def test_a_task_draws_its_noise_from_its_own_streams():
    p, c = vm.make_params(seed=3)
    sim = Sim(p, c.with_(jitter_cv=0.2))
    task = Script(sim, "worker", lambda task: iter(()))
    expected = list(itertools.islice(sim.noise("worker", "cpu"), 3))
    for factor in expected:
        task.work(1000.0)
    assert task.busy == pytest.approx(1000.0 * sum(expected))


def test_one_actors_draws_do_not_depend_on_another_actors():
    # Same seed: the worker's stream is the same whether the reader drew
    # nothing before it or many draws in between.
    p, c = vm.make_params(seed=5)
    costs = c.with_(jitter_cv=0.2)

    def draws(reader_draws_between: int) -> list[float]:
        sim = Sim(p, costs)
        worker, reader = sim.noise("worker", "cpu"), sim.noise("reader", "cpu")
        out = []
        for _ in range(2000):
            out.append(next(worker))
            for _ in range(reader_draws_between):
                next(reader)
        return out

    assert draws(0) == draws(3)


def test_streams_of_different_actors_purposes_and_seeds_are_independent():
    def stream(seed, actor, purpose, n=20_000):
        return list(itertools.islice(noise.stream(seed, actor, purpose, 0.2), n))

    worker = stream(1, "worker", "cpu")
    assert worker == stream(1, "worker", "cpu")                       # seeded
    for other in (stream(1, "reader", "cpu"), stream(1, "worker", "wake"), stream(2, "worker", "cpu")):
        assert other != worker
        assert abs(statistics.correlation(worker, other)) < 0.03     # 4.2 sigma at n = 20,000
    # not a shifted copy either
    reader = stream(1, "reader", "cpu")
    assert all(abs(statistics.correlation(worker[k:], reader[:-k])) < 0.03 for k in (1, 2, 3))
