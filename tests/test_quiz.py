"""Quiz mode: question choice, the ask-loop with an injected stream, history, and a real pty."""

from __future__ import annotations

import io
import json
import os
import random
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import LESSONS, PLAIN_ENV, ROOT
from tests.lessongen import lesson_text
from tutor.assess import history
from tutor.assess import quiz as qz
from tutor.core.engine import derive
from tutor.core.errors import UsageError
from tutor.core.lessonfile import load_lesson
from tutor.core.numbers import read_answer

CATS = derive(load_lesson(LESSONS / "cats-chase-mice.yaml", name="cats-chase-mice"))


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test writes to the real home."""
    monkeypatch.setenv("ATTN_TUTOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def console() -> Console:
    return Console(file=io.StringIO(), width=80, color_system=None, highlight=False)


def transcript(c: Console) -> str:
    return c.file.getvalue()  # type: ignore[attr-defined]


def play(lines: list[str], questions: list[qz.Question], d=CATS) -> tuple[qz.Result, str]:  # type: ignore[no-untyped-def]
    c = console()
    result = qz.run(d, questions, c, io.StringIO("".join(f"{x}\n" for x in lines)))
    return result, transcript(c)


def question(step: str, i: int, j: int, head: int | None = None) -> qz.Question:
    return qz.Question(CATS.step(step, head), i, j)


# ---------------------------------------------------------------------------------------------
# choosing questions


def test_default_quiz_is_eight_cells_in_computation_order() -> None:
    qs = qz.choose(CATS, seed=1)
    assert len(qs) == 8
    order = [qz.QUIZ_STEPS.index(q.step.name) for q in qs]
    assert order == sorted(order)
    assert {q.step.name for q in qs} == {"Q", "K", "V", "scores", "scaled", "weights", "Z"}


def test_seed_reproduces_and_varies() -> None:
    names = [q.name for q in qz.choose(CATS, seed=42)]
    assert names == [q.name for q in qz.choose(CATS, seed=42)]
    others = {tuple(q.name for q in qz.choose(CATS, seed=s)) for s in range(20)}
    assert len(others) > 10


def test_steps_and_count() -> None:
    qs = qz.choose(CATS, ["Z", "Q"], 5, seed=3)
    assert [q.step.name for q in qs] == ["Q", "Q", "Z", "Z", "Z"]  # extras go to Z first
    assert len(qz.choose(CATS, ["Q"], 200, seed=3)) == 6  # no more than the step has
    assert len({q.name for q in qz.choose(CATS, ["Q"], 200, seed=3)}) == 6


@pytest.mark.parametrize("bad", ["X", "W_Q", "masked", "concat", "output"])
def test_steps_that_cannot_be_asked(bad: str) -> None:
    with pytest.raises(UsageError, match="quiz steps: Q, K, V"):
        qz.choose(CATS, [bad], 3, seed=0)


def test_lesson_defaults(tmp_path: Path) -> None:
    text = (LESSONS / "cats-chase-mice.yaml").read_text() + "quiz:\n  steps: [scores]\n  count: 2\n"
    p = tmp_path / "q.yaml"
    p.write_text(text)
    d = derive(load_lesson(p))
    qs = qz.choose(d, seed=0)
    assert [q.step.name for q in qs] == ["scores", "scores"]
    assert len(qz.choose(d, ["Z"], 4, seed=0)) == 4  # the command line wins


def test_heads_and_mask(tmp_path: Path) -> None:
    p = tmp_path / "mh.yaml"
    p.write_text(lesson_text(random.Random(5), 4, 3, 2, 2, heads=2, causal=True, w_o=True))
    d = derive(load_lesson(p))
    qs = qz.choose(d, ["weights", "Z", "output"], 40, seed=9)
    assert any(q.name.startswith("head2.Z[") for q in qs)
    assert any(q.name.startswith("output[") for q in qs)
    for q in qs:  # never a weight the mask forces to 0
        assert not (q.step.name == "weights" and q.j > q.i)
    assert all(qz.inputs(q, 2) for q in qs)


def test_cell_names_and_inputs() -> None:
    q = question("scores", 0, 1)
    assert q.name == "scores[cats, chase]"
    assert qz.inputs(q, 2) == [
        "query of cats (row cats of Q): [2, 0]",
        "key of chase (row chase of K): [2, 1]",
    ]
    assert qz.inputs(question("Q", 0, 0), 2) == [
        "row cats of X: [1, 0, 1, 0]",
        "column 1 of W_Q: [1, 0, 1, 0]",
    ]
    assert qz.inputs(question("scaled", 0, 1), 2) == ["scores[cats, chase] = 4", "d_k = 2"]
    assert qz.inputs(question("weights", 0, 0), 2) == [
        "row cats of scaled: cats 1.41, chase 2.83, mice 1.41"
    ]
    assert qz.inputs(question("Z", 0, 0), 2)[0] == "row cats of weights: [0.16, 0.67, 0.16]"


def test_read_as_echo() -> None:
    assert qz.read_as(read_answer("2/sqrt(2)"), 2) == "read as 2/√2 = √2 ≈ 1.41"
    assert qz.read_as(read_answer("0.16"), 2) is None
    assert qz.read_as(read_answer("1/3"), 2) == "read as 1/3 ≈ 0.33"
    assert qz.read_as(read_answer("2*0.16 + 0.67*0"), 2) == "read as 2·0.16 + 0.67·0 ≈ 0.32"


# ---------------------------------------------------------------------------------------------
# the loop, with an injected stream and a recorded console


def test_right_first_try_with_nicer_exact_form() -> None:
    result, out = play(["2.83"], [question("scaled", 0, 1)])
    assert "✓ Right: scaled[cats, chase] = 2√2 ≈ 2.83" in out
    assert result.ended == "finished" and result.items[0].outcome == "first"
    assert out.rstrip().splitlines()[-1] == "Score: 1/1 at the first try"


def test_expression_is_echoed() -> None:
    _, out = play(["2/sqrt(2)"], [question("Q", 0, 0)])
    assert "read as 2/√2 = √2 ≈ 1.41" in out
    assert "✗ Not quite." in out


def test_not_a_number_does_not_use_a_try() -> None:
    result, out = play(
        ["banana", "__import__('os').system('echo pwned')", "2"], [question("Q", 0, 0)]
    )
    assert "Could not read 'banana' as a number. That did not use a try." in out
    assert "pwned\n" not in out.replace("system('echo pwned')", "")
    assert result.items[0].outcome == "first" and result.items[0].tries == 1


def test_hint_after_first_miss_then_right() -> None:
    result, out = play(["3", "2"], [question("Q", 0, 0)])
    # the automatic hint names the row and column only: the terms would make it copying
    assert "Hint: Q[cats, 1] = row cats of X · column 1 of W_Q\n" in out
    assert "1·1 + 0·0" not in out and "__" not in out
    assert "Try again (2 tries left)." in out
    assert result.items[0].outcome == "hints" and result.items[0].hints == 1
    assert out.rstrip().splitlines()[-1] == "Score: 0/1 at the first try (1 after a hint, 0 missed)"


def test_hints_come_in_steps_and_show_always_reveals() -> None:
    result, out = play(["hint", "hint", "hint", "hint", "show"], [question("Q", 0, 0)])
    first, second, third, fourth = out.split("Hint: ")[1:5]
    assert first.startswith("Q[cats, 1] = row cats of X · column 1 of W_Q\n")
    assert "= __·__ + __·__ + __·__ + __·__  (multiply each pair, then add)" in second
    assert "1·1" not in first + second
    assert "= 1·1 + 0·0 + 1·1 + 0·0" in third and "= __ + __ + __ + __" in third
    assert "last hint; show gives the whole working" in third
    assert fourth.split("\n")[:3] == third.split("\n")[:3]  # the last step again
    assert "Q[cats, 1] = 1·1 + 0·0 + 1·1 + 0·0" in out.split("Hint: ")[-1]  # show: the working
    assert result.items[0].outcome == "missed" and result.items[0].hints == 3


def test_misconception_is_named_in_the_loop() -> None:
    _, out = play(["4", "2", "1"], [question("scaled", 0, 1)])
    assert "✗ Not quite: that is the raw score; divide it by √d_k = √2." in out
    # d_k = 2, d_model = 4: dividing by d_k and by √d_model are one division, said once
    flat = " ".join(out.split())
    said = "✗ Not quite: that divides by d_k = 2 (here also √d_model = √4); divide by √d_k = √2."
    assert said in flat
    assert "or that divides by √d_model" not in flat  # not the same advice twice


def test_fewer_decimals_are_answered_kindly_and_cost_no_try() -> None:
    result, out = play(["0.5", "0.49"], [question("Z", 0, 0)])  # Z[cats, 1] = 0.4907…
    assert "Nearly: right to 1 place; give 2 places. That did not use a try." in out
    assert result.items[0].outcome == "first" and result.items[0].tries == 1
    result, out = play(["1.7", "quit"], [question("Z", 0, 1)])  # 1.6728…: 1.70 is not it
    assert "right to 1 place; give 2 places" in out
    _, out = play(["0.2", "0.1", "quit"], [question("weights", 0, 0)])  # 0.16…: 0.2, not 0.1
    assert out.count("Nearly") == 1 and "✗ Not quite" in out


def test_three_misses_show_the_working() -> None:
    result, out = play(["0.55", "0.6", "0.7"], [question("Z", 0, 0)])
    assert "Here is the working:" in out
    assert "Z[cats, 1] = 0.16·2 + 0.67·0 + 0.16·1" in out
    assert "= 3/(2 + e^√2) ≈ 0.49" in out
    assert "the rounded inputs shown give 0.48" in out
    assert "Try again (1 try left)." in out
    assert result.items[0].outcome == "missed" and result.items[0].tries == 3
    assert "Score: 0/1" in out


def test_commands_hint_skip_show_quit() -> None:
    qs = [question("Q", 0, 0), question("K", 0, 0), question("V", 0, 0), question("Z", 0, 0)]
    result, out = play(["hint", "skip", "show", "quit"], qs)
    assert "Hint: Q[cats, 1]" in out
    assert "Skipped. Q[cats, 1] = 2" in out
    assert "K[cats, 1] = 1·0 + 0·1 + 1·1 + 0·0" in out
    assert result.ended == "quit"
    assert [i.outcome for i in result.items] == ["missed", "missed"]
    assert "Quiz ended early: 2 of 4 questions asked." in out
    assert out.rstrip().splitlines()[-1] == "Score: 0/2 at the first try (0 after a hint, 2 missed)"


def test_hint_before_answering_counts_as_after_hints() -> None:
    result, _ = play(["hint", "2"], [question("Q", 0, 0)])
    assert result.items[0].outcome == "hints"


def test_end_of_input_ends_cleanly_with_summary() -> None:
    result, out = play(["2"], [question("Q", 0, 0), question("K", 0, 0)])
    assert result.ended == "ctrl-d"
    assert "Quiz ended early: 1 of 2 questions asked." in out
    assert "Summary" in out and "│ Q    │" in out
    assert out.rstrip().splitlines()[-1] == "Score: 1/1 at the first try"


def test_a_question_tried_then_quit_counts_as_asked_and_missed(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    # Q1 (Q[cats, 2] = 0) right, Q2 wrong once, then quit: two were asked, not one
    r = run("quiz", "--seed", "1", input="0\n7\nquit\n")
    assert r.exit_code == 0, r.stderr
    assert "Quiz ended early: 2 of 8 questions asked." in r.stdout
    assert "K[mice, 1] was left unfinished; it counts as missed." in r.stdout
    *_, score, nxt = r.stdout.rstrip().splitlines()
    assert score == "Score: 1/2 at the first try (0 after a hint, 1 missed)"
    assert nxt == "Next: attn-tutor quiz cats-chase-mice --review  (what you missed comes back)"
    cells = history.read().records[0]["cells"]
    assert [(c["outcome"], c["unfinished"]) for c in cells] == [
        ("first", False),
        ("missed", True),
    ]


def test_a_question_only_shown_then_quit_is_not_counted() -> None:
    result, out = play(["2", "quit"], [question("Q", 0, 0), question("K", 0, 0)])
    assert "Quiz ended early: 1 of 2 questions asked." in out and "unfinished" not in out
    result, out = play(["2", "hint"], [question("Q", 0, 0), question("K", 0, 0)])  # then Ctrl-D
    assert result.ended == "ctrl-d" and result.items[1].unfinished
    assert "Quiz ended early: 2 of 2 questions asked." in out


def test_counts_are_singular_for_one(run) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--count", "1", "--seed", "0", input="skip\n")
    assert "(1 question, seed 0; answers to 2 places)" in r.stdout
    r = run("progress")
    assert "Progress over 1 quiz (" in r.stdout.replace("\n", "")


def test_ctrl_c_ends_cleanly() -> None:
    class Interrupting(io.StringIO):
        def readline(self, *args):  # type: ignore[no-untyped-def, override]
            if self.tell() >= len(self.getvalue()):
                raise KeyboardInterrupt
            return super().readline(*args)

    c = console()
    result = qz.run(CATS, [question("Q", 0, 0), question("K", 0, 0)], c, Interrupting("2\n"))
    assert result.ended == "ctrl-c"
    assert transcript(c).rstrip().splitlines()[-1] == "Score: 1/1 at the first try"


def test_summary_table_per_step() -> None:
    qs = [question("Q", 0, 0), question("Q", 1, 1), question("weights", 0, 0)]
    _, out = play(["2", "1", "3", "0.16"], qs)
    assert "│ Q       │               1 │                 1 │      0 │" in out
    assert "│ weights │               1 │                 0 │      0 │" in out
    # the score is what was right without help; the hinted one is shown beside it
    assert out.rstrip().splitlines()[-1] == "Score: 2/3 at the first try (1 after a hint, 0 missed)"


def test_square_brackets_survive() -> None:
    _, out = play(["skip"], [question("Z", 0, 1)])
    assert "Question 1/1: Z[cats, 2]" in out
    assert "row cats of weights: [0.16, 0.67, 0.16]" in out


# ---------------------------------------------------------------------------------------------
# the command, history and progress


def test_quiz_command_scripted(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--steps", "Q", "--count", "2", "--seed", "4", input="hint\nskip\nskip\n")
    assert r.exit_code == 0, r.stderr
    assert "seed 4" in r.stdout
    assert (
        r.stdout.rstrip().splitlines()[-2]
        == "Score: 0/2 at the first try (0 after a hint, 2 missed)"
    )
    records = history.read().records
    assert len(records) == 1
    rec = records[0]
    assert rec["lesson"] == "cats-chase-mice" and rec["ended"] == "finished"
    assert [c["outcome"] for c in rec["cells"]] == ["missed", "missed"]
    assert (home / "history.jsonl").exists()


def test_interrupted_quiz_is_recorded(run) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--seed", "1", input="1\n")
    assert r.exit_code == 0
    assert history.read().records[0]["ended"] == "ctrl-d"


def test_quiz_usage_errors(run) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--steps", "X")
    assert r.exit_code == 2 and "cannot quiz on 'X'" in r.stderr
    assert run("quiz", "--count", "0").exit_code == 2
    assert run("quiz", "no-such-lesson").exit_code == 1


def test_progress(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("progress")
    assert r.exit_code == 0 and "No quizzes yet" in r.stdout
    run("quiz", "--steps", "Q,weights", "--count", "2", "--seed", "1", input="skip\nskip\n")
    run("quiz", "--steps", "Q", "--count", "1", "--seed", "1", input="skip\n")
    r = run("progress")
    assert r.exit_code == 0, r.stderr
    assert "Progress over 2 quizzes" in r.stdout and "cats-chase-mice" in r.stdout
    assert "0/1 0/1" in r.stdout  # Q, over time
    assert "Practise next: " in r.stdout and "--steps" in r.stdout
    r = run("progress", "the-cake")  # a lesson not quizzed yet: say which are
    assert r.exit_code == 0 and "No quizzes of the-cake yet" in r.stdout
    assert "the lessons quizzed are: cats-chase-mice" in r.stdout
    r = run("progress", "nope")  # no such lesson at all: an error naming the quizzed ones
    assert r.exit_code == 1 and "no lesson 'nope' in your history" in r.stderr
    assert "cats-chase-mice" in r.stderr


def test_history_survives_a_torn_last_line(home: Path) -> None:
    home.mkdir(parents=True)
    path = home / history.FILE_NAME
    good = json.dumps({"lesson": "a", "cells": []})
    path.write_text(good + "\n" + '{"lesson": "b", "cel')  # cut off mid-write
    found = history.read()
    assert len(found.records) == 1 and "damaged" in found.problems[0]
    assert history.append({"lesson": "c", "cells": []}) == []
    found = history.read()
    assert [r["lesson"] for r in found.records] == ["a", "c"]
    assert len(found.problems) == 1


def test_unreadable_history_is_set_aside(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(parents=True)
    (home / history.FILE_NAME).write_bytes(b"\xff\xfe garbage \x00")
    r = run("progress")
    assert r.exit_code == 0
    assert "moved it to" in r.stderr
    assert list(home.glob("history.jsonl.damaged-*"))
    r = run("quiz", "--count", "1", "--seed", "0", input="skip\n")
    assert r.exit_code == 0
    assert len(history.read().records) == 1


def test_unwritable_history_is_a_warning_not_a_failure(run, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("a file where the folder should be")
    r = run("quiz", "--count", "1", "--seed", "0", input="skip\n")
    assert r.exit_code == 0
    assert "could not save this quiz" in r.stderr


def test_history_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ATTN_TUTOR_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert history.history_dir() == tmp_path / "xdg" / "attn-tutor"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert history.history_dir() == tmp_path / "h" / ".local" / "share" / "attn-tutor"


def test_progress_picks_the_weakest_step() -> None:
    recs = [
        {"lesson": "l", "cells": [{"step": "Q", "outcome": "first"}]},
        {"lesson": "l", "cells": [{"step": "Z", "outcome": "missed", "head": 2}]},
    ]
    rows = history.progress(recs)
    assert history.practise_next(rows).step == "head2.Z"  # type: ignore[union-attr]


def test_help_does_not_import_sympy() -> None:
    import subprocess

    code = "import sys; from tutor.cli import app; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------
# end to end in a pseudo-terminal


def spawn(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, **PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path / "pty-home")}
    env.pop("TERM", None)
    env["TERM"] = "xterm"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tutor", "quiz", *args],
        cwd=str(ROOT),
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(50, 80),
        preexec_fn=default_sigint,
    )
    return child


def default_sigint() -> None:
    """In the child: Ctrl-C interrupts, as at a terminal. A runner that started the tests with
    SIGINT ignored (a background job, some CI) would pass that on, and Python leaves an ignored
    SIGINT ignored, so the Ctrl-C tests would wait in vain. (attn-tutor itself keeps an
    ignored SIGINT ignored, as a background job expects.)"""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_pty_session_with_ctrl_c(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--steps", "scaled,Z", "--count", "2", "--seed", "2")
    child.expect_exact("Question 1/2: scaled[")
    child.expect_exact("= ")
    child.sendline("banana")
    child.expect_exact("did not use a try")
    child.sendline("sqrt(2)")  # seed 2 asks scaled[cats, cats] = 2/√2
    child.expect_exact("read as √2")
    child.expect_exact("✓ Right: scaled[cats, cats] = √2 ≈ 1.41")
    child.expect_exact("Question 2/2: Z[")
    child.expect_exact("= ")
    time.sleep(0.2)
    child.sendintr()
    child.expect_exact("Score: ")
    child.expect(r"\d+/1")
    child.expect(pytest.importorskip("pexpect").EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    rec = history.read(tmp_path / "pty-home" / history.FILE_NAME).records
    assert rec[0]["ended"] == "ctrl-c"


def test_pty_session_with_ctrl_d(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = spawn(tmp_path, "--steps", "Q", "--count", "2", "--seed", "2")
    child.expect_exact("Question 1/2: Q[")
    child.expect_exact("= ")
    child.sendline("quit-not")  # not a number, not a command
    child.expect_exact("Could not read")
    child.sendeof()
    child.expect_exact("Quiz ended early: 0 of 2 questions asked.")
    child.expect_exact("Score: 0/0")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "")


def test_scaled_hint_names_the_heads_own_scores() -> None:
    """In a lesson with heads, the hint for scaled names the same cell the inputs show."""
    d = derive(load_lesson(LESSONS / "the-cake-two-heads.yaml", name="the-cake-two-heads"))
    scaled = d.step("scaled", 2)
    i, j = scaled.rows.index("I"), scaled.cols.index("ate")
    q = qz.Question(scaled, i, j)
    assert q.name == "head2.scaled[I, ate]"
    assert qz.inputs(q, 2)[0].startswith("head2.scores[I, ate] = ")
    hint = qz.hint(q, 2)
    assert hint.startswith("head2.scaled[I, ate] = head2.scores[I, ate] / √d_k = ")
    assert "= scores[" not in hint


def test_the_console_script_collects_garbage_during_a_quiz_session(tmp_path: Path) -> None:
    """main() turns the cyclic GC off for speed; a quiz, which may last, turns it back on."""
    import subprocess

    from tests.conftest import PLAIN_ENV, ROOT

    code = (
        "import gc, sys, tutor.assess.quiz\n"
        "run = tutor.assess.quiz.run\n"
        "def spy(*a, **k):\n"
        "    print('collector during the session:', gc.isenabled(), file=sys.stderr)\n"
        "    return run(*a, **k)\n"
        "tutor.assess.quiz.run = spy\n"
        "from tutor.cli import main\n"
        "sys.argv = ['attn-tutor', 'quiz', '--count', '1', '--seed', '1']\n"
        "main()\n"
    )
    env = {**os.environ, **PLAIN_ENV, "ATTN_TUTOR_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], input="", capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert "collector during the session: True" in done.stderr, done.stderr


def test_progress_shows_lesson_names_as_typed(run, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A lesson's name comes from its file name: never read as Rich markup or emoji codes."""
    odd = tmp_path / "[b]cats :smile:.yaml"
    odd.write_text((LESSONS / "cats-chase-mice.yaml").read_text())
    r = run("quiz", str(odd), "--steps", "Q", "--count", "1", "--seed", "1", input="skip\n")
    assert r.exit_code == 0, r.stderr
    r = run("progress")
    assert r.exit_code == 0, r.stderr
    assert "[b]cats :smile:" in [line.strip() for line in r.stdout.splitlines()]  # table title
    assert "\n  attn-tutor quiz '[b]cats :smile:' --steps Q\n" in r.stdout  # quoted for a shell


