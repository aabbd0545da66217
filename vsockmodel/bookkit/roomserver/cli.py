"""``python3 serve.py``: the options, the addresses printed, the tally's CSV at the end.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

from .app import AGENDAS, Room, RoomServer, make_handler
from .tally import Tally


def room_addresses() -> list:
    """This machine's addresses on the local network (no packet is sent)."""
    found = []
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect((probe, 1))
                addr = s.getsockname()[0]
            except OSError:
                continue
        if addr not in found and not addr.startswith("127."):
            found.append(addr)
    return found


def _ranged(name: str, lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: {text!r} is not a whole number; allowed [{lo}, {hi}]")
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{name}: {value} is out of range; allowed [{lo}, {hi}]")
        return value
    return parse


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python3 serve.py", description="Serve the book to a room.")
    ap.add_argument("--port", type=_ranged("port", 0, 65535), default=8000, help="the port (default 8000)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--room", action="store_true",
                       help="listen on this machine's address on the room's network (found by itself)")
    where.add_argument("--bind", default="127.0.0.1",
                       help="the address to listen on (default 127.0.0.1: this machine only)")
    ap.add_argument("--agenda", choices=sorted(AGENDAS), default="90",
                    help="the agenda whose presets the room page gives: 90 (minutes, the default) or 180")
    ap.add_argument("--seeds", type=_ranged("seeds", 1, 1000), default=30,
                    help="seeds handed out to attendees, 1 to N in turn (default 30)")
    ap.add_argument("--address", help="the address attendees use, if not the one listened on "
                                      "(for example http://workshop.local:8000)")
    ap.add_argument("--site", help="the built book (default: ./site)")
    ap.add_argument("--tally-csv", metavar="FILE", help="write the room's tally to FILE when the server stops "
                                                        "(by default it is kept in memory only)")
    ap.add_argument("--log", action="store_true", help="print each request")
    return ap


def room_from_bundle(here: str, args) -> Room:
    site = args.site or os.path.join(here, "site")
    room_file = os.path.join(here, "room", "room.json")
    meta = {}
    if os.path.isfile(room_file):
        with open(room_file, encoding="utf-8") as fh:
            meta = json.load(fh)
    presets = meta.get("presets", {})
    private = os.path.join(here, "instructor", "site")
    local = os.path.join(here, "local")
    return Room(site=site, private=private if os.path.isdir(private) else None,
                local=local if os.path.isdir(local) else None, presets=presets,
                agenda=AGENDAS[args.agenda] if AGENDAS[args.agenda] in presets else next(iter(presets), ""),
                seeds=args.seeds, version=meta.get("version", ""),
                tally=Tally(chapters=meta.get("chapters") or range(1, 7)))


def main(argv=None, here: str = "") -> int:
    args = _parser().parse_args(argv)
    room = room_from_bundle(here, args)
    if not os.path.isfile(os.path.join(room.site, "index.html")):
        print(f"serve.py: site: no index.html in {room.site}; give the built book with --site", file=sys.stderr)
        return 2
    bind = args.bind
    if args.room:
        found = room_addresses()
        if not found:
            print("serve.py: room: this machine has no address on a local network; join the room's network, "
                  "or give one with --bind", file=sys.stderr)
            return 2
        bind = found[0]
    try:
        server = RoomServer((bind, args.port), make_handler(room, not args.log))
    except OSError as exc:
        print(f"serve.py: port: cannot listen on {bind}:{args.port} ({exc.strerror}); try --port 8080",
              file=sys.stderr)
        return 2
    server.tally_csv = args.tally_csv
    port = server.server_address[1]
    everywhere = bind in ("0.0.0.0", "", "::")
    lan = room_addresses() if everywhere else []
    shown = "localhost" if bind in ("127.0.0.1", "localhost") or (everywhere and not lan) else \
        (lan[0] if everywhere else bind)
    room.address = (args.address or f"http://{shown}:{port}").rstrip("/")
    print(f"Serving the book from {room.site}")
    if shown == "localhost" or everywhere:
        print(f"  on this machine:  http://localhost:{port}/")
    if shown == "localhost" and not everywhere:
        print("  (this machine only: --room serves the room's network)")
    for addr in ([room.address.split("://", 1)[-1]] if shown != "localhost" and not everywhere else
                 [f"{a}:{port}" for a in lan]):
        print(f"  for the room:     http://{addr}/   (the room page: presets, seeds, the lab check)")
    print(f"  instructor:       http://{shown}:{port}/instructor/{room.instructor_key}   "
          "(the tally and the answer keys; keep it off the projector)")
    print("Ctrl-C stops it.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if args.tally_csv:
            with open(args.tally_csv, "w", encoding="utf-8", newline="") as fh:
                fh.write(room.tally.csv())
            print(f"The tally: {args.tally_csv}")
    return 0
