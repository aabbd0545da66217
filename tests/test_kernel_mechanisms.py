"""The receive path's mechanism, read against the kernel source: one test per
rule, each naming the kernel function whose behaviour it pins.

- vhost_signal(): eventfd_signal() only when vhost_notify() finds the guest's
  callbacks on (drivers/vhost/vhost.c).
- rx_work and tx_work: two work items of the concurrency-managed virtio_vsock
  workqueue, run by two kworkers on CPU1 (net/vmw_vsock/virtio_transport.c,
  kernel/workqueue.c).
- Patch 5's costs where its code runs; no per-byte CPU1 cost in rx_work.
- virtio_transport_send_credit_update(): its own price, and a kick only when
  virtqueue_kick_prepare() says vhost wants one.
- vp_vring_interrupt(): one interrupt of the shared vector runs
  vring_interrupt() for each queue.
- The hypothesis switches (the schema's "advanced" group) change what they say.
"""

from __future__ import annotations

import pytest

import vsockmodel as vm
from vsockmodel.model import kernel
from vsockmodel.model.schema import BY_NAME
from vsockmodel.sim import engine
from vsockmodel.sim.host import HostSkb
from vsockmodel.sim.run import Machine
from vsockmodel.sim.sock import GuestSock
from vsockmodel.sim.virtqueue import Virtqueue

from model_support import drain, machine, only_costs, script, start, tx_buffer, used

# Latencies that keep a run moving when every CPU cost but one is 0.
LATENCIES = dict(vcpu_wake_short_ns=5000.0, vcpu_wake_long_ns=30000.0, host_wake_latency_ns=3000.0,
                 host_to_guest_latency_ns=4000.0, halt_poll_wake_ns=1500.0, deep_idle_ns=50000.0,
                 host_send_ns=1000.0, recv_syscall_ns=500.0)


def run_machine(costs=None, **params) -> Machine:
    """A whole run, keeping the Machine (its queues and threads) for the test to read."""
    p, costs = vm.make_params(costs=costs, **params)
    m = Machine(p, costs)
    m.start()
    m.sim.run()
    return m


def rx_work_busy(variant: str, lengths, costs=None, **params) -> tuple[Machine, float]:
    """Run virtio_transport_rx_work() once over used buffers of these lengths; CPU1's busy time."""
    m = machine(costs=costs, variant=variant, **params)
    used(m.rx_vq, *lengths)
    drain(m.worker.virtio_transport_rx_work())
    assert len(m.rx_vq.used) == 0 and m.sk.rx_bytes == sum(lengths)
    return m, m.cpu1_busy()


# ---- 1. vhost_signal(): an interrupt only when the guest asked for one -----------------------

def _vhost_run(m: Machine, n: int = 3, size: int = 64) -> None:
    m.rx_vq.avail = max(m.rx_vq.avail, n)
    for i in range(n):
        m.vhost.vhost_transport_send_pkt(m.sender, HostSkb(size, i))
    drain(m.vhost.vhost_transport_do_send_pkt())


def test_vhost_signal_signals_only_when_vhost_notify_finds_callbacks_on():
    # vhost_signal(): if (vq->call_ctx.ctx && vhost_notify(dev, vq)) eventfd_signal().
    # While rx_work polls with callbacks off (virtqueue_disable_cb), vhost's
    # runs end without a signal, and eventfd_signal's cost is not paid.
    m = machine(costs=only_costs(vhost_signal_ns=1000.0))
    m.worker.idle_until(100)
    m.rx_vq.virtqueue_disable_cb(m.worker)
    m.vhost.idle_until(200)
    _vhost_run(m)
    assert (m.rx_vq.signalled, m.vsock.interrupts, m.vhost.busy) == (0, 0, 0.0)
    assert not m.vsock.rx_work.pending
    # The guest turns callbacks on (virtqueue_enable_cb): the next run signals, once.
    m.worker.idle_until(300)
    m.rx_vq.virtqueue_enable_cb(m.worker)
    m.vhost.idle_until(400)
    _vhost_run(m)
    assert (m.rx_vq.signalled, m.vsock.interrupts, m.vhost.busy) == (1, 1, 1000.0)
    assert m.vsock.rx_work.pending
    # VIRTIO_RING_F_EVENT_IDX: used_event is not crossed again until the guest
    # re-enables callbacks, so a further run does not signal.
    _vhost_run(m)
    assert (m.rx_vq.signalled, m.vhost.busy) == (1, 1000.0)


