// The workshop room: a lab served by the room's server (the bundle's serve.py)
// gives the attendee a seed in a cookie (the room page, or a preset's short
// link), and counts each try at a problem on the instructor's tally. A lab
// read anywhere else (the online book, a plain local server) has no such
// cookie, and posts nothing.

const SEED_COOKIE = /(?:^|;\s*)vsock_seed=(\d{1,9})(?:;|$)/;

// The seed the room gave this browser, or null outside a room.
export function roomSeed() {
  const m = SEED_COOKIE.exec(document.cookie);
  return m ? m[1] : null;
}

// One try at ``problem``, as quiz_check judged it (``res``): to the tally, if in a room.
// The model's answer goes only with a try that showed it (a right one, or the last).
export function postTry(problem, res) {
  if (roomSeed() === null) return;
  const body = {
    chapter: problem.chapter, seed: problem.seed, kind: problem.kind, given: res.given, correct: res.correct,
    answer: "answer" in res ? res.answer : null, tolerance: problem.tolerance, unit: problem.unit,
  };
  fetch("/tally/answer", { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
                           body: JSON.stringify(body) }).catch(() => { /* the room's tally is a courtesy: the lab goes on */ });
}
