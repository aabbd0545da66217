"""What a call may cost, decided before it runs, from its configuration only.

The simulator's time grows with what a run does: packets, recv() calls (many
when recv() is small), the stop-and-go of a credit window or an RX ring that
holds few packets, and the wake-ups of every ping-pong round trip. The weights
below estimate that time in work units, from the parameters alone, so the
same configuration is accepted or refused on every machine, fast or slow.

A work unit is about a microsecond of the simulator on the 2-core development
machine (December 2026, other work beside it). The weights are an upper
envelope fitted to the CPU time of some 600 runs of sampled configurations
(DEVELOPMENT.md, "Bounds"): the estimate was at least the time taken for every
one of them, and at most 3.1 times it (1.5 times at the median).

``MAX_WORK`` is the one constant to re-tune: the work one call may do, a single
run or every run of ``replicate``, ``compare``, a lab sweep. When the
simulator gets faster, raise it in proportion. The wall-clock stop
(``Sim.MAX_WALL_S``) stays as a safety net far above it.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from . import kernel

MAX_WORK = 10_000_000           # work units a call may take: about 10 s on the development machine

# Work units (about a microsecond each) per ...
PER_PACKET = 20                 # ... packet, through vhost, the RX worker and the socket
PER_READ = 10                   # ... recv_size bytes read: a small recv() makes many calls
PER_STALL = 110                 # ... packet, shared by the packets the credit window or RX ring holds
PER_ROUND_TRIP = 110            # ... ping-pong request and its echo: a chain of wake-ups
PER_WRITE = 3                   # ... send() on the host

# What a call may hold in memory. A run keeps a few numbers per packet and per
# recv(), so the work bound keeps its results small; what is left to bound is
# the number of worker processes (study.replications.MAX_WORKERS).
MEMORY_BUDGET = 1 << 30
WORKER_MEMORY = 64 << 20        # a worker process: about 30 MB measured (PSS), and its runs' results


def window(p) -> int:
    """Packets that can be in flight at once: the credit window (the guest's
    buffer in packets of the size it arrives in) or the RX ring, whichever is
    smaller. With one or two, every packet waits for a round trip."""
    chunk = min(p.buf_payload, p.buffer, p.payload)
    return max(1, min(p.buffer // chunk, p.rx_ring_size))


def refused_at_once(p) -> bool:
    """On a kernel with the metadata budget, a buffer below one skb's charge has
    room for no packet at all: the first one is refused, the stream is reset,
    and the run is over after one write, whatever its length."""
    return p.spec.metadata_budget and not kernel.rx_skb_has_headroom(0, p.buffer)


def per_write(p) -> Fraction:
    """Work units of one write (one request and its echo in a ping-pong), exactly."""
    packets = p.max_packets_per_write
    reads = Fraction(p.payload, p.recv_size)
    if p.workload == "pingpong":
        reads = math.ceil(reads)          # each request is read on its own
    units = PER_PACKET * packets + PER_READ * reads + Fraction(PER_STALL * packets, window(p)) + PER_WRITE
    if p.workload == "pingpong":
        units += PER_ROUND_TRIP
    return units


def what_to_change(p) -> tuple[str, str]:
    """The parameter that makes ``p``'s writes costly, and how to make them
    cheaper (for a sweep, whose payloads and lengths are its own)."""
    packets = p.max_packets_per_write
    terms = {("recv_size", "a larger recv_size"): PER_READ * Fraction(p.payload, p.recv_size),
             ("buffer", "a larger buffer or rx_ring_size"): Fraction(PER_STALL * packets, window(p)),
             ("rx_buf_payload", "a larger rx_buf_payload"): PER_PACKET * packets}
    name = max(terms, key=terms.get)
    if p.workload == "pingpong" and name[0] != "recv_size":
        return "requests", "fewer requests"      # a ping-pong's cost is its round trips
    return name


def run_work(p) -> int:
    """Work units of a run with Params ``p``."""
    writes = 1 if refused_at_once(p) else p.writes
    return math.ceil(writes * per_write(p))


def max_writes(p) -> int:
    """The most writes (requests) of ``p``'s kind that one call may run."""
    if refused_at_once(p):
        return sys.maxsize                # the run ends at its first packet
    return math.floor(MAX_WORK / per_write(p))


def seconds(units: float) -> str:
    """Work units as the time they stand for, for messages: "about 12 s"."""
    return f"about {units / 1e6:.2g} s" if units < 1e7 else f"about {units / 1e6:.0f} s"


def check_call(units: int, what: str, name: str, fix: str) -> None:
    """Refuse a call whose estimated work is over MAX_WORK, naming the parameter
    ``name`` to change and how (``fix``)."""
    if units > MAX_WORK:
        raise ValueError(f"{name}: {what} would take {units:,} work units ({seconds(units)} on the "
                         f"development machine); allowed at most {MAX_WORK:,} per call: {fix}")
