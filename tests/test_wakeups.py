"""``vsockmodel.sim.trace.wakeups``: who woke whom, how, when, and whether it helped.

Its contract (a list of small records: waker, wakee, via, t_sent_ns,
t_run_ns, useful) is what the book's wake-up timeline reads; the counts must
agree with the run's own counters.
"""

from __future__ import annotations

import dataclasses

import pytest

import vsockmodel as vm
from vsockmodel.sim.trace import Wake, wakeups


def test_a_record_has_the_fields_the_book_reads():
    assert [f.name for f in dataclasses.fields(Wake)] == [
        "waker", "wakee", "via", "t_sent_ns", "t_run_ns", "useful"]
    w = Wake("worker", "reader", "sk_write_space", 100.0, 350.0, True)
    assert w.latency_ns == 250.0


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 64), ("baseline", 65536),
                                             ("p1-p3", 4096)])
def test_counts_agree_with_the_runs_counters(variant, payload):
    r = vm.run(variant=variant, payload=payload, trace=True)
    w = wakeups(r.trace)
    reader = [x for x in w if x.wakee == "reader"]
    assert len(reader) == r.wakeups_by_task["reader"]
    for task in ("reader", "worker"):
        futile = sum(not x.useful for x in w if x.wakee == task)
        assert futile == r.futile_wakeups_by_task.get(task, 0), task
    assert all(x.t_run_ns > x.t_sent_ns for x in w)
    assert [x.t_run_ns for x in w] == sorted(x.t_run_ns for x in w)
    assert {x.via for x in w} <= {"sk_write_space", "sk_data_ready", "sock_wfree", "release_sock"}
    assert all({x.waker, x.wakee} == {"worker", "reader"} for x in w if x.via == "release_sock")


def test_a_hand_written_trace():
    trace = [
        (0.0, "reader", "unlock", {}),
        (1.0, "reader", "sleep", {}),
        (10.0, "worker", "lock", {}),
        (12.0, "worker", "wake_reader", {"via": "sk_write_space"}),      # woken inside the lock
        (20.0, "reader", "futile_wakeup", {"why": "woken for data, socket owned"}),
        (20.0, "reader", "lock_wait", {"owner": "worker"}),
        (25.0, "worker", "unlock", {}),
        (25.0, "worker", "wake_reader", {"via": "release_sock"}),        # hands the lock over
        (26.0, "worker", "lock", {}),                                    # and takes it back first
        (27.0, "worker", "unlock", {}),                                  # the reader is already woken
        (28.0, "irq", "wake_worker", {"via": "rx_work"}),                # an interrupt: not the socket's
        (30.0, "reader", "lock", {}),
        (40.0, "reader", "unlock", {}),
        (41.0, "reader", "sleep", {}),
        (50.0, "worker", "wake_reader", {"via": "sk_data_ready"}),       # never acted on
    ]
    assert wakeups(trace) == [
        Wake("worker", "reader", "sk_write_space", 12.0, 20.0, False),
        Wake("worker", "reader", "release_sock", 25.0, 30.0, True),
    ]


def test_patches_4_and_5_cut_the_readers_futile_wake_ups():
    # The chapter's claim, from the records themselves.
    futile = {v: sum(not x.useful for x in wakeups(vm.run(variant=v, payload=64, trace=True).trace)
                     if x.wakee == "reader") for v in ("p1-p3", "p1-p5")}
    assert futile["p1-p5"] < futile["p1-p3"]


def test_the_timeline_draws_every_wake_up_of_its_window_and_only_those():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from vsockmodel.bookkit import figures
    from vsockmodel.bookkit.style import check_text_size, use_book_style

    use_book_style()
    r = vm.run(variant="baseline", payload=64, trace=True)
    w = wakeups(r.trace)
    t0 = figures.wakeup_window(w, 80.0, after_us=r.sim_time_us / 3)
    fig = Figure(figsize=(7.6, 2.6))
    ax = fig.subplots()
    shown = figures.wakeup_timeline(ax, r.trace, t0, 80.0, wakes=w)
    inside = [x for x in w if t0 <= x.t_sent_ns / 1000 and x.t_run_ns / 1000 <= t0 + 80.0]
    assert shown == inside and any(not x.useful for x in shown) and any(x.useful for x in shown)
    labels = [t.get_text() for t in ax.texts]
    assert labels == [f"{x.latency_ns / 1000:.1f}" for x in shown]      # each one's latency, in µs
    assert ax.get_xlim() == (t0, t0 + 80.0) and "(µs)" in ax.get_xlabel()
    fig.canvas.draw()
    check_text_size(fig)
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["0", "10", "20"]     # µs from the window's start
