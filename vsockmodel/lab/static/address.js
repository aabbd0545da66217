// The lab's whole configuration lives in the address's #fragment, so a link
// reproduces it. readAddress() turns a fragment into settings, naming what it
// cannot use (an unknown name, a name given twice, a value that does not
// exist); writeAddress() puts the state back without adding a history entry.
// Sizes and numbers stay text: the API checks them and names what is wrong.

export const MODES = ["run", "compare", "sweep", "headline", "timelines", "problems", "python"];

// undefined: not a value this parameter can take from a link.
function decodeValue(p, v) {
  if (p.kind === "bool" || p.kind === "tristate") {
    const word = v.toLowerCase();
    return word === "true" ? true : word === "false" ? false : p.kind === "tristate" && v === "" ? null : undefined;
  }
  if (v === "" && p.optional) return null;
  return v;
}

// A fresh state: every parameter at its default, the run mode.
export function defaultState(params) {
  const values = {};
  for (const p of params) values[p.name] = p.default;
  return { values, mode: "run", a: null, b: null, matched: false, qchapter: null, qseed: null, code: null,
           metric: null, example: null, pairs: null };
}

// {state, problems}: the settings a fragment gives, over the defaults.
export function readAddress(hash, params, page) {
  const byName = Object.fromEntries(params.map((p) => [p.name, p]));
  const state = defaultState(params);
  const problems = [];
  const seen = new Set();
  for (const [k, v] of new URLSearchParams(hash.replace(/^#/, ""))) {
    if (seen.has(k)) { problems.push(`${k} is given twice; the first value is used`); continue; }
    seen.add(k);
    if (k in byName) {
      const p = byName[k], value = decodeValue(p, v);
      if (value === undefined) problems.push(`${k}=${v}: ${p.kind === "tristate"
        ? "use true, false, or nothing for the variant's default" : "use true or false"}; left at the default`);
      else if (p.kind === "choice" && !p.choices.includes(value)) {
        problems.push(`${k}=${v}: not one of ${p.choices.join(", ")}; left at the default`);
      } else state.values[k] = value;
    } else if (k === "mode") {
      if (MODES.includes(v)) state.mode = v;
      else problems.push(`mode=${v}: no such mode (${MODES.join(", ")}); one run shown`);
    } else if (k === "qchapter") {
      if (page.quiz_chapters.map(String).includes(v)) state.qchapter = v;
      else problems.push(`qchapter=${v}: no problems for that chapter (chapters ${page.quiz_chapters.join(", ")}); chapter ${page.quiz_chapters[0]} shown`);
    } else if (k === "qseed") state.qseed = v;
    else if (k === "pairs") {
      const [lo, hi] = page.compare_pairs, n = Number(v);
      if (Number.isInteger(n) && n >= lo && n <= hi) state.pairs = String(n);
      else problems.push(`pairs=${v}: the lab runs ${lo} to ${hi} pairs; left at the default`);
    }
    else if (k === "metric") state.metric = v;
    else if (k === "example") {
      if (page.examples.some((e) => e.key === v)) state.example = v;
      else problems.push(`example=${v}: no such example (${page.examples.map((e) => e.key).join(", ")})`);
    }
    else if (k === "code") {
      if (v.length > page.code_limit) problems.push(`code: ${v.length.toLocaleString("en")} characters, more than the ${page.code_limit.toLocaleString("en")} a link carries; not loaded`);
      else state.code = v;
    } else if (k === "a" || k === "b") {
      let side = null;
      try { side = JSON.parse(v); } catch (e) { /* said below */ }
      const isConfig = side && typeof side === "object" && !Array.isArray(side)
        && Object.keys(side).every((name) => name in byName);
      if (isConfig) state[k] = side;
      else problems.push(`${k}: not a configuration of the lab's settings; ${k.toUpperCase()} not set`);
    } else if (k === "matched") state.matched = v === "1";
    else problems.push(`${k}: not a setting of the lab (it has ${params.map((p) => p.name).join(", ")}); ignored`);
  }
  return { state, problems };
}

export const isChanged = (p, values) => values[p.name] !== p.default && String(values[p.name]) !== String(p.default);

// The fragment for a state: only what differs from the defaults.
export function fragment(state, params) {
  const h = new URLSearchParams();
  for (const p of params) {
    const v = state.values[p.name];
    if (isChanged(p, state.values)) h.set(p.name, v === null ? "" : String(v));
  }
  if (state.mode !== "run") h.set("mode", state.mode);
  if (state.a) h.set("a", JSON.stringify(state.a));
  if (state.b) h.set("b", JSON.stringify(state.b));
  if (state.matched) h.set("matched", "1");
  if (state.metric) h.set("metric", state.metric);
  if (state.pairs) h.set("pairs", state.pairs);
  if (state.qchapter) h.set("qchapter", state.qchapter);
  if (state.qseed) h.set("qseed", state.qseed);
  if (state.code !== null && state.mode === "python") h.set("code", state.code);
  return "#" + h.toString();
}

// Writes the state into the address without a history entry (replaceState
// fires no hashchange: only the reader's own edits of the address do).
export function writeAddress(state, params) {
  const written = fragment(state, params);
  if (location.hash !== written && !(written === "#" && location.hash === "")) {
    history.replaceState(null, "", written === "#" ? location.pathname + location.search + "#" : written);
  }
}

// What the API gets: every parameter that applies to this variant and workload,
// away from its default.
export function applies(p, values) {
  const a = p.applies;
  return (!a.variants.length || a.variants.includes(values.variant)) && (!a.workload || a.workload === values.workload);
}
export function configOf(values, params) {
  const out = {};
  for (const p of params) {
    if (!applies(p, values)) continue;
    const v = values[p.name];
    if (v === p.default || v === null || v === undefined) continue;
    out[p.name] = v;
  }
  return out;
}