def test_quiz_help_states_the_default_count_the_quiz_uses(run) -> None:  # type: ignore[no-untyped-def]
    from tutor.core.lesson import QuizDefaults

    # the help text is a literal (cli.py must not import the lesson module for --help)
    assert f"(default {QuizDefaults().count})" in run("quiz", "--help").stdout


# ---------------------------------------------------------------------------------------------
# answers that cancel to 0 (issue 19.2), and a bug mid-quiz


UNCHECKABLE = [
    "sqrt(sqrt(11+6*sqrt(2))-3-sqrt(2))",
    "ln(sqrt(sqrt(11+6*sqrt(2))-3-sqrt(2)))",
    "1/(sqrt(11+6*sqrt(2))-3-sqrt(2))",
]


@pytest.mark.parametrize("text", UNCHECKABLE)
def test_an_answer_that_cancels_is_not_a_number_to_check_and_costs_no_try(run, text: str) -> None:  # type: ignore[no-untyped-def]
    r = run("quiz", "--seed", "1", "--count", "3", input=f"2\n{text}\n")
    assert r.exit_code == 0, r.stderr
    assert "not a number I can check" in r.stdout
    assert "That did not use a try" in r.stdout
    (record,) = history.read().records
    assert record["ended"] == "ctrl-d"
    assert [c["tries"] for c in record["cells"]] == [1]  # question 2 was never tried


