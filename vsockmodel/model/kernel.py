"""Kernel constants the model uses, each with the source it comes from.

Paths are in the Linux tree. Where a value depends on the kernel version or on
the build configuration, the comment says which version or configuration.
"""

import functools

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# include/uapi/linux/virtio_vsock.h: sizeof(struct virtio_vsock_hdr).
VIRTIO_VSOCK_HDR_SIZE = 44

# include/linux/virtio_vsock.h: VIRTIO_VSOCK_SKB_HEADROOM = sizeof(hdr) (6.3+).
VIRTIO_VSOCK_SKB_HEADROOM = VIRTIO_VSOCK_HDR_SIZE

# include/linux/virtio_vsock.h: VIRTIO_VSOCK_MAX_PKT_BUF_SIZE = 64 KiB.
# The host splits a send() into skbs of at most this size
# (virtio_transport_send_pkt_info), and the RX lock batch of the series is
# bounded by it in bytes.
VIRTIO_VSOCK_MAX_PKT_BUF_SIZE = 64 * KiB

# Payload carried by one guest RX buffer (virtio_vsock_rx_fill), set by
# VIRTIO_VSOCK_DEFAULT_RX_BUF_SIZE in include/linux/virtio_vsock.h:
# - before 6.3 (virtio_vsock_pkt): a separate 4096-byte data buffer;
# - 6.3 to 6.16: alloc_skb(4096 + 44), 4096 bytes of payload behind the header;
# - 6.17+ (03a92f036a04, also taken into some stable trees):
#   VIRTIO_VSOCK_DEFAULT_RX_BUF_SIZE = SKB_WITH_OVERHEAD(1024 * 4) = 4096 - 320
#   = 3776 bytes in all, 3732 of payload behind the 44-byte header (x86_64,
#   320-byte skb_shared_info). The batching series was measured on a 2026 net-next
#   kernel, so 3732 is the default for the sk_buff variants.
RX_BUF_PAYLOAD_PRE_SKB = 4096
RX_BUF_PAYLOAD_6_3 = 4096
RX_BUF_PAYLOAD_6_17 = 3776 - VIRTIO_VSOCK_HDR_SIZE  # 3732

# include/linux/skbuff.h: sizeof(struct skb_shared_info) on x86_64 (from the
# BTF of a 6.18 build); every skb head ends with one.
SKB_SHARED_INFO_SIZE = 320
SMP_CACHE_BYTES = 64

# include/linux/skbuff.h: SKB_TRUESIZE(0) = SKB_DATA_ALIGN(sizeof(struct sk_buff))
# + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) = 256 + 320 on x86_64 with
# 64-byte cache lines (sizes from the BTF of a 6.18 x86_64 build).
SKB_TRUESIZE_0 = 576

# net/vmw_vsock/virtio_transport_common.c: MAX_COLLAPSE_LEN =
# SKB_MAX_ORDER(VIRTIO_VSOCK_SKB_HEADROOM, PAGE_ALLOC_COSTLY_ORDER), the most
# payload one collapsed skb holds: an order-3 allocation (8 pages of 4 KiB)
# less the header and the skb_shared_info.
MAX_COLLAPSE_LEN = (4096 << 3) - VIRTIO_VSOCK_SKB_HEADROOM - SKB_SHARED_INFO_SIZE

# net/vmw_vsock/virtio_transport_common.c: GOOD_COPY_LEN. Packets up to this
# size are copied into the tail of the last queued skb when it has room.
GOOD_COPY_LEN = 128

# net/vmw_vsock/af_vsock.c: the socket buffer's default size, and the default
# of its lower bound (vsk->buffer_min_size: vsock_update_buffer_size() clamps
# SO_VM_SOCKETS_BUFFER_SIZE to it; SO_VM_SOCKETS_BUFFER_MIN_SIZE can lower it,
# but the model keeps the default). The upper bound, VSOCK_DEFAULT_BUFFER_MAX_SIZE,
# is also 256 KiB; the model allows larger buffers as vsock_perf does, which
# raises SO_VM_SOCKETS_BUFFER_MAX_SIZE before it sets the size.
VSOCK_DEFAULT_BUFFER_SIZE = 256 * KiB
VSOCK_DEFAULT_BUFFER_MIN_SIZE = 128

# Size of the guest RX virtqueue (QEMU's vhost-vsock device offers 128
# descriptors per queue). The guest refills when fewer than half remain
# (virtio_transport_rx_work: rx_buf_nr < rx_buf_max_nr / 2).
RX_RING_SIZE = 128

