// The book's headline in one click: the patches' gain against payload at the
// intro's settings (the series' test bed), the model's with its paired-seed
// interval beside the measured one, and a sentence on where they part. The
// book's build computed it (lab-data.js), so it is drawn at once; "Compute it
// here" runs it again in this browser, point by point.

export function createHeadlineMode(ctx) {
  const { el, panel, root } = ctx;
  const pre = ctx.DATA.precomputed.headline;
  const chart = el("div", { class: "lab-chart", "data-chart": "headline" });
  const text = el("p", { class: "lab-alt" });
  const sentence = el("p", { class: "lab-change", "data-note": "headline" });
  const provenance = el("p", { class: "lab-provenance" });
  const button = el("button", { type: "button", class: "lab-button", text: "Compute it here", onclick: () => computeNow() });
  const progress = el("progress", { max: String(ctx.PAGE.headline_payloads.length), value: "0", class: "lab-progress" });
  const commands = el("div", { class: "lab-commands" });
  panel.append(
    el("p", { text: `Baseline against the patched kernels (p1-p3, p1-p5) at every payload the series measured, `
                    + `on its test bed: a fixed 64 KiB recv(), a 256 KiB socket buffer, the default ring. The model's `
                    + `gains come from ${ctx.PAGE.headline_pairs} seed pairs each; the measured gains are the v1 cover letter's.` }),
    sentence, chart, text, el("div", { class: "lab-row" }, button, progress), provenance, commands);

  function show(res, live) {
    ctx.draw(chart, res.spec);
    text.textContent = res.text;
    sentence.textContent = res.sentence;
    provenance.textContent = live ? "Live: computed in your browser." : "Precomputed with CPython when the book was built.";
    provenance.dataset.live = String(live);
    ctx.commands(commands, "Reproduce it at home", [["command line", res.command.cli], ["Python", res.command.python]]);
    root.dataset.headline = live ? "live" : "precomputed";
  }
  let seq = 0;
  async function computeNow() {
    if (!ctx.state.ready) return;
    const mine = ++seq;
    const points = [];
    ctx.setBusy(button, true);
    progress.value = 0;
    try {
      for (const payload of ctx.PAGE.headline_payloads) {
        ctx.status(`The headline: ${points.length + 1} of ${ctx.PAGE.headline_payloads.length} payloads…`, true);
        const pt = await ctx.callOwn("headline_point", {}, payload);
        if (mine !== seq) return;
        if (!pt.ok) { ctx.status(pt.message, false, true); return; }
        points.push(pt);
        progress.value = points.length;
        show(await ctx.callOwn("headline_chart", {}, points), true);
      }
      ctx.status("The headline, computed in your browser.", false);
    } catch (e) { ctx.failed(e); } finally { if (mine === seq) ctx.setBusy(button, false); }
  }
  return {
    onShow() { if (!chart.dataset.spec) show(pre, false); },
    onStopped() { seq++; ctx.setBusy(button, false); },
    reset() { seq++; ctx.clearDrawing(chart); delete root.dataset.headline; ctx.setBusy(button, false); },
  };
}
