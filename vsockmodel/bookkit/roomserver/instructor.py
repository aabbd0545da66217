"""The instructor's pages: the answer keys and the room's tally, live.

They are served only to a browser that opened the instructor's link the
server printed when it started (``/instructor/KEY``, which sets a cookie):
attendees on the same network see neither.

Standard library only: it runs from the unpacked bundle.
"""

from __future__ import annotations

import html
import json

_CSS = """
:root { color-scheme: light dark; --fg: #1a1a1a; --bg: #fff; --line: #ccc; --muted: #555; }
@media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: #15171a; --line: #444; --muted: #b5b5b5; } }
body { margin: 0; font: 17px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1200px; margin: 0 auto; padding: 16px; }
a { color: #0a5fa3; } @media (prefers-color-scheme: dark) { a { color: #7cc0ff; } }
table { border-collapse: collapse; width: 100%; } th, td { border-bottom: 1px solid var(--line); padding: 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { display: flex; height: 22px; min-width: 200px; border: 1px solid var(--line); }
.bar span { display: block; height: 100%; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 14px; height: 14px; vertical-align: middle; margin-right: 4px; }
.muted { color: var(--muted); }
"""

#: Okabe-Ito colours, told apart with colour-blindness and on dark backgrounds.
BIN_COLOURS = {"far low": "#0072B2", "low": "#56B4E9", "right": "#009E73", "high": "#E69F00",
               "far high": "#D55E00", "other choice": "#CC79A7", "not shown yet": "#999999"}


def home(has_keys: bool, csv_note: str) -> str:
    keys = ('<li><a href="/book/instructor/answer-keys.html">The answer keys</a>: every chapter\'s problems '
            "for the room's seeds, and the exercise solutions. Attendees' copies of the book have no link to "
            "them, and the server sends them only to this browser.</li>" if has_keys else
            "<li>This server has no answer keys (serve the workshop bundle for them).</li>")
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Instructor</title>
<style>{_CSS}</style></head><body><main>
<h1>Instructor</h1>
<ul>
<li><a href="/instructor/tally">The room's tally</a>: each problem's answers, live.</li>
{keys}
<li><a href="/instructor/tally.csv">Download the tally as CSV</a>. {html.escape(csv_note)}</li>
<li><a href="/room">The room page</a> (for the projector) · <a href="/book/instructor/index.html">Teaching with this book</a></li>
</ul></main></body></html>
"""


def tally_page(colours: dict = BIN_COLOURS) -> str:
    legend = "".join(f'<span><i style="background:{c}"></i>{html.escape(b)}</span>' for b, c in colours.items())
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>The room's tally</title>
<style>{_CSS}</style></head><body><main>
<h1>The room's tally</h1>
<p id="tally-summary" role="status" aria-live="polite">Waiting for the first answer…</p>
<p class="legend">How each attendee's last answer sits against the model's: {legend}.
"Low" and "high": wrong, within half the model's answer (or three tolerances); "far": further.</p>
<table><thead><tr><th>chapter</th><th>problem</th><th>answered</th><th>right, first try</th>
<th>right, second try</th><th>spread of the answers</th></tr></thead><tbody id="tally-rows"></tbody></table>
<p class="muted">Refreshes every 2 seconds. Kept in the server's memory only:
<a href="/instructor/tally.csv">download the CSV</a> to keep it. <a href="/instructor/">Instructor</a></p>
<script>
const COLOURS = {json.dumps(colours)};
const rows = document.getElementById("tally-rows");
const summary = document.getElementById("tally-summary");
function cell(text, cls) {{ const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; return td; }}
async function refresh() {{
  let data;
  try {{ data = await (await fetch("/instructor/tally.json", {{ cache: "no-store" }})).json(); }}
  catch (e) {{ summary.textContent = "The server does not answer: " + e.message; return; }}
  const answered = data.problems.reduce((n, p) => n + p.answered, 0);
  summary.textContent = data.attendees + " attendee(s), " + answered + " answer(s).";
  rows.replaceChildren(...data.problems.map((p) => {{
    const tr = document.createElement("tr");
    tr.append(cell(p.chapter, "num"), cell(p.kind), cell(p.answered, "num"), cell(p.right_first, "num"),
              cell(p.right_second, "num"));
    const td = document.createElement("td"); const bar = document.createElement("div"); bar.className = "bar";
    const words = [];
    for (const b of data.bins) {{
      const n = p.spread[b] || 0; if (!n) continue;
      const s = document.createElement("span"); s.style.width = (100 * n / p.answered) + "%";
      s.style.background = COLOURS[b]; s.title = b + ": " + n; bar.append(s); words.push(b + " " + n);
    }}
    bar.setAttribute("role", "img"); bar.setAttribute("aria-label", words.join(", "));
    const text = document.createElement("div"); text.className = "muted"; text.textContent = words.join(" · ");
    td.append(bar, text); tr.append(td); return tr;
  }}));
}}
refresh(); setInterval(refresh, 2000);
</script></main></body></html>
"""