# drivers/vhost/vsock.c: VHOST_VSOCK_PKT_WEIGHT and VHOST_VSOCK_WEIGHT bound one
# run of vhost_transport_do_send_pkt (checked by vhost_exceeds_weight).
VHOST_VSOCK_PKT_WEIGHT = 256
VHOST_VSOCK_WEIGHT = 0x80000  # 512 KiB of payload

# virt/kvm/kvm_main.c: the halt-polling window's module parameters.
# halt_poll_ns (the maximum) is KVM_HALT_POLL_NS_DEFAULT, 200000 on x86
# (arch/x86/include/asm/kvm_host.h); it is a cost (Costs.halt_poll_ns), so
# that it can be switched off. Growth doubles, from 10 us (halt_poll_ns_grow,
# halt_poll_ns_grow_start); shrinking halves (halt_poll_ns_shrink = 2 since
# commit aeb1b22a3ac8, "KVM: Enable halt polling shrink parameter by default").
KVM_HALT_POLL_NS_DEFAULT = 200_000
HALT_POLL_NS_GROW = 2
HALT_POLL_NS_GROW_START = 10_000
HALT_POLL_NS_SHRINK = 2

# include/uapi/linux/virtio_vsock.h: enum virtio_vsock_op (the ones the model sends).
VIRTIO_VSOCK_OP_SHUTDOWN = 4
VIRTIO_VSOCK_OP_RW = 5
VIRTIO_VSOCK_OP_CREDIT_UPDATE = 6

# include/uapi/asm-generic/errno.h: what a reset on a full receive queue reports (a4f0b001782b).
ENOBUFS = 105

# Seed series, patch 2/5 (virtio_transport.c): the RX lock batch bound.
VIRTIO_TRANSPORT_RX_BATCH_MAX_PKTS = 64
VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES = VIRTIO_VSOCK_MAX_PKT_BUF_SIZE


def vhost_exceeds_weight(pkts: int, total_len: int) -> bool:
    """drivers/vhost/vhost.c, with vsock's weights: end this run of
    vhost_transport_do_send_pkt() after ``pkts`` buffers carrying ``total_len``
    bytes of payload (the loop adds payload_len, not the header)."""
    return pkts >= VHOST_VSOCK_PKT_WEIGHT or total_len >= VHOST_VSOCK_WEIGHT


def queue_max(buf_alloc: int) -> int:
    """virtio_transport_recv_enqueue(): queue length that triggers collapse."""
    return buf_alloc // SKB_TRUESIZE_0


def rx_skb_has_headroom(qlen: int, buf_alloc: int) -> bool:
    """virtio_transport_rx_skb_has_headroom() (batching series, patch 2/5).

    True when one more skb's metadata charge fits the metadata budget:
    (qlen + 1) * SKB_TRUESIZE(0) <= buf_alloc (c6087c5aaad6 gives metadata its
    own buf_alloc budget, separate from the payload budget).
    """
    return (qlen + 1) * SKB_TRUESIZE_0 <= buf_alloc


def kmalloc_size_roundup(size: int) -> int:
    """mm/slab_common.c: the size kmalloc() really allocates for ``size`` bytes.

    For the sizes an skb head has here (above 192 bytes) the kmalloc caches are
    powers of two up to 8 KiB, and larger requests go to the page allocator,
    which also rounds up to a power of two (pages << order).
    """
    return 1 << max(0, size - 1).bit_length()


# net/core/skbuff.c: heads of at most SKB_SMALL_HEAD_CACHE_SIZE bytes come from
# their own slab cache (skb_small_head_cache) and are that size. It is
# SKB_HEAD_ALIGN(max(MAX_TCP_HEADER, GRO_MAX_HEAD_PAD)), plus L1_CACHE_BYTES if
# that is a power of two: a few hundred bytes that depend on the configuration
# (MAX_TCP_HEADER). The model takes 640, a stated value. It matters only for
# heads that small: never an RX buffer, only a collapsed skb of a few hundred bytes.
SKB_SMALL_HEAD_CACHE_SIZE = 640


