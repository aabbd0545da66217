"""One kernel function at a time, at the edges a whole run seldom reaches:
the metadata budget's boundary, the collapse of the receive queue, the
reader's credit accounting, vhost's limits, the lock's bookkeeping, and the
bounds of the parameters."""

import pytest

import vsockmodel as vm
from vsockmodel.model import kernel
from vsockmodel.model.params import MAX_WORK
from vsockmodel.sim.host import HostSkb
from vsockmodel.sim.sock import Skb
from vsockmodel.sim.virtqueue import Packet

from model_support import drain, guest, queue, reader, vhost_alone

TRUESIZE = kernel.SKB_TRUESIZE_0                   # 576: one metadata slot


# ---- virtio_transport_inc_rx_pkt() and the batch's headroom check, at the boundary -------

def test_the_metadata_budget_admits_exactly_buf_alloc():
    # (qlen + 1) * SKB_TRUESIZE(0) <= buf_alloc: with two slots' worth of
    # buf_alloc, the second skb fits and the third does not.
    buffer = 2 * TRUESIZE
    assert kernel.rx_skb_has_headroom(1, buffer) and not kernel.rx_skb_has_headroom(2, buffer)
    sk, worker = guest(buffer=buffer)
    assert worker.virtio_transport_recv_enqueue(Packet(200, 0)) and worker.virtio_transport_recv_enqueue(Packet(200, 1))
    assert len(sk.rx_queue) == 2


def test_the_batch_keeps_the_lock_while_one_more_slot_fits():
    sk, worker = guest(buffer=2 * TRUESIZE, variant="p1-p3")
    queue(sk, 200)
    assert worker.virtio_transport_recv_pkt_batchable()                  # (1 + 1) * 576 <= 1152
    queue(sk, 200)
    assert not worker.virtio_transport_recv_pkt_batchable()


# ---- virtio_transport_collapse_rx_queue() --------------------------------------------------

def test_collapse_keeps_a_partly_read_skb_as_it_is():
    # virtio_transport_can_collapse(): an skb the reader has started stays, so
    # its offset (and the fwd_cnt it will return) is not lost.
    sk, worker = guest(buffer="256K")
    head, *_ = queue(sk, 200, 200, 200, 200, offsets={0: 50})
    worker.virtio_transport_collapse_rx_queue(1)
    assert sk.rx_queue[0] is head and head.off == 50
    assert [s.len for s in sk.rx_queue] == [200, 600]


def test_collapse_sizes_the_new_skb_to_the_run_and_keeps_the_kmalloc_slack():
    # virtio_vsock_alloc_linear_skb(600 + header): __alloc_skb() asks kmalloc for
    # 1024 bytes, so the new skb has 60 bytes of tailroom after the run.
    sk, worker = guest(buffer="256K")
    queue(sk, 200, 200, 200)
    worker.virtio_transport_collapse_rx_queue(1)
    assert [(s.len, s.room) for s in sk.rx_queue] == [(600, kernel.rx_skb_room(600) - 600)] == [(600, 60)]
    # ... which a later small packet's tail-copy may use, all but one byte
    assert worker.virtio_transport_recv_enqueue(Packet(59, 1)) and [s.len for s in sk.rx_queue] == [659]
    assert worker.virtio_transport_recv_enqueue(Packet(1, 2)) and [s.len for s in sk.rx_queue] == [659, 1]


def test_collapse_stops_once_it_has_saved_enough():
    # No new skb is started once min_to_free skbs are saved.
    sk, worker = guest(buffer="256K")
    queue(sk, 200, 200, 200, 200, 200, 200, offsets={3: 10})
    worker.virtio_transport_collapse_rx_queue(2)
    assert [s.len for s in sk.rx_queue] == [600, 200, 200, 200]


