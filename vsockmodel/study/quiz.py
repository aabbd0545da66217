"""Seeded problem sets, OSTEP-homework style: a chapter and a seed pick a problem,
and the model computes its answer.

The same code answers the command line (``python -m vsockmodel quiz --chapter 3
--seed 42``, ``-c`` for the answer, ``--answer X`` to check one) and the
browser lab's problem panel, so a seed gives the same problem and the same
answer everywhere: an instructor hands out seeds 1-30 and checks the answers
against the key (``python -m vsockmodel quiz --chapter 3 --key 1-30``).

Each chapter has at least three kinds of problem. A problem is a question,
its settings (which the lab can open), the model's answer with the tolerance
a right answer must meet, and the model's explanation.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import asdict, dataclass, field
from typing import Callable

from ..model import kernel
from ..model.params import make_params
from ..model.units import check_int, fmt_size, parse_int, quote
from ..sim.errors import Deadlock
from .cache import cached_run

CHAPTERS = (1, 2, 3, 4, 5, 6)
MAX_SEED = 2**31 - 1
TRIES = 2                    # a wrong answer gets a hint and one more try before the answer is shown
REDRAWS = 3                  # draws a seed may take past configurations the model cannot finish


@dataclass(frozen=True)
class Problem:
    chapter: int
    seed: int
    kind: str
    question: str
    answer: float                 # a number
    unit: str
    tolerance: float              # a right answer is within this of ``answer`` (same unit)
    explanation: str
    settings: dict = field(default_factory=dict)   # vsockmodel.run's settings, for the lab
    code: str = ""                # Python that prints ``answer``: the model's call, seeds included
    hint: str = ""                # after a wrong first try: where to look, not the answer

    @property
    def command(self) -> str:
        """The shell command that computes the model's answer (``code``, run by Python)."""
        return f'python -c "{self.code}"'

    @property
    def answer_text(self) -> str:
        return f"{_round(self.answer, self.tolerance)} {self.unit}".strip()

    @property
    def tolerance_text(self) -> str:
        """Which answers count as right, in words."""
        if self.tolerance == 0:
            return "the exact number"
        return f"within ±{_round(self.tolerance, self.tolerance / 10)} {self.unit}".strip()

    def to_dict(self, answers: bool = True) -> dict:
        d = asdict(self)
        d.update(answer_text=self.answer_text, tolerance_text=self.tolerance_text, command=self.command)
        if not answers:
            for k in ("answer", "answer_text", "explanation", "code", "command", "hint"):
                d.pop(k)
        return d


def _round(x: float, scale: float) -> str:
    """x to the precision its tolerance calls for."""
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    digits = max(0, min(4, -int(math.floor(math.log10(scale))) if scale > 0 else 3))
    return f"{x:.{digits}f}"


def _code(expr: str, imports: str = "import vsockmodel as vm") -> str:
    """Python that prints ``expr``: what a problem's ``code`` holds. It goes
    inside double quotes on a command line, so ``expr`` uses single ones."""
    assert '"' not in expr and "$" not in expr, expr
    return f"{imports}; print({expr})"


def _call(fn: str, *args, **kwargs) -> str:
    """``vm.fn(args, k=v, ...)`` as the answer's code writes it: the model's own API."""
    given = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"vm.{fn}({', '.join(given)})"


def _payload(rng: random.Random, low: int = 64, high: int = 65536) -> int:
    """A payload between two sizes, log-uniform, often off the series' grid."""
    return int(round(2 ** rng.uniform(math.log2(low), math.log2(high))))