def test_a_zero_written_the_long_way_is_read_as_zero(run) -> None:  # type: ignore[no-untyped-def]
    """sympy knows this base is 0, so the power is 0: a real answer, judged (wrong here)."""
    r = run(
        "quiz", "--seed", "1", "--count", "3", input="2\n(sqrt(5+2*sqrt(6))-sqrt(2)-sqrt(3))^0.5\n"
    )
    assert r.exit_code == 0, r.stderr
    assert "Not quite" in r.stdout
    assert [c["tries"] for c in history.read().records[0]["cells"]] == [1, 1]


def test_an_internal_error_mid_quiz_saves_the_session_first(run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tutor.assess import judge

    real = judge.Judge.judge
    calls = []

    def breaks_on_the_second(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("a deliberate bug")
        return real(*args, **kwargs)

    monkeypatch.setattr(judge.Judge, "judge", breaks_on_the_second)
    r = run("quiz", "--seed", "1", "--count", "3", input="2\n0.5\n")
    assert r.exit_code == 70, (r.stdout, r.stderr)
    assert "internal error (RuntimeError" in r.stderr
    (record,) = history.read().records
    assert record["ended"] == "error"
    assert [c["outcome"] for c in record["cells"]] == ["first"]


def test_an_input_encoding_that_cannot_decode_the_keyboard_ends_the_quiz_cleanly(
    tmp_path: Path,
) -> None:
    """PYTHONIOENCODING=utf-16 with UTF-8 input once ended in an internal error (exit 70)."""
    import subprocess

    env = {
        **os.environ,
        **PLAIN_ENV,
        "ATTN_TUTOR_HOME": str(tmp_path),
        "PYTHONIOENCODING": "utf-16",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tutor", "quiz", "--seed", "1", "--count", "2"],
        input=b"2\n",
        capture_output=True,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr.decode("utf-16", "replace")
    out = done.stdout.decode("utf-16")
    assert "could not be read as utf-16 text" in out and "PYTHONIOENCODING" in out
    records = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert records[0]["ended"] == "ctrl-d"


def test_right_by_hand_says_which_way_gives_it() -> None:
    """0.48 for Z[cats, 1] is what the weights as shown give: the quiz says so, by their
    numbers (not "from the rounded inputs shown", which any answer could claim)."""
    _, out = play(["0.48"], [question("Z", 0, 0)])
    flat = " ".join(out.split())
    assert "Right, from weights as shown (0.16 and 0.67). Exactly, Z[cats, 1]" in flat
