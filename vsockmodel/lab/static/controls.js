// The lab's controls, built from the parameter schema (vsockmodel.model.schema)
// and the page data Python wrote at build time (vsockmodel.lab.calls.page_data):
// each size or count slider moves over round stops ("4K", "6K", "8K") whose
// texts Python made, so the page formats nothing itself. A parameter of any
// kind the schema has (choice, tristate, bool, size, int) gets a control; the
// group "advanced" goes into a folded "Advanced: mechanism hypotheses" section.

import { el } from "./dom.js";

const COMMON = ["variant", "workload", "payload"];
const GROUP_TITLES = { kernel: "Kernel", workload: "Workload", socket: "Socket", batch: "Lock batch (patch 2)",
                       host: "Host", run: "Run", advanced: "Advanced: mechanism hypotheses" };

function fieldRow(p, input, extra) {
  const id = "lab-" + p.name;
  input.id = input.id || id;
  const error = el("span", { class: "lab-field-error", id: id + "-error", "aria-live": "polite" });
  const why = el("span", { class: "lab-why", id: id + "-why" });
  const unit = p.kind === "size" ? " (bytes)" : p.unit ? ` (${p.unit})` : "";
  const row = el("div", { class: "lab-field", "data-param": p.name },
    el("label", { for: input.id, text: p.name + unit }), extra || input,
    el("span", { class: "lab-help", text: p.help + (p.kind === "size" || p.kind === "int" ? `; ${p.allowed}` : "") }),
    why, error);
  input.setAttribute("aria-describedby", id + "-error " + id + "-why");
  return { row, error, why };
}

function common(p, row, error, why, input, disable) {
  return {
    row,
    setError(msg) { error.textContent = msg || ""; input.setAttribute("aria-invalid", msg ? "true" : "false"); },
    setEnabled(ok, reason) {
      disable(!ok);
      why.textContent = ok ? "" : "Does nothing here: " + reason;
      row.classList.toggle("lab-disabled", !ok);
    },
  };
}

// A size or a count: a text box, and a slider over round stops where the schema
// gives it a scale; optional ones have a "default" box.
function numberControl(p, page, hooks) {
  const stops = page.stops[p.name] || null;
  const text = el("input", { type: "text", inputmode: "text", spellcheck: "false", autocomplete: "off",
                             class: "lab-text", size: "10" });
  const slider = stops ? el("input", { type: "range", class: "lab-slider", "aria-label": p.name,
                                       min: "0", max: String(stops.length - 1), step: "1", autocomplete: "off" }) : null;
  const optional = p.optional ? el("input", { type: "checkbox", class: "lab-default", id: `lab-${p.name}-default` }) : null;
  const wrap = el("span", { class: "lab-size" }, slider, text,
    optional ? el("label", { class: "lab-default-label", for: optional.id }, optional, " default: " + p.default_text) : null);
  const { row, error, why } = fieldRow(p, text, wrap);
  let enabled = true;
  const lock = () => {
    const off = !enabled || (optional && optional.checked);
    text.disabled = off;
    if (slider) slider.disabled = off;
  };
  // The stop nearest n (on a log scale): where the slider sits for a typed value.
  const nearest = (n) => {
    let best = 0;
    for (let i = 0; i < stops.length; i++) {
      if (Math.abs(Math.log(stops[i].value / n)) < Math.abs(Math.log(stops[best].value / n))) best = i;
    }
    return best;
  };
  const place = (i, said) => { slider.value = String(i); slider.setAttribute("aria-valuetext", said); };
  if (slider) {
    slider.addEventListener("input", () => {
      const stop = stops[Number(slider.value)];
      text.value = stop.text;
      slider.setAttribute("aria-valuetext", stop.said);
      hooks.change(p.name, stop.text);
    });
  }
  const commit = () => { if (!optional || !optional.checked) hooks.change(p.name, text.value.trim()); };
  text.addEventListener("change", commit);
  text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); commit(); } });
  if (optional) {
    optional.addEventListener("change", async () => {
      lock();
      text.value = "";
      if (optional.checked) { hooks.change(p.name, null); return; }
      // Unchecked: start from exactly the value the default stands for with the
      // settings as they are now, as the API reads it.
      const value = await hooks.resolveDefault(p.name);
      if (optional.checked || text.value.trim() || value === null) return;    // the reader got there first
      text.value = value;
      hooks.change(p.name, value);
    });
  }
  const self = common(p, row, error, why, text, (off) => {
    enabled = !off;
    if (optional) optional.disabled = off;
    lock();
  });
  // Before Python has checked it: a default, or a link's text that is one of the stops.
  self.set = (v) => {
    const isDefault = v === null || v === undefined;
    if (optional) optional.checked = isDefault;
    lock();
    text.placeholder = isDefault ? "default" : "";
    text.value = isDefault ? "" : typeof v === "number" ? (stops?.find((s) => s.value === v)?.text ?? String(v)) : String(v);
    if (!slider) return;
    const shown = isDefault ? null : stops.findIndex((s) => s.value === v || s.text === String(v) || String(s.value) === String(v));
    if (isDefault) slider.setAttribute("aria-valuetext", "default: " + p.default_text);
    else if (shown >= 0) place(shown, stops[shown].said);
    else slider.setAttribute("aria-valuetext", `${v} (checked once Python has loaded)`);
  };
  // After the API has read it: n, and its texts {text, said, short}.
  self.resolved = (n, shown) => {
    if (typeof n !== "number" || !shown) return;
    if (slider) place(nearest(n), shown.said);
    if (optional && optional.checked) text.placeholder = shown.short;     // "default" is the box's label
  };
  return self;
}