@pytest.mark.parametrize("flag", ["notify", "callback"])
def test_a_flag_written_twice_at_the_same_time_reads_as_the_later_write(flag):
    # The flags are shared memory: the last store is what the other side reads.
    m = machine()
    m.worker.idle_until(1000)
    m.vhost.idle_until(1000)
    if flag == "notify":
        m.rx_vq.vhost_enable_notify(m.vhost)            # one run ends ...
        m.rx_vq.vhost_disable_notify(m.vhost)           # ... the next begins, at the same clock
        assert not drain(m.rx_vq.virtqueue_kick_prepare(m.worker))
    else:
        m.rx_vq.virtqueue_enable_cb(m.worker)
        m.rx_vq.virtqueue_disable_cb(m.worker)
        assert not m.rx_vq.cb_wanted(1000)


def test_vhost_vsock_handle_tx_kick_signals_only_when_the_guest_wants_it():
    m = machine(costs=only_costs(vhost_signal_ns=1000.0))
    m.tx_worker.idle_until(100)
    m.tx_vq.virtqueue_disable_cb(m.tx_worker)
    m.reader.idle_until(200)
    for n in range(2):
        drain(m.reader.virtio_transport_send_credit_update())
        m.vhost.idle_until(m.reader.t + 1)
        drain(m.vhost.vhost_vsock_handle_tx_kick())
    assert (m.tx_vq.signalled, m.vhost.busy) == (0, 0.0) and len(m.tx_vq.used) == 2
    m.tx_worker.idle_until(m.vhost.t)
    assert not m.tx_vq.virtqueue_enable_cb(m.tx_worker)        # used buffers already: poll on
    m.reader.idle_until(m.vhost.t)
    drain(m.reader.virtio_transport_send_credit_update())
    m.vhost.idle_until(m.reader.t + 1)
    drain(m.vhost.vhost_vsock_handle_tx_kick())
    assert (m.tx_vq.signalled, m.vhost.busy) == (1, 1000.0)


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 64), ("baseline", 4096),
                                             ("p1-p5", 65536)])
