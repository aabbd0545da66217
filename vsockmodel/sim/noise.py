"""Seeded noise: one random stream per actor and purpose.

Every CPU cost is multiplied by a log-normal factor of mean 1 (``jitter_cv``)
and every wake-up latency by another (``wake_latency_cv``). Each actor draws
from its own streams, seeded by the run's seed, the actor's name and the
purpose ("cpu", "wake"): so a run is the same for a seed on every Python, and
what one actor draws does not depend on how the actors interleave.

A factor is one of ``TABLE`` equally likely quantiles of the distribution,
picked by random bits: cheap, and exact on every platform. The bits come
``CHUNK`` draws at a time, sixteen per draw (``randbytes``), of which the top
eleven pick the quantile, in one pass in C.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import random
from array import array
from statistics import NormalDist
from typing import Iterator

TABLE = 2048
CHUNK = 4096          # factors drawn at a time (a run charges ten to twenty costs a packet)


@functools.lru_cache(maxsize=16)
def lognormal_table(cv: float, n: int = TABLE) -> tuple[float, ...]:
    """n equally likely quantiles of a log-normal with mean 1 and the given cv."""
    if cv <= 0:
        return (1.0,) * n
    sigma = math.sqrt(math.log1p(cv * cv))
    normal = NormalDist(-sigma * sigma / 2, sigma)
    table = [math.exp(normal.inv_cdf((i + 0.5) / n)) for i in range(n)]
    mean = math.fsum(table) / n    # exact: the same on every Python (3.12 changed sum())
    return tuple(x / mean for x in table)


SHIFT = 16 - TABLE.bit_length() + 1     # 16 random bits -> an index into TABLE


def _chunk(rng: random.Random, table: tuple[float, ...]) -> Iterator[float]:
    bits = array("H", rng.randbytes(2 * CHUNK))
    if array("H", b"\x01\x00")[0] != 1:
        bits.byteswap()                  # little-endian everywhere: the same draws on every machine
    return map(table.__getitem__, map(operator.rshift, bits, itertools.repeat(SHIFT)))


def stream(seed: int, actor: str, purpose: str, cv: float) -> Iterator[float]:
    """An endless stream of noise factors for one actor and purpose."""
    if cv <= 0:
        return itertools.repeat(1.0)
    rng = random.Random(f"{seed}/{actor}/{purpose}")
    table = lognormal_table(cv)
    return itertools.chain.from_iterable(_chunk(rng, table) for _ in itertools.count())