def skb_head(size: int) -> tuple[int, int]:
    """(bytes asked for, bytes allocated) for the head of alloc_skb(size).

    kmalloc_reserve() (net/core/skbuff.c) asks for SKB_HEAD_ALIGN(size): the
    size aligned to the cache line (SKB_DATA_ALIGN) plus the aligned
    skb_shared_info, and gets a small-head slab object or the kmalloc size.
    """
    def align(n: int) -> int:
        return -(-n // SMP_CACHE_BYTES) * SMP_CACHE_BYTES

    asked = align(size) + align(SKB_SHARED_INFO_SIZE)
    if asked <= SKB_SMALL_HEAD_CACHE_SIZE:
        return asked, SKB_SMALL_HEAD_CACHE_SIZE
    return asked, kmalloc_size_roundup(asked)


def rx_skb_head(rx_buf_payload: int) -> tuple[int, int]:
    """(bytes asked for, bytes allocated) for the head of one guest RX skb:
    virtio_vsock_alloc_skb() calls alloc_skb(rx_buf_payload + 44)."""
    return skb_head(rx_buf_payload + VIRTIO_VSOCK_SKB_HEADROOM)


def rx_skb_room(rx_buf_payload: int) -> int:
    """Payload bytes an RX skb can hold behind its header: its tailroom when empty.

    __alloc_skb() (net/core/skbuff.c) gets the head from kmalloc_reserve()
    (rx_skb_head) and sets skb->end to what the allocation leaves before the
    skb_shared_info (SKB_WITH_OVERHEAD); virtio_vsock_alloc_skb() reserves the
    header in front. So a 6.17 buffer (3776 + 320 = 4096 bytes) has no
    slack, 3732 bytes of room, while a 6.3 buffer (4160 + 320 bytes, an 8 KiB
    allocation) has 7828 bytes of room, the waste 03a92f036a04 removed ("so
    that the entire thing fits exactly into a single 4KiB page"). The tail-copy
    of small packets (virtio_transport_recv_enqueue) may use all of it but one
    byte: it needs skb->len < skb_tailroom(last_skb).
    """
    _, allocated = rx_skb_head(rx_buf_payload)
    return allocated - SKB_SHARED_INFO_SIZE - VIRTIO_VSOCK_SKB_HEADROOM


# net/core/sock.c: sock_init_data() starts sk->sk_sndbuf at sysctl_wmem_default,
# whose default is SK_WMEM_MAX = _SK_MEM_OVERHEAD * _SK_MEM_PACKETS =
# SKB_TRUESIZE(256) * 256 (include/net/sock.h): 212,992 bytes with the x86_64
# sizes above. Neither af_vsock nor vsock_perf changes it (vsock_perf sets
# SO_VM_SOCKETS_BUFFER_SIZE, the credit window, not SO_SNDBUF).
SK_SNDBUF_DEFAULT = (256 + SKB_TRUESIZE_0) * 256

# include/linux/virtio_vsock.h (6.17+, Will Deacon's nonlinear-skb series):
# virtio_vsock_alloc_skb() allocates a linear skb up to
# SKB_WITH_OVERHEAD(PAGE_SIZE << PAGE_ALLOC_COSTLY_ORDER) bytes, and above that
# a header-only head plus page fragments (alloc_skb_with_frags, order <= 3).
VIRTIO_VSOCK_LINEAR_SKB_MAX = (4096 << 3) - SKB_SHARED_INFO_SIZE
PAGE_SIZE = 4096
PAGE_ALLOC_COSTLY_ORDER = 3


@functools.lru_cache(maxsize=64)
def tx_skb_truesize(payload: int) -> int:
    """skb->truesize of one host TX skb carrying ``payload`` bytes.

    virtio_transport_alloc_skb() (net/vmw_vsock/virtio_transport_common.c)
    allocates it with virtio_vsock_alloc_skb(44 + payload) and charges it to
    the sending socket's sk_wmem_alloc (skb_set_owner_w); vhost frees it once
    every byte is in guest buffers (virtio_transport_consume_skb_sent ->
    consume_skb -> sock_wfree).

    A linear skb's truesize is SKB_TRUESIZE() of its head's usable size
    (__finalize_skb_around): the allocation plus the aligned struct sk_buff. A
    nonlinear one adds PAGE_SIZE << order for each page chunk, the order falling
    from 3 as the rest shrinks (alloc_skb_with_frags, net/core/skbuff.c).
    """
    size = VIRTIO_VSOCK_SKB_HEADROOM + payload
    sk_buff = SKB_TRUESIZE_0 - SKB_SHARED_INFO_SIZE        # SKB_DATA_ALIGN(sizeof(struct sk_buff))
    if size <= VIRTIO_VSOCK_LINEAR_SKB_MAX:
        return skb_head(size)[1] + sk_buff
    truesize = skb_head(VIRTIO_VSOCK_SKB_HEADROOM)[1] + sk_buff
    rest, order = payload, PAGE_ALLOC_COSTLY_ORDER
    while rest:
        page_aligned = -(-rest // PAGE_SIZE) * PAGE_SIZE
        while order and page_aligned < PAGE_SIZE << order:
            order -= 1
        chunk = PAGE_SIZE << order
        truesize += chunk
        rest -= min(rest, chunk)
    return truesize