def test_each_interrupt_is_one_vhost_signal_and_vhost_pays_only_for_those(variant, payload):
    # Counted over a run: every signal vhost raised (RX and TX queues) is an
    # interrupt of the guest, or was coalesced into one still pending on the
    # halted CPU1; vhost's only CPU cost here, vhost_signal_ns, is paid once
    # per signal. Most runs end without one.
    m = run_machine(costs=only_costs(vhost_signal_ns=1000.0, **LATENCIES), variant=variant,
                    payload=payload)
    signals = m.rx_vq.signalled + m.tx_vq.signalled
    assert m.vsock.interrupts + m.vsock.coalesced == signals > 0
    assert m.vsock.coalesced < m.vsock.interrupts
    assert m.vhost.busy == pytest.approx(1000.0 * signals)
    runs = m.vhost.send_pkt_work.runs + m.vhost.rx_kick.runs
    assert m.rx_vq.signalled < runs


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 64), ("baseline", 65536)])
def test_no_interrupt_while_the_driver_polls_with_callbacks_off(monkeypatch, variant, payload):
    # Between virtqueue_disable_cb() and virtqueue_enable_cb() (rx_work's and
    # tx_work's loops) vhost_notify() finds no used_event to cross: no
    # eventfd_signal(). And with EVENT_IDX, one interrupt per enable.
    log = []
    disable, enable, notify = (Virtqueue.virtqueue_disable_cb, Virtqueue.virtqueue_enable_cb,
                               Virtqueue.vhost_notify)

    def spy_disable(self, task):
        log.append((task.t, 0, self.name, "off"))
        return disable(self, task)

    def spy_enable(self, task):
        log.append((task.t, 0, self.name, "on"))
        return enable(self, task)

    def spy_notify(self, dev):
        # the decision to signal, at vhost's clock when it reads used_event (the
        # eventfd_signal itself follows, after its own cost)
        wanted = yield from notify(self, dev)
        if wanted:
            log.append((dev.t, 1, self.name, "signal"))
        return wanted

    monkeypatch.setattr(Virtqueue, "virtqueue_disable_cb", spy_disable)
    monkeypatch.setattr(Virtqueue, "virtqueue_enable_cb", spy_enable)
    monkeypatch.setattr(Virtqueue, "vhost_notify", spy_notify)
    vm.run(variant=variant, payload=payload)
    for name in ("rx", "tx"):
        events = [what for _, _, vq, what in sorted(log) if vq == name]
        assert events.count("signal") > 0
        on, armed = True, True                  # callbacks on; used_event not yet crossed
        for what in events:
            if what == "off":
                on = False
            elif what == "on":
                on = armed = True
            else:
                assert on and armed, f"{name}: a signal while the guest had callbacks off"
                armed = False


# ---- 2. rx_work and tx_work: two work items, two kworkers, one CPU ----------------------------

def test_tx_work_runs_while_rx_work_sleeps_in_lock_sock(monkeypatch):
    # The reader owns the socket for 50 us. A packet arrives: rx_work runs and
    # sleeps in __lock_sock(). A TX completion then arrives: the
    # concurrency-managed virtio_vsock workqueue runs tx_work on another
    # kworker of CPU1 meanwhile (wq_worker_sleeping), and its sock_wfree()
    # calls sk_write_space() before rx_work gets the lock.
    m = machine(variant="baseline", payload=64)
    calls = []
    write_space = GuestSock.sk_write_space

    def spy_write_space(self, task, via="sk_write_space"):
        calls.append((via, task.name, task.t, self.owner.name if self.owner else None))
        return write_space(self, task, via)

    monkeypatch.setattr(GuestSock, "sk_write_space", spy_write_space)
    times = {}

    def reader(task):
        yield from m.sk.lock_sock(task)
        task.work(50_000)
        times["reader unlocks"] = task.t
        yield from m.sk.release_sock(task)

    def vhost(task):
        task.work(1000)
        yield task.flush()
        used(m.rx_vq, 200, at=task.t)
        m.rx_vq.eventfd_signal(task)                    # RX interrupt at 1 us
        task.work(14_000)
        yield task.flush()
        used(m.tx_vq, tx_buffer(), at=task.t)
        m.tx_vq.eventfd_signal(task)                    # TX interrupt at 15 us
        task.work(200_000)
        yield task.flush()
        m.sim.finish()

    script(m.reader, reader)
    script(m.vhost, vhost)
    start(m, m.reader, m.vhost, m.worker, m.tx_worker)
    m.sim.run()
    [(via, actor, t_wfree, owner)] = [c for c in calls if c[0] == "sock_wfree"]
    assert actor == "tx worker" and owner == "reader" and 15_000 < t_wfree < times["reader unlocks"]
    assert len(m.sim.stats.lock_wait["worker"]) == 1      # rx_work slept in __lock_sock() once
    # rx_work goes on under the lock (its per-packet sk_write_space) only after the reader let go
    [(_, _, t_rx, rx_owner)] = [c for c in calls if c[1] == "worker"]
    assert rx_owner == "worker" and t_rx > times["reader unlocks"]
    assert m.sim.stats.bytes_enqueued == 200


