"""The simulation engine (vsockmodel.sim.engine) on its own: how time, wake-ups,
errors and bounds behave, with tasks far simpler than the model's actors."""

from __future__ import annotations

import pytest

import vsockmodel as vm
from vsockmodel.sim.engine import Sim, Task, Wakeup
from vsockmodel.sim.errors import SimulationLimitExceeded


def _sim(**costs) -> Sim:
    p, c = vm.make_params(payload=64, transfer=64 * 100)
    return Sim(p, c.with_(jitter_cv=0.0, wake_latency_cv=0.0, **costs))


class Script(Task):
    """A task that runs a given generator function, and logs what it did."""

    def __init__(self, sim, name, body, log):
        super().__init__(sim, name)
        self.body, self.events = body, log

    def main(self):
        yield from self.body(self)


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

    a_task = Script(sim, "a", a, log)
    b_task = Script(sim, "b", b, log)
    a_task.start()
    sim.run()
    assert log == [("b", 0.0), ("a", 100.0)]


def test_events_at_the_same_time_run_in_the_order_they_were_scheduled():
    sim, log = _sim(), []

    def body(task):
        task.work(50)
        yield task.flush()
        log.append(task.name)
        if len(log) == 3:
            sim.finish()

    for name in ("x", "y", "z"):
        Script(sim, name, body, log).start()
    sim.run()
    assert log == ["x", "y", "z"]


def test_a_wakeup_resumes_the_sleeper_after_its_latency_and_it_knows_when():
    sim, log = _sim(), []

    def sleeper(task):
        task.wakeup = Wakeup(task)
        yield from task.sleep_on(task.wakeup)
        log.append(("woken", sim.now))
        sim.finish()

    def waker(task):
        task.work(10)
        yield task.flush()
        s.wakeup.fire(250)
        log.append(("resume_at", s.resume_at))

    s = Script(sim, "sleeper", sleeper, log)
    s.start()
    Script(sim, "waker", waker, log).start()
    sim.run()
    assert log == [("resume_at", 260.0), ("woken", 260.0)]
    assert s.sleeps == 1


def test_an_exception_in_a_task_surfaces_as_itself():
    sim = _sim()

    def broken(task):
        yield task.flush()
        raise KeyError("boom")

    Script(sim, "broken", broken, []).start()
    with pytest.raises(KeyError, match="boom"):
        sim.run()


def test_nothing_left_to_happen_is_reported():
    sim = _sim()

    def waits_for_ever(task):
        yield from task.sleep_on(Wakeup(task))

    Script(sim, "w", waits_for_ever, []).start()
    with pytest.raises(RuntimeError, match="No scheduled events left"):
        sim.run()


def test_a_runaway_run_stops_at_its_event_bound():
    sim = _sim()
    sim.max_events = 5000

    def spins(task):
        while True:
            task.work(1)
            yield task.flush()

    Script(sim, "spin", spins, []).start()
    with pytest.raises(SimulationLimitExceeded, match="scheduling events"):
        sim.run()


def test_a_runaway_run_stops_at_its_wall_time_bound(monkeypatch):
    sim = _sim()
    sim._wall_deadline = 0.0                # already past: the first check stops it

    def spins(task):
        while True:
            task.work(1)
            yield task.flush()

    Script(sim, "spin", spins, []).start()
    with pytest.raises(SimulationLimitExceeded, match="wall time"):
        sim.run()


def test_cpu_noise_has_mean_one_and_the_configured_spread():
    import statistics
    p, c = vm.make_params(seed=3)
    sim = Sim(p, c.with_(jitter_cv=0.2))
    xs = [next(sim.jitter) for _ in range(20000)]
    assert statistics.fmean(xs) == pytest.approx(1.0, abs=0.01)
    assert statistics.stdev(xs) == pytest.approx(0.2, rel=0.05)
    a, b = Sim(p, c.with_(jitter_cv=0.2)), Sim(p, c.with_(jitter_cv=0.2))
    assert [next(a.jitter) for _ in range(5)] == [next(b.jitter) for _ in range(5)]   # seeded


def test_a_woken_task_pays_its_context_switches_before_it_goes_on():
    # schedule() out and back in: sleep_ns of CPU time, counted as busy, after the wake-up.
    sim, log = _sim(sleep_ns=1200.0), []

    def sleeper(task):
        task.wakeup = Wakeup(task)
        yield from task.sleep_on(task.wakeup)
        log.append((sim.now, task.t, task.busy))
        sim.finish()

    def waker(task):
        yield task.flush()
        s.wakeup.fire(500)

    s = Script(sim, "sleeper", sleeper, log)
    s.start()
    Script(sim, "waker", waker, log).start()
    sim.run()
    assert log == [(500.0, 1700.0, 1200.0)]
