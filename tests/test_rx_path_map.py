"""The RX path map (book/rx-path-map.md) is true of the model.

For each stage the map names, on its **Model:** line, the model methods that
stand for it. Here every one of them is wrapped to record its calls, a run is
traced, and the test checks that each stage's methods are called, by the actor
that runs that stage, and that the first write passes the stages in the map's
order. A method that exists but is never called on its stage's path fails.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

import vsockmodel as vm
from vsockmodel.sim.engine import Task

MAP = Path(__file__).resolve().parents[1] / "book" / "rx-path-map.md"

# Who runs each stage (the Task whose method it is, or GuestSock's ``task``).
ACTORS = {1: {"sender"}, 2: {"sender"}, 3: {"sender"}, 4: {"vhost"}, 5: {"vhost", "worker"},
          6: {"worker"}, 7: {"worker"}, 8: {"reader"}, 9: {"reader", "vhost", "worker", "sender"}}
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


def _record(monkeypatch, calls: list):
    """Wrap every method the map names, once: each call appends (method, actor,
    time). The actor is the task that runs the call: GuestSock's ``task``
    argument, or else the Task whose code called it (the sender calls vhost's
    vhost_transport_send_pkt, say)."""
    seen = set()
    for refs in STAGES.values():
        for module, cls_name, meth in refs:
            if (cls_name, meth) in seen:
                continue
            seen.add((cls_name, meth))
            cls = getattr(importlib.import_module(f"vsockmodel.{module}"), cls_name)
            original = getattr(cls, meth)
            params = list(inspect.signature(original).parameters)

            def wrapper(self, *args, _original=original, _name=f"{cls_name}.{meth}", _params=params,
                        **kwargs):
                if len(_params) > 1 and _params[1] == "task":
                    task = args[0] if args else kwargs["task"]
                else:
                    caller = sys._getframe(1).f_locals.get("self")
                    task = caller if isinstance(caller, Task) else self
                sim = getattr(task, "sim", None)
                calls.append((_name, getattr(task, "name", None), sim.now if sim is not None else None))
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
    if name.split(".")[0] in ("HostSocket", "RxVirtqueue"):
        return                                  # plain data structures: no actor of their own
    assert actors & ACTORS[stage], f"stage {stage}: {name} is called only by {actors}"
    allowed = set().union(*(ACTORS[s] for s in _stages_of(name)))
    assert actors <= allowed, f"{name} is called by {actors - allowed}, outside its stages"


def test_the_worker_takes_the_socket_lock_through_lock_sock_and_release_sock(runs):
    for label in ("baseline", "p1-p5"):
        lockers = {actor for n, actor, _ in runs[label] if n in ("GuestSock.lock_sock", "GuestSock.release_sock")}
        assert lockers == {"worker", "reader"}, label


def test_the_first_write_passes_the_stages_in_the_maps_order(runs):
    first = {}
    for name, actor, t in runs["baseline"]:
        for stage in _stages_of(name):
            if t is not None and actor in ACTORS[stage]:
                first.setdefault(stage, t)
    times = [first[s] for s in range(1, 9)]
    assert times == sorted(times), first
