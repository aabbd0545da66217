"""The room page: an attendee's start, and what the projector shows.

It gives the room's address (with its QR code), the attendee's seed, a
"lab ready?" check that loads the lab's runtime and runs the model once, the
agenda's presets in order (each a short link, /p/N, and a QR code) and the
two lines that install the command line from the bundle, offline.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import html
from typing import Callable, Optional

from . import qr

_CSS = """
:root { color-scheme: light dark; --fg: #1a1a1a; --bg: #fff; --muted: #555; --line: #ccc; --accent: #0a5fa3; }
@media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: #15171a; --muted: #b5b5b5; --line: #444; --accent: #7cc0ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 18px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1200px; margin: 0 auto; padding: 16px; }
h1 { font-size: 1.6em; margin: .2em 0; } h2 { font-size: 1.25em; margin: 1.2em 0 .4em; }
a { color: var(--accent); }
.room-top { display: flex; flex-wrap: wrap; gap: 16px 32px; align-items: center; }
.room-address { font-size: 1.7em; font-weight: 700; word-break: break-all; }
.room-seed { font-size: 1.3em; }
.room-seed output { font-size: 1.5em; font-weight: 700; padding: 0 .3em; }
.room-qr { background: #fff; width: 100%; height: auto; display: block; }
.room-qr-big { width: 180px; flex: none; }
.room-presets { list-style: none; padding: 0; display: grid; gap: 12px;
  grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); }
.room-presets li { border: 1px solid var(--line); border-radius: 8px; padding: 10px; display: flex; gap: 10px; }
.room-presets .room-qr-small { width: 96px; flex: none; }
.room-presets .room-when { color: var(--muted); font-size: .85em; }
.room-presets li > div { min-width: 0; }
.room-presets .room-short { font-weight: 700; font-size: 1.1em; overflow-wrap: anywhere; }
input { font: inherit; padding: .1em .3em; }
.room-check button, .room-seed button { font: inherit; padding: .3em .8em; }
#room-lab-status[data-state=ok] { color: #1b7f3b; } #room-lab-status[data-state=failed] { color: #c0392b; }
@media (prefers-color-scheme: dark) { #room-lab-status[data-state=ok] { color: #6fd08c; }
  #room-lab-status[data-state=failed] { color: #ff8a80; } }
pre { background: rgba(127,127,127,.12); padding: 8px; overflow-x: auto; font-size: .85em; }
iframe.room-probe { position: absolute; width: 1px; height: 1px; border: 0; left: -9999px; }
@media (max-width: 600px) { body { font-size: 16px; } .room-qr-big { width: 140px; } }
"""

# The check opens the lab in a hidden frame (so the browser fetches and keeps
# its runtime), waits until it is ready, and runs the model once there.
_SCRIPT = """
const seedOut = document.getElementById("room-seed");
const seedIn = document.getElementById("room-seed-input");
document.getElementById("room-seed-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const v = seedIn.value.trim();
  if (!/^\\d{1,9}$/.test(v)) { seedIn.setCustomValidity("a whole number, 0 to 999999999"); seedIn.reportValidity(); return; }
  seedIn.setCustomValidity("");
  document.cookie = "vsock_seed=" + Number(v) + "; path=/; max-age=86400; samesite=lax";
  seedOut.textContent = String(Number(v));
});
const status = document.getElementById("room-lab-status");
document.getElementById("room-lab-check").addEventListener("click", async () => {
  const t0 = performance.now();
  const secs = () => ((performance.now() - t0) / 1000).toFixed(1) + " s";
  status.dataset.state = "busy";
  status.textContent = "Loading the lab's Python runtime (the first time: a few MB)…";
  document.querySelector("iframe.room-probe")?.remove();
  const frame = document.createElement("iframe");
  frame.className = "room-probe"; frame.title = "lab check"; frame.setAttribute("aria-hidden", "true");
  frame.src = "/book/lab.html";
  let broken = null;               // the lab page's own error, if it has one: no point waiting then
  frame.addEventListener("load", () => frame.contentWindow.addEventListener("error", (e) => { broken = e.message; }));
  document.body.append(frame);
  try {
    for (let i = 0; ; i++) {
      const lab = frame.contentWindow && frame.contentWindow.vsockLab;
      if (lab && lab.ready()) break;
      if (broken) throw new Error("the lab page failed (" + broken + ")");
      if (i > 2400) throw new Error("the lab did not start within 4 minutes");
      await new Promise((r) => setTimeout(r, 100));
    }
    status.textContent = "Runtime loaded in " + secs() + "; running the model once…";
    let res = await frame.contentWindow.vsockLab.call("run", { payload: 4096, transfer: 4096 * 200, seed: 1 });
    if (typeof res === "string") res = JSON.parse(res);
    if (!res.ok) throw new Error(res.message);
    status.dataset.state = "ok";
    status.textContent = "Lab ready: the model ran " + res.result.packets + " packets here, "
      + res.result.throughput_gbps.toFixed(2) + " Gbit/s (" + secs() + " in all).";
  } catch (e) {
    status.dataset.state = "failed";
    status.textContent = "The lab did not start: " + e.message + ". Reload this page and try again, or ask the instructor.";
  }
});
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def render(base: str, seed: int, agenda: str, presets: list, agendas: dict, wheels: list,
           qr_svg: Callable[[str, str], Optional[str]] = qr.svg, version: str = "", default: str = "") -> str:
    """The room page for the room's ``base`` address (``http://host:port``); ``agendas`` maps each
    agenda's key (?agenda=90) to its name. The server's own agenda's short links are /p/N; the other's
    carry ?agenda=KEY (``default``: the server's)."""
    room_qr = qr_svg(base + "/", "the room page") or ""
    items = []
    key = next((k for k, a in agendas.items() if a == agenda), "")
    other_agenda = f"?agenda={key}" if agenda != (default or agenda) else ""
    for p in presets:
        short = f"{base}/p/{p['n']}{other_agenda}"
        code = qr_svg(short, f"preset {p['n']}: {p['title']}") or ""
        extra = ' data-problems=""' if p["problems"] else ""
        items.append(
            f'<li>{code.replace("room-qr", "room-qr room-qr-small", 1)}<div>'
            f'<div class="room-when">{_e(p["minutes"])} min · {_e(p["block"])}</div>'
            f'<a class="room-short" href="/p/{p["n"]}{other_agenda}"{extra}>'
            f'{_e(short.split("://", 1)[-1])}</a>'
            f'<div>{_e(p["title"])}{" (your seed)" if p["problems"] else ""}</div></div></li>')
    other = " · ".join(f'<a href="/room?agenda={_e(key)}">{_e(a)}</a>' for key, a in agendas.items() if a != agenda)
    wheel_links = ", ".join(f'<a href="/local/{_e(w)}" download>{_e(w)}</a>' for w in wheels)
    install = (f"""<h2>The command line on your laptop (optional)</h2>
<p>With Python 3.11 or newer and no network: download {wheel_links} into a folder
<code>local</code>, then:</p>
<pre>python3 -m venv vsock &amp;&amp; vsock/bin/pip install --no-index --find-links local vsockmodel
vsock/bin/python -m vsockmodel starvation --buffer 1K --variant p1-p3 --no-headroom-check</pre>
<p>On Windows: <code>vsock\\Scripts\\pip</code> and <code>vsock\\Scripts\\python</code>.</p>""" if wheels else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>The room: small packets on the vsock receive path</title><style>{_CSS}</style></head>
<body><main>
<h1>Small packets on the vsock receive path: the room</h1>
<div class="room-top">
<div class="room-qr-big">{room_qr}</div>
<div><div>This page:</div><div class="room-address">{_e(base.split("://", 1)[-1])}/</div>
<p><a href="/index.html">The book</a> · <a href="/book/lab.html">The lab</a> · <a href="/slides/index.html">The slides</a></p></div>
</div>
<h2>Your seed</h2>
<form id="room-seed-form" class="room-seed">Your seed is <output id="room-seed">{seed}</output>.
Keep it all session: the lab's <em>Problems</em> tab asks you your seed's problem.
<label for="room-seed-input">Another seed:</label> <input id="room-seed-input" inputmode="numeric" size="6" value="{seed}">
<button type="submit">Use it</button></form>
<h2>Lab ready?</h2>
<div class="room-check"><button type="button" id="room-lab-check">Check the lab</button>
<p id="room-lab-status" role="status" aria-live="polite">Press it once when you arrive: it loads the lab's
runtime into your browser and runs the model once.</p></div>
<h2>The presets, in the agenda's order ({_e(agenda)})</h2>
<p>Tap a link, or scan its code from the projector. {("Other agenda: " + other) if other else ""}</p>
<ol class="room-presets">
{chr(10).join(items)}
</ol>
{install}
<p class="room-when">version {_e(version)}</p>
</main><script>{_SCRIPT}</script></body></html>
"""
