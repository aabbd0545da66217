"""Numbers transcribed from the five mailing-list texts the book teaches from.

The data live in ``vsockmodel/study/data/`` as three tidy CSV files:

``measurements.csv``
    one row per printed number:
    ``source,series_version,table,metric,state,payload,value,ci_low,ci_high,unit,note``.
    ``value`` keeps the digits as printed; ``change`` rows hold the reported
    % change and, where reported, its 95 % interval in ``ci_low``/``ci_high``.
``sources.csv``
    one row per text: ``source,file_id,kind,subject,authors,date,list_url,summary``.
``testbed.csv``
    transfer size and (derived) number of writes per payload:
    ``source,payload,transfer_bytes,writes,note``.

Sources, with the labels the book cites them by: ``000`` [v1 review], the
review of v1 patch 3 (its quoted P1-P3 tables are identical to 003's and are
stored once, under 003); ``001`` [v2 series], v2 of "vsock/virtio: reduce RX
per-packet socket overhead"; ``002`` [vhost batch], "[PATCH v3] vhost/vsock:
batch RX used-ring updates"; ``003`` [v1 cover], the v1 cover letter; ``004``
[skb review], review of "[PATCH v4] virtio/vsock: replace virtio_vsock_pkt
with sk_buff".

Table slugs (payloads 64, 256, 512, 1024, 4096, 8192, 16384, 65536 unless noted):

v1 cover letter (003):

- ``v1_all_fixed64k``      - all patches: RX throughput, 64K recv(), SO_RCVLOWAT=1 (baseline vs p1-p5)
- ``v1_all_fixedsyscall``  - all patches: fixed-syscall throughput + recv() counts
- ``v1_all_cycles``        - all patches: Guest CPU1 aggregate cycles per received byte
- ``v1_all_rtt``           - all patches: ping-pong mean RTT (payloads 64, 256, 4096)
- ``v1_p1p3_fixed64k``     - "P1-P3 contribution": throughput (baseline vs p1-p3)
- ``v1_p1p3_fixedsyscall`` - "P1-P3 contribution": fixed-syscall, no perf, + recv() counts
- ``v1_p1p3_cycles``       - "P1-P3 contribution": Guest CPU1 cycles per byte
- ``v1_p4p5_fixed64k``     - "P4-P5 contribution (combined)": throughput (p1-p3 vs p1-p5)
- ``v1_p4p5_fixedsyscall`` - "P4-P5 contribution": fixed-syscall + recv() counts
- ``v1_p4p5_cycles``       - "P4-P5 contribution": Guest CPU1 cycles per byte

v2 (001):

- ``v2_all_fixed64k``      - all patches: RX throughput, 64K recv() (baseline vs p1-p5)
- ``v2_all_fixedsyscall``  - all patches: fixed-syscall throughput + recv() counts
- ``v2_all_rtt``           - all patches: ping-pong mean RTT (payloads 64, 256, 4096)
- ``v2_all_cycles``        - all patches: "Diagnostic Guest CPU1 system-wide cycles" (cycles/B)
- ``v2_p1p3_fixed64k``     - patches 1-3 only: throughput (baseline vs p1-p3)
- ``v2_p1p3_fixedsyscall`` - patches 1-3 only: fixed-syscall, no perf, + recv() counts
- ``v2_p1p3_rtt``          - patches 1-3 only: ping-pong RTT, no perf (64, 256, 4096)
- ``v2_p1p3_cycles``       - patches 1-3 only: Guest CPU1 system-wide aggregate cycles/B

vhost used-ring batching (002), states ``vhost-baseline``/``vhost-used-batch``:

- ``vhost_used_batch_throughput``  - Guest RX Gbit/s (payloads 256, 512, 4096, 65536),
  change with the paired 95 % interval, and ``faster_pairs`` (x of 20)
- ``vhost_used_batch_host_worker`` - host vhost-worker cycles/GiB and
  instructions/GiB change (256, 4096, 65536), from prose; the text says
  "improved by X %" and the value is stored as ``-X`` (a decrease)

sk_buff conversion (004), states ``pre-skb``/``skb``:

- ``skb_uperf`` - uperf throughput for 64KB (65536) and 16B (16) payloads in both
  directions; the direction (``g2h``/``h2g``) is the first word of ``note``;
  64KB rows are in Gbit/s, 16B rows in Mb/s. Pass ``direction=`` to
  :func:`values` and :func:`change` for this table.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = [
    "MeasurementsError", "MeasurementRow", "rows", "table", "values", "change",
    "tables", "sources", "testbed",
    "METRICS", "STATES", "UNITS", "SERIES_PAYLOADS", "RTT_PAYLOADS",
]

TABLES_FILE = "measurements.csv"
SOURCES_FILE = "sources.csv"
TESTBED_FILE = "testbed.csv"

TABLE_COLUMNS = ("source", "series_version", "table", "metric", "state", "payload",
                 "value", "ci_low", "ci_high", "unit", "note")
SOURCE_COLUMNS = ("source", "file_id", "kind", "subject", "authors", "date", "list_url", "summary")
TESTBED_COLUMNS = ("source", "payload", "transfer_bytes", "writes", "note")

METRICS = frozenset({
    "throughput_gbps", "recv_calls", "cycles_per_byte", "rtt_us", "change_pct",
    "faster_pairs", "host_cycles_per_gib_change_pct",
    "host_instructions_per_gib_change_pct", "throughput",
})
#: metrics that describe a comparison and therefore have state ``change``
CHANGE_METRICS = frozenset({"change_pct", "faster_pairs", "host_cycles_per_gib_change_pct",
                            "host_instructions_per_gib_change_pct"})
STATES = frozenset({"baseline", "p1-p3", "p1-p5", "vhost-baseline", "vhost-used-batch",
                    "pre-skb", "skb", "change"})
UNITS = frozenset({"Gbit/s", "Mb/s", "us", "cycles/B", "%", "calls", "pairs"})
VERSIONS = frozenset({"v1", "v2", "v3", "v4"})
SERIES_PAYLOADS = (64, 256, 512, 1024, 4096, 8192, 16384, 65536)
#: every table the module docstring lists: the packaged file must hold each one
#: (a file cut short loses whole tables, and is named on load, not at a lookup)
TABLES = ("v1_all_fixed64k", "v1_all_fixedsyscall", "v1_all_cycles", "v1_all_rtt",
          "v1_p1p3_fixed64k", "v1_p1p3_fixedsyscall", "v1_p1p3_cycles",
          "v1_p4p5_fixed64k", "v1_p4p5_fixedsyscall", "v1_p4p5_cycles",
          "v2_all_fixed64k", "v2_all_fixedsyscall", "v2_all_rtt", "v2_all_cycles",
          "v2_p1p3_fixed64k", "v2_p1p3_fixedsyscall", "v2_p1p3_rtt", "v2_p1p3_cycles",
          "vhost_used_batch_throughput", "vhost_used_batch_host_worker", "skb_uperf")
RTT_PAYLOADS = (64, 256, 4096)

_SLUG = re.compile(r"^[a-z0-9_]+$")
_SOURCE = re.compile(r"^\d{3}$")


class MeasurementsError(ValueError):
    """A data file is missing or malformed, or a lookup names nothing."""


@dataclass(frozen=True)
class MeasurementRow:
    """One printed number from a source text."""

    source: str
    series_version: str
    table: str
    metric: str
    state: str
    payload: int
    value: float
    ci_low: float | None
    ci_high: float | None
    unit: str
    note: str

    @property
    def direction(self) -> str | None:
        """``g2h``/``h2g`` for ``skb_uperf`` rows, else None."""
        word = self.note.split(";", 1)[0].strip()
        return word if word in ("g2h", "h2g") else None


# --------------------------------------------------------------------------- I/O

def _name(path, default_name) -> str:
    """How errors name a data file: the packaged one by its place in the package."""
    return f"vsockmodel/study/data/{default_name}" if path is None else str(path)


def _read(path, default_name):
    """Return (display_name, text) of a CSV file: the packaged one when path is None."""
    name = _name(path, default_name)
    if path is None:
        res = resources.files("vsockmodel.study").joinpath("data", default_name)
    else:
        res = Path(path)
    try:
        text = res.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MeasurementsError(f"{name}: file not found") from None
    except UnicodeDecodeError as exc:
        raise MeasurementsError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return name, text


def _records(path, default_name, columns):
    name, text = _read(path, default_name)
    if not text.strip():
        raise MeasurementsError(f"{name}: file is empty (expected header {','.join(columns)})")
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    if tuple(header) != columns:
        missing = [c for c in columns if c not in header]
        extra = [c for c in header if c not in columns]
        what = []
        if missing:
            what.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            what.append(f"unexpected column(s) {', '.join(extra)}")
        if not what:
            what.append(f"columns out of order: {','.join(header)}")
        raise MeasurementsError(f"{name}, line 1: {'; '.join(what)} (expected {','.join(columns)})")
    out = []
    for fields in reader:
        line = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(columns):
            raise MeasurementsError(f"{name}, line {line}: expected {len(columns)} fields, found {len(fields)}")
        out.append((line, dict(zip(columns, fields))))
    if not out:
        raise MeasurementsError(f"{name}: file has a header but no data rows")
    return name, out


def _num(name, line, col, text, kind=float):
    try:
        v = kind(text)
    except ValueError:
        raise MeasurementsError(f"{name}, line {line}: column {col!r} is not "
                            f"{'an integer' if kind is int else 'a number'}: {text!r}") from None
    if kind is float and not math.isfinite(v):
        raise MeasurementsError(f"{name}, line {line}: column {col!r} is not finite: {text!r}")
    return v


def rows(path=None) -> list[MeasurementRow]:
    """All rows of ``measurements.csv`` (or of ``path``), validated and typed."""
    if path is None:
        return list(_packaged_rows())
    return _parse_rows(path)


@functools.lru_cache(maxsize=1)
def _packaged_rows() -> tuple[MeasurementRow, ...]:
    """The packaged table, read and checked once per process: it ships with the
    package and does not change while it runs (the lab asks for it at every sweep point).
    Every table of TABLES must be there."""
    out = tuple(_parse_rows(None))
    missing = [t for t in TABLES if t not in {r.table for r in out}]
    if missing:
        raise MeasurementsError(f"{_name(None, TABLES_FILE)}: table(s) {', '.join(missing)} missing "
                                f"(the file is cut short, or a table was renamed); "
                                f"expected every table of vsockmodel.study.measurements.TABLES")
    return out


def _parse_rows(path) -> list[MeasurementRow]:
    name, recs = _records(path, TABLES_FILE, TABLE_COLUMNS)
    out, seen = [], {}
    for line, r in recs:
        def bad(msg):
            return MeasurementsError(f"{name}, line {line}: {msg}")
        if not _SOURCE.match(r["source"]):
            raise bad(f"source must be a 3-digit source id (sources.csv), got {r['source']!r}")
        if r["series_version"] not in VERSIONS:
            raise bad(f"unknown series_version {r['series_version']!r} (known: {', '.join(sorted(VERSIONS))})")
        if not _SLUG.match(r["table"]):
            raise bad(f"table slug must be lowercase [a-z0-9_], got {r['table']!r}")
        if r["metric"] not in METRICS:
            raise bad(f"unknown metric {r['metric']!r} (known: {', '.join(sorted(METRICS))})")
        if r["state"] not in STATES:
            raise bad(f"unknown state {r['state']!r} (known: {', '.join(sorted(STATES))})")
        if (r["state"] == "change") != (r["metric"] in CHANGE_METRICS):
            raise bad(f"metric {r['metric']!r} does not go with state {r['state']!r}")
        if r["unit"] not in UNITS:
            raise bad(f"unknown unit {r['unit']!r} (known: {', '.join(sorted(UNITS))})")
        payload = _num(name, line, "payload", r["payload"], int)
        if payload <= 0:
            raise bad(f"payload must be a positive number of bytes, got {r['payload']!r}")
        value = _num(name, line, "value", r["value"])
        if r["state"] != "change" and value <= 0:
            raise bad(f"value must be positive for metric {r['metric']!r} (a measured "
                      f"{r['unit']}), got {r['value']!r}")
        lo = _num(name, line, "ci_low", r["ci_low"]) if r["ci_low"].strip() else None
        hi = _num(name, line, "ci_high", r["ci_high"]) if r["ci_high"].strip() else None
        if (lo is None) != (hi is None):
            raise bad("ci_low and ci_high must both be given or both be empty")
        if lo is not None and (r["state"] != "change" or lo > hi):
            raise bad("a confidence interval needs state 'change' and ci_low <= ci_high")
        row = MeasurementRow(r["source"], r["series_version"], r["table"], r["metric"], r["state"],
                      payload, value, lo, hi, r["unit"], r["note"])
        key = (row.table, row.metric, row.state, row.payload, row.direction)
        if key in seen:
            raise bad(f"duplicate of line {seen[key]} (same table, metric, state, payload)")
        seen[key] = line
        out.append(row)
    return out


def tables(path=None) -> list[str]:
    """Sorted list of table slugs."""
    return sorted({r.table for r in rows(path)})


def table(name, metric=None, path=None) -> list[MeasurementRow]:
    """Rows of table ``name`` (optionally only ``metric``), in file order."""
    all_rows = rows(path)
    got = [r for r in all_rows if r.table == name]
    where = _name(path, TABLES_FILE)
    if not got:
        known = sorted({r.table for r in all_rows})
        raise MeasurementsError(f"{where}: unknown table {name!r}; known tables: {', '.join(known)}")
    if metric is not None:
        got = [r for r in got if r.metric == metric]
        if not got:
            have = sorted({r.metric for r in all_rows if r.table == name})
            raise MeasurementsError(f"{where}: table {name!r} has no metric {metric!r}; "
                                    f"it has: {', '.join(have)}")
    return got


def _by_payload(selected, what, direction):
    if direction is not None:
        selected = [r for r in selected if r.direction == direction]
    out = {}
    for r in selected:
        if r.payload in out:
            raise MeasurementsError(f"{what}: several rows for payload {r.payload}; "
                                f"pass direction='g2h' or 'h2g'")
        out[r.payload] = r
    if not out:
        raise MeasurementsError(f"{what}: no rows")
    return out


def values(name, state, metric, path=None, direction=None) -> dict[int, float]:
    """payload -> value for one state and metric of a table."""
    if state not in STATES:
        raise MeasurementsError(f"unknown state {state!r} (known: {', '.join(sorted(STATES))})")
    sel = [r for r in table(name, metric, path) if r.state == state]
    what = f"table {name!r}, state {state!r}, metric {metric!r}"
    return {p: r.value for p, r in _by_payload(sel, what, direction).items()}


def change(name, path=None, direction=None) -> dict[int, tuple[float, float | None, float | None]]:
    """payload -> (change_pct, ci_low, ci_high) of a table's reported change."""
    sel = [r for r in table(name, "change_pct", path) if r.state == "change"]
    what = f"table {name!r}, change_pct"
    return {p: (r.value, r.ci_low, r.ci_high) for p, r in _by_payload(sel, what, direction).items()}


def sources(path=None) -> list[dict]:
    """Rows of ``sources.csv`` as dicts of strings."""
    name, recs = _records(path, SOURCES_FILE, SOURCE_COLUMNS)
    for line, r in recs:
        if not _SOURCE.match(r["source"]):
            raise MeasurementsError(f"{name}, line {line}: source must be a 3-digit source id (sources.csv), got {r['source']!r}")
        if r["date"] and not re.match(r"^\d{4}-\d{2}-\d{2}$", r["date"]):
            raise MeasurementsError(f"{name}, line {line}: date must be YYYY-MM-DD or empty, got {r['date']!r}")
    return [r for _, r in recs]


def testbed(path=None) -> list[dict]:
    """Rows of ``testbed.csv``; payload, transfer_bytes and writes are ints."""
    name, recs = _records(path, TESTBED_FILE, TESTBED_COLUMNS)
    out = []
    for line, r in recs:
        d = dict(r)
        for col in ("payload", "transfer_bytes", "writes"):
            d[col] = _num(name, line, col, r[col], int)
            if d[col] <= 0:
                raise MeasurementsError(f"{name}, line {line}: column {col!r} must be positive, got {r[col]!r}")
        out.append(d)
    return out