def test_a_tx_completion_wakes_a_reader_waiting_for_data():
    # tx_work's sock_wfree() -> sk_write_space() wakes what sleeps on
    # sk_sleep(sk): a reader blocked in recv() wakes though no data came.
    m = machine(variant="baseline")
    m.sk.sk_wq.prepare_to_wait(m.reader)
    m.reader.wake_event = m.sim.env.event()                 # asleep in schedule()
    used(m.tx_vq, tx_buffer())
    drain(m.tx_worker.virtio_transport_tx_work())
    assert m.reader.woken_via == "sock_wfree" and m.sim.stats.wakeups["reader"] == 1
    # A virtio_vsock_pkt (before the sk_buff conversion) was plain memory: no callback.
    m = machine(variant="pre-skb")
    m.sk.sk_wq.prepare_to_wait(m.reader)
    m.reader.wake_event = m.sim.env.event()
    used(m.tx_vq, tx_buffer())
    drain(m.tx_worker.virtio_transport_tx_work())
    assert m.sim.stats.wakeups["reader"] == 0


def _running_spans(monkeypatch) -> dict:
    """Record when each thread sleeps in schedule() and runs again; returns
    name -> list of ("sleep", t) / ("run", t)."""
    events: dict = {}
    schedule = engine.Task.schedule

    def spy_schedule(self):
        sleeps = self.sleeps
        mine = events.setdefault(self.name, [])
        mine.append(("sleep", self.sim.now + self.acc))   # until it returns, if it sleeps
        yield from schedule(self)
        if self.sleeps > sleeps:                          # it slept (from its own clock)
            mine[-1] = ("sleep", self.sleep_at)
            mine.append(("run", self.sim.now))
        else:
            mine.pop()

    monkeypatch.setattr(engine.Task, "schedule", spy_schedule)
    return events


def _spans(events: list, end: float) -> list[tuple[float, float]]:
    out, since = [], 0.0
    for what, t in events:
        if what == "sleep":
            out.append((since, t))
            since = None
        else:
            since = t
    if since is not None:
        out.append((since, end))
    return out


@pytest.mark.parametrize("variant,payload,seed", [
    ("baseline", 64, 1), ("baseline", 4096, 1), ("p1-p5", 64, 1), ("p1-p5", 65536, 1),
    ("p1-p5", 256, 2)])
def test_the_two_kworkers_share_cpu1_and_never_run_at_once(monkeypatch, variant, payload, seed):
    events = _running_spans(monkeypatch)
    r = vm.run(variant=variant, payload=payload, seed=seed)
    end = r.sim_time_us * 1000
    rx, tx = _spans(events["worker"], end), _spans(events["tx worker"], end)
    assert len(tx) > 10                                 # tx_work ran, many times
    i = j = 0
    while i < len(rx) and j < len(tx):                  # both lists are in time order
        (a0, a1), (b0, b1) = rx[i], tx[j]
        assert min(a1, b1) - max(a0, b0) <= 1e-6, f"rx {rx[i]} and tx {tx[j]} overlap"
        if a1 < b1:
            i += 1
        else:
            j += 1


# ---- 3. patch 5's costs where its code runs --------------------------------------------------

@pytest.mark.parametrize("variant,batch_pkts,flags,data_ready,callback_lock", [
    # 10 packets in one lock batch (or, with batch_pkts 4, in three)
    ("baseline", None, 0, 10, 0),
    ("p1-p3", None, 0, 10, 1),          # patch 2: sk_callback_lock once, when the batch starts
    ("p1-p5", None, 10, 1, 2),          # patch 5: a flag per packet, one callback, and the lock again
    ("p1-p3", 4, 0, 10, 3),
    ("p1-p5", 4, 10, 3, 6),
])
def test_patch_5_pays_a_flag_per_packet_and_one_sock_def_readable_per_batch(
        variant, batch_pkts, flags, data_ready, callback_lock):
    # vsock_data_ready() with patch 5 only sets a flag (data_ready_flag_ns);
    # virtio_transport_rx_batch_finish() calls sock_def_readable() once
    # (data_ready_ns), and takes sk_callback_lock for vsock_rx_cb_is_native();
    # patch 2 takes it at each batch's start for the eligibility check.
    params = {"batch_pkts": batch_pkts} if batch_pkts else {}
    for cost, count in (("data_ready_flag_ns", flags), ("data_ready_ns", data_ready),
                        ("callback_lock_ns", callback_lock)):
        _, busy = rx_work_busy(variant, [200] * 10, costs=only_costs(**{cost: 1000.0}), **params)
        assert busy == 1000.0 * count, cost


