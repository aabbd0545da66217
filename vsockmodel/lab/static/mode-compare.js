// Compare A and B: both run with the same seeds, one pair per seed, as the
// series ran its AB/BA pairs. One comparison runs every metric Python offers
// (vsockmodel.lab.metrics); the reader picks which one the figure shows. One
// comparison at a time: the button waits while one runs (Stop ends it).
// Where the configuration is the series' test bed, the measured change is
// given beside the model's.

export function createCompareMode(ctx) {
  const { el, panel, state, root } = ctx;
  const [nLo, nHi, nDefault] = ctx.SCHEMA.compare_replications;
  const nSelect = el("select", { id: "lab-pairs", class: "lab-select", autocomplete: "off" });
  for (let n = nLo; n <= nHi; n++) nSelect.append(el("option", { value: String(n), text: String(n), selected: n === nDefault }));
  const metricSelect = el("select", { id: "lab-metric", class: "lab-select", autocomplete: "off" });
  for (const m of ctx.PAGE.metrics) metricSelect.append(el("option", { value: m.key, text: `${m.label} (${m.unit})` }));
  const button = el("button", { type: "button", class: "lab-button", text: "Compare", onclick: () => compareNow() });
  const useA = ctx.needsValid(el("button", { type: "button", class: "lab-button", text: "Use as A", onclick: () => setSide("a") }));
  const useB = ctx.needsValid(el("button", { type: "button", class: "lab-button", text: "Use as B", onclick: () => setSide("b") }));
  const sides = el("div", { class: "lab-ab" });
  const change = el("p", { class: "lab-change" });
  const measured = el("p", { class: "lab-note", "data-note": "compare-measured" });
  const chart = el("div", { class: "lab-chart", "data-chart": "compare" });
  const text = el("p", { class: "lab-alt" });
  const table = el("table", { class: "lab-headline lab-metrics" });
  const commands = el("div", { class: "lab-commands" });
  panel.append(
    el("p", { text: "Set the controls and press “Use as A”; change them and press “Use as B”. Both run with the same seeds, one pair per seed, as the series ran its AB/BA pairs." }),
    el("div", { class: "lab-row" }, useA, useB,
       el("label", { for: "lab-pairs" }, "pairs (seeds) ", nSelect),
       el("label", { for: "lab-metric" }, "metric ", metricSelect), button),
    sides, change, measured, chart, text, table, commands);

  let last = null;            // the last comparison's reply
  let running = false;
  let resume = false;

  function describe(cfg) {
    const keys = Object.keys(cfg);
    return keys.length ? keys.map((k) => `${k}=${cfg[k]}`).join(", ") : "all defaults (baseline)";
  }
  function setSide(side) {
    const valid = ctx.lastValid();
    if (!ctx.valid() || !valid) return;
    state[side] = { ...valid.config };
    if (side === "b") delete state.b.seed;       // the pairs use A's seeds
    ctx.writeAddress();
    showSides();
  }
  function showSides() {
    sides.replaceChildren(
      el("p", { "data-side": "a" }, el("strong", { text: "A: " }), state.a ? describe(state.a) : "not set"),
      el("p", { "data-side": "b" }, el("strong", { text: "B: " }), state.b ? describe(state.b) + " (with A's seeds)" : "not set"));
    button.disabled = running || !(state.a && state.b);
  }
  function setRunning(on) {
    running = on;
    button.textContent = on ? "Comparing…" : "Compare";
    root.dataset.comparing = String(on);
    showSides();
  }

  function showMetric() {
    const row = last.metrics.find((m) => m.key === metricSelect.value) || last.metrics[0];
    change.textContent = row.text;
    change.dataset.change = String(row.change_pct ?? row.diff);
    change.dataset.metric = row.key;
  }
  async function compareNow() {
    if (!state.ready || !state.a || !state.b || running) return;
    const n = Number(nSelect.value);
    setRunning(true);
    ctx.status(`Comparing: ${2 * n} runs…`, true);
    change.textContent = measured.textContent = "";
    delete change.dataset.change;
    let res;
    try { res = await ctx.callOwn("compare_metrics", {}, state.a, state.b, n, metricSelect.value); }
    catch (e) { setRunning(false); ctx.failed(e); if (e.message === "stopped") ctx.status("Comparison stopped.", false); return; }
    setRunning(false);
    if (!res.ok) { ctx.status(res.message, false, true); return; }
    last = res;
    showMetric();
    measured.textContent = res.measured_text;
    ctx.draw(chart, res.chart);
    text.textContent = res.text;
    table.replaceChildren(el("tr", {}, el("th", { text: "metric" }), el("th", { text: "A" }), el("th", { text: "B" }),
                                    el("th", { text: "B against A (95 % interval)" })),
      ...res.metrics.map((m) => el("tr", { "data-key": m.key }, el("th", { scope: "row", text: `${m.label} (${m.unit})` }),
        el("td", { text: m.a_text }), el("td", { text: m.b_text }), el("td", { text: m.change_text }))));
    ctx.commands(commands, "Reproduce it at home", [["command line", res.command.cli], ["Python", res.command.python]]);
    ctx.status("Compared.", false);
  }
  nSelect.addEventListener("change", () => { state.pairs = nSelect.value; ctx.writeAddress(); });
  metricSelect.addEventListener("change", async () => {
    state.metric = metricSelect.value;
    ctx.writeAddress();
    if (!last) return;
    let res;
    try { res = await ctx.callOwn("redraw_comparison", {}, last, metricSelect.value); } catch (e) { ctx.failed(e); return; }
    if (!res.ok) { ctx.status(res.message, false, true); return; }
    showMetric();
    ctx.draw(chart, res.chart);
    text.textContent = res.text;
  });

  return {
    onAddress() {
      showSides();
      if (state.metric && ctx.PAGE.metrics.some((m) => m.key === state.metric)) metricSelect.value = state.metric;
      if (state.pairs) nSelect.value = state.pairs;     // a link's #pairs=N (the chapters' explorers)
    },
    // A comparison cut off by a stale run's restart (not by Stop) runs again once Python is back.
    onStopped(jobs, reason) {
      if (reason === "cancelled" && jobs.some((j) => j.fn === "compare_metrics")) resume = true;
      if (running) setRunning(false);
    },
    onReady() { if (resume) { resume = false; compareNow(); } },
    reset() {
      last = null;
      change.textContent = measured.textContent = text.textContent = "";
      delete change.dataset.change;
      table.replaceChildren();
      commands.replaceChildren();
      ctx.clearDrawing(chart);
      nSelect.value = String(nDefault);
      metricSelect.value = ctx.PAGE.metrics[0].key;
    },
  };
}
