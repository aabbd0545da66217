"""Starting points for the lab's Python: one or two short programs per chapter.

Each uses only ``vsockmodel`` (and ``vsockmodel.lab.show`` to draw), runs in a
few seconds, and prints the same text in the browser as in CPython with the
package installed (tests/test_lab_browser.py runs both and compares).
Chapters are keyed by slug, not number: the numbering may change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    chapter: str          # the chapter's slug
    chapter_title: str
    title: str
    code: str

    @property
    def key(self) -> str:
        return f"{self.chapter}/{self.title.lower().replace(' ', '-')}"

    def to_json(self) -> dict:
        return {"key": self.key, "chapter": self.chapter, "chapter_title": self.chapter_title,
                "title": self.title, "code": self.code}


EXAMPLES: tuple[Example, ...] = (
    Example("skbuff", "From virtio_vsock_pkt to sk_buff", "The conversion at 64 B", '''\
# The sk_buff conversion: the same small writes before and after it.
import vsockmodel

for variant in ("pre-skb", "baseline"):
    r = vsockmodel.run(variant=variant, payload=64, transfer="256K")
    print(f"{variant:9} {r.throughput_gbps:.3f} Gbit/s, "
          f"{r.rx_cycles_per_byte:.1f} guest CPU1 cycles per byte")
'''),
    Example("per-packet-locking", "Per-packet socket locking", "Cycles per write", '''\
# Chapter 2: the baseline's guest CPU1 cycles per write, small payloads.
import vsockmodel

for payload in (64, 256, 1024):
    r = vsockmodel.run(variant="baseline", payload=payload, transfer="256K")
    per_write = r.rx_cycles_per_byte * payload
    print(f"{payload:5} B: {per_write:6.0f} cycles per write, "
          f"{r.futile_wakeups} futile wake-ups of {r.wakeups}")
'''),
    Example("per-packet-locking", "Per-packet socket locking", "Who waits for the lock", '''\
# The RX worker's time: on its CPU, waiting for the socket lock, idle.
import vsockmodel

r = vsockmodel.run(variant="baseline", payload=64, transfer="256K")
for part, share in r.worker_time().items():
    print(f"{part:10} {100 * share:5.1f} % of the run")
vsockmodel.lab.show(r, title="baseline, 64 B writes")
'''),
    Example("per-packet-locking", "Per-packet socket locking", "Futile wake-ups", '''\
# Chapter 2, exercise 3: how often the reader is woken, and how often for nothing.
import vsockmodel

for variant in ("baseline", "p1-p5"):
    for payload in (64, 65536):
        r = vsockmodel.run(variant=variant, payload=payload)
        woken = 1000 * r.wakeups_by_task["reader"] / r.packets
        futile = 1000 * r.futile_wakeups_by_task.get("reader", 0) / r.packets
        print(f"{variant:8} {payload:6} B: reader woken {woken:5.1f}, "
              f"futile {futile:5.1f} per 1000 packets")
'''),
    Example("batched-rx", "Batched RX", "The batch limit", '''\
# Chapter 3: patch 2's lock batch limit, from one packet per lock to 64.
import vsockmodel

points = []
for limit in (1, 2, 4, 16, 64):
    r = vsockmodel.run(variant="p1-p3", payload=64, batch_pkts=limit, transfer="256K")
    points.append((limit, r.throughput_gbps))
    print(f"batch_pkts={limit:3}: {r.throughput_gbps:.3f} Gbit/s")
vsockmodel.lab.show(points, title="p1-p3, 64 B writes", x="batch_pkts (packets)", y="throughput (Gbit/s)")
'''),
    Example("batched-rx", "Batched RX", "Baseline against p1-p3", '''\
# Paired seeds: the change and its 95 % interval, as the series reports it.
import vsockmodel

c = vsockmodel.compare("baseline", "p1-p3", replications=3, payload=256, transfer="128K")
lo, hi = c.change_ci
print(f"p1-p3 against baseline at 256 B: {c.change_pct:+.1f} % [{lo:+.1f}, {hi:+.1f}]")
vsockmodel.lab.show(c)
'''),
    Example("metadata-slots", "Metadata slots", "A small buffer", '''\
# Chapter 4: a 1 KiB socket buffer, with and without patch 2's headroom check.
import vsockmodel

for check in (True, False):
    r = vsockmodel.run(variant="p1-p3", payload=64, buffer="1K", headroom_check=check,
                       transfer="64K")
    print(f"headroom_check={check!s:5}: {r.throughput_gbps:.3f} Gbit/s, "
          f"{r.resets} resets, {r.bytes_dropped} bytes dropped")
'''),
    Example("notification-deferral", "Notification deferral", "Patches 4 and 5", '''\
# Deferring the data-ready callback: p1-p3 against p1-p5, wake-ups per write.
import vsockmodel

for variant in ("p1-p3", "p1-p5"):
    r = vsockmodel.run(variant=variant, payload=64, transfer="256K")
    print(f"{variant}: {r.wakeups / r.writes:.3f} wake-ups per write, "
          f"{r.recv_per_write:.3f} recv() calls per write")
'''),
    Example("notification-deferral", "Notification deferral", "A high SO_RCVLOWAT", '''\
# Chapter 5, exercise 4: SO_RCVLOWAT cuts recv() calls. Does it cut wake-ups?
import vsockmodel

for lowat in (1, 4096, 16384):
    r = vsockmodel.run(variant="p1-p5", payload=64, rcvlowat=lowat, transfer="256K")
    woken = 1000 * r.wakeups_by_task["reader"] / r.packets
    print(f"rcvlowat {lowat:5}: {r.recv_per_write:.3f} recv() per write, "
          f"reader woken {woken:.0f} times per 1000 packets")
'''),
    Example("notification-deferral", "Notification deferral", "Without IPI virtualisation", '''\
# Chapter 5, exercise 5: every IPI to a halted vCPU a VM exit of the waker.
import vsockmodel

for variant in ("baseline", "p1-p5"):
    posted = vsockmodel.run(variant=variant, payload=64, transfer="256K", ipi_virtualization=True)
    exits = vsockmodel.run(variant=variant, payload=64, transfer="256K", ipi_virtualization=False)
    change = 100 * (exits.throughput_gbps / posted.throughput_gbps - 1)
    print(f"{variant:8}: {posted.throughput_gbps:.3f} Gbit/s with IPI virtualisation, without "
          f"{exits.throughput_gbps:.3f} ({change:+.1f} %)")
'''),
    Example("measuring", "How the numbers were measured", "Seed to seed", '''\
# One run is one sample: the same configuration over five seeds.
import vsockmodel

values = [vsockmodel.run(variant="p1-p5", payload=4096, seed=s, transfer="1M").throughput_gbps
          for s in range(1, 6)]
mean = sum(values) / len(values)
print("per seed:", ", ".join(f"{v:.3f}" for v in values))
print(f"mean {mean:.3f} Gbit/s, spread {100 * (max(values) - min(values)) / mean:.1f} %")
vsockmodel.lab.show(list(enumerate(values, start=1)), title="p1-p5, 4 KiB writes", x="seed",
                    y="throughput (Gbit/s)")
'''),
)
BY_KEY = {e.key: e for e in EXAMPLES}
DEFAULT = EXAMPLES[1]


def describe() -> list[dict]:
    return [e.to_json() for e in EXAMPLES]
