"""The room's tally: each attendee's answers to the seeded problems, in memory only.

The lab's Problems mode judges an answer in the attendee's browser (the
model runs there) and posts the verdict here; the instructor's page shows,
per problem, how many answered, how many were right at the first or the
second try, and how the answers spread around the model's. Nothing is kept
after the server stops unless the instructor downloads the CSV or starts the
server with ``--tally-csv``.

Bounded: at most ``max_attendees`` attendees, ``max_problems`` problems
each and two tries a problem, so a room (or a script) cannot grow the
server's memory without limit. No accounts: an attendee is a random id the
server gives their browser in a cookie.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import csv
import io
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

MAX_ATTENDEES = 300
MAX_PROBLEMS = 60          # problems (chapter and seed) one attendee may answer
TRIES = 2                  # a wrong answer gets one more try before the answer is shown
MAX_SEED = 2**31 - 1
MAX_TEXT = 80


class TallyError(ValueError):
    """An answer the tally refuses: ``param`` names the field, the message its allowed range."""

    def __init__(self, param: str, message: str, status: int = 400):
        super().__init__(f"{param}: {message}")
        self.param = param
        self.status = status


@dataclass
class Entry:
    chapter: int
    seed: int
    kind: str
    answer: object                  # the model's: a number (or a choice's text); None until it is shown
    tolerance: Optional[float]
    unit: str
    tries: list = field(default_factory=list)     # (given, correct, unix time)

    @property
    def settled(self) -> bool:
        return len(self.tries) >= TRIES or any(ok for _, ok, _ in self.tries)


def _int(payload: dict, name: str, lo: int, hi: int) -> int:
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        else:
            raise TallyError(name, f"expected an integer in [{lo}, {hi}], got {value!r:.40}")
    if not lo <= value <= hi:
        raise TallyError(name, f"{value} is out of range; allowed [{lo}, {hi}]")
    return value


def _text(payload: dict, name: str, required: bool = True) -> str:
    value = payload.get(name, "")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or len(value) > MAX_TEXT or (required and not value.strip()):
        raise TallyError(name, f"expected a text of 1 to {MAX_TEXT} characters")
    return value.strip()


def _value(payload: dict, name: str):
    """A number (finite) or a short text (a choice)."""
    value = payload.get(name)
    if isinstance(value, bool):
        raise TallyError(name, "expected a number or a text of 1 to 80 characters")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise TallyError(name, "expected a finite number")
        return float(value)
    return _text(payload, name)


class Tally:
    def __init__(self, chapters=range(1, 7), max_attendees: int = MAX_ATTENDEES,
                 max_problems: int = MAX_PROBLEMS):
        self.chapters = list(chapters)
        self.max_attendees = max_attendees
        self.max_problems = max_problems
        self._answers: dict[str, dict] = {}
        self._lock = threading.Lock()

    def record(self, attendee: str, payload) -> dict:
        """Count one try of ``attendee``; returns what was counted. Raises TallyError."""
        if not isinstance(payload, dict):
            raise TallyError("answer", "expected a JSON object with chapter, seed, kind, given, correct, answer")
        chapter = _int(payload, "chapter", min(self.chapters), max(self.chapters))
        seed = _int(payload, "seed", 0, MAX_SEED)
        kind = _text(payload, "kind")
        given = _value(payload, "given")
        # The model's answer comes with a right try or the last one; a first wrong try has none yet.
        answer = None if payload.get("answer") is None else _value(payload, "answer")
        correct = payload.get("correct")
        if not isinstance(correct, bool):
            raise TallyError("correct", "expected true or false")
        tolerance = payload.get("tolerance")
        if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))
                                      or not math.isfinite(tolerance) or tolerance < 0):
            raise TallyError("tolerance", "expected a number of 0 or more, or null")
        unit = _text(payload, "unit", required=False)
        with self._lock:
            mine = self._answers.get(attendee)
            if mine is None:
                if len(self._answers) >= self.max_attendees:
                    raise TallyError("attendee", f"the tally is full: at most {self.max_attendees} attendees",
                                     status=429)
                mine = self._answers[attendee] = {}
            entry = mine.get((chapter, seed))
            if entry is None:
                if len(mine) >= self.max_problems:
                    raise TallyError("seed", f"at most {self.max_problems} problems per attendee", status=429)
                entry = mine[(chapter, seed)] = Entry(chapter, seed, kind, answer,
                                                      None if tolerance is None else float(tolerance), unit)
            if entry.settled:
                return {"counted": False, "tries": len(entry.tries), "reason": "already answered"}
            if answer is not None:
                entry.answer = answer
            entry.tries.append((given, correct, time.time()))
            return {"counted": True, "tries": len(entry.tries)}

    def entries(self) -> list:
        with self._lock:
            return [(who, e, list(e.tries)) for who, mine in self._answers.items() for e in mine.values()]

    def attendees(self) -> int:
        with self._lock:
            return len(self._answers)

    def summary(self) -> dict:
        """Per problem (a chapter's kind): answered, right at the first and second try, and the spread."""
        problems: dict = {}
        for _, e, tries in self.entries():
            if not tries:
                continue
            p = problems.setdefault((e.chapter, e.kind), {
                "chapter": e.chapter, "kind": e.kind, "answered": 0, "right_first": 0, "right_second": 0,
                "spread": {}})
            p["answered"] += 1
            if tries[0][1]:
                p["right_first"] += 1
            elif len(tries) > 1 and tries[1][1]:
                p["right_second"] += 1
            label = spread_label(e, tries[-1][0], tries[-1][1])
            p["spread"][label] = p["spread"].get(label, 0) + 1
        rows = [problems[k] for k in sorted(problems)]
        return {"attendees": self.attendees(), "problems": rows, "bins": list(BINS)}

    def csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["attendee", "chapter", "seed", "kind", "model_answer", "tolerance", "unit",
                    "try", "given", "correct", "time_utc"])
        for who, e, tries in sorted(self.entries(), key=lambda t: (t[1].chapter, t[1].seed, t[0])):
            for n, (given, ok, at) in enumerate(tries, start=1):
                w.writerow([who, e.chapter, e.seed, e.kind, e.answer, e.tolerance, e.unit, n, given,
                            "yes" if ok else "no", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))])
        return out.getvalue()


#: How a final answer sits against the model's, in the order the instructor's page draws them.
BINS = ("far low", "low", "right", "high", "far high", "other choice", "not shown yet")


def spread_label(e: Entry, given, correct: bool) -> str:
    if correct:
        return "right"
    if not isinstance(given, float) or not isinstance(e.answer, float):
        return "other choice" if isinstance(given, str) else "not shown yet"
    off = given - e.answer
    far = abs(off) > max(3 * (e.tolerance or 0), 0.5 * abs(e.answer))
    return ("far " if far else "") + ("low" if off < 0 else "high")
