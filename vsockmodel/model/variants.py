"""The kernel versions the model can run, named after the postings.

Each variant is a set of switches on the RX path; ``vsockmodel.sim.guest``
reads the switches, so a variant adds no code of its own. Everything else
(the host, the credit rules, the socket lock, the reader) is the same recent
kernel in every variant, so comparing two variants isolates what the switches
change. ``pre-skb`` is therefore the old RX data structures on an otherwise
modern path, not a faithful Linux 6.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import kernel


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    skb: bool                   # sk_buff RX path (6.3+, 71dc9ec9ac7d) or virtio_vsock_pkt
    batch: bool                 # patch 2: one lock_sock across a bounded run of packets
    reuse_lookup: bool          # patch 3: same-flow packets skip the socket lookup
    coalesce_write_space: bool  # patch 4: one sk_write_space per batch
    defer_data_ready: bool      # patch 5: sk_data_ready after the batch unlocks
    rx_buf_payload: int         # payload bytes per guest RX buffer on that kernel

    @property
    def metadata_budget(self) -> bool:
        # 059b7dbd20a6 / c6087c5aaad6 charge SKB_TRUESIZE(0) per queued skb;
        # the virtio_vsock_pkt list had no such budget.
        return self.skb


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("pre-skb",
                "virtio_vsock_pkt: two allocations and two descriptors per RX buffer, "
                "a list_head queue, per-packet lookup and lock (the data structures of "
                "Linux 5.11 to 6.2, on the baseline's otherwise modern RX path)",
                skb=False, batch=False, reuse_lookup=False, coalesce_write_space=False,
                defer_data_ready=False, rx_buf_payload=kernel.RX_BUF_PAYLOAD_PRE_SKB),
        Variant("baseline",
                "sk_buff RX path: header in headroom, one descriptor, sk_buff_head; "
                "a lookup and a lock_sock for every packet (the series' baseline)",
                skb=True, batch=False, reuse_lookup=False, coalesce_write_space=False,
                defer_data_ready=False, rx_buf_payload=kernel.RX_BUF_PAYLOAD_6_17),
        Variant("p1-p3",
                "baseline + a bounded lock batch (64 packets / 64 KiB) for one established "
                "STREAM socket, with same-flow lookup reuse",
                skb=True, batch=True, reuse_lookup=True, coalesce_write_space=False,
                defer_data_ready=False, rx_buf_payload=kernel.RX_BUF_PAYLOAD_6_17),
        Variant("p1-p5",
                "p1-p3 + one coalesced sk_write_space per batch and sk_data_ready deferred "
                "until the batch unlocks",
                skb=True, batch=True, reuse_lookup=True, coalesce_write_space=True,
                defer_data_ready=True, rx_buf_payload=kernel.RX_BUF_PAYLOAD_6_17),
    )
}
