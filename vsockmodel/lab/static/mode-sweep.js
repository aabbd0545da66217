// Sweep the payload: the current settings (or the change from A to B) at every
// payload from 64 B to 64 KiB, drawn point by point; where the settings are the
// series' test bed, its measurements are drawn too, and a sentence says how far
// apart model and measurement are. A change of the settings stops a sweep.

export function createSweepMode(ctx) {
  const { el, panel, state, root } = ctx;
  const payloads = ctx.SCHEMA.sweep_payloads;
  const matchedBox = el("input", { type: "checkbox", id: "lab-matched", autocomplete: "off" });
  const changeBox = el("input", { type: "checkbox", id: "lab-sweep-change", autocomplete: "off" });
  const button = ctx.needsValid(el("button", { type: "button", class: "lab-button", text: "Sweep", onclick: () => sweepNow() }));
  const chart = el("div", { class: "lab-chart", "data-chart": "sweep" });
  const text = el("p", { class: "lab-alt" });
  const note = el("p", { class: "lab-note", "data-note": "sweep" });
  const apart = el("p", { class: "lab-note", "data-note": "sweep-measured" });
  const progress = el("progress", { max: String(payloads.length), value: "0", class: "lab-progress" });
  const commands = el("div", { class: "lab-commands" });
  panel.append(
    el("p", { text: `Runs the current settings at ${payloads.length} payloads from 64 B to 64 KiB, each with its default length. Where the settings are the series' test bed, its measurements are drawn too.` }),
    el("div", { class: "lab-row" },
      el("label", { for: "lab-matched" }, matchedBox, " recv() size follows the payload (the series' fixed-syscall test)"),
      el("label", { for: "lab-sweep-change" }, changeBox, " the change from A to B (set them under “Compare A/B”)"),
      button, progress),
    note, apart, chart, text, commands);
  matchedBox.addEventListener("change", () => { state.matched = matchedBox.checked; state.generation++; ctx.writeAddress(); });
  changeBox.addEventListener("change", () => { state.generation++; });

  let seq = 0;
  function stopped(mine) {
    if (mine !== seq) return;                    // a newer sweep took over: it speaks for itself
    root.dataset.sweepDone = "stopped";
    ctx.status("Sweep stopped: the settings changed. Press Sweep to draw it again.", false);
  }
  async function sweepNow() {
    const valid = ctx.lastValid();
    if (!state.ready || !valid || !ctx.valid()) return;
    const useAB = changeBox.checked && state.a && state.b;
    const base = useAB ? state.a : valid.config, other = useAB ? state.b : null;
    const matched = matchedBox.checked;
    const generation = ++state.generation;       // a new sweep supersedes any other call
    const mine = ++seq;
    const points = [];
    progress.value = 0;
    apart.textContent = "";
    commands.replaceChildren();
    root.dataset.sweepDone = "false";
    root.dataset.sweepPoints = "0";
    for (const payload of payloads) {
      if (generation !== state.generation) return stopped(mine);
      ctx.status(`Sweeping: ${points.length + 1} of ${payloads.length}…`, true);
      let pt, drawn;
      try { pt = await ctx.call("sweep_point", base, payload, matched, other); } catch (e) { ctx.failed(e); return; }
      if (generation !== state.generation) return stopped(mine);
      if (pt.ok) points.push({ payload: pt.payload, value: pt.value });
      try { drawn = await ctx.call("sweep_chart", base, points, matched, other); } catch (e) { ctx.failed(e); return; }
      if (generation !== state.generation) return stopped(mine);
      ctx.draw(chart, drawn.spec);
      text.textContent = drawn.text;
      note.textContent = drawn.note || "";
      progress.value = points.length;
      root.dataset.sweepPoints = String(points.length);
    }
    let summary;
    try { summary = await ctx.call("sweep_summary", base, points, matched, other); } catch (e) { ctx.failed(e); return; }
    apart.textContent = summary.apart;
    ctx.commands(commands, "Reproduce it at home", [["command line", summary.command.cli], ["Python", summary.command.python]]);
    root.dataset.sweepDone = "true";
    ctx.status(`Swept ${points.length} payloads.`, false);
  }

  return {
    onAddress() { matchedBox.checked = !!state.matched; },
    reset() {
      seq++;
      changeBox.checked = false;
      progress.value = 0;
      note.textContent = apart.textContent = text.textContent = "";
      commands.replaceChildren();
      ctx.clearDrawing(chart);
      delete root.dataset.sweepDone;
      delete root.dataset.sweepPoints;
    },
  };
}
