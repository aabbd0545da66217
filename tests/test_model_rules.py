"""Whole runs obey the kernel's rules and never lose a byte."""

import re
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vsockmodel as vm
from vsockmodel.model import kernel
from vsockmodel.model.params import BATCH_KNOBS
from vsockmodel.sim.guest import Kworker
from vsockmodel.sim.host import Vhost
from vsockmodel.study import validate

VARIANTS = list(vm.VARIANTS)

configs = st.fixed_dictionaries({
    "variant": st.sampled_from(VARIANTS),
    "workload": st.sampled_from(["stream", "stream", "stream", "pingpong"]),
    "payload": st.sampled_from([1, 64, 100, 129, 256, 1000, 3732, 4096, 9000, 65536, 200_000]),
    "recv_size": st.sampled_from([1, 64, 777, 4096, 65536]),
    "buffer": st.sampled_from([128, 600, 1024, 4096, 8192, 16384, 65536, 262144, 1 << 20]),
    "rx_buf_payload": st.sampled_from([None, 512, 3732, 4096]),
    "batch_pkts": st.integers(1, 80),
    "batch_bytes": st.sampled_from([1, 1000, 65536, 1 << 20]),
    "headroom_check": st.sampled_from([None, True, False]),
    "vhost_used_batch": st.booleans(),
    "host_lock": st.booleans(),
    "rx_ring_size": st.sampled_from([8, 16, 128, 1024]),
    "seed": st.integers(0, 1000),
    "rcvlowat": st.sampled_from([1, 100, 4096]),
    # the hypothesis switches
    "halt_poll_ns": st.sampled_from([0, 0, 50_000, kernel.KVM_HALT_POLL_NS_DEFAULT]),
    "ipi_virtualization": st.booleans(),
    "deep_cstates": st.booleans(),
    "copy_model": st.sampled_from(["linear", "two-rate"]),
})


