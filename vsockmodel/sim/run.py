"""Wire the actors together and run one simulation.

    host:  Sender (vsock_perf) --send_pkt_queue--> Vhost (vhost_transport_do_send_pkt)
                                                      | RX virtqueue: used ring + vhost_signal
    guest: Reader (recv on CPU0) <--rx_queue, lock-- Kworker (rx_work, tx_work on CPU1)
           Reader --TX virtqueue: OP_CREDIT_UPDATE--> Vhost --host socket--> Sender
"""

from __future__ import annotations

from ..model import kernel
from ..model.costs import Costs
from ..model.params import Params, check_path_costs, make_params
from .engine import Cpu, Sim
from .errors import Deadlock
from .guest import Kworker, VirtioVsock
from .host import HostSocket, Sender, Vhost
from .reader import Reader
from .results import Result, summary_us
from .sock import GuestSock
from .virtqueue import Virtqueue


def run(**kwargs) -> Result:
    """Run the model. Keyword arguments are the fields of ``vsockmodel.params.Params``
    (``variant``, ``payload``, ``recv_size``, ``buffer``, ``workload``, ``seed``, ...)
    plus ``costs`` (a ``Costs`` or a dict of overrides). Sizes accept '4K'-style strings.

    Raises ValueError with the parameter name and allowed range on bad input.
    """
    params, costs = make_params(**kwargs)
    return simulate(params, costs)


def simulate(p: Params, costs: Costs) -> Result:
    """Run the model for validated Params and Costs (``run`` makes both from keyword arguments)."""
    if not isinstance(p, Params):
        raise ValueError(f"params: expected a vsockmodel.Params, got {type(p).__name__}")
    if not isinstance(costs, Costs):
        raise ValueError(f"costs: expected a vsockmodel.Costs, got {type(costs).__name__}")
    check_path_costs(costs)
    m = Machine(p, costs)
    m.start()
    try:
        m.sim.run()
    except RuntimeError as exc:
        if "No scheduled events left" not in str(exc):
            raise
        st = m.sim.stats
        raise Deadlock(
            f"nothing left to happen after {st.bytes_received} of {m.host_sock.tx_cnt} "
            f"bytes sent were received (variant {p.variant}, payload {p.payload}, "
            f"buffer {p.buffer}); queue {len(m.sk.rx_queue)} skbs, host credit "
            f"{max(0, m.host_sock.virtio_transport_has_space())}") from None
    return _result(m)


class Machine:
    """The host and the guest of one run, wired together.

    Each thread has a CPU of its own, as on the series' test bed: the
    receiver on guest CPU0, the virtio-vsock interrupt and RX worker on guest
    CPU1, vsock_perf and vhost on host CPUs.
    """

    def __init__(self, p: Params, costs: Costs) -> None:
        sim = self.sim = Sim(p, costs)
        self.rx_vq = Virtqueue("rx", p.rx_ring_size)
        self.tx_vq = Virtqueue("tx", p.rx_ring_size)
        self.sk = GuestSock(sim)
        self.host_sock = HostSocket(sim, p.buffer)
        cpu0 = Cpu("guest CPU0", guest=True, halt_poll_ns=p.halt_poll_ns)
        self.cpu1 = Cpu("guest CPU1", guest=True, halt_poll_ns=p.halt_poll_ns)
        self.vsock = VirtioVsock(sim, self.rx_vq, self.tx_vq, self.sk, self.cpu1)
        self.vhost = Vhost(sim, self.rx_vq, self.tx_vq, self.host_sock, Cpu("host vhost", guest=False))
        self.sender = Sender(sim, self.host_sock, self.vhost, Cpu("host sender", guest=False))
        self.worker, self.tx_worker = self.vsock.rx_kworker, self.vsock.tx_kworker
        self.reader = Reader(sim, self.sk, self.tx_vq, cpu0, cpu1_busy=self.cpu1_busy)
        self.wire_lookahead()
        self.tasks = (self.sender, self.vhost, self.worker, self.tx_worker, self.reader)

    def cpu1_busy(self) -> float:
        """Guest CPU1's busy time (what perf counts there): both kworkers, interrupts included."""
        return self.worker.busy + self.tx_worker.busy

    def wire_lookahead(self) -> None:
        """Who shares what, and who can wake whom: a thread meets only these
        when it takes a lock, wakes a wait queue or finds a ring empty, and a
        sleeping thread can act only after one of its wakers does."""
        h2g = self.sim.c.host_to_guest_latency_ns
        sk, host_sock = self.sk, self.host_sock
        kworkers = (self.worker, self.tx_worker)
        guest, host = (self.worker, self.reader), (self.sender, self.vhost)
        sk.slock.peers = sk.lock_wq.peers = sk.lock_wq.wakers = guest
        sk.sk_wq.peers, sk.sk_wq.wakers = (self.reader,), kworkers
        host_sock.slock.peers = host_sock.lock_wq.peers = host_sock.lock_wq.wakers = host
        host_sock.sk_wq.peers, host_sock.sk_wq.wakers = (self.sender,), (self.vhost,)
        self.cpu1.wakers = kworkers
        for kworker in kworkers:
            kworker.wakers = (self.vhost,)                  # their interrupts
        self.vhost.wakers = (self.sender, self.reader, self.worker)
        self.vhost.producers = ((self.reader, h2g), (self.worker, h2g))
        for vq in (self.rx_vq, self.tx_vq):
            vq.device = (self.vhost,)
        self.rx_vq.driver = (self.worker,)
        self.tx_vq.driver = (self.reader, self.tx_worker)
        self.vhost.send_pkt_queue.producers = (self.sender,)

    def start(self) -> None:
        for task in self.tasks:
            task.start()


