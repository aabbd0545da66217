// Problems: the same seeded problems as `python -m vsockmodel quiz`. A chapter
// and a seed pick one; the model computes its answer, which the page is given
// only when the reader checks. A wrong first answer gets a hint and whether the
// answer is higher or lower, and a second try; the answer comes with a right
// answer or the second try, and only then may the problem's settings be opened
// in the lab (they would show the answer). In a workshop room each try is
// counted on the instructor's tally (room-tally.js). A new problem or a bad
// seed clears what the previous one left (its verdict, its command).

import { postTry, roomSeed } from "./room-tally.js";

export function createProblemsMode(ctx) {
  const { el, panel, state, root } = ctx;
  const chapters = ctx.PAGE.quiz_chapters;
  const chapter = el("select", { id: "lab-qchapter", class: "lab-select", autocomplete: "off" });
  for (const n of chapters) chapter.append(el("option", { value: String(n), text: "Chapter " + n }));
  const seed = el("input", { id: "lab-qseed", type: "text", inputmode: "numeric", class: "lab-text", size: "8", autocomplete: "off" });
  const showButton = el("button", { type: "button", class: "lab-button", text: "Show the problem", onclick: () => showProblem() });
  const question = el("p", { class: "lab-question", "aria-live": "polite" });
  const answer = el("input", { id: "lab-qanswer", type: "text", class: "lab-text", size: "14", autocomplete: "off" });
  const checkButton = el("button", { type: "button", class: "lab-button", text: "Check my answer", onclick: () => checkAnswer() });
  const verdict = el("p", { class: "lab-change", role: "status" });
  const error = el("p", { id: "lab-qerror", class: "lab-error-text", role: "alert" });
  const open = el("button", { type: "button", class: "lab-button", text: "Open its settings in the lab", hidden: true,
                              onclick: () => { if (problem && settled) ctx.openSettings(problem.settings, "run"); } });
  const command = el("div", { class: "lab-commands" });
  panel.append(
    el("p", { text: "A chapter and a seed pick a problem, and the model computes its answer: the same problem as "
                    + "python -m vsockmodel quiz --chapter N --seed S gives. Predict first, then check." }),
    el("div", { class: "lab-row" }, el("label", { for: "lab-qchapter", text: "chapter " }), chapter,
       el("label", { for: "lab-qseed", text: "seed " }), seed, showButton),
    error, question,
    el("div", { class: "lab-row" }, el("label", { for: "lab-qanswer", text: "your answer " }), answer, checkButton, open),
    verdict, command);
  answer.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); checkAnswer(); } });
  let problem = null;
  let attempt = 1;                 // the try the next check is: 1, then 2
  let settled = false;             // answered right, or tried twice: the answer is shown

  function clear() {
    problem = null;
    attempt = 1;
    settled = false;
    open.hidden = true;
    root.dataset.problem = "";
    question.textContent = verdict.textContent = error.textContent = "";
    delete verdict.dataset.correct;
    delete verdict.dataset.hint;
    command.replaceChildren();
  }
  async function showProblem() {
    if (!state.ready) return;
    state.qchapter = chapter.value;
    state.qseed = seed.value.trim();
    ctx.writeAddress();
    clear();
    ctx.status("Computing the problem's answer…", true);
    let res;
    try { res = await ctx.callOwn("quiz_problem", {}, state.qchapter, state.qseed); } catch (e) { ctx.failed(e); return; }
    ctx.status("", false);
    if (!res.ok) { error.textContent = res.message; return; }
    problem = res.problem;
    question.textContent = problem.question;
    answer.placeholder = problem.unit || "a number";
    ctx.commands(command, "The same problem at home", [["command line", res.command + " -c"]]);
    root.dataset.problem = JSON.stringify(problem);
  }
  async function checkAnswer() {
    if (!state.ready || !problem) return;
    let res;
    try {
      res = await ctx.callOwn("quiz_check", {}, problem.chapter, problem.seed, answer.value, settled ? 2 : attempt);
    } catch (e) { ctx.failed(e); return; }
    if (!res.ok) { error.textContent = res.message; verdict.textContent = ""; delete verdict.dataset.correct; return; }
    error.textContent = "";                       // a reply the lab could not read costs no try
    if (!settled) postTry(problem, res);
    if (!res.correct && res.hint) {               // a first wrong try: where to look, not the answer
      verdict.textContent = "Not yet: the model's answer is " + res.direction + ". Hint: " + res.hint
        + " One more try.";
      verdict.dataset.correct = "false";
      verdict.dataset.hint = "true";
      attempt = 2;
      answer.select();
      return;
    }
    delete verdict.dataset.hint;
    verdict.textContent = (res.correct ? "Right. " : "Not quite. ") + "The model says " + res.answer_text
      + " (" + res.tolerance_text + " counts as right). " + res.explanation;
    verdict.dataset.correct = String(res.correct);
    settled = true;
    open.hidden = false;                          // now its settings may show the answer
  }
  return {
    onAddress() {
      chapter.value = state.qchapter || String(chapters[0]);
      seed.value = state.qseed || roomSeed() || "1";   // in a workshop room, the seed the room gave
    },
    onInput() { if (state.mode === "problems" && !problem && state.qseed) showProblem(); },
    reset() { clear(); answer.value = ""; },
  };
}
