// Readies one built page for Chromium's print-to-PDF (the printed edition,
// vsockmodel/bookkit/printed/chromium.py). Evaluated as a function of
// {pageCss, textWidth, minFontScale} once the page has loaded, with print
// media emulated in a window as wide as the paper: Chromium's print media
// queries see the paper's width while the page is laid out in the width of
// its text, so the page is held to textWidth here, and the layout measured
// below is the one that prints. The book's print.css has already dropped what
// paper cannot use.
//
// Returns the page's headings (for the contents list and the bookmarks), the
// blocks set smaller or wrapped to fit, and whatever is still wider than the
// text (the build fails on it: the paper's edge would cut it off).
async ({ pageCss, textWidth, minFontScale }) => {
  // Equations first: MathJax typesets after the page has loaded.
  if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
    await window.MathJax.startup.promise;
  }
  await document.fonts.ready;
  await Promise.all(Array.from(document.images, (img) => (img.complete ? null : img.decode().catch(() => null))));

  document.documentElement.classList.add("book-printed-edition");
  const style = document.createElement("style");
  style.textContent = pageCss + `\nhtml { width: ${textWidth}px; }\n`;
  document.head.appendChild(style);
  const article = document.querySelector("article.bd-article");

  // Chromium writes a named destination into the PDF for each element that a
  // link of the same page points to: point one hidden link at every id, so
  // that links from other pages can land on it in the joined PDF.
  const targets = document.createElement("div");
  targets.hidden = true;
  article.querySelectorAll("[id]").forEach((el) => {
    const a = document.createElement("a");
    a.href = "#" + encodeURIComponent(el.id);
    targets.appendChild(a);
  });
  document.body.appendChild(targets);

  // A code block or program output keeps its lines if a smaller font fits
  // them; what does not fit at minFontScale wraps (print.css). A table too
  // wide gets a smaller font too.
  const width = article.clientWidth;
  const fits = (el) => el.scrollWidth <= el.clientWidth + 1 && el.getBoundingClientRect().width <= width + 1;
  const fitted = [];
  function shrinkToFit(el, keepLines) {
    const base = parseFloat(getComputedStyle(el).fontSize);
    if (keepLines) el.style.whiteSpace = "pre";
    for (let scale = 1; scale >= minFontScale - 1e-9; scale -= 0.05) {
      el.style.fontSize = base * scale + "px";
      if (fits(el)) {
        if (scale < 1) fitted.push(`${el.tagName.toLowerCase()} at ${Math.round(scale * 100)} %`);
        return;
      }
    }
    el.style.fontSize = "";
    if (keepLines) el.style.whiteSpace = "";
    fitted.push(`${el.tagName.toLowerCase()} wrapped`);
  }
  article.querySelectorAll("pre").forEach((pre) => shrinkToFit(pre, true));
  article.querySelectorAll("table").forEach((table) => {
    if (fits(table)) return;
    shrinkToFit(table, false);
    if (!fits(table)) table.classList.add("book-print-squeeze");   // names may break anywhere
  });

  const box = article.getBoundingClientRect();
  const clipped = [];
  article.querySelectorAll("*").forEach((el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || el.closest("mjx-assistive-mml")) return;
    const over = Math.max(r.right - box.right, box.left - r.left);
    const scrolls = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible";
    if (over > 1 || scrolls) {
      const cls = typeof el.className === "string" ? el.className.trim() : "";
      const what = el.tagName.toLowerCase() + (cls ? "." + cls.split(/\s+/).join(".") : "");
      clipped.push(`${what} "${el.textContent.trim().slice(0, 60)}" (${Math.round(over)} px over)`);
    }
  });
  if (document.body.scrollWidth > textWidth + 1) {
    clipped.push(`the page is ${document.body.scrollWidth} px wide, its paper's text ${textWidth} px`);
  }

  const headings = [];
  article.querySelectorAll("section[id]").forEach((section) => {
    const h = section.querySelector(":scope > h1, :scope > h2, :scope > h3");
    if (!h) return;
    const copy = h.cloneNode(true);
    copy.querySelectorAll("a.headerlink").forEach((a) => a.remove());
    headings.push({ id: section.id, level: Number(h.tagName[1]), text: copy.textContent.replace(/\s+/g, " ").trim() });
  });
  return { headings, fitted, clipped: clipped.slice(0, 20) };
};