def _small(cfg):
    """About 40 packets: enough to exercise every path, quick enough for many examples."""
    cfg = dict(cfg, rcvlowat=min(cfg["rcvlowat"], cfg["buffer"] - 1))
    if not vm.VARIANTS[cfg["variant"]].batch:       # the lock-batch knobs are refused there
        for knob in BATCH_KNOBS:
            cfg[knob] = getattr(vm.Params, knob)
    if cfg["workload"] == "pingpong":
        p, _ = vm.make_params(**cfg, requests=1)
        return dict(cfg, requests=min(max(2, 40 // p.max_packets_per_write), p.max_writes, 20))
    p, _ = vm.make_params(**cfg, transfer=cfg["payload"])    # one write: for its packet count
    writes = min(max(2, 40 // p.packets_per_write), p.max_writes)   # within MAX_WORK
    return dict(cfg, transfer=writes * p.payload)


@settings(max_examples=120)   # the same examples every run: conftest's "suite" profile
@given(configs)
def test_every_byte_is_received_or_counted_as_dropped(cfg):
    cfg = _small(cfg)
    r = vm.run(**cfg)        # raises Deadlock if the run cannot finish
    assert r.bytes_sent > 0
    expected = (cfg["requests"] * cfg["payload"] if cfg["workload"] == "pingpong"
                else r.params["transfer"])
    unread = r.counters["bytes_enqueued"] - r.counters["bytes_read"]
    if r.resets == 0 or unread == 0:
        assert r.bytes_sent == r.bytes_received + r.bytes_dropped
    else:   # bytes left unread after a reset: see test_bytes_left_unread_by_a_reset_count_as_dropped
        assert r.bytes_sent >= r.bytes_received + r.bytes_dropped
    if r.resets == 0:
        assert r.bytes_received == expected
    else:
        assert r.bytes_dropped > 0 and "ENOBUFS" in r.reset_reason
        # The host obeys credit, so the payload budget never refuses a packet:
        # only the metadata budget of the sk_buff variants can reset.
        assert vm.VARIANTS[cfg["variant"]].metadata_budget
        qlen = int(re.search(r"had (\d+) skb", r.reset_reason)[1])
        assert not kernel.rx_skb_has_headroom(qlen, r.params["buffer"])


def test_bytes_left_unread_by_a_reset_count_as_dropped():
    # One metadata slot (buffer 600 < 2 x SKB_TRUESIZE(0)): the second packet resets
    # the connection (ENOBUFS) while the first byte is still queued, unread.
    r = vm.run(variant="baseline", payload=1, recv_size=1, buffer=600, rx_ring_size=8, seed=0,
               transfer=40)
    assert r.resets == 1 and r.counters["bytes_enqueued"] - r.counters["bytes_read"] == 1
    assert r.bytes_sent == r.bytes_received + r.bytes_dropped


def test_a_send_pkt_work_request_during_its_run_is_not_lost():
    r = vm.run(variant="pre-skb", payload=129, recv_size=64, buffer=600, rcvlowat=100, seed=46,
               transfer=5160, deep_cstates=False)
    assert r.bytes_received == 5160


@settings(max_examples=60)
@given(configs)
def test_kernel_rules_hold(cfg):
    cfg = _small(cfg)
    r = vm.run(**cfg)
    p = r.params
    c = r.counters
    # credit: the host never sends beyond the guest's advertised buffer
    assert c["min_host_credit"] >= 0
    # the payload budget: buf_used never exceeds buf_alloc
    assert c["max_buf_used"] <= p["buffer"]
    # the metadata budget (sk_buff variants): (qlen) * SKB_TRUESIZE(0) <= buf_alloc
    if cfg["variant"] != "pre-skb":
        assert c["max_qlen"] * kernel.SKB_TRUESIZE_0 <= p["buffer"]
    # the reader never reads more than was received
    assert c["bytes_read"] <= c["bytes_enqueued"] <= r.bytes_sent
    # lock batches stay within their limits
    if vm.VARIANTS[cfg["variant"]].batch:
        assert r.batch_pkts["max"] <= p["batch_pkts"]
        assert r.batch_pkts["max_bytes"] <= max(p["batch_bytes"], p["rx_buf_payload"])
    else:
        assert r.batch_pkts["max"] <= 1 and (r.resets or r.batch_pkts["max"] == 1)
    # every interrupt is one vhost signal's; the guest never kicks more than it posts
    assert c["irqs"] <= c["interrupts"] and c["tx_irqs"] <= c["interrupts"]
    assert c["tx_kicks"] <= c["guest_tx_pkts"] and c["kicks"] <= c["refills"] + 1
    # the ring holds at most rx_ring_size buffers: a run publishes at most that many at once
    assert c["vhost_runs_ring_full"] <= c["vhost_runs"]


# ---- determinism ------------------------------------------------------------------------------

def test_same_seed_same_result_different_seed_different_result():
    a = vm.run(variant="p1-p3", payload=4096, seed=7).to_dict()
    vm.run(variant="baseline", payload=64, seed=7)            # nothing carries over between runs
    b = vm.run(variant="p1-p3", payload=4096, seed=7).to_dict()
    c = vm.run(variant="p1-p3", payload=4096, seed=8).to_dict()
    assert a == b
    assert a["throughput_gbps"] != c["throughput_gbps"]


def test_a_traced_run_is_the_same_run():
    plain = vm.run(variant="baseline", payload=256, transfer="512K", seed=3).to_dict()
    traced = vm.run(variant="baseline", payload=256, transfer="512K", seed=3, trace=True)
    d = traced.to_dict()
    d.pop("trace_truncated")
    assert {k: v for k, v in d.items() if k != "params"} == {k: v for k, v in plain.items() if k != "params"}


# ---- packets and writes -----------------------------------------------------------------------

def test_a_4k_write_is_two_packets_with_the_measured_kernel_layout():
    p, _ = vm.make_params(payload=4096)
    assert p.buf_payload == 3732 and p.packets_per_write == 2
    r = vm.run(payload=4096, transfer=4096 * 100)
    assert r.packets == 200 and r.writes == 100


@pytest.mark.parametrize("payload,buf,packets", [
    (64, None, 1), (1024, None, 1), (8192, None, 3), (16384, None, 5), (65536, None, 18),
    (65536, 4096, 16), (4096, 4096, 1), (65536 + 1, None, 19),
])
def test_write_split(payload, buf, packets):
    p, _ = vm.make_params(payload=payload, rx_buf_payload=buf)
    assert p.packets_per_write == packets
    # few enough writes that credit (at most the sender's 256 KiB) never splits one
    writes = min(20, kernel.VSOCK_DEFAULT_BUFFER_SIZE // payload)
    r = vm.run(payload=payload, rx_buf_payload=buf, transfer=payload * writes)
    c = r.counters
    assert c["skbs_queued"] + c["tail_copies"] == writes * packets      # data packets handled


def test_packets_counts_data_packets_only():
    # Here the reader has every byte before rx_work handles the OP_SHUTDOWN it took.
    r = vm.run(payload=4096, rx_buf_payload=4096, transfer=4096 * 20)
    assert r.worker_ops["packets"] == 21
    assert r.packets == r.counters["skbs_queued"] + r.counters["tail_copies"] == 20


def test_pre_skb_uses_its_own_buffer_layout():
    p, _ = vm.make_params(variant="pre-skb", payload=65536)
    assert p.buf_payload == 4096 and p.packets_per_write == 16


def test_a_guest_buffer_beyond_the_senders_does_not_widen_the_window():
    # virtio_transport_has_space(): min(peer_buf_alloc, buf_alloc) - in flight
    small = vm.run(variant="p1-p5", payload=4096, buffer="256K")
    large = vm.run(variant="p1-p5", payload=4096, buffer="1M")
    assert large.to_dict()["counters"] == small.to_dict()["counters"]
    assert large.throughput_gbps == small.throughput_gbps
    assert vm.run(variant="p1-p5", payload=4096, buffer="64K").throughput_gbps < 0.8 * small.throughput_gbps


def test_credit_blocks_the_sender_with_a_small_buffer():
    r = vm.run(payload=65536, buffer=16384, transfer=65536 * 20)
    assert r.counters["sender_blocked"] > 0
    assert r.bytes_received == r.bytes_sent and r.counters["min_host_credit"] >= 0


# ---- tail-copy, collapse, fwd_cnt ---------------------------------------------------------------

def test_tail_copy_merges_small_packets_only():
    small = vm.run(payload=64, transfer=64 * 2000).counters
    large = vm.run(payload=256, transfer=256 * 2000).counters
    assert small["tail_copies"] > 0
    assert large["tail_copies"] == 0 and large["skbs_queued"] == 2000


def test_tail_copy_takes_packets_of_at_most_good_copy_len():
    # virtio_transport_recv_enqueue(): len <= GOOD_COPY_LEN (128) is copied into
    # the tail of the last queued skb; 129 B is queued as its own skb.
    assert vm.run(payload=128, transfer=128 * 2000).counters["tail_copies"] > 0
    assert vm.run(payload=129, transfer=129 * 2000).counters["tail_copies"] == 0


def test_collapse_fills_each_new_skb_to_capacity():
    # virtio_transport_collapse_rx_queue() frees room for this packet and the next,
    # but fills every new skb it starts: one call merges many small skbs.
    r = vm.run(variant="baseline", payload=256, buffer="4K")
    c = r.counters
    assert c["collapses"] > 0 and c["collapsed_skbs"] > 4 * c["collapses"]
    assert c["max_qlen"] <= kernel.queue_max(4096) and r.resets == 0


def test_fwd_cnt_moves_only_by_whole_skbs():
    # virtio_transport_dec_rx_pkt() runs when an skb is used up, so a reader
    # taking 64 B at a time from 4 KiB packets moves fwd_cnt (and may send a
    # credit update) at most once per skb, not once per recv().
    r = vm.run(payload=4096, recv_size=64, buffer="16K", transfer=4096 * 200)
    c = r.counters
    assert r.recv_calls > 10 * c["skbs_queued"]
    assert 0 < c["credit_updates"] <= c["skbs_queued"]


# ---- per-packet against batched locking (patches 2-5) -----------------------------------------

def test_baseline_takes_the_lock_once_per_packet():
    r = vm.run(variant="baseline", payload=256)
    # one lock hold per data packet, plus one for the closing OP_SHUTDOWN if it
    # was handled before the reader had everything
    assert r.batch_pkts["max"] == 1 and r.batch_pkts["count"] in (r.packets, r.packets + 1)
    assert r.worker_ops["lock_holds"] == r.batch_pkts["count"]


@pytest.mark.parametrize("variant", ["p1-p3", "p1-p5"])
def test_batches_never_exceed_64_packets_or_64_kib(variant):
    for payload in (64, 4096, 65536):
        r = vm.run(variant=variant, payload=payload)
        assert 1 < r.batch_pkts["max"] <= kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_PKTS
        assert r.batch_pkts["max_bytes"] <= kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES
        assert r.batch_pkts["count"] < r.packets / 2 + 1
    # a 64 KiB write fills the byte limit exactly (18 buffers: 17 x 3732 + 2092)
    assert vm.run(variant=variant, payload=65536).batch_pkts["max_bytes"] == 65536
    # a smaller packet limit is honoured
    assert vm.run(variant=variant, payload=64, batch_pkts=8).batch_pkts["max"] == 8


@pytest.mark.parametrize("payload", [3000, 5000])
def test_a_batch_ends_before_a_packet_would_pass_the_byte_limit(payload):
    # rx_work: a packet that would take the batch past 64 KiB starts a new one
    # (payloads whose packets do not add up to exactly 64 KiB).
    for variant in ("p1-p3", "p1-p5"):
        r = vm.run(variant=variant, payload=payload)
        assert r.batch_pkts["max_bytes"] <= kernel.VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES


def test_batched_packets_skip_the_lookup_only_with_patch_3(monkeypatch):
    # Patch 2 alone looks every packet up again (find_socket, then sock_put of the
    # extra reference); patch 3 reuses the batch's socket for the same flow.
    import dataclasses
    from vsockmodel.model import variants
    lookups = []
    find = Kworker.virtio_transport_recv_pkt_find_socket
    monkeypatch.setattr(Kworker, "virtio_transport_recv_pkt_find_socket",
                        lambda self: lookups.append(1) or find(self))
    r = vm.run(variant="p1-p3", payload=64)
    with_reuse, lookups[:] = len(lookups), []
    assert with_reuse == r.batch_pkts["count"]               # one per lock hold
    monkeypatch.setitem(variants.VARIANTS, "p1-p3",
                        dataclasses.replace(variants.VARIANTS["p1-p3"], reuse_lookup=False))
    r = vm.run(variant="p1-p3", payload=64)
    assert len(lookups) >= r.packets > 4 * with_reuse        # one per packet, and more per hold


def test_patch_4_coalesces_write_space_to_the_end_of_the_batch():
    # With patch 4, sk_write_space runs once per batch, in rx_batch_finish()
    # before release_sock: no packet is enqueued between it and the unlock.
    r = vm.run(variant="p1-p5", payload=64, trace=True)
    pending = False
    wakes = 0
    for _, actor, event, info in r.trace:
        if actor != "worker":
            continue
        if event == "wake_reader" and info.get("via") == "sk_write_space":
            pending, wakes = True, wakes + 1
        elif event in ("enqueue", "tail_copy"):
            assert not pending, "a packet was enqueued after the coalesced sk_write_space"
        elif event == "unlock":
            pending = False
    assert wakes > 0
    # and it is what makes fewer futile wake-ups than p1-p3
    assert r.futile_wakeups < vm.run(variant="p1-p3", payload=64).futile_wakeups


def test_patch_5_calls_sk_data_ready_once_per_batch_that_queued_data():
    # sock_def_readable() (trace_sk_data_ready): once per batch with patch 5,
    # once per data packet before it (SO_RCVLOWAT 1: every packet meets it).
    r = vm.run(variant="p1-p5", payload=256)
    batches_with_data = sum(1 for n in r.raw["batch_pkts"] if n)
    assert r.worker_ops["data_ready_calls"] == batches_with_data < r.packets / 4
    r = vm.run(variant="p1-p3", payload=256)
    assert r.worker_ops["data_ready_calls"] == r.counters["skbs_queued"] + r.counters["tail_copies"]


@pytest.mark.parametrize("variant", ["baseline", "p1-p5"])
def test_sk_write_space_wakes_the_reader_before_sk_data_ready_can(variant):
    # sock_def_write_space wakes the reader asleep on sk_sleep: per packet (before
    # the enqueue) and, with patch 4, at batch end before release_sock, so
    # patch 5's deferred sk_data_ready finds nobody asleep (chapters 2 and 5).
    r = vm.run(variant=variant, payload=64, trace=True)
    via = {(actor, info.get("via")) for _, actor, event, info in r.trace
           if event == "wake_reader" and info.get("via") != "release_sock"}   # not the lock's waiters
    # sock_wfree: tx_work freeing a completed credit update calls sk_write_space too
    assert ("worker", "sk_write_space") in via
    assert via <= {("worker", "sk_write_space"), ("tx worker", "sock_wfree")}


def test_worker_time_splits_the_run_and_shows_the_lock_cost_of_the_baseline():
    base = vm.run(variant="baseline", payload=256, recv_size="64K").worker_time()
    patched = vm.run(variant="p1-p5", payload=256, recv_size="64K").worker_time()
    for w in (base, patched):
        assert all(0 <= share <= 1 for share in w.values())
        assert w["busy"] + w["lock_wait"] <= 1.0
    # per-packet locking: the worker waits for the reader's lock far more often
    assert base["lock_wait"] > 2 * patched["lock_wait"]
    assert base["busy"] < patched["busy"]


# ---- the reader, the close, the ping-pong --------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_a_reader_waiting_for_more_than_is_left_is_woken_by_the_shutdown(variant):
    # SO_RCVLOWAT larger than what the last writes leave: only the sender's
    # closing OP_SHUTDOWN (sk_state_change) lets the last recv() return.
    r = vm.run(variant=variant, payload=128, rcvlowat=4096, transfer=128 * 500)
    assert r.bytes_received == r.bytes_sent == 128 * 500 and r.resets == 0


def test_the_shutdown_is_the_last_packet_and_needs_no_credit():
    # virtio_transport_shutdown() sends OP_SHUTDOWN after the data, credit or not:
    # the stream's packets are the data packets plus one.
    r = vm.run(variant="baseline", payload=4096, buffer="16K", transfer=4096 * 50)
    assert r.packets == 100 and r.worker_ops["packets"] == 101
    assert r.bytes_received == 4096 * 50


def test_pingpong_reports_rtt():
    r = vm.run(workload="pingpong", payload=64, requests=50)
    assert r.rtt_us is not None and 1 < r.rtt_us < 10_000
    assert r.writes == 50 and r.bytes_received == 50 * 64
    assert vm.run(payload=64, transfer=6400).rtt_us is None


def test_pingpong_rtt_is_built_from_short_wakeups():
    # A round trip wakes the guest about twice (the RX interrupt wakes CPU1, the
    # worker wakes the reader), and a vCPU rarely idles long enough to reach a
    # deep state: the short wake-up latency is on the path, the long one hardly.
    def rtt(**costs):
        return statistics.fmean(vm.run(workload="pingpong", payload=64, requests=200, seed=s,
                                       costs=costs).rtt_us for s in range(1, 6))
    assert rtt(vcpu_wake_long_ns=60_000) == pytest.approx(rtt(), rel=0.03)
    assert 1.2 * 9 < rtt(vcpu_wake_short_ns=10_000) - rtt(vcpu_wake_short_ns=1_000) < 2.2 * 9


# ---- vhost, the rings and the interrupts -------------------------------------------------------------

def test_vhost_used_batch_publishes_once_per_run():
    # [vhost batch]: one vhost_add_used_n() per run that filled buffers (a run
    # never has more than the ring's 128 to give), against one per buffer.
    one = vm.run(payload=256, vhost_used_batch=False, transfer=256 * 4000).counters
    r = vm.run(payload=256, vhost_used_batch=True, transfer=256 * 4000, trace=True)
    filled_runs = sum(1 for _, actor, event, _ in r.trace if actor == "vhost" and event == "run")
    assert one["used_publishes"] in (4000, 4001)        # + the closing OP_SHUTDOWN
    assert r.counters["used_publishes"] == filled_runs < one["used_publishes"]


def test_trace_records_lock_ownership():
    r = vm.run(payload=4096, transfer=4096 * 20, trace=True)
    events = {e for _, _, e, _ in r.trace}
    assert {"lock", "unlock", "enqueue", "recv"} <= events
    assert vm.run(payload=4096, transfer=4096 * 20).trace is None


def test_every_credit_update_is_completed_and_freed_on_the_guest():
    # vhost uses each guest TX buffer and signals; tx_work frees it (a few may
    # still be in flight when the run ends).
    r = vm.run(variant="baseline", payload=64)
    c, ops = r.counters, r.worker_ops
    assert c["credit_updates"] > 0
    assert 0 < c["tx_irqs"] <= c["guest_tx_pkts"]
    assert ops["tx_done"] <= c["guest_tx_pkts"] <= 1.02 * ops["tx_done"] + 2


def test_ring_is_refilled_only_below_half_and_then_filled_up(monkeypatch):
    """virtio_transport_rx_work(): virtio_vsock_rx_fill() runs at ``out:`` only
    when rx_buf_nr < rx_buf_max_nr / 2, and posts every free slot."""
    seen = []
    original = Kworker.virtio_vsock_rx_fill

    def checked_rx_fill(self):
        vsock = self.vsock
        assert vsock.rx_buf_nr < vsock.rx_buf_max_nr // 2
        yield from original(self)
        seen.append(vsock.rx_buf_nr)

    monkeypatch.setattr(Kworker, "virtio_vsock_rx_fill", checked_rx_fill)
    for ring in (kernel.RX_RING_SIZE, 16):
        seen.clear()
        r = vm.run(variant="baseline", payload=4096, rx_ring_size=ring)
        assert seen and all(n == ring for n in seen)
        assert r.counters["refills"] - len(seen) in (0, 1)     # the run may end inside the last
    # A worker that keeps up refills as soon as it is under half, not later.
    at_entry = []
    monkeypatch.setattr(Kworker, "virtio_vsock_rx_fill",
                        lambda self: at_entry.append(self.vsock.rx_buf_nr) or original(self))
    vm.run(variant="p1-p5", payload=4096)
    assert kernel.RX_RING_SIZE // 4 <= max(at_entry) < kernel.RX_RING_SIZE // 2


def test_vhost_waits_for_guest_buffers_only_when_credit_outlasts_the_ring():
    """With 256 KiB of credit an RX worker run drains the whole ring before it
    refills it, and vhost sleeps with data queued; with 16 KiB credit stops the
    host first (chapter 2, exercise 6)."""
    def waiting_share(buffer):
        return vm.run(variant="baseline", payload=4096, buffer=buffer).vhost_no_rx_buf_share()

    assert waiting_share(kernel.VSOCK_DEFAULT_BUFFER_SIZE) > 0.1
    assert waiting_share(16 * 1024) == 0


def test_a_larger_ring_shortens_vhost_waits_for_guest_buffers():
    """The stop-and-go of a drained ring: eight times the entries, fewer refills,
    a smaller share of the run waiting (chapter 2, exercise 6)."""
    runs = {ring: vm.run(variant="baseline", payload=4096, rx_ring_size=ring) for ring in (128, 1024)}
    share = {ring: r.vhost_no_rx_buf_share() for ring, r in runs.items()}
    assert share[1024] < share[128] / 2
    assert runs[1024].counters["refills"] < runs[128].counters["refills"] / 4
    assert runs[1024].throughput_gbps > runs[128].throughput_gbps


def test_baseline_small_writes_reach_the_guest_in_ring_full_runs():
    """The stop-and-go regime, counted: at 256 B almost every vhost run of the
    baseline ends at head == vq->num (the guest has posted no buffer); p1-p5
    keeps up, and its runs end with the host's queue empty."""
    shares = {}
    for variant in ("baseline", "p1-p5"):
        c = vm.run(variant=variant, payload=256).counters
        shares[variant] = c["vhost_runs_ring_full"] / c["vhost_runs"]
    assert shares["baseline"] > 0.8 and shares["p1-p5"] < 0.1


# ---- the host socket's lock (host_lock) --------------------------------------------------------------

def _holds(trace, actor):
    """(take, release) of the host socket's lock by ``actor``, from the trace."""
    out, since = [], None
    for t, a, event, _ in sorted(trace, key=lambda e: e[0]):
        if a != actor:
            continue
        if event == "lock":
            since = t
        elif event == "unlock" and since is not None:
            out.append((since, t))
            since = None
    return out


@pytest.mark.parametrize("variant,payload", [("baseline", 64), ("p1-p5", 256), ("p1-p5", 4096),
                                             ("baseline", 200_000)])
def test_vhost_takes_the_host_lock_only_when_the_sender_does_not_own_it(variant, payload):
    # vsock_connectible_sendmsg() owns the host socket's lock for a whole send()
    # (except while it waits for credit); vhost's virtio_transport_recv_pkt()
    # for a guest packet needs the same lock, so it never runs inside a send().
    # A write above 64 KiB takes the sender's multi-skb path.
    r = vm.run(variant=variant, payload=payload, transfer=payload * 400, trace=True, host_lock=True)
    sender, vhost = _holds(r.trace, "sender"), _holds(r.trace, "vhost")
    assert sender and vhost
    for a, b in vhost:
        assert not [(c, d) for c, d in sender if min(b, d) - max(a, c) > 0], (a, b)
    assert r.counters["host_lock_waits"] > 0


@pytest.mark.parametrize("host_lock", [False, True])
def test_vhost_signals_the_tx_queue_only_once_it_is_drained(monkeypatch, host_lock):
    # vhost_vsock_handle_tx_kick() loops until the guest's TX queue is empty and
    # calls vhost_signal() once, after the loop: no guest packet is left that
    # was posted by then.
    early, signals = [], []
    signal = Vhost.vhost_signal

    def spy_signal(self, vq):
        if vq is self.tx_vq:
            signals.append(self.t)
            early.extend(t for t, _ in vq.avail_pkts if t <= self.t)
        return signal(self, vq)

    monkeypatch.setattr(Vhost, "vhost_signal", spy_signal)
    vm.run(variant="baseline", payload=200_000, transfer=200_000 * 400, host_lock=host_lock)
    assert signals
    assert not early, f"{len(early)} guest packets were due when vhost signalled"


def test_without_the_host_lock_vhost_never_waits():
    # The default is the lower bound of the host lock's effect: vhost never waits.
    r = vm.run(variant="p1-p5", payload=256)
    assert r.params["host_lock"] is False and r.counters["host_lock_waits"] == 0
    assert vm.run(variant="p1-p5", payload=256, host_lock=True).counters["host_lock_waits"] > 0


def test_validate_takes_the_host_lock_switch():
    tables = ("v1_all_fixed64k",)
    kw = dict(seeds=(1,), jobs=1, packets=600, tables=tables)
    off = validate.predict(**kw)
    on = validate.predict(host_lock=True, **kw)
    assert off.keys() == on.keys() and off != on
    with pytest.raises(ValueError, match="host_lock"):
        validate.predict(host_lock="yes", **kw)