def test_collapse_leaves_skbs_with_nothing_to_merge_with():
    sk, worker = guest(buffer="1M")
    skbs = queue(sk, 20000, 20000)                      # together past MAX_COLLAPSE_LEN
    worker.virtio_transport_collapse_rx_queue(1)
    assert list(sk.rx_queue) == skbs and worker.stats.collapse_allocs == 0


def test_collapse_merges_up_to_an_order_3_skb():
    # SKB_MAX_ORDER(VIRTIO_VSOCK_SKB_HEADROOM, 3): 32 KiB less header and shinfo.
    sk, worker = guest(buffer="1M")
    queue(sk, *[3000] * 10)
    worker.virtio_transport_collapse_rx_queue(1)
    assert [s.len for s in sk.rx_queue] == [30000]


def test_a_full_queue_collapses_to_make_room_for_this_packet_and_the_next():
    # recv_enqueue(): qlen >= queue_max frees qlen + 2 - queue_max slots.
    sk, worker = guest(buffer=4096)                     # queue_max 7
    queue(sk, *[200] * 7, offsets={2: 50})
    assert worker.virtio_transport_recv_enqueue(Packet(200, 9))
    assert [s.len for s in sk.rx_queue] == [400, 200, 800, 200]


# ---- virtio_transport_stream_do_dequeue(): fwd_cnt, buf_used, credit updates ------------

def test_a_credit_update_goes_when_free_space_falls_under_64k():
    # free_space = buf_alloc - (fwd_cnt - last_fwd_cnt) < VIRTIO_VSOCK_MAX_PKT_BUF_SIZE
    sk, rd, host = reader(buffer="256K")
    queue(sk, *[50000] * 5)
    assert rd.virtio_transport_stream_do_dequeue(200000) == 200000
    assert host.updates == [200000]


def test_no_credit_update_while_rcvlowat_bytes_remain():
    sk, rd, host = reader(buffer="256K", rcvlowat=100)
    queue(sk, 200, 100)
    rd.virtio_transport_stream_do_dequeue(200)
    assert sk.rx_bytes == 100 and host.updates == []


def test_a_partial_read_frees_nothing():
    sk, rd, host = reader(buffer=8192)
    queue(sk, 4096)
    rd.virtio_transport_stream_do_dequeue(64)
    assert (sk.buf_used, sk.fwd_cnt, sk.rx_bytes) == (4096, 0, 4032)


# ---- vhost_transport_do_send_pkt() ---------------------------------------------------------

def test_a_vhost_run_stops_when_it_reaches_vhost_weight_bytes():
    vhost, vq = vhost_alone(rx_buf_payload=4096)
    for i in range(200):
        vhost.vhost_transport_send_pkt(0.0, HostSkb(4096, i))
    drain(vhost.vhost_transport_do_send_pkt())
    assert len(vq.used) == kernel.VHOST_VSOCK_WEIGHT // 4096 == 128 and vhost.worker.signals == 1


def test_vhost_add_used_n_publishes_at_most_a_ring_at_a_time():
    # used_limit = vq->num: a run of 256 buffers is two used->idx updates of 128.
    # A guard on the function alone: in a run the ring never has more than
    # vq->num buffers to give, so the limit cannot bind there.
    vhost, vq = vhost_alone(used_batch=True)
    for i in range(300):
        vhost.vhost_transport_send_pkt(0.0, HostSkb(64, i))
    drain(vhost.vhost_transport_do_send_pkt())
    groups = {}
    for t, _ in vq.used:
        groups[t] = groups.get(t, 0) + 1
    assert list(groups.values()) == [128, 128] and vhost.worker.signals == 1


# ---- the host sender's wake-ups: sk_write_space() and sock_writeable() ---------------------

