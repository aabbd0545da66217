"""Kernel functions of the model outside a run: the whole machine wired as a
run wires it (``vsockmodel.sim.run.Machine``), but not started, so a test can
set the state it wants and call one kernel function at a time.

With nothing started, no event is ever due, so no thread can act before the
caller: a kernel function runs to its end without waiting (``drain`` checks
that). Tests that need threads to meet start only the ones they name
(``start``) and give the others a script of their own.
"""

from __future__ import annotations

from dataclasses import fields

import vsockmodel as vm
from vsockmodel.model import kernel
from vsockmodel.model.costs import Costs
from vsockmodel.sim.engine import Task
from vsockmodel.sim.run import Machine
from vsockmodel.sim.sock import GuestSock, Skb
from vsockmodel.sim.virtqueue import GuestPacket, Packet, Virtqueue

# Costs that are not CPU or elapsed time: keep them whatever a test zeroes.
_NOT_TIME = {"clock_ghz", "copy_hot_bytes"}
# A run needs some time on every packet's path (make_params refuses costs that
# take none): the sender's send() syscall keeps its cost. It is charged only in
# Sender.vsock_connectible_sendmsg, which the direct tests do not call.
_KEPT = {"host_send_ns"}


def only_costs(**nonzero: float) -> Costs:
    """The default costs with every time set to 0 except ``nonzero`` (and the
    sender's syscall, host_send_ns), and no noise: what a guest thread's or
    vhost's busy time adds up to is then exactly what those costs were charged for."""
    base = vm.default_costs()
    zero = {f.name: 0.0 for f in fields(Costs) if f.name not in _NOT_TIME | _KEPT}
    return base.with_dict({**zero, **nonzero})


def quiet_costs(**changes: float) -> Costs:
    """The default costs without noise (CPU costs and wake-up latencies exact)."""
    return vm.default_costs().with_(jitter_cv=0.0, wake_latency_cv=0.0, **changes)


def machine(costs: Costs | dict | None = None, **params) -> Machine:
    """Host and guest wired as in a run, not started (``costs``: a Costs or
    overrides of the defaults; noise off unless the overrides set it)."""
    if costs is None or isinstance(costs, dict):
        costs = quiet_costs(**(costs or {}))
    p, costs = vm.make_params(costs=costs, **params)
    return Machine(p, costs)


def drain(steps) -> object:
    """Run a kernel function's steps to their end outside a simulation, and
    return its value. Nothing else is scheduled, so it must never wait."""
    if steps is None or isinstance(steps, tuple):
        assert not steps, "a blocking call waited with nothing else scheduled"
        return None
    try:
        while True:
            event = next(steps)
            raise AssertionError(f"a kernel function waited ({event!r}) with nothing else scheduled")
    except StopIteration as stop:
        return stop.value


def queue(sk: GuestSock, *lengths: int, offsets: dict | None = None) -> list[Skb]:
    """Put skbs of these lengths on rx_queue, with their bytes accounted as
    virtio_transport_inc_rx_pkt() would (no tailroom); ``offsets`` marks skbs partly read."""
    skbs = [Skb(n, 0) for n in lengths]
    for i, off in (offsets or {}).items():
        skbs[i].off = off
    sk.rx_queue.extend(skbs)
    sk.rx_bytes += sum(s.len - s.off for s in skbs)
    sk.buf_used += sum(s.len for s in skbs)
    sk.stats.bytes_enqueued += sum(s.len for s in skbs)
    return skbs


def used(vq: Virtqueue, *bufs, at: float = 0.0) -> None:
    """Buffers vhost has returned used at time ``at`` (RX: a length or a Packet;
    TX: a GuestPacket)."""
    for i, buf in enumerate(bufs):
        vq.used.append((at, Packet(buf, i) if isinstance(buf, int) else buf))


def credit_updates(vq: Virtqueue) -> list[int]:
    """fwd_cnt of each OP_CREDIT_UPDATE the guest posted on its TX queue."""
    return [pkt.fwd_cnt for _, pkt in vq.avail_pkts
            if pkt.op == kernel.VIRTIO_VSOCK_OP_CREDIT_UPDATE]


def tx_buffer() -> GuestPacket:
    """A used guest TX buffer: a credit update vhost has consumed."""
    return GuestPacket(kernel.VIRTIO_VSOCK_OP_CREDIT_UPDATE, 0, 0)


def script(task: Task, body) -> None:
    """Give a task of the machine another main() (``body(task)``: a generator)."""
    task.main = lambda: body(task)


def start(m: Machine, *tasks: Task) -> None:
    """Start only these threads of the machine; the others never run."""
    for task in tasks:
        task.start()


def vhost_alone(used_batch: bool = False, **params) -> Machine:
    """A machine whose guest has posted plenty of RX buffers: vhost's run is
    limited by its own rules, not by the ring."""
    m = machine(vhost_used_batch=used_batch, **params)
    m.rx_vq.avail = 1000
    return m
