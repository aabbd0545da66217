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
from ..scenarios.starvation import starvation
from .cache import cached_run
from .replications import compare

CHAPTERS = (1, 2, 3, 4, 5, 6)
MAX_SEED = 2**31 - 1
PAIRS = 3                    # seeds of a comparison problem: enough for an interval, quick in the lab


@dataclass(frozen=True)
class Problem:
    chapter: int
    seed: int
    kind: str
    question: str
    answer: float                 # a number, or 1.0 (yes) / 0.0 (no) when yes_no
    unit: str
    tolerance: float              # a right answer is within this of ``answer`` (same unit)
    explanation: str
    settings: dict = field(default_factory=dict)   # vsockmodel.run's settings, for the lab
    yes_no: bool = False
    code: str = ""                # Python that prints ``answer``: the model's call, seeds included

    @property
    def command(self) -> str:
        """The shell command that computes the model's answer (``code``, run by Python)."""
        return f'python -c "{self.code}"'

    @property
    def answer_text(self) -> str:
        if self.yes_no:
            return "yes" if self.answer else "no"
        return f"{_round(self.answer, self.tolerance)} {self.unit}".strip()

    @property
    def tolerance_text(self) -> str:
        """Which answers count as right, in words."""
        if self.yes_no:
            return "yes or no"
        if self.tolerance == 0:
            return "the exact number"
        return f"within ±{_round(self.tolerance, self.tolerance / 10)} {self.unit}".strip()

    def to_dict(self, answers: bool = True) -> dict:
        d = asdict(self)
        d.update(answer_text=self.answer_text, tolerance_text=self.tolerance_text, command=self.command)
        if not answers:
            for k in ("answer", "answer_text", "explanation", "code", "command"):
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
                   code=_code(f"{_call('make_params', variant=variant, payload=payload)}[0].packets_per_write"))


def _skb_gain(rng, seed):
    payload = rng.choice([64, 256, 1024, 4096, 16384, 65536])
    c = compare("pre-skb", "baseline", replications=PAIRS, payload=payload, seed=seed)
    lo, hi = c.change_ci
    return Problem(1, seed, "pre-skb against sk_buff",
                   f"With {fmt_size(payload)} writes, by how many per cent does the sk_buff kernel "
                   f"(baseline) change the throughput of the virtio_vsock_pkt one (pre-skb)? "
                   f"(A negative answer: slower.)",
                   c.change_pct, "%", max(5.0, (hi - lo) / 2),
                   f"The model, {PAIRS} paired seeds from {seed}: {c.change_pct:+.1f} % "
                   f"(95 % interval {lo:+.1f} to {hi:+.1f} %). One allocation and one descriptor per "
                   f"buffer instead of two, but every variant keeps its per-packet lock.",
                   {"variant": "baseline", "payload": payload},
                   code=_code(_call("compare", "pre-skb", "baseline", replications=PAIRS, payload=payload, seed=seed)
                              + ".change_pct"))


