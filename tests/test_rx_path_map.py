"""The RX path map (book/rx-path-map.md) is true of the model.

For each stage the map names, on its **Model:** line, the model methods that
stand for it. Here every one of them is wrapped to record its calls, a run is
made, and the test checks that each stage's methods are called, by the thread
that runs that stage ("worker": the kworker running rx_work; "tx worker": the
one running tx_work), and that the first write passes the stages in the map's
order. A method that exists but is never called on its stage's path fails.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from pathlib import Path

import pytest

import vsockmodel as vm
from vsockmodel.sim.engine import Task

MAP = Path(__file__).resolve().parents[1] / "book" / "rx-path-map.md"

# Who runs each stage: the thread whose code makes the call. "worker" is the
# kworker running rx_work, "tx worker" the one running tx_work (both on CPU1);
# the guest interrupt is raised by vhost's eventfd_signal(), so it is vhost's call.
ACTORS = {1: {"sender"}, 2: {"sender"}, 3: {"sender"}, 4: {"vhost"}, 5: {"vhost"},
          6: {"worker"}, 7: {"worker"}, 8: {"reader"}, 9: {"reader", "vhost", "tx worker"}}
# Methods a default baseline run does not call, and the run that does.
ONLY_IN = {
    "virtio_transport_recv_pkt_batch": "p1-p5", "virtio_transport_recv_pkt_batchable": "p1-p5",
    "virtio_transport_rx_batch_finish": "p1-p5", "vhost_add_used_n": "vhost_used_batch",
}


def stages() -> dict[int, list[tuple[str, str, str]]]:
    """stage -> [(module, class, method)] from the map's **Model:** lines."""
    out, stage = {}, None
    for line in MAP.read_text().splitlines():
        m = re.match(r"### (\d+)\. ", line)
        if m:
            stage = int(m[1])
        if line.startswith("**Model:**"):
            refs = []
            for part in line.removeprefix("**Model:**").split(";"):
                module = re.search(r"in `vsockmodel/(sim/\w+)\.py`", part)
                if not module:
                    continue
                refs += [(module[1].replace("/", "."), cls, meth)
                         for cls, meth in re.findall(r"`(\w+)\.(\w+)`", part)]
            out[stage] = refs
    return out


STAGES = stages()


def test_the_map_names_model_code_for_each_of_its_nine_stages():
    assert sorted(STAGES) == list(range(1, 10))
    assert all(STAGES.values())


def _actor(args: tuple) -> Task | None:
    """The thread that makes a call: the Task passed to it (``task``, ``dev``,
    ``sender``), or else the nearest Task whose code is on the call stack."""
    if args and isinstance(args[0], Task):
        return args[0]
    frame = sys._getframe(2)
    while frame is not None:
        caller = frame.f_locals.get("self")
        if isinstance(caller, Task):
            return caller
        frame = frame.f_back
    return None


def _record(monkeypatch, calls: list):
    """Wrap every method the map names, once: each call appends (method, actor,
    the actor's clock)."""
    seen = set()
    for refs in STAGES.values():
        for module, cls_name, meth in refs:
            if (cls_name, meth) in seen:
                continue
            seen.add((cls_name, meth))
            cls = getattr(importlib.import_module(f"vsockmodel.{module}"), cls_name)
            original = getattr(cls, meth)

            def wrapper(self, *args, _original=original, _name=f"{cls_name}.{meth}", **kwargs):
                task = _actor(args) or (self if isinstance(self, Task) else None)
                calls.append((_name, task.name if task else None, task.t if task else None))
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(cls, meth, functools.wraps(original)(wrapper))


@pytest.fixture(scope="module")
def runs():
    mp = pytest.MonkeyPatch()
    calls = {}
    try:
        for label, kwargs in (("baseline", {}), ("p1-p5", {"variant": "p1-p5"}),
                              ("vhost_used_batch", {"vhost_used_batch": True})):
            calls[label] = []
            _record(mp, calls[label])
            vm.run(payload=4096, transfer=4096 * 200, **kwargs)
            mp.undo()
    finally:
        mp.undo()
    return calls


def _stages_of(name: str) -> list[int]:
    return [s for s, refs in STAGES.items() if any(f"{c}.{m}" == name for _, c, m in refs)]


@pytest.mark.parametrize("stage,name", [(s, f"{c}.{m}") for s, refs in STAGES.items() for _, c, m in refs])
def test_each_named_method_is_called_on_its_stage_by_its_actor(runs, stage, name):
    method = name.split(".")[1]
    calls = runs[ONLY_IN.get(method, "baseline")]
    actors = {actor for n, actor, _ in calls if n == name}
    assert actors, f"stage {stage}: {name} was never called"
    assert actors & ACTORS[stage], f"stage {stage}: {name} is called only by {actors}"
    allowed = set().union(*(ACTORS[s] for s in _stages_of(name)))
    assert actors <= allowed, f"{name} is called by {actors - allowed}, outside its stages"


def test_the_worker_takes_the_socket_lock_through_lock_sock_and_release_sock(runs):
    for label in ("baseline", "p1-p5"):
        lockers = {actor for n, actor, _ in runs[label] if n in ("GuestSock.lock_sock", "GuestSock.release_sock")}
        assert lockers == {"worker", "reader"}, label


def test_the_first_write_passes_the_stages_in_the_maps_order(runs):
    # By each thread's own clock. The reader enters recv() before any data
    # exists; stage 8 takes the first write when it first dequeues.
    first = {}
    for name, actor, t in runs["baseline"]:
        for stage in _stages_of(name):
            if stage == 8 and name != "Reader.virtio_transport_stream_do_dequeue":
                continue
            if t is not None and actor in ACTORS[stage]:
                first.setdefault(stage, t)
    times = [first[s] for s in range(1, 9)]
    assert times == sorted(times), first
    assert first[1] < first[2] < first[4] < first[5] < first[6] < first[7] < first[8]
