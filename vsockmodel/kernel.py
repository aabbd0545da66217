"""Kernel constants the model uses, each with the source it comes from.

Paths are in the Linux tree. Where a value depends on the kernel version or on
the build configuration, the comment says which version or configuration.
"""

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

# Payload carried by one guest RX buffer (virtio_vsock_rx_fill):
# - before 6.3 (virtio_vsock_pkt): a separate 4096-byte data buffer;
# - 6.3 to 6.16: alloc_skb(4096 + 44), 4096 bytes of payload behind the header;
# - 6.17+ (03a92f036a04): SKB_WITH_OVERHEAD(4096) = 4096 - 320 = 3776 bytes in
#   all, 3732 of payload behind the 44-byte header (x86_64, 320-byte
#   skb_shared_info). The seed series was measured on a 2026 net-next kernel,
#   so 3732 is the default for the sk_buff variants.
RX_BUF_PAYLOAD_PRE_SKB = 4096
RX_BUF_PAYLOAD_6_3 = 4096
RX_BUF_PAYLOAD_6_17 = 3776 - VIRTIO_VSOCK_HDR_SIZE  # 3732

# include/linux/skbuff.h: SKB_TRUESIZE(0) = SKB_DATA_ALIGN(sizeof(struct sk_buff))
# + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) = 256 + 320 on x86_64 with
# 64-byte cache lines (sizes from the BTF of a 6.18 x86_64 build).
SKB_TRUESIZE_0 = 576

# net/vmw_vsock/virtio_transport_common.c: GOOD_COPY_LEN. Packets up to this
# size are copied into the tail of the last queued skb when it has room.
GOOD_COPY_LEN = 128

# include/net/af_vsock.h / net/vmw_vsock/af_vsock.c: socket buffer defaults.
VSOCK_DEFAULT_BUFFER_SIZE = 256 * KiB
VSOCK_DEFAULT_BUFFER_MIN_SIZE = 128
VIRTIO_VSOCK_MAX_BUF_SIZE = 0xFFFFFFFF

# Size of the guest RX virtqueue (QEMU's vhost-vsock device offers 128
# descriptors per queue). The guest refills when fewer than half remain
# (virtio_transport_rx_work: rx_buf_nr < rx_buf_max_nr / 2).
RX_RING_SIZE = 128

# drivers/vhost/vsock.c: VHOST_VSOCK_PKT_WEIGHT and VHOST_VSOCK_WEIGHT bound one
# run of vhost_transport_do_send_pkt (checked by vhost_exceeds_weight).
VHOST_VSOCK_PKT_WEIGHT = 256
VHOST_VSOCK_WEIGHT = 0x80000  # 512 KiB of payload

# include/uapi/linux/virtio_vsock.h: enum virtio_vsock_op (the two the model sends).
VIRTIO_VSOCK_OP_SHUTDOWN = 4
VIRTIO_VSOCK_OP_RW = 5

# Seed series, patch 2/5 (virtio_transport.c): the RX lock batch bound.
VIRTIO_TRANSPORT_RX_BATCH_MAX_PKTS = 64
VIRTIO_TRANSPORT_RX_BATCH_MAX_BYTES = VIRTIO_VSOCK_MAX_PKT_BUF_SIZE


def queue_max(buf_alloc: int) -> int:
    """virtio_transport_recv_enqueue(): queue length that triggers collapse."""
    return buf_alloc // SKB_TRUESIZE_0


def rx_skb_has_headroom(qlen: int, buf_alloc: int) -> bool:
    """virtio_transport_rx_skb_has_headroom() (seed series, patch 2/5).

    True when one more skb's metadata charge fits the metadata budget:
    (qlen + 1) * SKB_TRUESIZE(0) <= buf_alloc (c6087c5aaad6 gives metadata its
    own buf_alloc budget, separate from the payload budget).
    """
    return (qlen + 1) * SKB_TRUESIZE_0 <= buf_alloc