@pytest.mark.parametrize("variant", ["baseline", "p1-p3", "p1-p5"])
def test_the_deferred_sk_data_ready_comes_after_release_sock(monkeypatch, variant):
    owners = []
    data_ready = GuestSock.sk_data_ready

    def spy_data_ready(self, task):
        owners.append(self.owner.name if self.owner else None)
        return data_ready(self, task)

    monkeypatch.setattr(GuestSock, "sk_data_ready", spy_data_ready)
    rx_work_busy(variant, [200] * 10)
    if variant == "p1-p5":
        assert owners == [None]                         # once, with the socket released
    else:
        assert owners == ["worker"] * 10                # per packet, under lock_sock


# ---- 4. no per-byte CPU1 cost in rx_work ------------------------------------------------------

@pytest.mark.parametrize("variant", ["pre-skb", "baseline", "p1-p3", "p1-p5"])
def test_rx_work_costs_the_same_whatever_the_payload_bytes(variant):
    # vhost copied the payload into the buffer; the reader copies it out on
    # CPU0. Nothing in rx_work touches it: the same packets with more bytes
    # cost CPU1 the same (sizes above GOOD_COPY_LEN, so no tail-copy).
    _, small = rx_work_busy(variant, [200] * 10)
    _, large = rx_work_busy(variant, [3500] * 10)
    assert small == large > 0


# ---- 5. the credit update: its own price, and a kick only when vhost wants one ----------------

def test_a_credit_update_costs_credit_update_ns_and_the_kicks_exit():
    # virtio_transport_send_credit_update(): a header-only skb onto the TX
    # queue (credit_update_ns, not the price of a page-sized RX buffer), then
    # virtqueue_kick(): a VM exit (vq_kick_ns) that delays the reader but is
    # host-mode time, not in its busy time.
    m = machine(costs=only_costs(credit_update_ns=350.0, vq_kick_ns=1500.0, rx_fill_buf_ns=10**6))
    rd, sk = m.reader, m.sk
    sk.fwd_cnt = 4096
    drain(rd.virtio_transport_send_credit_update())
    assert (rd.busy, rd.acc) == (350.0, 350.0 + 1500.0)
    assert m.tx_vq.kicks == 1 and sk.last_fwd_cnt == 4096
    [(_, pkt)] = m.tx_vq.avail_pkts
    assert (pkt.op, pkt.fwd_cnt, pkt.buf_alloc) == (kernel.VIRTIO_VSOCK_OP_CREDIT_UPDATE, 4096, sk.buf_alloc)


def test_virtqueue_kick_prepare_skips_the_kick_while_vhost_handles_the_tx_queue():
    # vhost_vsock_handle_tx_kick() runs with vhost_disable_notify(): the guest
    # sees VRING_USED_F_NO_NOTIFY and does not kick (no VM exit) until vhost
    # has drained the queue and enabled notification again.
    m = machine(costs=only_costs(credit_update_ns=350.0, vq_kick_ns=1500.0))
    rd = m.reader
    m.vhost.idle_until(100)
    m.tx_vq.vhost_disable_notify(m.vhost)               # vhost_vsock_handle_tx_kick() is running
    rd.idle_until(200)
    drain(rd.virtio_transport_send_credit_update())
    assert (m.tx_vq.kicks, rd.t) == (0, 200.0 + 350.0)
    m.vhost.idle_until(rd.t + 100)
    drain(m.vhost.vhost_vsock_handle_tx_kick())             # drains it, notification back on
    assert len(m.tx_vq.avail_pkts) == 0
    rd.idle_until(m.vhost.t + 100)
    drain(rd.virtio_transport_send_credit_update())
    assert m.tx_vq.kicks == 1


