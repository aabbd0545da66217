// One run: the headline numbers, the RX worker's time, a lock timeline from the
// run's trace, and the command line and Python call that reproduce it.
import { createTimelineView } from "./timeline-view.js";

export function createRunMode(ctx) {
  const { el, panel, root } = ctx;
  const summary = el("p", { class: "lab-summary" });
  const runButton = ctx.needsValid(el("button", { type: "button", class: "lab-button", text: "Run", onclick: () => runNow() }));
  const provenance = el("p", { class: "lab-provenance" });
  const headline = el("table", { class: "lab-headline" });
  const workerChart = el("div", { class: "lab-chart", "data-chart": "worker_time" });
  const workerText = el("p", { class: "lab-alt" });
  const commands = el("div", { class: "lab-commands" });
  const timeline = createTimelineView(ctx, { name: "timeline", label: "timeline" });
  const timelineBox = el("details", { class: "lab-timeline" },
    el("summary", { text: "Who holds the socket lock: a timeline from the run's trace" }), timeline.node);
  panel.append(summary, runButton, provenance, headline, el("h4", { text: "The RX worker's time" }),
               workerChart, workerText, timelineBox, commands);
  timelineBox.addEventListener("toggle", () => { if (timelineBox.open && ctx.lastValid()) timeline.draw(ctx.lastValid().config); });

  function render(res, live, linked) {
    headline.replaceChildren(...res.headline.map((r) => el("tr", { "data-key": r.key },
      el("th", { scope: "row", text: r.label }), el("td", { text: r.text + (r.unit && r.text !== "-" ? " " + r.unit : "") }))));
    headline.append(el("tr", { "data-key": "vhost_no_rx_buf" },
      el("th", { scope: "row", text: "vhost waiting for guest RX buffers" }),
      el("td", { text: (100 * res.vhost_no_rx_buf).toFixed(0) + " % of the run" })));
    provenance.textContent = live
      ? `Live: computed in your browser in ${res.elapsed_ms.toFixed(0)} ms.`
      : linked ? "Precomputed with CPython for the default settings, not this link's: the live lab runs the link's settings once Python has loaded."
      : "Precomputed with CPython when the book was built (the default settings). The live lab takes over once Python has loaded.";
    provenance.dataset.live = live ? "true" : "false";
    ctx.draw(workerChart, res.charts.worker_time);
    workerText.textContent = res.charts.worker_time.description;
    ctx.commands(commands, "Reproduce it at home", [["command line", res.command.cli], ["Python", res.command.python]]);
    root.dataset.lastRun = JSON.stringify(res.result);
  }

  async function runNow() {
    const valid = ctx.lastValid();
    if (!ctx.state.ready || !valid) return;
    ctx.status("Running…", true);
    let res;
    try { res = await ctx.fresh("run", valid.config); } catch (e) { ctx.failed(e); return; }
    if (!res.ok) { ctx.showError(res); return; }
    render(res, true);
    ctx.status(`Ran in ${res.elapsed_ms.toFixed(0)} ms.`, false);
    if (timelineBox.open) timeline.draw(valid.config);
  }

  return {
    runNow,
    onChecked(checked) { summary.textContent = checked.derived.summary; },
    showPrecomputed(linked) {
      render(ctx.DATA.precomputed.run, false, linked);
      summary.textContent = ctx.DATA.precomputed.run.derived.summary;
    },
    // As on a fresh page: the precomputed run shown, no timeline open.
    reset() {
      timelineBox.open = false;
      timeline.clear();
      render(ctx.DATA.precomputed.run, false, false);
      delete root.dataset.copied;
    },
  };
}
