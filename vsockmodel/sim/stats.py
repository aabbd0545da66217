"""What a run records: counters the engine and the shared objects keep, and
the tracepoints the receive path fires.

The kernel code counts nothing itself. The engine counts wake-ups, the
socket lock its holds and waits (sock.LockStat), the virtqueues their
buffers, kicks and interrupts, the work items their runs. Where the kernel
has a tracepoint (include/trace/events/vsock_virtio_transport_common.h) or
an event worth one, the receive path calls ``sim.tracepoints``: one line,
which records the event and, with trace=True, logs it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import Sim, Task
    from .sock import GuestSock


@dataclass(slots=True)   # slots: faster attribute updates on the hot path
class Stats:
    bytes_sent: int = 0          # accepted by the host socket (send() returned them)
    bytes_received: int = 0      # returned to the guest application by recv()
    bytes_enqueued: int = 0      # admitted to rx_queue by inc_rx_pkt
    bytes_dropped: int = 0       # lost to a reset (filled in when the run ends)
    writes: int = 0              # host send() calls completed
    skbs_queued: int = 0         # packets that became their own rx_queue entry
    tail_copies: int = 0         # packets copied into the last skb (GOOD_COPY_LEN)
    tail_copy_bytes: int = 0     # bytes the worker copied: tail-copies and collapses
    collapses: int = 0           # virtio_transport_collapse_rx_queue calls
    collapsed_skbs: int = 0      # skbs copied into a collapsed skb (and freed) by collapse
    collapse_allocs: int = 0     # collapsed skbs allocated by collapse
    data_ready_calls: int = 0    # sock_def_readable() calls (trace_sk_data_ready)
    recv_calls: int = 0
    trace_truncated: bool = False   # the trace reached Sim.MAX_TRACE_EVENTS
    resets: int = 0
    reset_reason: str = ""
    vhost_no_rx_buf_ns: float = 0.0  # vhost asleep with data queued but no guest RX buffer
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


class Tracepoints:
    """The receive path's tracepoints: each records one event in Stats (and the trace)."""

    def __init__(self, sim: "Sim") -> None:
        self.sim = sim
        self.stats = sim.stats
        self.held_pkts = 0       # packets queued under the RX worker's current lock hold
        self.held_bytes = 0

    def enqueue(self, task: "Task", sk: "GuestSock", length: int) -> None:
        """A packet became its own rx_queue entry."""
        st = self.stats
        self.held_pkts += 1
        self.held_bytes += length
        st.bytes_enqueued += length
        st.skbs_queued += 1
        st.max_qlen = max(st.max_qlen, len(sk.rx_queue))
        st.max_buf_used = max(st.max_buf_used, sk.buf_used)
        if self.sim.trace is not None:
            task.log("enqueue", len=length, qlen=len(sk.rx_queue))

    def tail_copy(self, task: "Task", sk: "GuestSock", length: int) -> None:
        """A small packet was copied into the last queued skb (GOOD_COPY_LEN)."""
        st = self.stats
        self.held_pkts += 1
        self.held_bytes += length
        st.bytes_enqueued += length
        st.tail_copies += 1
        st.tail_copy_bytes += length
        st.max_buf_used = max(st.max_buf_used, sk.buf_used)
        if self.sim.trace is not None:
            task.log("tail_copy", len=length, qlen=len(sk.rx_queue))

    def collapse(self, task: "Task", copied: int, allocs: int, nbytes: int) -> None:
        """virtio_transport_collapse_rx_queue() merged ``copied`` skbs into ``allocs`` new ones."""
        st = self.stats
        st.collapses += 1
        st.collapsed_skbs += copied
        st.collapse_allocs += allocs
        st.tail_copy_bytes += nbytes

    def reset(self, task: "Task", sk: "GuestSock") -> None:
        """The connection was reset (ENOBUFS)."""
        st = self.stats
        st.resets += 1
        st.reset_reason = (f"ENOBUFS: rx_queue had {len(sk.rx_queue)} skb(s), buf_used "
                           f"{sk.buf_used} of {sk.buf_alloc}")
        task.log("reset", qlen=len(sk.rx_queue))

    def sk_data_ready(self, task: "Task") -> None:
        """sock_def_readable() ran (the kernel's trace_sk_data_ready)."""
        self.stats.data_ready_calls += 1

    def lock_released(self, task: "Task") -> None:
        """The guest socket's lock was released: an RX worker's hold is one batch
        of the packets queued under it."""
        if task.cpu.name == "guest CPU1":
            self.stats.batch_pkts.append(self.held_pkts)
            self.stats.batch_bytes.append(self.held_bytes)
            if self.sim.trace is not None and task.sim.p.spec.batch:
                task.log("batch_end", pkts=self.held_pkts)
        self.held_pkts = self.held_bytes = 0