def test_in_a_run_some_credit_updates_go_without_a_kick():
    c = vm.run(variant="baseline", payload=64).counters
    assert 0 < c["tx_kicks"] < c["credit_updates"] == c["guest_tx_pkts"]


# ---- 6. one shared interrupt vector ------------------------------------------------------------

def test_one_interrupt_runs_vring_interrupt_for_each_queue_with_used_buffers():
    # vp_vring_interrupt() -> vring_interrupt() on every queue of the shared
    # vector: a queue with used buffers gets its callback (virtio_vsock_rx_done,
    # virtio_vsock_tx_done -> queue_work); one handler, one irq_ns.
    m = machine(costs=only_costs(irq_ns=1000.0))
    used(m.rx_vq, 64)
    used(m.tx_vq, tx_buffer())
    m.cpu1.owner = m.tx_worker                  # a kworker is running: it pays the handler now
    m.rx_vq.eventfd_signal(m.vhost)             # vhost signalled the RX queue
    assert m.vsock.interrupts == 1 and (m.rx_vq.irqs, m.tx_vq.irqs) == (1, 1)
    assert m.vsock.rx_work.pending and m.vsock.tx_work.pending
    assert m.tx_worker.busy == 1000.0 and m.cpu1.irq_pending == 0.0
    # A queue without used buffers: more_used() is false, no callback.
    m = machine(costs=only_costs(irq_ns=1000.0))
    used(m.rx_vq, 64)
    m.rx_vq.eventfd_signal(m.vhost)             # CPU1 halted: the next task to run pays
    assert m.vsock.rx_work.pending and not m.vsock.tx_work.pending and m.tx_vq.irqs == 0
    assert m.cpu1.irq_pending == 1000.0


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 4096)])
def test_cpu1_pays_irq_ns_once_per_interrupt(variant, payload):
    # Over a run, with irq_ns CPU1's only cost: busy time is one irq_ns per
    # interrupt of the vector, RX or TX, less one still pending at the end.
    m = run_machine(costs=only_costs(irq_ns=1000.0, **LATENCIES), variant=variant, payload=payload)
    assert m.vsock.interrupts > 100 and m.tx_vq.irqs > 0
    assert m.cpu1_busy() + m.cpu1.irq_pending == pytest.approx(1000.0 * m.vsock.interrupts)
    assert m.cpu1.irq_pending <= 1000.0          # a second one is coalesced into it


# ---- the hypothesis switches ("advanced" in the schema) ---------------------------------------

def test_the_advanced_group_holds_the_four_hypothesis_switches():
    advanced = {p.name for p in BY_NAME.values() if p.group == "advanced"}
    assert advanced == {"halt_poll_ns", "ipi_virtualization", "deep_cstates", "copy_model"}


def _latency(m: Machine, idle_ns: float) -> float:
    """The wake-up latency of the reader after its vCPU halted for idle_ns."""
    cpu = m.reader.cpu
    cpu.idle_since = 0.0
    return m.sim.wake_latency(m.reader, idle_ns)