function choiceControl(p, page, hooks, variants) {
  const select = el("select", { class: "lab-select", autocomplete: "off" });
  const options = p.kind === "tristate" ? [["", "default (" + p.default_text + ")"], ["true", "on"], ["false", "off"]]
    : p.choices.map((c) => [c, c + (p.name === "variant" && variants[c] ? ": " + variants[c].split(":")[0] : "")]);
  for (const [value, label] of options) select.append(el("option", { value, text: label }));
  const { row, error, why } = fieldRow(p, select, null);
  select.addEventListener("change", () => {
    const v = select.value;
    hooks.change(p.name, p.kind === "tristate" ? (v === "" ? null : v === "true") : v);
  });
  const self = common(p, row, error, why, select, (off) => { select.disabled = off; });
  self.set = (v) => { select.value = p.kind === "tristate" ? (v === null ? "" : String(v)) : v; };
  self.resolved = () => {};
  return self;
}

function boolControl(p, page, hooks) {
  const box = el("input", { type: "checkbox", class: "lab-check", autocomplete: "off" });
  const { row, error, why } = fieldRow(p, box, null);
  row.classList.add("lab-bool");
  box.addEventListener("change", () => hooks.change(p.name, box.checked));
  const self = common(p, row, error, why, box, (off) => { box.disabled = off; });
  self.set = (v) => { box.checked = v === true; };
  self.resolved = () => {};
  return self;
}

function controlFor(p, page, hooks, variants) {
  if (p.kind === "choice" || p.kind === "tristate") return choiceControl(p, page, hooks, variants);
  if (p.kind === "bool") return boolControl(p, page, hooks);
  return numberControl(p, page, hooks);
}

// Builds every control: the common ones into their own box (shown first), the
// rest into `form`, one folding group per schema group. Returns {controls: name ->
// control, groups: name -> {box, count, members}, common: the common box}.
export function buildControls(form, params, schema, page, hooks, narrow) {
  const controls = {}, groups = {};
  const fields = el("div", { class: "lab-common-fields" });
  const commonBox = el("fieldset", { class: "lab-common", "data-group": "common" },
                       el("legend", { text: "Common settings" }), fields);
  for (const name of COMMON) {
    const p = params.find((q) => q.name === name);
    if (!p) continue;
    controls[name] = controlFor(p, page, hooks, schema.variants);
    fields.append(controls[name].row);
  }
  const order = [...new Set([...Object.keys(GROUP_TITLES).filter((g) => g !== "advanced"),
                             ...params.map((p) => p.group).filter((g) => g !== "advanced"), "advanced"])];
  for (const group of order) {
    const members = params.filter((p) => p.group === group && !COMMON.includes(p.name));
    if (!members.length) continue;
    const count = el("span", { class: "lab-group-count" });
    const box = el("details", { class: "lab-group" + (group === "advanced" ? " lab-advanced" : ""), "data-group": group,
                                open: !narrow && group !== "advanced" },
                   el("summary", {}, el("span", { class: "lab-group-title", text: GROUP_TITLES[group] || group }), count));
    groups[group] = { box, count, members };
    for (const p of members) {
      controls[p.name] = controlFor(p, page, hooks, schema.variants);
      box.append(controls[p.name].row);
    }
    form.append(box);
  }
  return { controls, groups, common: commonBox };
}