def _dropped(m: Machine) -> int:
    """Bytes sent but never delivered, counted where they were when the run ended."""
    st = m.sim.stats
    if not st.resets:
        return 0
    unread = sum(skb.len - skb.off for skb in m.sk.rx_queue)
    in_ring = sum(pkt.len for _, pkt in m.rx_vq.used) + sum(pkt.len for pkt in m.vhost.pending_used)
    at_host = m.host_sock.tx_cnt - st.bytes_enqueued - m.sk.sk_drops - in_ring
    read = st.bytes_enqueued - m.sk.rx_bytes
    in_recv = read - st.bytes_received              # copied by a recv() that never returned
    return m.sk.sk_drops + unread + in_ring + at_host + in_recv


def _counters(m: Machine) -> dict:
    """Counts the run's shared objects kept, under the names the book uses."""
    st, rx, tx, vhost = m.sim.stats, m.rx_vq, m.tx_vq, m.vhost
    return {
        "interrupts": m.vsock.interrupts, "irqs": rx.irqs, "tx_irqs": tx.irqs,
        "vhost_runs": vhost.send_pkt_work.runs + vhost.rx_kick.runs,
        "vhost_runs_ring_full": rx.ring_empty,
        "vhost_runs_weight": vhost.rx_kick.requeued,
        "vhost_signals": rx.signalled, "vhost_no_rx_buf_ns": st.vhost_no_rx_buf_ns,
        "used_publishes": rx.used_idx_writes,
        "refills": rx.add_calls, "refill_bufs": rx.posted, "kicks": rx.kicks,
        "credit_updates": tx.posted_ops[kernel.VIRTIO_VSOCK_OP_CREDIT_UPDATE], "guest_tx_pkts": tx.posted, "tx_kicks": tx.kicks,
        "sender_blocked": st.sender_blocked, "credit_unwriteable": st.credit_unwriteable,
        "host_lock_waits": st.host_lock_waits, "skbs_queued": st.skbs_queued,
        "tail_copies": st.tail_copies, "collapses": st.collapses, "collapsed_skbs": st.collapsed_skbs,
        "max_qlen": st.max_qlen, "max_buf_used": st.max_buf_used, "min_host_credit": st.min_host_credit,
        "bytes_enqueued": st.bytes_enqueued, "bytes_read": st.bytes_enqueued - m.sk.rx_bytes,
    }


