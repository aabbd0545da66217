"""Counters the actors update during a run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(slots=True)   # slots: faster attribute updates on the hot path
class Stats:
    bytes_sent: int = 0          # accepted by the host socket (send() returned them)
    bytes_received: int = 0      # returned to the guest application by recv()
    bytes_enqueued: int = 0      # admitted to rx_queue by inc_rx_pkt
    bytes_read: int = 0          # copied out of rx_queue by the reader
    bytes_dropped: int = 0       # lost to a reset (filled in when the run ends)
    bytes_dropped_rx: int = 0    # refused by inc_rx_pkt or arriving after the reset
    writes: int = 0              # host send() calls completed
    packets: int = 0             # guest RX buffers handled by the RX worker
    control_packets: int = 0     # of which carried no data (OP_SHUTDOWN)
    payload_bytes: int = 0       # payload carried by those buffers
    skbs_queued: int = 0         # packets that became their own rx_queue entry
    tail_copies: int = 0         # packets copied into the last skb (GOOD_COPY_LEN)
    tail_copy_bytes: int = 0     # bytes the worker copied: tail-copies and collapses
    collapses: int = 0           # virtio_transport_collapse_rx_queue calls
    collapsed_skbs: int = 0      # skbs copied into a collapsed skb (and freed) by collapse
    collapse_allocs: int = 0     # collapsed skbs allocated by collapse
    recv_calls: int = 0
    trace_truncated: bool = False   # the trace reached Sim.MAX_TRACE_EVENTS
    resets: int = 0
    reset_reason: str = ""
    irqs: int = 0                # guest RX interrupts delivered
    tx_irqs: int = 0             # guest TX interrupts (vhost used credit updates, replies)
    tx_done: int = 0             # guest TX buffers freed by tx_work
    tx_work_runs: int = 0        # runs of virtio_transport_tx_work
    vhost_runs: int = 0
    vhost_signals: int = 0
    vhost_runs_ring_full: int = 0    # runs ended at head == vq->num: no guest RX buffer left
    vhost_ring_full_pkts: int = 0    # the buffers those runs filled
    vhost_runs_weight: int = 0       # runs ended by vhost_exceeds_weight (the work is requeued)
    vhost_no_rx_buf_ns: float = 0.0  # vhost asleep with data queued but no guest RX buffer
    used_publishes: int = 0      # used->idx updates (vhost_add_used / _n calls)
    refills: int = 0
    refill_bufs: int = 0
    kicks: int = 0
    credit_updates: int = 0
    guest_tx_pkts: int = 0       # guest packets (credit, replies) handled by vhost
    sender_blocked: int = 0      # host sender waits for credit
    credit_unwriteable: int = 0  # guest packets whose sk_write_space found the host socket not writeable
    host_lock_waits: int = 0     # vhost slept on the host socket's lock (host_lock)
    max_qlen: int = 0
    max_buf_used: int = 0
    min_host_credit: int = 1 << 62
    wakeups: Counter = field(default_factory=Counter)        # by task
    futile_wakeups: Counter = field(default_factory=Counter)  # woken only to wait for the lock
    lock_hold: dict = field(default_factory=lambda: {"worker": [], "reader": []})
    lock_wait: dict = field(default_factory=lambda: {"worker": [], "reader": []})
    batch_pkts: list = field(default_factory=list)
    batch_bytes: list = field(default_factory=list)
    rtt: list = field(default_factory=list)
    recv_sizes: list = field(default_factory=list)
    # measurement window (after warm-up)
    window_t0: float | None = None
    window_bytes0: int = 0
    window_busy0: float = 0.0
    end_t: float = 0.0