def _write_of_buffers(rng: random.Random, most: int = 24) -> int:
    """A write that fills 1 to ``most`` guest RX buffers, about as many seeds each: a
    per-write answer then scales with a number the seed draws, whatever the model's costs."""
    room = kernel.RX_BUF_PAYLOAD_6_17
    return max(64, rng.randint(1, most) * room - rng.randint(0, room // 2))


def _per_write(count: int, writes: int) -> float:
    return 1000 * count / writes if writes else 0.0


# ---- chapter 1: from virtio_vsock_pkt to sk_buff ----------------------------------------

def _packets_per_write(rng, seed):
    variant = rng.choice(["pre-skb", "baseline"])
    payload = _payload(rng, 1000, 200_000)
    p, _ = make_params(variant=variant, payload=payload)
    kernel_name = "Linux 6.2 (virtio_vsock_pkt)" if variant == "pre-skb" else "Linux 6.17 (sk_buff)"
    return Problem(1, seed, "packets per write",
                   f"A host process writes {payload} bytes per send() to a guest running {kernel_name} "
                   f"(the model's variant {variant}). How many guest RX buffers does one write fill?",
                   p.packets_per_write, "buffers", 0.0,
                   f"Each buffer carries at most {p.buf_payload} B of payload behind the "
                   f"{kernel.VIRTIO_VSOCK_HDR_SIZE} B header; the sender cuts skbs of at most "
                   f"{fmt_size(kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)} and vhost splits each over buffers: "
                   f"{p.packets_per_write} buffers.",
                   {"variant": variant, "payload": payload},
                   hint=f"Divide the write by the payload one buffer carries ({p.buf_payload} B on {variant}), "
                        f"rounding up within each skb of at most {fmt_size(kernel.VIRTIO_VSOCK_MAX_PKT_BUF_SIZE)}.",
                   code=_code(f"{_call('make_params', variant=variant, payload=payload)}[0].packets_per_write"))


def _skb_gain(rng, seed):
    payload = _payload(rng)
    new = cached_run(variant="baseline", payload=payload, seed=seed)
    old = cached_run(variant="pre-skb", payload=payload, seed=seed)
    return Problem(1, seed, "pre-skb against sk_buff",
                   f"With {payload}-byte writes the model's sk_buff kernel (baseline) moves "
                   f"{new.throughput_gbps:.3f} Gbit/s (seed {seed}). What throughput does the "
                   f"virtio_vsock_pkt kernel (pre-skb) reach with the same writes and seed?",
                   old.throughput_gbps, "Gbit/s", 0.1 * old.throughput_gbps,
                   f"pre-skb {old.throughput_gbps:.3f} Gbit/s against baseline {new.throughput_gbps:.3f}: "
                   f"{100 * (old.throughput_gbps / new.throughput_gbps - 1):+.0f} %. One allocation and one "
                   f"descriptor per buffer instead of two, a different buffer size, and the same per-packet lock.",
                   {"variant": "pre-skb", "payload": payload, "seed": seed},
                   hint="Count the buffers each write fills on each kernel (4096 B against 3732 B of payload), "
                        "and remember that both take the socket lock once per buffer.",
                   code=_code(_call("run", variant="pre-skb", payload=payload, seed=seed) + ".throughput_gbps"))


def _cycles_per_byte(rng, seed):
    variant = rng.choice(["pre-skb", "baseline"])
    payload = _payload(rng)
    r = cached_run(variant=variant, payload=payload, seed=seed)
    return Problem(1, seed, "cycles per byte",
                   f"How many guest CPU1 cycles does the RX worker spend per received byte with "
                   f"{payload}-byte writes on variant {variant}?",
                   r.rx_cycles_per_byte, "cycles/B", 0.1 * r.rx_cycles_per_byte,
                   f"The model's worker was busy {100 * r.utilization['worker']:.0f} % of the run; "
                   f"its busy time at the clock rate over the bytes received is "
                   f"{r.rx_cycles_per_byte:.3g} cycles/B. Per-packet costs dominate small writes.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   hint="A buffer costs about the same whatever it carries: the cycles per byte fall roughly "
                        "as one over the bytes per buffer, until the copy's per-byte cost is all that is left.",
                   code=_code(_call("run", variant=variant, payload=payload, seed=seed) + ".rx_cycles_per_byte"))


# ---- chapter 2: one lock per packet ----------------------------------------------------

def _recv_calls(rng, seed):
    payload = _payload(rng, 4096, 65536)
    recv_size = _payload(rng, 1024, 65536)
    r = cached_run(variant="baseline", payload=payload, recv_size=recv_size, seed=seed)
    return Problem(2, seed, "recv() calls per write",
                   f"The guest reads with recv() of {recv_size} bytes while the host writes {payload} bytes "
                   f"per send(), on the baseline kernel. How many recv() calls does one write take, on average?",
                   r.recv_per_write, "calls", max(0.05, 0.1 * r.recv_per_write),
                   f"{r.recv_calls} recv() calls for {r.writes} writes: at least {payload} / {recv_size} per "
                   f"write, and more when a reader woken before the whole write has arrived returns what is "
                   f"queued (SO_RCVLOWAT is 1).",
                   {"variant": "baseline", "payload": payload, "recv_size": recv_size, "seed": seed},
                   hint="Start from the write over the recv() size; then ask whether a woken reader waits for "
                        "the whole write or returns what is queued.",
                   code=_code(_call("run", variant="baseline", payload=payload, recv_size=recv_size, seed=seed)
                              + ".recv_per_write"))


def _futile(rng, seed):
    payload = _write_of_buffers(rng)
    r = cached_run(variant="baseline", payload=payload, seed=seed)
    per_k = _per_write(r.futile_wakeups, r.writes)
    return Problem(2, seed, "futile wake-ups",
                   f"On the baseline kernel with {payload}-byte writes, how many futile wake-ups (a task "
                   f"woken only to find the socket lock taken) are there per 1000 writes?",
                   per_k, "per 1000 writes", max(2.0, 0.1 * per_k),
                   f"{r.futile_wakeups} futile wake-ups in {r.writes} writes ({r.packets} packets): the worker "
                   f"takes lock_sock for every packet, and a woken reader often finds it owned again.",
                   {"variant": "baseline", "payload": payload, "seed": seed},
                   hint="The lock is taken once per packet, not per write: count the buffers one write fills "
                        "(3732 B each), then how often a packet's hand-off is futile.",
                   code=_code(f"1000 * (r := {_call('run', variant='baseline', payload=payload, seed=seed)})"
                              ".futile_wakeups / r.writes"))


def _lock_wait(rng, seed):
    payload = _write_of_buffers(rng)
    r = cached_run(variant="baseline", payload=payload, seed=seed)
    per_write_us = r.worker_time()["lock_wait"] * r.sim_time_us / r.writes
    return Problem(2, seed, "the worker's lock wait",
                   f"On the baseline kernel with {payload}-byte writes, how many microseconds does the RX "
                   f"worker spend waiting for the socket lock per write, on average?",
                   per_write_us, "us", 0.1 * per_write_us,
                   f"Waiting for the lock {100 * r.worker_time()['lock_wait']:.0f} % of the "
                   f"{r.sim_time_us:.0f} us run, over {r.writes} writes: {per_write_us:.2f} us each. The reader "
                   f"holds the lock while it copies data out, once per packet.",
                   {"variant": "baseline", "payload": payload, "seed": seed},
                   hint="The worker may sleep on the lock once per packet: count the buffers one write fills, "
                        "then read the run's lock-wait share and its length.",
                   code=_code(f"(r := {_call('run', variant='baseline', payload=payload, seed=seed)})"
                              ".worker_time()['lock_wait'] * r.sim_time_us / r.writes"))


# ---- chapter 3: batched RX -------------------------------------------------------------

def _batch_gain(rng, seed):
    payload = _payload(rng, 64, 4096)       # where the gain is: larger writes all reach the same ceiling
    base = cached_run(variant="baseline", payload=payload, seed=seed)
    new = cached_run(variant="p1-p5", payload=payload, seed=seed)
    return Problem(3, seed, "the series' gain",
                   f"With {payload}-byte writes the baseline moves {base.throughput_gbps:.3f} Gbit/s in the "
                   f"model (seed {seed}). What throughput does the whole series (p1-p5) reach with the same "
                   f"writes and seed?",
                   new.throughput_gbps, "Gbit/s", 0.1 * new.throughput_gbps,
                   f"p1-p5 {new.throughput_gbps:.3f} Gbit/s: "
                   f"{100 * (new.throughput_gbps / base.throughput_gbps - 1):+.0f} % over the baseline. The "
                   f"gain is largest where a write is one small packet and the baseline's worker sleeps on "
                   f"the lock for each.",
                   {"variant": "p1-p5", "payload": payload, "seed": seed},
                   hint="A batched packet saves little CPU; what it saves is the worker's sleeps on the lock. "
                        "How much of the baseline's run is that, at this write size?",
                   code=_code(_call("run", variant="p1-p5", payload=payload, seed=seed) + ".throughput_gbps"))


def _batch_size(rng, seed):
    payload = _payload(rng, 64, 2048)
    limit = _payload(rng, 2, 64)
    r = cached_run(variant="p1-p3", payload=payload, batch_pkts=limit, seed=seed)
    mean = r.batch_pkts["mean"]
    return Problem(3, seed, "packets per lock hold",
                   f"Patches 1-3 with a lock-batch limit of {limit} packets and {payload}-byte "
                   f"writes: how many packets does the RX worker handle per lock_sock, on average?",
                   mean, "packets", max(0.5, 0.1 * mean),
                   f"{r.batch_pkts['count']} lock holds, {mean:.1f} packets each on average, at most "
                   f"{r.batch_pkts['max']}: a batch also ends when the used ring is empty.",
                   {"variant": "p1-p3", "payload": payload, "batch_pkts": limit, "seed": seed},
                   hint=f"The limit ({limit}) is an upper bound: a batch also ends when the worker finds no "
                        f"more used buffers. Is vhost ahead of the worker or behind it?",
                   code=_code(_call("run", variant="p1-p3", payload=payload, batch_pkts=limit, seed=seed)
                              + ".batch_pkts['mean']"))


def _used_publishes(rng, seed):
    payload = _payload(rng)
    r = cached_run(variant="baseline", payload=payload, vhost_used_batch=True, seed=seed)
    per_k = 1000 * r.counters["used_publishes"] / r.packets
    return Problem(3, seed, "used-ring publishes",
                   f"With the vhost used-ring batching patch and {payload}-byte writes, how many "
                   f"used->idx publishes does vhost make per 1000 guest buffers?",
                   per_k, "per 1000 buffers", max(1.0, 0.08 * per_k),
                   f"{r.counters['used_publishes']} publishes for {r.packets} buffers: one "
                   f"vhost_add_used_n() per run of vhost_transport_do_send_pkt(), not one per buffer.",
                   {"variant": "baseline", "payload": payload, "vhost_used_batch": True, "seed": seed},
                   hint="One publish per run of vhost_transport_do_send_pkt(): how many buffers does a run "
                        "fill before it finds nothing more to send, or no free buffer?",
                   code=_code("1000 * (r := " + _call("run", variant="baseline", payload=payload,
                                                       vhost_used_batch=True, seed=seed)
                              + ").counters['used_publishes'] / r.packets"))


# ---- chapter 4: metadata slots -------------------------------------------------------

def _queue_max(rng, seed):
    buffer = 128 * round(_payload(rng, 512, 65536) / 128)
    p, _ = make_params(buffer=buffer)
    return Problem(4, seed, "metadata slots",
                   f"With SO_VM_SOCKETS_BUFFER_SIZE = {buffer} bytes, how many skbs may the receive "
                   f"queue hold before virtio_transport_inc_rx_pkt() refuses a packet?",
                   kernel.queue_max(p.buffer), "skbs", 0.0,
                   f"Each queued skb is charged SKB_TRUESIZE(0) = {kernel.SKB_TRUESIZE_0} B against "
                   f"buf_alloc: {buffer} // {kernel.SKB_TRUESIZE_0} = {kernel.queue_max(p.buffer)}.",
                   {"buffer": buffer},
                   hint="Each queued skb is charged its empty size, SKB_TRUESIZE(0), against the buffer, "
                        "whatever it carries.",
                   code=_code(f"kernel.queue_max({buffer})", "from vsockmodel.model import kernel"))


def _credit_waits(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    payload = _payload(rng, 64, 1024)
    buffer = _payload(rng, 2048, 32768)
    r = cached_run(variant=variant, payload=payload, buffer=buffer, seed=seed)
    per_k = 1000 * r.counters["sender_blocked"] / r.packets
    return Problem(4, seed, "the sender's credit waits",
                   f"A stream of {payload}-byte writes through a {buffer}-byte socket buffer on variant "
                   f"{variant}: how many times per 1000 packets does the host's sender wait for credit "
                   f"(the byte budget, buf_alloc)?",
                   per_k, "per 1000 packets", max(2.0, 0.15 * per_k),
                   f"{r.counters['sender_blocked']} waits in {r.packets} packets: the sender may have at most "
                   f"{buffer} bytes unread in flight, and learns of freed space only from the guest's credit "
                   f"updates ({r.counters['credit_updates']} of them).",
                   {"variant": variant, "payload": payload, "buffer": buffer, "seed": seed},
                   hint="The buffer has two budgets: bytes (the credit the sender sees) and metadata slots. "
                        "How many writes fit the credit before the reader's next credit update?",
                   code=_code("1000 * (r := " + _call("run", variant=variant, payload=payload, buffer=buffer,
                                                       seed=seed)
                              + ").counters['sender_blocked'] / r.packets"))


def _collapses(rng, seed):
    variant = rng.choice(["baseline", "p1-p3"])
    payload = _payload(rng, 64, 512)
    buffer = _payload(rng, 2048, 8192)
    r = cached_run(variant=variant, payload=payload, buffer=buffer, seed=seed)
    per_k = 1000 * r.counters["collapses"] / r.packets
    return Problem(4, seed, "collapses in a stream",
                   f"A stream of {payload}-byte writes through a {buffer}-byte socket buffer "
                   f"({kernel.queue_max(buffer)} metadata slots) on variant {variant}: how many times per "
                   f"1000 packets does virtio_transport_collapse_rx_queue() run?",
                   per_k, "per 1000 packets", max(1.0, 0.15 * per_k),
                   f"{r.counters['collapses']} collapses in {r.packets} packets, {r.resets} resets: each "
                   f"runs when the queue reaches queue_max, and merges runs of small skbs into fewer, "
                   f"full ones, freeing more slots than the one packet needs.",
                   {"variant": variant, "payload": payload, "buffer": buffer, "seed": seed},
                   hint="A collapse runs when the queue reaches its metadata slots; how many small packets "
                        "queue up between two of the reader's recv() calls?",
                   code=_code("1000 * (r := " + _call("run", variant=variant, payload=payload, buffer=buffer,
                                                       seed=seed)
                              + ").counters['collapses'] / r.packets"))


# ---- chapter 5: notification deferral ----------------------------------------------------

def _reader_futile(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    payload = _write_of_buffers(rng)
    r = cached_run(variant=variant, payload=payload, seed=seed)
    futile = r.futile_wakeups_by_task.get("reader", 0)
    per_k = _per_write(futile, r.writes)
    return Problem(5, seed, "the reader's futile wake-ups",
                   f"On variant {variant} with {payload}-byte writes, how many times per 1000 writes "
                   f"is the reader woken only to find the socket lock owned?",
                   per_k, "per 1000 writes", max(2.0, 0.1 * per_k),
                   f"{futile} futile wake-ups of the reader in {r.writes} writes ({r.packets} packets), of "
                   f"{r.wakeups_by_task.get('reader', 0)} in all: a wake-up sent while the RX worker "
                   f"still owns the socket (sk_write_space, sock_wfree) or just before it takes it again.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   hint="Each packet the worker handles may send the reader a wake-up before it unlocks; "
                        "count the packets per write, and ask which wake-ups patches 4 and 5 move.",
                   code=_code(f"1000 * (r := {_call('run', variant=variant, payload=payload, seed=seed)})"
                              ".futile_wakeups_by_task.get('reader', 0) / r.writes"))


def _per_irq(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    payload = _payload(rng)
    r = cached_run(variant=variant, payload=payload, seed=seed)
    per_irq = r.packets / r.counters["irqs"]
    return Problem(5, seed, "packets per interrupt",
                   f"On variant {variant} with {payload}-byte writes, how many guest RX buffers does "
                   f"the RX worker take per RX interrupt, on average?",
                   per_irq, "buffers", max(0.5, 0.05 * per_irq),
                   f"{r.packets} buffers, {r.counters['irqs']} interrupts for "
                   f"{r.counters['vhost_signals']} vhost_signal() calls: the worker takes buffers with "
                   f"callbacks off (virtqueue_disable_cb) and vhost's signals meanwhile raise no interrupt.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   hint="While the worker runs with callbacks off, vhost's signals raise no interrupt: how "
                        "many buffers arrive during one run of the worker?",
                   code=_code(f"(r := {_call('run', variant=variant, payload=payload, seed=seed)})"
                              ".packets / r.counters['irqs']"))


def _p4p5(rng, seed):
    payload = _write_of_buffers(rng)
    before = cached_run(variant="p1-p3", payload=payload, seed=seed)
    after = cached_run(variant="p1-p5", payload=payload, seed=seed)
    futile = {name: _per_write(r.futile_wakeups_by_task.get("reader", 0), r.writes)
              for name, r in (("p1-p3", before), ("p1-p5", after))}
    removed = futile["p1-p3"] - futile["p1-p5"]
    return Problem(5, seed, "patches 4 and 5",
                   f"With {payload}-byte writes (seed {seed}), how many of the reader's futile wake-ups per "
                   f"1000 writes do patches 4 and 5 remove (p1-p3's count minus p1-p5's)?",
                   removed, "per 1000 writes", max(2.0, 0.1 * abs(removed)),
                   f"p1-p3: {futile['p1-p3']:.1f} per 1000 writes, p1-p5: {futile['p1-p5']:.1f}. Patch 4 sends "
                   f"sk_write_space just before release_sock, so the woken reader usually finds the lock free; "
                   f"sock_wfree's wake-ups, outside any batch, stay. Throughput hardly moves.",
                   {"variant": "p1-p5", "payload": payload, "seed": seed},
                   hint="Patch 4 moves one wake-up per batch to just before the unlock; count the batches, or "
                        "the packets, one write makes.",
                   code=_code(f"(a := {_call('run', variant='p1-p3', payload=payload, seed=seed)}, "
                              f"b := {_call('run', variant='p1-p5', payload=payload, seed=seed)}) and "
                              "1000 * a.futile_wakeups_by_task.get('reader', 0) / a.writes "
                              "- 1000 * b.futile_wakeups_by_task.get('reader', 0) / b.writes"))


# ---- chapter 6: measuring --------------------------------------------------------------

def _rtt(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = _write_of_buffers(rng)
    r = cached_run(variant=variant, payload=payload, workload="pingpong", requests=200, seed=seed)
    return Problem(6, seed, "round-trip time",
                   f"A ping-pong of {payload}-byte requests on variant {variant}: what is the "
                   f"model's mean round-trip time?",
                   r.rtt_us, "us", 0.05 * r.rtt_us,
                   f"Mean {r.rtt_us:.1f} us (p95 {r.rtt_p95_us:.1f} us) over 200 round trips: each "
                   f"crosses several wake-ups on both sides, and a request of several buffers adds each "
                   f"buffer's work. (The series measured 120-224 us on its test beds; chapter 6 says why "
                   f"the model does not reach that.)",
                   {"variant": variant, "payload": payload, "workload": "pingpong", "requests": 200,
                    "seed": seed},
                   hint="A round trip is a fixed part (the wake-ups on both sides) and a part per buffer of "
                        "the request: estimate each.",
                   code=_code(_call("run", variant=variant, payload=payload, workload="pingpong", requests=200,
                                    seed=seed)
                              + ".rtt_us"))


def _throughput(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = _payload(rng, 64, 16384)      # beyond, both kernels sit at the host's copy ceiling
    r = cached_run(variant=variant, payload=payload, seed=seed)
    return Problem(6, seed, "throughput",
                   f"On the series' test bed (fixed 64 KiB recv(), 256 KiB socket buffer), what "
                   f"throughput does the model give variant {variant} with {payload}-byte writes?",
                   r.throughput_gbps, "Gbit/s", 0.08 * r.throughput_gbps,
                   f"{r.throughput_gbps:.3f} Gbit/s over the measurement window of one run "
                   f"(seed {seed}).",
                   {"variant": variant, "payload": payload, "seed": seed},
                   hint="Small writes are bounded by the time per packet, large ones by the time per byte: "
                        "which is it at this size?",
                   code=_code(_call("run", variant=variant, payload=payload, seed=seed) + ".throughput_gbps"))


def _recv_64k(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = _payload(rng, 1024, 65536)
    r = cached_run(variant=variant, payload=payload, seed=seed)
    return Problem(6, seed, "recv() calls of the fixed-syscall test",
                   f"The series' fixed-syscall test reads with recv() of 64 KiB whatever the write. With "
                   f"{payload}-byte writes on variant {variant}, how many recv() calls per write does the "
                   f"model make?",
                   r.recv_per_write, "calls", max(0.002, 0.05 * r.recv_per_write),
                   f"{r.recv_calls} calls for {r.writes} writes: one call returns everything queued, up to "
                   f"64 KiB, so small writes share a call, and a reader woken before a write's last packet "
                   f"reads it in pieces.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   hint="One recv() takes all that is queued, up to 64 KiB: how many writes are queued when "
                        "the reader wakes?",
                   code=_code(_call("run", variant=variant, payload=payload, seed=seed) + ".recv_per_write"))


KINDS: dict[int, tuple[Callable, ...]] = {
    1: (_packets_per_write, _skb_gain, _cycles_per_byte),
    2: (_recv_calls, _futile, _lock_wait),
    3: (_batch_gain, _batch_size, _used_publishes),
    4: (_queue_max, _credit_waits, _collapses),
    5: (_reader_futile, _per_irq, _p4p5),
    6: (_rtt, _throughput, _recv_64k),
}


def checked_args(chapter, seed) -> tuple[int, int]:
    allowed = f"{CHAPTERS[0]} to {CHAPTERS[-1]}"
    chapter = parse_int(chapter, "chapter", allowed)
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter: {chapter} has no problems; allowed {allowed}")
    seed = check_int("seed", seed, 0, MAX_SEED)
    return chapter, seed


def problem(chapter, seed) -> Problem:
    """The problem a chapter and a seed pick, with the model's answer."""
    chapter, seed = checked_args(chapter, seed)
    rng = random.Random(f"vsockmodel quiz {chapter} {seed}")
    kinds = KINDS[chapter]
    make = kinds[seed % len(kinds)]                # consecutive seeds cycle through the kinds
    for _ in range(REDRAWS):
        try:
            return make(rng, seed)
        except Deadlock:
            # A configuration the model cannot finish (a simulator defect): the seed's next draw,
            # so that every seed still has a problem, the same one everywhere.
            continue
    return make(rng, seed)


# A leading number; any unit text after it ("%", "MB/s", "per 1000 packets") is ignored.
_NUMBER = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(?:\s*(?:%|[^\W\d].*))?\s*$",
                     re.ASCII | re.DOTALL)


def check(p: Problem, given, attempt=TRIES) -> dict:
    """Is ``given`` (text or a number) a right answer to ``p``?

    A right answer, or a wrong one at the last try (``attempt`` = TRIES, the
    default), comes back with the model's answer and why. A wrong one at an
    earlier try gets the problem's hint and whether the answer is higher or
    lower, but not the answer: the reader tries again first.
    """
    attempt = check_int("attempt", attempt, 1, TRIES)
    text = str(given).strip().lower()
    m = _NUMBER.match(text)
    if not m:
        raise ValueError(f"answer: cannot read {quote(given)} as a number (in {p.unit or 'plain numbers'})")
    value = float(m.group(1))         # "1e999", or 5,000 digits: inf, which no answer is
    correct = abs(value - p.answer) <= p.tolerance + 1e-9 * max(1.0, abs(p.answer))
    out = {"correct": correct, "given": value if math.isfinite(value) else None,   # JSON has no inf
           "attempt": attempt, "tries": TRIES, "tolerance_text": p.tolerance_text}
    if correct or attempt >= TRIES:
        out.update(answer=p.answer, answer_text=p.answer_text, explanation=p.explanation, command=p.command)
    else:
        out.update(hint=p.hint, direction="higher" if value < p.answer else "lower")
    return out


# A key runs up to a dozen model runs per seed: it is bounded by its number of
# seeds (two rooms of 30), and computed one problem at a time so that the
# command line shows each line as it comes (Ctrl-C stops it).
MAX_KEY_SEEDS = 60


def key_seeds(chapter, text) -> range:
    """The seeds of an answer key, "FIRST-LAST" (or one seed), checked before anything runs."""
    first, sep, last = str(text).strip().partition("-")
    allowed = f"a range of at most {MAX_KEY_SEEDS} seeds in [0, {MAX_SEED}] such as 1-30"
    lo = parse_int(first, "key", allowed)
    hi = parse_int(last if sep else first, "key", allowed)
    if not 0 <= lo <= hi <= MAX_SEED or hi - lo >= MAX_KEY_SEEDS:
        raise ValueError(f"key: {quote(str(text))} is out of range; allowed {allowed}")
    checked_args(chapter, lo)
    return range(lo, hi + 1)


def key(chapter, seeds):
    """The answer key for a range of seeds (what an instructor checks answers against),
    one problem at a time."""
    return (problem(chapter, s) for s in seeds)