def test_halt_polling_a_hit_wakes_at_halt_poll_wake_ns():
    # kvm_vcpu_halt(): the window starts at 0, so the first short halt misses
    # and grows it; the next halt within it is a hit.
    m = machine(costs=only_costs(**LATENCIES), halt_poll_ns=kernel.KVM_HALT_POLL_NS_DEFAULT)
    assert _latency(m, 5000) == 5000.0                           # vcpu_wake_short_ns
    assert _latency(m, 5000) == 1500.0                           # halt_poll_wake_ns
    assert _latency(m, 100_000) == 30000.0                      # missed, and deep by then
    off = machine(costs=only_costs(**LATENCIES))
    assert {_latency(off, 5000) for _ in range(3)} == {5000.0}   # halt_poll_ns 0: never


def test_halt_polling_wakes_the_reader_sooner_and_more_often():
    # With KVM's default window the reader's vCPU is still polling when data
    # comes, so it wakes at the poll-hit latency and takes a 64 KiB write in more pieces.
    off = vm.run(variant="baseline", payload=65536, transfer=48 * 65536)
    on = vm.run(variant="baseline", payload=65536, transfer=48 * 65536,
                halt_poll_ns=kernel.KVM_HALT_POLL_NS_DEFAULT)
    assert on.recv_per_write > 1.5 * off.recv_per_write


def test_deep_cstates_only_after_deep_idle_ns():
    on = machine(costs=only_costs(**LATENCIES))
    assert (_latency(on, 49_999), _latency(on, 50_001)) == (5000.0, 30000.0)
    off = machine(costs=only_costs(**LATENCIES), deep_cstates=False)
    assert (_latency(off, 49_999), _latency(off, 10**7)) == (5000.0, 5000.0)


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 4096)])
def test_ipi_exits_delay_the_waker_and_are_not_in_cpu1_busy_time(variant, payload):
    # Without IPI virtualisation each wake-up of a halted vCPU costs the waking
    # kworker an exit (ipi_exit_ns): host-mode time, which guest perf does not count.
    costs = only_costs(wakeup_ns=700.0, ipi_exit_ns=5000.0, **LATENCIES)
    for ipi in (True, False):
        m = run_machine(costs=costs, variant=variant, payload=payload, ipi_virtualization=ipi)
        wakes = m.worker.wakes_sent + m.tx_worker.wakes_sent
        assert wakes > 0 and m.cpu1_busy() == pytest.approx(700.0 * wakes)


def test_copy_model_two_rate_costs_what_copy_cost_says():
    costs = only_costs(vhost_copy_byte_ns=1.0, host_copy_byte_ns=0.5, copy_hot_byte_ns=0.1)
    hot = costs.copy_hot_bytes
    for model, vhost_ns, sender_ns in (("linear", 3000 * 1.0, 3000 * 0.5),
                                       ("two-rate", hot * 0.1 + (3000 - hot) * 1.0,
                                        hot * 0.1 + (3000 - hot) * 0.5)):
        m = machine(costs=costs, copy_model=model)
        m.sender.virtio_transport_send_pkt_info(0, 3000)       # the sender's copy from user memory
        assert m.sender.busy == pytest.approx(sender_ns)
        m.rx_vq.avail = 1
        m.vhost.idle_until(m.sender.t)
        drain(m.vhost.vhost_transport_do_send_pkt())          # vhost's copy into the guest buffer
        assert m.vhost.busy == pytest.approx(vhost_ns), model
        assert m.vhost.copy_cost(3000, 1.0) == pytest.approx(vhost_ns)


@pytest.mark.parametrize("batch_pkts", [2, 8])
def test_a_sender_asleep_for_credit_is_woken_when_vhost_learns_it(batch_pkts):
    # sock_def_write_space() in virtio_transport_recv_pkt on the host: the sender
    # checked its credit and joined sk_sleep under lock_sock, so vhost, which
    # takes that lock for every guest packet, finds it there. A 16 KiB buffer
    # with 64 KiB writes blocks the sender on credit after every few packets.
    r = vm.run(variant="p1-p3", payload=65536, batch_pkts=batch_pkts, batch_bytes=4096,
                       buffer=16384)
    assert r.bytes_received == r.params["transfer"]
    assert r.counters["sender_blocked"] > 0
