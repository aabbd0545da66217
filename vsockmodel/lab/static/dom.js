// Small DOM helpers shared by the lab's modules.

// el("p", {class: "x", text: "hello", onclick: f}, child, ...): a new element.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// Lets the browser paint and answer input between two parts of a long job.
export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

export function darkMode() {
  const theme = document.documentElement.dataset.theme;
  return theme === "dark" || (theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
}

// Copy to the clipboard where the page may (a secure context), and keep the
// text on the lab's root (data-copied) for tests and for a reader to select.
export function copyText(root, text, button) {
  const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => {});
  root.dataset.copied = text;
  done();
}

// "Reproduce it at home": labelled blocks of code, each with a Copy button.
export function commandBlock(root, container, heading, blocks) {
  container.replaceChildren(el("h4", { text: heading }), ...blocks.map(([label, text]) => {
    const button = el("button", { type: "button", class: "lab-copy", text: "Copy", "aria-label": "Copy the " + label });
    button.addEventListener("click", () => copyText(root, text, button));
    return el("div", { class: "lab-command" }, el("span", { class: "lab-command-label", text: label }),
              el("pre", {}, el("code", { text })), button);
  }));
}
