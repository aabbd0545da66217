"""Per-operation costs: the only numbers the simulation's timing depends on.

Every cost is in nanoseconds of CPU time on the CPU that does the work (or, for
the ``*_latency`` entries, of elapsed time). Each field records its origin:

- ``prior``: chosen before looking at any measurement of the five sources, from the order of
  magnitude of the operation; the docstring says why.
- ``fitted``: set by ``python -m vsockmodel calibrate`` from the batching series' v1
  guest CPU1 cycles-per-byte tables (stage 1 of ``vsockmodel.study.calibrate``).
- ``fitted: throughput``: one of the few timing priors stage 2 of the calibration
  fits, within the stated range, to the absolute throughputs of the v1
  all-patches fixed-64K table, and to nothing else.

The defaults below are the priors. ``vsockmodel/model/data/costs.json`` (written
by the calibration) replaces the fitted fields.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources


def _cost(default: float, origin: str, doc: str, unit: str = "ns"):
    return field(default=default, metadata={"origin": origin, "doc": doc, "unit": unit})


@dataclass(frozen=True)
class Costs:
    # ---- guest CPU1: the RX worker (virtio_transport_rx_work) --------------
    irq_ns: float = _cost(
        1500, "fitted", "one interrupt of the device's MSI-X vector, which its RX and TX queues share "
        "(QEMU's vhost-vsock-pci offers 3 vectors, too few for one per queue plus config, so "
        "vp_find_vqs() falls back to one shared vector): entry, vp_vring_interrupt() -> "
        "vring_interrupt() per queue -> virtio_vsock_rx_done() / virtio_vsock_tx_done() -> "
        "queue_work(), exit. Charged on CPU1 when it arrives")
    worker_run_ns: float = _cost(
        800, "fitted", "a kworker runs one work item (rx_work or tx_work): process_one_work() "
        "and the work function's entry, mutex_lock/unlock of rx_lock or tx_lock")
    get_buf_ns: float = _cost(
        300, "fitted", "virtqueue_get_buf + length checks + virtio_vsock_skb_rx_put + tap, per buffer")
    rx_fill_buf_ns: float = _cost(
        500, "fitted", "virtio_vsock_rx_fill, per buffer: alloc_skb + virtqueue_add_sgs (one sg)")
    pre_skb_fill_extra_ns: float = _cost(
        250, "prior", "pre-sk_buff rx_fill: the second allocation (kzalloc pkt + kmalloc buf) "
        "and the second scatterlist entry (with VIRTIO_RING_F_INDIRECT_DESC an indirect table, "
        "still one ring slot), per buffer")
    vq_kick_ns: float = _cost(
        1500, "prior", "virtqueue_kick after a refill: a VM exit to notify the host (MMIO write to the "
        "notify area, ioeventfd). Host-mode time, invisible to guest perf cycles")
    recv_pkt_ns: float = _cost(
        400, "fitted", "virtio_transport_recv_pkt per packet outside lookup and lock: address "
        "decode, trace, type checks, skb_set_owner_sk_safe, state dispatch, kfree/consume")
    lookup_ns: float = _cost(
        150, "fitted", "vsock_find_connected_socket_net (vsock_table_lock, hash-bucket walk, "
        "sock_hold) and the matching sock_put")
    lock_ns: float = _cost(
        60, "fitted", "lock_sock uncontended: sk_lock.slock, owned = 1")
    unlock_ns: float = _cost(
        60, "fitted", "release_sock with no waiter: slock, no backlog, owned = 0")
    space_update_ns: float = _cost(
        80, "fitted", "virtio_transport_space_update: tx_lock, copy peer credit, has_space")
    write_space_ns: float = _cost(
        70, "fitted", "sk->sk_write_space = sock_def_write_space with no writer sleeping")
    enqueue_ns: float = _cost(
        200, "fitted", "virtio_transport_recv_enqueue: rx_lock, inc_rx_pkt, __skb_queue_tail")
    data_ready_ns: float = _cost(
        80, "fitted", "vsock_data_ready + sock_def_readable when nobody sleeps on the socket")
    tail_copy_byte_ns: float = _cost(
        0.05, "prior", "memcpy into the last skb's tail (GOOD_COPY_LEN packets)", "ns/B")
    tail_free_ns: float = _cost(
        150, "fitted", "kfree_skb of a packet's own skb after its payload was copied into the last "
        "queued skb (virtio_transport_recv_enqueue, free_pkt) or merged by collapse: the 4 KiB "
        "head and the sk_buff, freed on the RX worker's CPU instead of by the reader")

    tx_work_ns: float = _cost(
        1100, "fitted", "virtio_transport_tx_work per used TX buffer: virtqueue_get_buf, "
        "virtio_transport_consume_skb_sent -> consume_skb -> sock_wfree, and a share of the "
        "send_pkt_work pass it queues")
    callback_lock_ns: float = _cost(
        40, "prior", "read_lock_bh() + read_unlock_bh() of sk_callback_lock, uncontended: the "
        "series takes it once when a lock batch starts (patch 2's eligibility check) and once "
        "when it ends (patch 5's vsock_rx_cb_is_native())")
    data_ready_flag_ns: float = _cost(
        10, "prior", "patch 5, per packet of a batch: READ_ONCE(sk->sk_data_ready), the compare "
        "with the saved default and the flag (vsock_stream_has_data() only until it is set)")

    # ---- scheduler work, on the CPU of the task concerned ------------------
    wakeup_ns: float = _cost(
        700, "fitted", "try_to_wake_up of a task on another vCPU, paid by the waker (runqueue "
        "lock, IPI send). Fitted with sleep_ns to the CPU1 cycles (the kworkers' wake-ups); it "
        "prices the CPU0 reader's wake-ups as well, which those cycles never see")
    ipi_exit_ns: float = _cost(
        1500, "prior", "host-mode time on the waking vCPU when try_to_wake_up sends a reschedule "
        "IPI to a halted vCPU without IPI virtualisation (the ipi_virtualization switch off): "
        "the x2APIC ICR write traps (handle_fastpath_set_msr_irqoff -> kvm_apic_send_ipi, "
        "kvm_vcpu_kick), about 1-2 us. With Intel IPIv (Sapphire Rapids+, kvm_intel "
        "enable_ipiv=1) or AMD AVIC the sender posts the interrupt without an exit. Delays the "
        "waker; invisible to guest perf cycles")
    sleep_ns: float = _cost(
        1200, "fitted", "a task going to sleep and later running again on its own CPU "
        "(schedule out + schedule in): CPU time that delays the task when it wakes. Fitted with "
        "wakeup_ns to the CPU1 cycles (the kworkers' sleeps)")

    # ---- guest CPU0: the reader (vsock_connectible_recvmsg) ----------------
    recv_syscall_ns: float = _cost(
        580, "prior", "recv() entry and exit around vsock_connectible_recvmsg (its lock_sock and "
        "release_sock are lock_ns and unlock_ns: 700 ns in all at the priors)")
    dequeue_skb_ns: float = _cost(
        150, "prior", "virtio_transport_stream_do_dequeue per skb consumed (unlink, dec_rx_pkt, consume_skb)")
    copy_to_user_byte_ns: float = _cost(
        0.10, "prior", "skb_copy_datagram_iter to user memory (about 10 GB/s)", "ns/B")
    recvmsg_locked_ns: float = _cost(
        300, "prior", "vsock_connectible_recvmsg work done while holding lock_sock (checks, "
        "notify hooks, wait-queue set-up), per recv()")
    credit_update_ns: float = _cost(
        350, "prior", "virtio_transport_send_credit_update() on the reader's CPU0, before the "
        "kick: virtio_transport_alloc_skb() of a header-only skb (a small head from "
        "skb_small_head_cache, not a page-sized RX buffer), virtio_transport_inc_tx_pkt(), "
        "the fast path's mutex_trylock(tx_lock) and virtqueue_add_sgs() on the TX queue")
    guest_send_ns: float = _cost(
        2500, "prior", "guest send() of one small reply in ping-pong (syscall + TX path + kick)")

    # ---- host ---------------------------------------------------------------
    host_send_ns: float = _cost(
        1400, "fitted: throughput", "host send() syscall in vsock_perf: vsock_connectible_sendmsg, "
        "lock_sock, credit check, per call. Fitted in [1000, 2000] ns: the patched kernel's "
        "small writes are sender-bound (the v2 cover letter: the host-side syscall is the "
        "bottleneck at 1K and below)")
    host_skb_ns: float = _cost(
        600, "prior", "virtio_transport_send_pkt_info per skb: alloc, header, "
        "vhost_transport_send_pkt queue + work wake-up")
    host_copy_byte_ns: float = _cost(
        0.35, "fitted: throughput", "copy from the host sender's user buffer into the skb "
        "(memcpy_from_msg). Fitted in [0.05, 1.5] ns/B: a memcpy at about 20 to under 1 GB/s, "
        "cache-resident to streaming with page faults", "ns/B")
    vhost_pkt_ns: float = _cost(
        600, "prior", "vhost_transport_do_send_pkt per guest buffer: dequeue, vhost_get_vq_desc, "
        "iov set-up, header copy")
    vhost_desc_extra_ns: float = _cost(
        150, "prior", "pre-sk_buff layout: the second descriptor of each RX buffer (in an "
        "indirect table), walked by vhost_get_vq_desc and copied to separately")
    vhost_copy_byte_ns: float = _cost(
        0.45, "fitted: throughput", "vhost copy of payload into guest memory "
        "(skb_copy_datagram_iter into the guest's buffer). Fitted in [0.05, 1.4] ns/B: 1.4 is "
        "the slope of the patched fixed-64K column from 4 to 64 KiB if vhost alone paid it", "ns/B")
    copy_hot_byte_ns: float = _cost(
        0.05, "prior", "copy_model two-rate: a host copy's cost per byte for its first "
        "copy_hot_bytes, which the caches hold (a copy at about 20 GB/s)", "ns/B")
    copy_hot_bytes: float = _cost(
        1024, "prior", "copy_model two-rate: how much of each host copy (the sender's copy from "
        "user memory, vhost's into the guest) runs at the hot rate; beyond it, the copy's own "
        "per-byte cost. The hypothesis reads the patched column's two slopes (about 0.4 ns/B up "
        "to 1 KiB, 1.4 ns/B from 4 KiB)", "B")
    vhost_add_used_ns: float = _cost(
        150, "prior", "vhost_add_used: one used element plus a used->idx publish with barrier")
    vhost_used_entry_ns: float = _cost(
        25, "prior", "each further element of one vhost_add_used_n call")
    vhost_tx_pkt_ns: float = _cost(
        2500, "prior", "vhost_vsock_handle_tx_kick per guest packet (credit update or reply): "
        "vhost_get_vq_desc, vhost_vsock_alloc_skb, copy, virtio_transport_recv_pkt on the host "
        "socket (lookup, lock_sock, space_update, sk_write_space), vhost_add_used, signal")
    vhost_signal_ns: float = _cost(
        800, "prior", "vhost_signal: eventfd_signal to the guest's irqfd")

    # ---- latencies: elapsed time, not CPU time -----------------------------
    vcpu_wake_short_ns: float = _cost(
        5000, "fitted: throughput", "wake-up of a guest task whose vCPU has been idle for less "
        "than deep_idle_ns: the halted vCPU's host CPU is in a shallow idle state; kvm_vcpu_kick, "
        "VM entry and the guest's context switch. Fitted in [2000, 10000] ns: the scheduler "
        "path of a halted vCPU, a few microseconds longer than a halt-poll hit (KVM commit "
        "aca6ff29c406: polling saves 5-7 us)", "ns (mean)")
    vcpu_wake_long_ns: float = _cost(
        30000, "prior", "wake-up of a guest task whose vCPU has been idle longer: the host CPU "
        "has entered a deep C-state (exit latencies of tens of microseconds on server parts) "
        "and the vCPU thread has to be scheduled in again", "ns (mean)")
    deep_idle_ns: float = _cost(
        50000, "prior", "idle time after which a halted vCPU wakes slowly: host cpuidle "
        "governors choose deep states for idle periods longer than their target residency, "
        "which is tens to hundreds of microseconds", "ns")
    halt_poll_wake_ns: float = _cost(
        1500, "prior", "wake-up of a guest task whose vCPU KVM is still polling: the pending "
        "interrupt is seen on the next poll, then VM entry and the guest's context switch. "
        "About 5-7 us less than the scheduler path (KVM commit aca6ff29c406: halt polling "
        "'only reduces halt latency by 5-7 us')", "ns (mean)")
    wake_latency_cv: float = _cost(
        0.6, "prior", "coefficient of variation of every wake-up latency", "1")
    host_wake_latency_ns: float = _cost(
        3000, "prior", "from queueing work or credit for an idle host thread (vhost worker, "
        "vsock_perf sender) until it runs", "ns (mean)")
    host_to_guest_latency_ns: float = _cost(
        4000, "prior", "guest kick or TX packet until the host has processed it (VM exit, "
        "ioeventfd, vhost TX handler)", "ns")
    jitter_cv: float = _cost(
        0.15, "prior", "coefficient of variation of every CPU cost (cache and TLB effects, "
        "host interference); breaks the phase locking of fixed service times", "1")

    # ---- unit conversion ----------------------------------------------------
    clock_ghz: float = _cost(
        2.4, "prior", "guest CPU clock used to turn busy time into cycles, as perf counts them", "GHz")

    def __post_init__(self):
        for f in fields(self):
            _check_cost(f.name, getattr(self, f.name))

    def with_(self, **changes) -> "Costs":
        """A copy with some costs changed (unknown names are an error)."""
        return self.with_dict(changes)

    def with_dict(self, changes: dict) -> "Costs":
        """``with_`` for a dict whose keys may not be valid identifiers."""
        names = [f.name for f in fields(self)]
        unknown = [k for k in changes if k not in names]
        if unknown:
            raise ValueError(f"costs: unknown cost name(s) {unknown}; known: {', '.join(names)}")
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def describe() -> list[dict]:
        """Name, default, unit, origin and meaning of every cost, for tables."""
        return [dict(name=f.name, default=f.default, unit=f.metadata["unit"],
                     origin=f.metadata["origin"], doc=f.metadata["doc"])
                for f in fields(Costs)]


# Upper bounds that keep the noise tables and the clock meaningful.
_MAX_CV = 10.0
_MAX_COST = 1e9   # 1 s of CPU or latency for one operation
_MAX_GHZ = 100.0


def _check_cost(name: str, value) -> None:
    """Every cost is a finite number >= 0 (a bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"costs.{name}: expected a finite number, got {value!r}")
    hi = _MAX_CV if name.endswith("_cv") else _MAX_GHZ if name == "clock_ghz" else _MAX_COST
    lo_open = name == "clock_ghz"                    # cycles = ns * GHz: must be > 0
    if value < 0 or value > hi or (lo_open and value == 0):
        lo = "(0" if lo_open else "[0"
        raise ValueError(f"costs.{name}: {value!r} is out of range; allowed {lo}, {hi:g}]")


