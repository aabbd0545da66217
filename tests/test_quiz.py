"""The seeded problem sets (vsockmodel.study.quiz), the CLI's quiz command and the lab's API."""

from __future__ import annotations

import json

import pytest

import vsockmodel as vm
from vsockmodel import cli
from vsockmodel.lab import api
from vsockmodel.study import quiz

SEEDS = range(0, 6)          # two of each kind (the kinds cycle with the seed)


def test_every_chapter_has_at_least_three_kinds_and_seeds_cycle_through_them():
    for chapter in quiz.CHAPTERS:
        assert len(quiz.KINDS[chapter]) >= 3
        kinds = {quiz.problem(chapter, s).kind for s in range(len(quiz.KINDS[chapter]))}
        assert len(kinds) == len(quiz.KINDS[chapter])


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_the_same_seed_gives_the_same_problem_and_answer(chapter):
    for seed in (7, 8, 9):
        a, b = quiz.problem(chapter, seed), quiz.problem(chapter, seed)
        assert a == b


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_a_room_of_seeds_gets_varied_questions(chapter):
    """Neighbours in a workshop room should not all be handed the same question."""
    questions = {quiz.problem(chapter, s).question for s in range(24)}
    assert len(questions) >= 8


def _recompute(p: quiz.Problem) -> float:
    """The answer from the model's API, from the problem's own settings and seed."""
    s = dict(p.settings)
    if p.kind == "packets per write":
        return vm.make_params(**s)[0].packets_per_write
    if p.kind == "metadata slots":
        return vm.model.kernel.queue_max(vm.make_params(**s)[0].buffer)
    if p.kind == "which run resets":
        return None
    if p.kind in ("pre-skb against sk_buff", "the series' gain", "patches 4 and 5"):
        a = {"pre-skb against sk_buff": "pre-skb", "the series' gain": "baseline",
             "patches 4 and 5": "p1-p3"}[p.kind]
        n = 2 * quiz.PAIRS if p.kind == "patches 4 and 5" else quiz.PAIRS
        return vm.compare(a, s.pop("variant"), replications=n, seed=p.seed, **s).change_pct
    r = vm.run(**s)
    return {"cycles per byte": r.rx_cycles_per_byte,
            "collapses in a stream": 1000 * r.counters["collapses"] / r.packets,
            "the reader's futile wake-ups": 1000 * r.futile_wakeups_by_task.get("reader", 0) / r.packets,
            "packets per interrupt": r.packets / r.counters["irqs"],
            "recv() calls per write": r.recv_per_write, "recv() calls at large writes": r.recv_per_write,
            "futile wake-ups": 1000 * r.futile_wakeups / r.packets if r.packets else 0,
            "the worker's lock wait": 100 * r.worker_time()["lock_wait"],
            "packets per lock hold": r.batch_pkts["mean"],
            "used-ring publishes": 1000 * r.counters["used_publishes"] / r.packets,
            "round-trip time": r.rtt_us, "throughput": r.throughput_gbps}[p.kind]


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_every_answer_is_what_the_model_computes_for_the_problems_settings(chapter):
    for seed in SEEDS:
        p = quiz.problem(chapter, seed)
        expected = _recompute(p)
        if expected is not None:
            assert p.answer == pytest.approx(expected, rel=1e-12), (p.kind, seed)


@pytest.mark.parametrize("chapter", quiz.CHAPTERS)
def test_a_right_answer_is_right_and_a_wrong_one_wrong(chapter):
    for seed in SEEDS:
        p = quiz.problem(chapter, seed)
        if p.yes_no:
            assert quiz.check(p, p.answer_text)["correct"]
            assert not quiz.check(p, "no" if p.answer else "yes")["correct"]
            continue
        assert quiz.check(p, f"{p.answer}")["correct"]
        assert quiz.check(p, f"{p.answer + 0.9 * p.tolerance} {p.unit}")["correct"] or p.tolerance == 0
        assert not quiz.check(p, f"{p.answer + 2 * p.tolerance + 1}")["correct"]


@pytest.mark.parametrize("chapter,seed,start", [
    (0, 1, "chapter: 0 has no problems"), (7, 1, "chapter: 7 has no problems; allowed 1 to 6"),
    ("x", 1, "chapter: expected an integer"), (1, -1, "seed: -1 is out of range"),
    (1, 2**31, "seed: 2,147,483,648 is out of range"), (1, "1.5", "seed: expected an integer"),
])
def test_bad_chapters_and_seeds_are_one_clear_error(chapter, seed, start):
    with pytest.raises(ValueError) as exc:
        quiz.problem(chapter, seed)
    assert str(exc.value).startswith(start)
    res = json.loads(api.quiz_problem(chapter, seed))
    assert res["ok"] is False and res["message"] == str(exc.value)


def test_the_command_line_and_the_lab_give_the_same_problem_and_answer(capsys):
    for chapter, seed in ((1, 3), (3, 4), (4, 1), (5, 2), (5, 3), (6, 2)):
        p = quiz.problem(chapter, seed)
        assert cli.main(["quiz", "--chapter", str(chapter), "--seed", str(seed), "-c"]) == 0
        out = capsys.readouterr().out
        assert p.question in out and f"Answer: {p.answer_text}" in out
        lab = json.loads(api.quiz_problem(chapter, seed))["problem"]
        assert lab["question"] == p.question and "answer" not in lab
        checked = json.loads(api.quiz_check(chapter, seed, p.answer_text))
        assert checked["correct"] and checked["answer"] == p.answer


def test_the_key_lists_a_room_of_seeds(capsys):
    assert cli.main(["quiz", "--chapter", "4", "--key", "1-30"]) == 0
    lines = [l for l in capsys.readouterr().out.splitlines() if l.strip().startswith("seed")]
    assert len(lines) == 30
    assert cli.main(["quiz", "--chapter", "4", "--key", "1-30", "--seed", "2"]) == 2


def test_chapter_5_asks_about_notifications_and_chapter_6_about_measuring():
    kinds = {c: {quiz.problem(c, s).kind for s in range(3)} for c in (4, 5, 6)}
    assert kinds[4] == {"metadata slots", "which run resets", "collapses in a stream"}
    assert kinds[5] == {"the reader's futile wake-ups", "packets per interrupt", "patches 4 and 5"}
    assert kinds[6] == {"round-trip time", "throughput", "recv() calls at large writes"}
    assert all(quiz.problem(c, s).chapter == c for c in (4, 5, 6) for s in range(3))