def _cycles_per_byte(rng, seed):
    variant = rng.choice(["pre-skb", "baseline"])
    payload = rng.choice([64, 256, 1024, 4096, 65536])
    r = cached_run(variant=variant, payload=payload, seed=seed)
    return Problem(1, seed, "cycles per byte",
                   f"How many guest CPU1 cycles does the RX worker spend per received byte with "
                   f"{fmt_size(payload)} writes on variant {variant}?",
                   r.rx_cycles_per_byte, "cycles/B", 0.1 * r.rx_cycles_per_byte,
                   f"The model's worker was busy {100 * r.utilization['worker']:.0f} % of the run; "
                   f"its busy time at the clock rate over the bytes received is "
                   f"{r.rx_cycles_per_byte:.3g} cycles/B. Per-packet costs dominate small writes.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   code=_code(_call("run", variant=variant, payload=payload, seed=seed) + ".rx_cycles_per_byte"))


# ---- chapter 2: one lock per packet ----------------------------------------------------

def _recv_calls(rng, seed):
    payload = rng.choice([4096, 8192, 16384, 32768, 65536])
    r = cached_run(variant="baseline", payload=payload, recv_size=payload, seed=seed)
    return Problem(2, seed, "recv() calls per write",
                   f"The guest reads with recv() of the write size ({fmt_size(payload)}), on the baseline "
                   f"kernel. How many recv() calls does one write take, on average?",
                   r.recv_per_write, "calls", max(0.05, 0.1 * r.recv_per_write),
                   f"{r.recv_calls} recv() calls for {r.writes} writes: a reader woken before the "
                   f"whole write has arrived returns what is queued (SO_RCVLOWAT is 1).",
                   {"variant": "baseline", "payload": payload, "recv_size": payload, "seed": seed},
                   code=_code(_call("run", variant="baseline", payload=payload, recv_size=payload, seed=seed)
                              + ".recv_per_write"))


def _futile(rng, seed):
    payload = rng.choice([64, 256, 1024, 4096])
    r = cached_run(variant="baseline", payload=payload, seed=seed)
    per_k = 1000 * r.futile_wakeups / r.packets
    return Problem(2, seed, "futile wake-ups",
                   f"On the baseline kernel with {fmt_size(payload)} writes, how many futile wake-ups "
                   f"(a task woken only to find the socket lock taken) are there per 1000 packets?",
                   per_k, "per 1000 packets", max(2.0, 0.25 * per_k),
                   f"{r.futile_wakeups} futile wake-ups in {r.packets} packets: the worker takes "
                   f"lock_sock for every packet, and a woken reader often finds it owned again.",
                   {"variant": "baseline", "payload": payload, "seed": seed},
                   code=_code(f"1000 * (r := {_call('run', variant='baseline', payload=payload, seed=seed)})"
                              ".futile_wakeups / r.packets"))


def _lock_wait(rng, seed):
    payload = rng.choice([64, 256, 1024])
    r = cached_run(variant="baseline", payload=payload, seed=seed)
    share = 100 * r.worker_time()["lock_wait"]
    return Problem(2, seed, "the worker's lock wait",
                   f"On the baseline kernel with {fmt_size(payload)} writes, what share of the run does "
                   f"the RX worker spend waiting for the socket lock?",
                   share, "%", 5.0,
                   f"Busy {100 * r.worker_time()['busy']:.0f} %, waiting for the lock {share:.0f} %, "
                   f"idle the rest: the reader holds the lock while it copies data out.",
                   {"variant": "baseline", "payload": payload, "seed": seed},
                   code=_code(f"100 * {_call('run', variant='baseline', payload=payload, seed=seed)}"
                              ".worker_time()['lock_wait']"))


# ---- chapter 3: batched RX -------------------------------------------------------------

def _batch_gain(rng, seed):
    payload = rng.choice([64, 256, 512, 1024, 4096, 16384, 65536])
    c = compare("baseline", "p1-p5", replications=PAIRS, payload=payload, seed=seed)
    lo, hi = c.change_ci
    return Problem(3, seed, "the series' gain",
                   f"By how many per cent does the whole series (p1-p5) change the baseline's "
                   f"throughput with {fmt_size(payload)} writes?",
                   c.change_pct, "%", max(8.0, (hi - lo) / 2),
                   f"The model, {PAIRS} paired seeds from {seed}: {c.change_pct:+.1f} % "
                   f"(95 % interval {lo:+.1f} to {hi:+.1f} %).",
                   {"variant": "p1-p5", "payload": payload},
                   code=_code(_call("compare", "baseline", "p1-p5", replications=PAIRS, payload=payload, seed=seed)
                              + ".change_pct"))


def _batch_size(rng, seed):
    payload = rng.choice([64, 256, 1024])
    limit = rng.choice([4, 8, 16, 64])
    r = cached_run(variant="p1-p3", payload=payload, batch_pkts=limit, seed=seed)
    mean = r.batch_pkts["mean"]
    return Problem(3, seed, "packets per lock hold",
                   f"Patches 1-3 with a lock-batch limit of {limit} packets and {fmt_size(payload)} "
                   f"writes: how many packets does the RX worker handle per lock_sock, on average?",
                   mean, "packets", max(0.5, 0.1 * mean),
                   f"{r.batch_pkts['count']} lock holds, {mean:.1f} packets each on average, at most "
                   f"{r.batch_pkts['max']}: a batch also ends when the used ring is empty.",
                   {"variant": "p1-p3", "payload": payload, "batch_pkts": limit, "seed": seed},
                   code=_code(_call("run", variant="p1-p3", payload=payload, batch_pkts=limit, seed=seed)
                              + ".batch_pkts['mean']"))


def _used_publishes(rng, seed):
    payload = rng.choice([256, 512, 4096])
    r = cached_run(variant="baseline", payload=payload, vhost_used_batch=True, seed=seed)
    per_k = 1000 * r.counters["used_publishes"] / r.packets
    return Problem(3, seed, "used-ring publishes",
                   f"With the vhost used-ring batching patch and {fmt_size(payload)} writes, how many "
                   f"used->idx publishes does vhost make per 1000 guest buffers?",
                   per_k, "per 1000 buffers", max(1.0, 0.2 * per_k),
                   f"{r.counters['used_publishes']} publishes for {r.packets} buffers: one "
                   f"vhost_add_used_n() per run of vhost_transport_do_send_pkt(), not one per buffer.",
                   {"variant": "baseline", "payload": payload, "vhost_used_batch": True, "seed": seed},
                   code=_code("1000 * (r := " + _call("run", variant="baseline", payload=payload,
                                                       vhost_used_batch=True, seed=seed)
                              + ").counters['used_publishes'] / r.packets"))


# ---- chapter 4: metadata slots -------------------------------------------------------

def _queue_max(rng, seed):
    buffer = rng.choice([512, 1024, 1536, 2048, 4096, 8192, 65536])
    p, _ = make_params(buffer=buffer)
    return Problem(4, seed, "metadata slots",
                   f"With SO_VM_SOCKETS_BUFFER_SIZE = {buffer} bytes, how many skbs may the receive "
                   f"queue hold before virtio_transport_inc_rx_pkt() refuses a packet?",
                   kernel.queue_max(p.buffer), "skbs", 0.0,
                   f"Each queued skb is charged SKB_TRUESIZE(0) = {kernel.SKB_TRUESIZE_0} B against "
                   f"buf_alloc: {buffer} // {kernel.SKB_TRUESIZE_0} = {kernel.queue_max(p.buffer)}.",
                   {"buffer": buffer},
                   code=_code(f"kernel.queue_max({buffer})", "from vsockmodel.model import kernel"))


def _reset(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    check = rng.choice([True, False]) if variant != "baseline" else None
    wake = rng.choice([200.0, 20_000.0])
    r = starvation(variant=variant, buffer="1K", payload=256, headroom_check=check, reader_wake_ns=wake)
    how = ("per-packet locking" if variant == "baseline" else
           f"{variant} with the headroom check {'on' if check else 'off'}")
    return Problem(4, seed, "which run resets",
                   f"A 1 KiB socket buffer (one metadata slot), two 256 B packets of one flow back to "
                   f"back, {how}, and a reader that wakes {wake / 1000:g} us after it is woken. "
                   f"Is the connection reset with ENOBUFS (yes or no)?",
                   1.0 if r.reset else 0.0, "", 0.0,
                   (f"Reset: {r.reason}." if r.reset else f"No reset: both packets received.")
                   + " The reader must dequeue the first packet between the two for the second to fit.",
                   {"variant": variant, "buffer": 1024, "payload": 256}, yes_no=True,
                   code=_code(f"starvation(variant={variant!r}, buffer='1K', payload=256, headroom_check={check!r}, "
                              f"reader_wake_ns={wake!r}).reset",
                              "from vsockmodel.scenarios.starvation import starvation"))


def _collapses(rng, seed):
    variant = rng.choice(["baseline", "p1-p3"])
    buffer = rng.choice([2048, 4096, 8192, 16384])
    r = cached_run(variant=variant, payload=256, buffer=buffer, seed=seed)
    per_k = 1000 * r.counters["collapses"] / r.packets
    return Problem(4, seed, "collapses in a stream",
                   f"A stream of 256 B writes through a {fmt_size(buffer)} socket buffer "
                   f"({kernel.queue_max(buffer)} metadata slots) on variant {variant}: how many times per "
                   f"1000 packets does virtio_transport_collapse_rx_queue() run?",
                   per_k, "per 1000 packets", max(1.0, 0.25 * per_k),
                   f"{r.counters['collapses']} collapses in {r.packets} packets, {r.resets} resets: each "
                   f"runs when the queue reaches queue_max, and merges runs of small skbs into fewer, "
                   f"full ones, freeing more slots than the one packet needs.",
                   {"variant": variant, "payload": 256, "buffer": buffer, "seed": seed},
                   code=_code("1000 * (r := " + _call("run", variant=variant, payload=256, buffer=buffer,
                                                       seed=seed)
                              + ").counters['collapses'] / r.packets"))


# ---- chapter 5: notification deferral ----------------------------------------------------

def _reader_futile(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    payload = rng.choice([64, 256, 1024, 4096, 65536])
    r = cached_run(variant=variant, payload=payload, seed=seed)
    futile = r.futile_wakeups_by_task.get("reader", 0)
    per_k = 1000 * futile / r.packets
    return Problem(5, seed, "the reader's futile wake-ups",
                   f"On variant {variant} with {fmt_size(payload)} writes, how many times per 1000 packets "
                   f"is the reader woken only to find the socket lock owned?",
                   per_k, "per 1000 packets", max(2.0, 0.25 * per_k),
                   f"{futile} futile wake-ups of the reader in {r.packets} packets, of "
                   f"{r.wakeups_by_task.get('reader', 0)} in all: a wake-up sent while the RX worker "
                   f"still owns the socket (sk_write_space, sock_wfree) or just before it takes it again.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   code=_code("1000 * (r := " + _call("run", variant=variant, payload=payload, seed=seed)
                              + ").futile_wakeups_by_task.get('reader', 0) / r.packets"))


def _per_irq(rng, seed):
    variant = rng.choice(["baseline", "p1-p3", "p1-p5"])
    payload = rng.choice([64, 256, 1024, 4096, 65536])
    r = cached_run(variant=variant, payload=payload, seed=seed)
    per_irq = r.packets / r.counters["irqs"]
    return Problem(5, seed, "packets per interrupt",
                   f"On variant {variant} with {fmt_size(payload)} writes, how many guest RX buffers does "
                   f"the RX worker take per RX interrupt, on average?",
                   per_irq, "buffers", max(1.0, 0.15 * per_irq),
                   f"{r.packets} buffers, {r.counters['irqs']} interrupts for "
                   f"{r.counters['vhost_signals']} vhost_signal() calls: the worker takes buffers with "
                   f"callbacks off (virtqueue_disable_cb) and vhost's signals meanwhile raise no interrupt.",
                   {"variant": variant, "payload": payload, "seed": seed},
                   code=_code("(r := " + _call("run", variant=variant, payload=payload, seed=seed)
                              + ").packets / r.counters['irqs']"))


def _p4p5(rng, seed):
    payload = rng.choice([64, 256, 1024, 4096])
    pairs = 2 * PAIRS                         # a small change: more pairs for a useful interval
    c = compare("p1-p3", "p1-p5", replications=pairs, payload=payload, seed=seed)
    lo, hi = c.change_ci
    return Problem(5, seed, "patches 4 and 5",
                   f"By how many per cent do patches 4 and 5 (p1-p3 to p1-p5) change the throughput "
                   f"with {fmt_size(payload)} writes?",
                   c.change_pct, "%", max(3.0, (hi - lo) / 2),
                   f"The model, {pairs} paired seeds from {seed}: {c.change_pct:+.1f} % "
                   f"(95 % interval {lo:+.1f} to {hi:+.1f} %): coalescing callbacks saves little "
                   f"CPU time and moves the reader's wake-up after the unlock.",
                   {"variant": "p1-p5", "payload": payload},
                   code=_code(_call("compare", "p1-p3", "p1-p5", replications=pairs, payload=payload, seed=seed)
                              + ".change_pct"))


# ---- chapter 6: measuring --------------------------------------------------------------

def _rtt(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = rng.choice([64, 256, 4096])
    r = cached_run(variant=variant, payload=payload, workload="pingpong", requests=200, seed=seed)
    return Problem(6, seed, "round-trip time",
                   f"A ping-pong of {fmt_size(payload)} requests on variant {variant}: what is the "
                   f"model's mean round-trip time?",
                   r.rtt_us, "us", 0.1 * r.rtt_us,
                   f"Mean {r.rtt_us:.1f} us (p95 {r.rtt_p95_us:.1f} us) over 200 round trips: each "
                   f"crosses several wake-ups on both sides. (The series measured 120-224 us on its "
                   f"test beds; chapter 6 says why the model does not reach that.)",
                   {"variant": variant, "payload": payload, "workload": "pingpong", "requests": 200,
                    "seed": seed},
                   code=_code(_call("run", variant=variant, payload=payload, workload="pingpong", requests=200,
                                    seed=seed)
                              + ".rtt_us"))


def _throughput(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = rng.choice([64, 256, 1024, 4096, 65536])
    r = cached_run(variant=variant, payload=payload, seed=seed)
    return Problem(6, seed, "throughput",
                   f"On the series' test bed (fixed 64 KiB recv(), 256 KiB socket buffer), what "
                   f"throughput does the model give variant {variant} with {fmt_size(payload)} writes?",
                   r.throughput_gbps, "Gbit/s", 0.1 * r.throughput_gbps,
                   f"{r.throughput_gbps:.3f} Gbit/s over the measurement window of one run "
                   f"(seed {seed}).",
                   {"variant": variant, "payload": payload, "seed": seed},
                   code=_code(_call("run", variant=variant, payload=payload, seed=seed) + ".throughput_gbps"))


def _recv_64k(rng, seed):
    variant = rng.choice(["baseline", "p1-p5"])
    payload = rng.choice([16384, 65536])
    r = cached_run(variant=variant, payload=payload, recv_size=payload, seed=seed)
    return Problem(6, seed, "recv() calls at large writes",
                   f"The series' fixed-syscall test at {fmt_size(payload)} (recv() of the write size), "
                   f"variant {variant}: how many recv() calls per write does the model make?",
                   r.recv_per_write, "calls", max(0.05, 0.1 * r.recv_per_write),
                   f"{r.recv_calls} calls for {r.writes} writes. A write of several packets is read "
                   f"in pieces when the reader wakes before its last packet is queued.",
                   {"variant": variant, "payload": payload, "recv_size": payload, "seed": seed},
                   code=_code(_call("run", variant=variant, payload=payload, recv_size=payload, seed=seed)
                              + ".recv_per_write"))


KINDS: dict[int, tuple[Callable, ...]] = {
    1: (_packets_per_write, _skb_gain, _cycles_per_byte),
    2: (_recv_calls, _futile, _lock_wait),
    3: (_batch_gain, _batch_size, _used_publishes),
    4: (_queue_max, _reset, _collapses),
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
    return kinds[seed % len(kinds)](rng, seed)     # consecutive seeds cycle through the kinds


_YES = {"yes", "y", "true", "1", "reset", "resets"}
_NO = {"no", "n", "false", "0", "survives", "no reset"}
# A leading number; any unit text after it ("%", "MB/s", "per 1000 packets") is ignored.
_NUMBER = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(?:\s*(?:%|[^\W\d].*))?\s*$",
                     re.ASCII | re.DOTALL)


def check(p: Problem, given) -> dict:
    """Is ``given`` (text or a number) a right answer to ``p``? With the model's answer and why."""
    text = str(given).strip().lower()
    if p.yes_no:
        if text not in _YES | _NO:
            raise ValueError(f"answer: {quote(given)} is not yes or no")
        value = 1.0 if text in _YES else 0.0
        correct = value == p.answer
    else:
        m = _NUMBER.match(text)
        if not m:
            raise ValueError(f"answer: cannot read {quote(given)} as a number (in {p.unit or 'plain numbers'})")
        value = float(m.group(1))         # "1e999", or 5,000 digits: inf, which no answer is
        correct = abs(value - p.answer) <= p.tolerance + 1e-9 * max(1.0, abs(p.answer))
        if not math.isfinite(value):
            value = None                  # not a number JSON can carry
    return {"correct": correct, "given": value, "answer": p.answer, "answer_text": p.answer_text,
            "tolerance_text": p.tolerance_text, "explanation": p.explanation, "command": p.command}


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
