"""Reading a run's trace: who held the guest socket's lock, who waited for it, and when.

A trace (``run(..., trace=True).trace``) is a list of ``(t_ns, actor, event,
info)``. The socket lock's events come from ``GuestSock``: ``lock_wait``
(``__lock_sock`` puts the task to sleep), ``lock`` (it owns the socket),
``unlock`` (``release_sock``). The book's timeline figures and the browser
lab's both draw what ``lock_spans`` returns.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from .sock import SOCKET_WAKEUPS

LOCK_ACTORS = ("worker", "reader")


@dataclass(frozen=True)
class Span:
    actor: str       # "worker" (the RX worker, CPU1) or "reader" (recv(), CPU0)
    kind: str        # "holds": owns the socket lock; "waits": asleep in __lock_sock
    start_ns: float
    end_ns: float


def lock_spans(trace: list) -> list[Span]:
    """Every interval in which the worker or the reader held, or waited for, the
    socket lock, in time order. A hold still open when the trace ends is left out."""
    spans: list[Span] = []
    owned_from: dict[str, float] = {}
    waiting_from: dict[str, float] = {}
    for t, actor, event, _info in sorted(trace, key=lambda e: e[0]):
        if actor not in LOCK_ACTORS:
            continue
        if event == "lock":
            owned_from[actor] = t
            if actor in waiting_from:
                spans.append(Span(actor, "waits", waiting_from.pop(actor), t))
        elif event == "unlock" and actor in owned_from:
            spans.append(Span(actor, "holds", owned_from.pop(actor), t))
        elif event == "lock_wait" and actor not in waiting_from:
            waiting_from[actor] = t
    spans.sort(key=lambda s: s.start_ns)
    return spans


def event_times(trace: list, actor: str, events: tuple[str, ...]) -> list[float]:
    """Sorted times (ns) of an actor's trace events of the given kinds."""
    return sorted(t for t, a, e, _ in trace if a == actor and e in events)


def busiest_window(trace: list, span_ns: float, min_recvs: int = 2) -> float:
    """Start (ns) of the ``span_ns`` window with the most packets queued, among
    the windows in which the reader returns from ``recv()`` at least
    ``min_recvs`` times.

    A window picked at random may show a pause: the baseline's RX worker spends
    long stretches idle, waiting for vhost to refill the ring.
    """
    queued = event_times(trace, "worker", ("enqueue", "tail_copy"))
    reads = event_times(trace, "reader", ("recv",))
    if not queued:
        return 0.0
    best, best_n = queued[0], -1
    for i, t in enumerate(queued):
        n = bisect.bisect_right(queued, t + span_ns) - i
        if n > best_n and bisect.bisect_right(reads, t + span_ns) - bisect.bisect_left(reads, t) >= min_recvs:
            best, best_n = t, n
    return best


def shares(spans: list[Span], t0_ns: float, t1_ns: float) -> dict[str, float]:
    """Share of [t0, t1] each actor held the lock ("worker holds", ...) and waited for it."""
    width = t1_ns - t0_ns
    out = {f"{a} {k}": 0.0 for a in LOCK_ACTORS for k in ("holds", "waits")}
    if width <= 0:
        return out
    for s in spans:
        overlap = min(s.end_ns, t1_ns) - max(s.start_ns, t0_ns)
        if overlap > 0:
            out[f"{s.actor} {s.kind}"] += overlap / width
    return out


# ---- wake-ups ---------------------------------------------------------------------

@dataclass(frozen=True)
class Wake:
    """One wake-up of a guest task, read from a trace.

    ``waker`` woke ``wakee`` through ``via``: a socket callback
    (``sk_write_space``, ``sk_data_ready``, ``sock_wfree``: the reader, asleep
    in ``recv()`` for data) or ``release_sock`` (a task asleep in
    ``__lock_sock`` for the lock). ``t_sent_ns`` is when the waker's
    ``try_to_wake_up`` ran; ``t_run_ns`` when the wakee next acted: it took the
    lock (``useful``) or found it owned again and went back to sleep (futile).
    """

    waker: str
    wakee: str
    via: str
    t_sent_ns: float
    t_run_ns: float
    useful: bool

    @property
    def latency_ns(self) -> float:
        """From the wake-up to the wakee's first step: its vCPU's wake-up, the
        context switch back in and the lock attempt."""
        return self.t_run_ns - self.t_sent_ns


def wakeups(trace: list) -> list[Wake]:
    """Every wake-up of the RX worker or the reader for the socket's sake, in time order.

    Built on the engine's ``wake_<task>`` events (the waker as actor, ``via``
    the callback: sk_data_ready, sk_write_space, sock_wfree, release_sock,
    sk_state_change); a kworker woken by its interrupt is not one. The wakee's
    next ``lock`` makes the wake-up useful, its next ``futile_wakeup`` futile.
    A wake-up whose wakee has not acted when the trace ends is left out.
    """
    out: list[Wake] = []
    pending: dict[str, tuple[str, str, float]] = {}     # wakee -> (waker, via, t_sent)
    for t, actor, event, info in sorted(trace, key=lambda e: e[0]):
        if event.startswith("wake_"):
            wakee = event[len("wake_"):]
            if wakee in LOCK_ACTORS and info.get("via") in SOCKET_WAKEUPS:
                pending[wakee] = (actor, info["via"], t)
        elif event in ("lock", "futile_wakeup") and actor in pending:
            waker, via, sent = pending.pop(actor)
            out.append(Wake(waker, actor, via, sent, t, event == "lock"))
    return out
