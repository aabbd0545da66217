"""Wire the actors together and run one simulation.

    host:  Sender (vsock_perf) --send_pkt_queue--> Vhost (vhost_transport_do_send_pkt)
                                                      | used ring + vhost_signal
    guest: Reader (recv on CPU0) <--rx_queue, lock-- RxWorker (virtio_transport_rx_work on CPU1)
           Reader --OP_CREDIT_UPDATE--> Sender
"""

from __future__ import annotations

from ..model.costs import Costs
from ..model.params import Params, make_params
from .results import Result, summary_us
from .engine import Sim
from .errors import Deadlock
from .guest import RxWorker
from .host import HostSocket, Sender, Vhost
from .reader import Reader
from .sock import GuestSock
from .virtqueue import RxVirtqueue


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
    sim = Sim(p, costs)
    vq = RxVirtqueue(p.rx_ring_size)
    sk = GuestSock(sim)
    host_sock = HostSocket(p.buffer)
    vhost = Vhost(sim, vq, host_sock)
    sender = Sender(sim, host_sock, vhost)
    worker = RxWorker(sim, vq, sk, vhost)
    vhost.worker = worker
    vhost.sender = sender
    reader = Reader(sim, sk, vhost, worker)
    vhost.reader = reader
    for task in (sender, vhost, worker, reader):
        task.start()
    try:
        sim.run()
    except RuntimeError as exc:
        if "No scheduled events left" not in str(exc):
            raise
        raise Deadlock(
            f"nothing left to happen after {sim.stats.bytes_received} of {sim.stats.bytes_sent} "
            f"bytes sent were received (variant {p.variant}, payload {p.payload}, "
            f"buffer {p.buffer}); queue {len(sk.rx_queue)} skbs, host credit "
            f"{max(0, sender.sock.credit())}") from None
    return _result(sim, p, costs, sk, vq, vhost, worker, (sender, vhost, worker, reader))


def _dropped(sim: Sim, sk: GuestSock, vq: RxVirtqueue, vhost: Vhost) -> int:
    """Bytes sent but never delivered, counted where they were when the reset hit."""
    st = sim.stats
    if not st.resets:
        return 0
    unread = sum(skb.len - skb.off for skb in sk.rx_queue)
    in_ring = sum(pkt.len for _, pkt in vq.used) + sum(pkt.len for pkt in vhost.pending_used)
    at_host = sum(skb.len - skb.offset for _, skb in vhost.send_pkt_queue)
    in_recv = st.bytes_read - st.bytes_received   # copied by a recv() that never returned
    return st.bytes_dropped_rx + unread + in_ring + at_host + in_recv


def _result(sim: Sim, p: Params, costs: Costs, sk, vq, vhost, worker, tasks) -> Result:
    st = sim.stats
    st.bytes_dropped = _dropped(sim, sk, vq, vhost)
    end = st.end_t or sim.env.now
    if st.window_t0 is not None and end > st.window_t0 and st.bytes_received > st.window_bytes0:
        dbytes = st.bytes_received - st.window_bytes0
        throughput = dbytes * 8 / (end - st.window_t0)          # bits per ns = Gbit/s
        cycles_per_byte = (worker.busy - st.window_busy0) * costs.clock_ghz / dbytes
    else:
        throughput = st.bytes_received * 8 / end if end else 0.0
        # Per byte received: undefined when nothing was (the stream was reset at once).
        cycles_per_byte = worker.busy * costs.clock_ghz / st.bytes_received if st.bytes_received else None
    # Over the whole run, as the series' tables count recv() calls. (Not over the
    # measurement window: the sender runs up to a buffer ahead of the reader, so
    # the writes *sent* in the window are not the writes read in it.)
    recv_per_write = st.recv_calls / st.writes if st.writes else 0.0
    rtt = summary_us(st.rtt) if st.rtt else None
    # Share of the run each thread spent on its CPU (busy time / elapsed time).
    utilization = {t.name: t.busy / end if end else 0.0 for t in tasks}
    # What the RX worker did, for the cycles-per-byte calibration.
    worker_ops = {"packets": st.packets, "payload_bytes": st.payload_bytes,
                  "lock_holds": len(st.batch_pkts), "irqs": st.irqs, "refill_bufs": st.refill_bufs,
                  "tx_irqs": st.tx_irqs, "tx_work_runs": st.tx_work_runs, "tx_done": st.tx_done,
                  "kicks": st.kicks, "tail_frees": st.tail_copies + st.collapsed_skbs + st.collapse_allocs,
                  "tail_copy_bytes": st.tail_copy_bytes,
                  "wakes_sent": worker.wakes_sent, "sleeps": worker.sleeps,
                  "busy_ns": worker.busy}
    counters = {
        name: getattr(st, name) for name in (
            "irqs", "tx_irqs", "vhost_runs", "vhost_runs_ring_full", "vhost_ring_full_pkts",
            "vhost_runs_weight", "vhost_signals", "vhost_no_rx_buf_ns", "used_publishes",
            "refills", "kicks", "credit_updates", "guest_tx_pkts", "sender_blocked", "credit_unwriteable",
            "host_lock_waits", "skbs_queued", "tail_copies", "collapses", "collapsed_skbs",
            "max_qlen", "max_buf_used", "min_host_credit", "bytes_enqueued", "bytes_read")
    }
    return Result(
        params=p.to_dict(),
        throughput_gbps=throughput,
        rx_cycles_per_byte=cycles_per_byte,
        recv_calls=st.recv_calls,
        writes=st.writes,
        packets=st.packets - st.control_packets,        # data packets
        recv_per_write=recv_per_write,
        bytes_sent=st.bytes_sent,
        bytes_received=st.bytes_received,
        bytes_dropped=st.bytes_dropped,
        resets=st.resets,
        reset_reason=st.reset_reason,
        wakeups=sum(st.wakeups.values()),
        futile_wakeups=sum(st.futile_wakeups.values()),
        wakeups_by_task=dict(st.wakeups),
        futile_wakeups_by_task=dict(st.futile_wakeups),
        lock_hold_us={k: summary_us(v) for k, v in st.lock_hold.items()},
        lock_wait_us={k: summary_us(v) for k, v in st.lock_wait.items()},
        batch_pkts={"count": len(st.batch_pkts),
                    "mean": sum(st.batch_pkts) / len(st.batch_pkts) if st.batch_pkts else 0.0,
                    "max": max(st.batch_pkts, default=0),
                    "max_bytes": max(st.batch_bytes, default=0)},
        rtt_us=rtt["mean"] if rtt else None,
        rtt_p95_us=rtt["p95"] if rtt else None,
        counters=counters,
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
