"""The workshop bundle: one archive that serves the book to a room.

``python -m vsockmodel.bookkit.bundle SITE OUT --pdf PDF`` (run by
``scripts/workshop-bundle``, which builds and prints the book first) writes
``OUT/vsock-workshop-VERSION.tar.gz``::

    vsock-workshop-VERSION/
      README.md       for the instructor: serve it, what to give the room
      serve.py        python3 serve.py: the book on port 8000, for the room
      vsock-rx-book-VERSION.pdf   the printed edition, for handouts
      site/           the built book: chapters, the lab, the slides, the instructor part
      local/          only with --wheelhouse: notebooks, requirements.txt and
                      every wheel, for attendees who run the notebooks themselves

Unpacked on a machine with Python 3 and no network, ``python3 serve.py``
serves the room; each attendee needs only a browser on the same network.
"""

from __future__ import annotations

import argparse
import io
import gzip
import tarfile
import time
from pathlib import Path
from typing import Optional

from .. import __version__
from . import serve as serve_module

REPO = Path(__file__).resolve().parents[2]
#: Build by-products that a reader never asks for.
SKIPPED = {".buildinfo", ".book-stamp", "reports", ".doctrees"}


def _mb(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n >= 10e6 else f"{n / 1e6:.1f} MB"


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def lab_download_bytes(site: Path) -> int:
    """What a browser fetches for the lab's runtime, compressed as serve.py sends it
    (Pyodide, the plotting library and the lab's own files; the page's theme comes on top)."""
    total = 0
    for folder in ("_static/vendor/pyodide", "_static/vendor/vega", "_static/lab"):
        for f in (site / folder).rglob("*"):
            if f.is_file() and f.name != "LICENSE":
                data = f.read_bytes()
                total += len(gzip.compress(data, 6)) if f.suffix in serve_module.COMPRESSED else len(data)
    return total


def instructor_readme(name: str, site_bytes: int, wheel_bytes: Optional[int], lab_bytes: int,
                      pdf_name: str) -> str:
    local = (
        f"""
## Attendees who want the notebooks on their own machine

`local/` holds the notebooks, `requirements.txt` and every wheel they need
({_mb(wheel_bytes)}), for the operating system and Python version of the
machine that made this bundle. On such a machine, with no network:

    cd local
    python3 -m venv .venv
    .venv/bin/pip install --no-index --find-links wheelhouse -r requirements.txt vsockmodel
    .venv/bin/jupyter lab notebooks/

On Windows the venv's programs are in `.venv\\Scripts\\`.
"""
        if wheel_bytes is not None
        else """
## Attendees who want the notebooks on their own machine

This bundle has no wheels. `scripts/workshop-bundle --wheelhouse`, run on a
machine with a network and the attendees' operating system and Python, adds
them (about 220 MB), with the notebooks. Each chapter page's download button
also gives its notebook.
"""
    )
    return f"""# Workshop bundle: Small packets on the vsock receive path

This folder serves the whole book ({_mb(site_bytes)}) to a room: the chapters,
the browser lab (the model running in each attendee's browser), the slides
and the instructor part. Nothing here needs the internet.

## Serve it

    python3 serve.py

(Python 3.8 or newer, nothing to install.) It prints the addresses to give the
room, such as `http://192.168.1.20:8000/`. `--port 8080` picks another port.
If attendees cannot connect, allow incoming connections to that port in the
machine's firewall. Plain `python3 -m http.server --directory site 8000`
works too, but sends every file uncompressed, and Pythons older than 3.12 may
send the lab's `.mjs` files with a type browsers refuse.

## What to open

- The instructor part, with the agendas, the pre-flight checklist and the
  answer keys: `/book/instructor/index.html`
- The slides, one deck per chapter: `/slides/index.html`
- The lab, for every attendee: `/book/lab.html`; its Problems tab gives each
  attendee the problem for their seed, and checks their answer.

## Handouts

`{pdf_name}` is the book's printed edition, the same version as the site:
the chapters with every figure at its first setting, a contents list and
page numbers. Its text and figures are under CC BY 4.0, so you may print it,
or pages of it, for the room.

Each attendee's browser downloads about {_mb(lab_bytes)} the first time it opens
the lab (the Python runtime and the model, compressed), then keeps it in its cache. Open the lab on
the projector machine once before the session to check it starts.
{local}
Made from the book's sources by `scripts/workshop-bundle` ({name}, {time.strftime('%Y-%m-%d')}).
"""


def local_readme() -> str:
    return """# The notebooks, for a machine with no network

See the bundle's README.md, "Attendees who want the notebooks on their own
machine". The notebooks import `vsockmodel`, which `pip install` puts in the
virtual environment from `wheelhouse/`.
"""


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = int(time.time())
    tar.addfile(info, io.BytesIO(data))


def _skip(tarinfo: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
    if set(Path(tarinfo.name).parts) & SKIPPED:
        return None
    tarinfo.uid = tarinfo.gid = 0
    tarinfo.uname = tarinfo.gname = ""
    return tarinfo


def make_bundle(site: Path, out: Path, pdf: Path, wheelhouse: Optional[Path] = None) -> Path:
    """Write the archive, with the printed edition ``pdf``; returns its path."""
    if not (site / "index.html").is_file() or not (site / "book" / "lab.html").is_file():
        raise SystemExit(f"bundle: {site} is not a built book (no index.html or book/lab.html)")
    if not (site / "slides" / "index.html").is_file():
        raise SystemExit(f"bundle: {site} has no slides (python -m vsockmodel.bookkit.slides {site})")
    if not pdf.is_file():
        raise SystemExit(f"bundle: no printed edition at {pdf} (python -m vsockmodel.bookkit.printed)")
    if __version__ not in pdf.name:
        raise SystemExit(f"bundle: {pdf.name} is not the printed edition of version {__version__}")
    name = f"vsock-workshop-{__version__}"
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"{name}.tar.gz"
    wheel_bytes = _tree_size(wheelhouse) if wheelhouse is not None else None
    readme = instructor_readme(name, _tree_size(site), wheel_bytes, lab_download_bytes(site), pdf.name)
    tmp = archive.with_suffix(".partial")
    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        _add_bytes(tar, f"{name}/README.md", readme.encode())
        _add_bytes(tar, f"{name}/serve.py", Path(serve_module.__file__).read_bytes(), mode=0o755)
        tar.add(pdf, arcname=f"{name}/{pdf.name}", filter=_skip)
        tar.add(site, arcname=f"{name}/site", filter=_skip)
        if wheelhouse is not None:
            _add_bytes(tar, f"{name}/local/README.md", local_readme().encode())
            tar.add(REPO / "requirements.txt", arcname=f"{name}/local/requirements.txt")
            tar.add(wheelhouse, arcname=f"{name}/local/wheelhouse", filter=_skip)
            for nb in [REPO / "book" / "intro.ipynb", *sorted((REPO / "chapters").glob("*.ipynb"))]:
                tar.add(nb, arcname=f"{name}/local/notebooks/{nb.name}", filter=_skip)
    tmp.replace(archive)
    return archive


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vsockmodel.bookkit.bundle", description=__doc__.split("\n")[0])
    ap.add_argument("site", type=Path, help="the built book (_build/html)")
    ap.add_argument("out", type=Path, help="the folder to write the archive into")
    ap.add_argument("--pdf", type=Path, required=True, help="the printed edition (_build/pdf/vsock-rx-book-VERSION.pdf)")
    ap.add_argument("--wheelhouse", type=Path, help="a folder of wheels to add, for local notebooks")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    archive = make_bundle(args.site, args.out, args.pdf, args.wheelhouse)
    print(f"{archive} ({_mb(archive.stat().st_size)}, in {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