def test_tx_skb_truesize_follows_the_allocation():
    # Linear up to SKB_WITH_OVERHEAD(32 KiB): the head's allocation plus the aligned struct sk_buff.
    assert kernel.tx_skb_truesize(64) == kernel.SKB_SMALL_HEAD_CACHE_SIZE + 256   # small-head cache
    assert kernel.tx_skb_truesize(4096) == 8192 + 256       # 4140 B + skb_shared_info: kmalloc-8k
    # Above it, a header-only head plus page chunks of at most order 3.
    head = kernel.SKB_SMALL_HEAD_CACHE_SIZE + 256
    assert kernel.tx_skb_truesize(65536) == head + 2 * 32768
    assert kernel.tx_skb_truesize(40000) == head + 32768 + 8192
    assert kernel.SK_SNDBUF_DEFAULT == 212992


def test_sk_write_space_wakes_the_sender_only_while_the_socket_is_writeable():
    vhost, vq = vhost_alone(payload=64)
    woken = []
    vhost.sender.notify = woken.append
    vhost.sender.blocked = object()                        # asleep on credit
    limit = kernel.SK_SNDBUF_DEFAULT // 2                  # sock_writeable(): wmem < sndbuf / 2
    fit = (limit - 1) // kernel.tx_skb_truesize(64)        # skbs that leave it writeable
    for i in range(fit + 1):
        vhost.vhost_transport_send_pkt(0.0, HostSkb(64, i))
    assert vhost.sock_writeable(-1.0)                      # before they were queued, nothing charged
    assert not vhost.sk_write_space(0.0) and woken == []     # a credit update now wakes nobody
    vq.avail = 1                                           # vhost sends (and frees) one skb
    drain(vhost.vhost_transport_do_send_pkt())
    assert len(vhost.send_pkt_queue) == fit and len(woken) == 1   # sock_wfree: writeable again
    assert woken[0] > 0.0
    # A sender that has not run up to that time yet finds the wake-up recorded.
    vhost.sender.blocked, vhost.sender.resume_at = None, 0.0
    assert vhost.sk_write_space(woken[0] + 1) and list(vhost.sock.wakes) == [woken[0] + 1]
    vhost.sender.resume_at = woken[0] + 2                  # already past it: nothing to record
    assert vhost.sk_write_space(woken[0] + 1.5) and len(vhost.sock.wakes) == 1


# ---- lock_sock(): who waits for whom, and the futile wake-ups ------------------------------

@pytest.mark.parametrize("variant,payload", [("p1-p3", 256), ("baseline", 4096)])
def test_a_task_waits_for_the_lock_only_while_the_other_owns_it(variant, payload):
    r = vm.run(variant=variant, payload=payload, trace=True)
    owner, waits = None, 0
    for _, actor, event, info in sorted(r.trace, key=lambda e: e[0]):
        if event == "lock":
            owner = actor
        elif event == "unlock":
            owner = None
        elif event == "lock_wait":
            waits += 1
            assert info["owner"] == owner != actor
    assert waits > 0


def test_every_futile_wake_up_is_in_the_trace():
    # Both kinds: woken for data only to find the socket owned, and woken from
    # __lock_sock only to find the lock taken again (barging).
    r = vm.run(variant="baseline", payload=4096, trace=True)
    logged = [(actor, info["why"]) for _, actor, event, info in r.trace if event == "futile_wakeup"]
    for task, n in r.futile_wakeups_by_task.items():
        assert sum(actor == task for actor, _ in logged) == n
    assert {why for _, why in logged} == {"woken for data, socket owned", "lock taken again"}


# ---- the bounds of the parameters are the kernel's ----------------------------------------

def test_rx_buf_payload_bounds():
    assert vm.make_params(rx_buf_payload=kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)[0].buf_payload == 65536
    for bad in (0, kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE + 1):
        with pytest.raises(ValueError, match="rx_buf_payload"):
            vm.make_params(rx_buf_payload=bad)