CALIBRATED_FILE = "costs.json"


def load_calibrated() -> dict:
    """The fitted values the calibration wrote (``python -m vsockmodel calibrate``).

    The file ships with the package. A missing, unreadable or malformed file is
    an error naming it: the model never falls back to its priors in silence.
    """
    path = resources.files("vsockmodel.model").joinpath("data", CALIBRATED_FILE)
    name = f"vsockmodel/model/data/{CALIBRATED_FILE}"
    again = "run `python -m vsockmodel calibrate` to write it again"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fitted = dict(data["costs"])
        # stage 2's timing priors, when the calibration has fitted them
        fitted.update({k: v["value"] for k, v in data.get("timing", {}).items()})
    except FileNotFoundError:
        raise ValueError(f"{name}: missing (the model's fitted costs); {again}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start}); {again}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{name}: malformed ({exc}); {again}") from None
    known = {f.name for f in fields(Costs)}
    bad = sorted(set(fitted) - known)
    if bad:
        raise ValueError(f"{name}: unknown cost name(s) {bad}; {again}")
    for key, value in fitted.items():
        try:
            _check_cost(key, value)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}; {again}") from None
    return fitted


def default_costs() -> Costs:
    """The priors, with the fitted fields the calibration wrote."""
    return Costs().with_(**load_calibrated())
