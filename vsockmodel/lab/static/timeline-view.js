// A lock timeline with its moveable window: who holds the guest socket's lock,
// and who waits for it, in a window of the run's trace (vsockmodel.lab.api.timeline).
// The window stays where the reader put it while the configuration stays the
// same; a new configuration starts at the run's busiest window.

export function createTimelineView(ctx, { name, label }) {
  const { el } = ctx;
  const chart = el("div", { class: "lab-chart", "data-chart": name });
  const slider = el("input", { type: "range", class: "lab-slider", min: "0", max: "0", step: "any",
                               id: `lab-${name}-window`, "aria-label": `${label}: window start (µs)` });
  const shown = el("output", { class: "lab-window-value", for: slider.id });
  const text = el("p", { class: "lab-alt" });
  const node = el("div", { class: "lab-timeline-view", "data-timeline": name },
    el("label", { class: "lab-window" }, "window start (µs) ", slider, shown), chart, text);
  const windowText = (t0, span) => `${t0.toFixed(0)} µs to ${(t0 + span).toFixed(0)} µs`;
  let key = null, t0Wanted = null, config = null, seq = 0;

  async function draw(newConfig, t0 = null) {
    if (newConfig) config = newConfig;
    if (!config) return;
    const k = JSON.stringify(config);
    if (t0 === null && k === key) t0 = t0Wanted;
    const mine = ++seq;
    let res;
    try { res = await ctx.callOwn("timeline", {}, config, t0); } catch (e) { ctx.failed(e); return; }
    if (mine !== seq) return;                   // a newer window was asked for
    if (!res.ok) { text.textContent = res.message; ctx.clearDrawing(chart); return; }
    key = k;
    t0Wanted = res.t0_us;
    slider.max = Math.max(0, res.end_us - res.span_us);
    slider.value = res.t0_us;
    slider.dataset.span = String(res.span_us);
    slider.setAttribute("aria-valuetext", windowText(res.t0_us, res.span_us));
    shown.textContent = windowText(res.t0_us, res.span_us);
    ctx.draw(chart, res.spec);
    text.textContent = res.text + (res.truncated ? " (The trace was cut short: only the run's first events are shown.)" : "");
  }
  let debounce = null;
  slider.addEventListener("input", () => {
    t0Wanted = Number(slider.value);            // where the reader wants it, from now on
    shown.textContent = windowText(t0Wanted, Number(slider.dataset.span || 0));
    clearTimeout(debounce);
    debounce = setTimeout(() => draw(null, Number(slider.value)), 60);
  });
  return { node, draw, clear() { key = null; config = null; ctx.clearDrawing(chart); text.textContent = ""; } };
}