def _result(m: Machine) -> Result:
    sim, p, costs = m.sim, m.sim.p, m.sim.c
    st = sim.stats
    cpu1_busy = m.cpu1_busy()
    st.bytes_sent = m.host_sock.tx_cnt
    st.bytes_dropped = _dropped(m)
    end = st.end_t or sim.env.now
    if st.window_t0 is not None and end > st.window_t0 and st.bytes_received > st.window_bytes0:
        dbytes = st.bytes_received - st.window_bytes0
        throughput = dbytes * 8 / (end - st.window_t0)          # bits per ns = Gbit/s
        cycles_per_byte = (cpu1_busy - st.window_busy0) * costs.clock_ghz / dbytes
    else:
        throughput = st.bytes_received * 8 / end if end else 0.0
        # Per byte received: undefined when nothing was (the stream was reset at once).
        cycles_per_byte = cpu1_busy * costs.clock_ghz / st.bytes_received if st.bytes_received else None
    # Over the whole run, as the series' tables count recv() calls. (Not over the
    # measurement window: the sender runs up to a buffer ahead of the reader, so
    # the writes *sent* in the window are not the writes read in it.)
    recv_per_write = st.recv_calls / st.writes if st.writes else 0.0
    rtt = summary_us(st.rtt) if st.rtt else None
    # Share of the run each thread spent on its CPU (busy time / elapsed time).
    utilization = {t.name: t.busy / end if end else 0.0 for t in m.tasks}
    rx, tx = m.rx_vq, m.tx_vq
    # What CPU1 did, for the cycles-per-byte calibration (which cost was paid how often).
    kworkers = (m.worker, m.tx_worker)
    worker_ops = {"packets": rx.taken, "payload_bytes": rx.taken_bytes,
                  "lock_holds": len(st.lock_hold["worker"]), "interrupts": m.vsock.interrupts,
                  "work_runs": m.vsock.rx_work.runs + m.vsock.tx_work.runs,
                  "refill_bufs": rx.posted, "tx_done": tx.taken, "kicks": rx.kicks,
                  "tail_frees": st.tail_copies + st.collapsed_skbs + st.collapse_allocs,
                  "tail_copy_bytes": st.tail_copy_bytes, "data_ready_calls": st.data_ready_calls,
                  "wakes_sent": sum(k.wakes_sent for k in kworkers),
                  "sleeps": sum(k.sleeps for k in kworkers), "busy_ns": cpu1_busy}
    wakeups = {t.name: st.wakeups[t.name] for t in m.tasks}
    futile = {t.name: st.futile_wakeups[t.name] for t in m.tasks}
    guest = [t.name for t in m.tasks if t.cpu.guest]    # the wake-ups a VM pays for
    return Result(
        params=p.to_dict(),
        throughput_gbps=throughput,
        rx_cycles_per_byte=cycles_per_byte,
        recv_calls=st.recv_calls,
        writes=st.writes,
        packets=rx.taken_ops[kernel.VIRTIO_VSOCK_OP_RW],  # data packets
        recv_per_write=recv_per_write,
        bytes_sent=st.bytes_sent,
        bytes_received=st.bytes_received,
        bytes_dropped=st.bytes_dropped,
        resets=st.resets,
        reset_reason=st.reset_reason,
        wakeups=sum(wakeups[name] for name in guest),
        futile_wakeups=sum(futile[name] for name in guest),
        wakeups_by_task=wakeups,
        futile_wakeups_by_task=futile,
        lock_hold_us={k: summary_us(v) for k, v in st.lock_hold.items()},
        lock_wait_us={k: summary_us(v) for k, v in st.lock_wait.items()},
        batch_pkts={"count": len(st.batch_pkts),
                    "mean": sum(st.batch_pkts) / len(st.batch_pkts) if st.batch_pkts else 0.0,
                    "max": max(st.batch_pkts, default=0),
                    "max_bytes": max(st.batch_bytes, default=0)},
        rtt_us=rtt["mean"] if rtt else None,
        rtt_p95_us=rtt["p95"] if rtt else None,
        counters=_counters(m),
        utilization=utilization,
        worker_ops=worker_ops,
        sim_time_us=end / 1000,
        events=sim.events,
        trace=sim.trace,
        trace_truncated=st.trace_truncated,
        raw={"lock_hold_ns": st.lock_hold, "lock_wait_ns": st.lock_wait,
             "batch_pkts": st.batch_pkts, "batch_bytes": st.batch_bytes, "rtt_ns": st.rtt,
             "recv_sizes": st.recv_sizes},
    )