def test_rcvlowat_may_be_the_whole_buffer_and_no_more():
    # vsock_set_rcvlowat() refuses a value above the buffer size ...
    assert vm.make_params(buffer=4096, rcvlowat=4096, recv_size=4095)[0].rcvlowat == 4096
    with pytest.raises(ValueError, match="rcvlowat"):
        vm.make_params(buffer=4096, rcvlowat=4097, recv_size=4095)
    # ... and __vsock_stream_recvmsg() fails a recv() with ENOMEM when its target,
    # min(rcvlowat, len), is not below the buffer size (stream_rcvhiwat).
    assert vm.make_params(buffer=4096, rcvlowat=4095)[0].rcvlowat == 4095
    for recv_size in (65536, 4096):
        with pytest.raises(ValueError, match="rcvlowat.*ENOMEM"):
            vm.make_params(buffer=4096, rcvlowat=4096, recv_size=recv_size)


def test_a_run_of_exactly_the_most_work_is_accepted():
    # MAX_WORK bounds a run's estimated work (vsockmodel.model.budget): 1000-byte
    # writes read one byte at a time are about 10,024 work units each, most of
    # them the 1000 recv() calls, so 997 of them fit and one more does not.
    p, _ = vm.make_params(payload=1000, recv_size=1, transfer=1000)
    writes = p.max_writes
    assert writes == 997
    assert p.work_per_write * writes <= MAX_WORK < p.work_per_write * (writes + 1)
    assert vm.make_params(payload=1000, recv_size=1, transfer=1000 * writes)[0].work_units <= MAX_WORK
    with pytest.raises(ValueError, match=f"transfer.*{1000 * writes}.*larger recv_size"):
        vm.make_params(payload=1000, recv_size=1, transfer=1000 * (writes + 1))
    # without a transfer, the default one shrinks to fit
    assert vm.make_params(payload=1000, recv_size=1)[0].work_units <= MAX_WORK


def test_vhost_exceeds_weight_at_its_two_boundaries():
    # vhost_exceeds_weight(): pkts >= weight || total_len >= byte_weight, with
    # vsock's VHOST_VSOCK_PKT_WEIGHT and VHOST_VSOCK_WEIGHT (payload bytes).
    pkts, nbytes = kernel.VHOST_VSOCK_PKT_WEIGHT, kernel.VHOST_VSOCK_WEIGHT
    assert not kernel.vhost_exceeds_weight(pkts - 1, nbytes - 1)
    assert kernel.vhost_exceeds_weight(pkts, 0) and kernel.vhost_exceeds_weight(1, nbytes)


# ---- the credit update's cost: virtio_transport_send_credit_update() ----------------------

def test_a_credit_update_costs_one_rx_buffer_allocation_and_one_kick_exit():
    # virtio_transport_alloc_skb() + virtqueue_add_sgs() is what virtio_vsock_rx_fill()
    # does per buffer (rx_fill_buf_ns); its virtqueue_kick() is the same notify, a VM
    # exit (vq_kick_ns): it delays the reader but guest perf does not see it.
    sk, rd, host = reader(buffer=65536, costs={"jitter_cv": 0.0})
    busy, acc = rd.busy, rd.acc
    sk.fwd_cnt = 4096
    rd.virtio_transport_send_credit_update()
    assert rd.busy - busy == pytest.approx(rd.c.rx_fill_buf_ns)
    assert rd.acc - acc == pytest.approx(rd.c.rx_fill_buf_ns + rd.c.vq_kick_ns)
    assert host.updates == [4096] and sk.last_fwd_cnt == 4096


def test_the_credit_update_runs_under_the_readers_lock_sock(monkeypatch):
    # virtio_transport_stream_do_dequeue() sends it while recvmsg owns the socket.
    from vsockmodel.sim.reader import Reader
    owned = []
    original = Reader.virtio_transport_send_credit_update
    monkeypatch.setattr(Reader, "virtio_transport_send_credit_update",
                        lambda self: owned.append(self.sk.owner is self) or original(self))
    r = vm.run(variant="baseline", payload=4096, recv_size=4096, transfer="2M")
    assert owned and all(owned) and len(owned) == r.counters["credit_updates"]
