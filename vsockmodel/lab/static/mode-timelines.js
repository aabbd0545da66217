// Lock timelines of A and B side by side: the same window length on the same
// time axis (µs of simulated time), each window moveable on its own. A and B
// are the ones set under "Compare", or else baseline and p1-p3 at the current
// payload.

import { createTimelineView } from "./timeline-view.js";

export function createTimelinesMode(ctx) {
  const { el, panel, state, root } = ctx;
  const views = { a: createTimelineView(ctx, { name: "timeline-a", label: "A's timeline" }),
                  b: createTimelineView(ctx, { name: "timeline-b", label: "B's timeline" }) };
  const titles = { a: el("h4"), b: el("h4") };
  const button = el("button", { type: "button", class: "lab-button", text: "Draw both", onclick: () => drawBoth() });
  panel.append(
    el("p", { text: "Who holds the socket lock in A and in B: each from its own run's trace, windows of the same "
                    + "length on one time scale. Set A and B under “Compare A/B”; without them, baseline "
                    + "against p1-p3 at the current payload." }),
    button,
    el("div", { class: "lab-side-by-side" },
       el("div", { "data-side": "a" }, titles.a, views.a.node), el("div", { "data-side": "b" }, titles.b, views.b.node)));

  function sides() {
    if (state.a && state.b) return { a: state.a, b: { ...state.b, seed: state.a.seed ?? 1 } };
    const payload = ctx.lastValid()?.config.payload;
    const at = payload === undefined ? {} : { payload };
    return { a: { variant: "baseline", ...at }, b: { variant: "p1-p3", ...at } };
  }
  const describe = (cfg) => Object.entries(cfg).map(([k, v]) => `${k}=${v}`).join(", ") || "all defaults";
  let drawn = null;
  async function drawBoth() {
    if (!state.ready) return;
    const both = sides();
    drawn = JSON.stringify(both);
    for (const side of ["a", "b"]) titles[side].textContent = `${side.toUpperCase()}: ${describe(both[side])}`;
    await Promise.all([views.a.draw(both.a), views.b.draw(both.b)]);
    root.dataset.timelines = "drawn";
  }
  return {
    onShow() { if (state.ready && drawn !== JSON.stringify(sides())) drawBoth(); },
    onReady() { if (state.mode === "timelines") drawBoth(); },
    reset() { drawn = null; views.a.clear(); views.b.clear(); delete root.dataset.timelines; },
  };
}
