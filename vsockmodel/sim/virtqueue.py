"""The guest RX virtqueue as the two sides see it.

The guest posts empty buffers (``rx_fill``); vhost takes one per packet and
publishes it in the used ring at a known simulated time (``vhost_add_used``, or
in groups with ``vhost_add_used_n``). The guest RX worker takes used buffers
whose publication time has passed (``virtqueue_get_buf``, in
``RxWorker.rx_work``).
"""

from __future__ import annotations

from collections import deque

from ..model import kernel


class Packet:
    """One guest RX buffer as filled by vhost: a header plus ``len`` payload bytes."""

    __slots__ = ("len", "write", "op")

    def __init__(self, length: int, write: int, op: int = kernel.VIRTIO_VSOCK_OP_RW) -> None:
        self.len = length
        self.write = write    # index of the host send() it belongs to
        self.op = op          # hdr->op: OP_RW (data) or OP_SHUTDOWN


class RxVirtqueue:
    __slots__ = ("size", "avail", "used", "rx_buf_nr", "rx_buf_max_nr", "cb_enabled_at",
                 "vhost_notify")

    def __init__(self, size: int = kernel.RX_RING_SIZE) -> None:
        self.size = size
        self.avail = size              # posted by the guest, not yet taken by vhost
        self.used: deque = deque()     # (publish time, Packet), oldest first
        self.rx_buf_nr = size          # virtio_vsock::rx_buf_nr
        self.rx_buf_max_nr = size      # virtio_vsock::rx_buf_max_nr
        self.cb_enabled_at: float | None = 0.0  # when virtqueue_enable_cb() last ran; None if disabled
        self.vhost_notify = True       # vhost_enable_notify: vhost wants a kick

    def has_used(self, t: float) -> bool:
        """True if a used buffer is published by t (virtqueue_enable_cb's check)."""
        return bool(self.used) and self.used[0][0] <= t

    def publish(self, t: float, pkt: Packet) -> None:
        """vhost_add_used(): the filled buffer becomes visible in the used ring at t."""
        self.used.append((t, pkt))

    def free_slots(self) -> int:
        """vq->num_free: descriptors the guest can post again."""
        return self.size - self.rx_buf_nr
