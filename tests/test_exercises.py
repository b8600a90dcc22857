"""The exercise checkers of the course, tested like any other code.

Each chapter module ``notebooks/exercises/chNN.py`` keeps a registry,
``EXERCISES``, with every exercise's checker (a judge, and for code a probe);
its key ``grading/key/chNN.py`` adds the solution, typical mistakes,
malformed answers and hidden cases. The tests walk that registry: the solution must come
out ``right``, every mistake ``not yet:`` with its hint, every malformed
answer ``not yet:`` without an exception escaping, and an exercise with too
few such cases fails here. The notebooks must call the same checkers and
still show ``not answered yet`` for every exercise left as ``None``.
"""

import importlib
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
for _folder in (str(NOTEBOOKS), str(ROOT)):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from exercises import common  # noqa: E402

MODULES = sorted(path.stem for path in
                 (NOTEBOOKS / "exercises").glob("ch[0-9][0-9].py"))
CHAPTERS = sorted(path.name[:2] for path in (NOTEBOOKS / "src").glob("[0-9][0-9]_*.py"))


def _exercises():
    for name in MODULES:
        module = importlib.import_module("exercises." + name)
        importlib.import_module("grading.key." + name)
        for number, exercise in sorted(module.EXERCISES.items()):
            yield pytest.param(exercise, id="{}-{}".format(name, number))


EXERCISES = list(_exercises())


def test_every_course_chapter_has_a_module():
    assert {"ch" + n for n in CHAPTERS} <= set(MODULES)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_solution_is_right(exercise):
    assert exercise.solution is not None, "no solution registered"
    verdict = exercise.verdict(exercise.solution())
    assert verdict == "right" or verdict.startswith("right: "), verdict


@pytest.mark.parametrize("exercise", EXERCISES)
def test_other_legitimate_forms_are_right(exercise):
    if not exercise.also_right:
        pytest.skip("no other form registered")
    for case in exercise.also_right:
        verdict = exercise.verdict(case.make())
        assert verdict == "right" or verdict.startswith("right: "), (case.what, verdict)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_typical_mistakes_get_their_hint(exercise):
    assert len(exercise.mistakes) >= 3, "fewer than three typical mistakes"
    for case in exercise.mistakes:
        assert case.hint, "mistake {!r} names no hint to expect".format(case.what)
        verdict = exercise.verdict(case.make())
        assert verdict.startswith("not yet: "), (case.what, verdict)
        assert case.hint in verdict, (case.what, verdict)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_malformed_answers_are_not_yet_without_traceback(exercise):
    assert len(exercise.malformed) >= 2, "fewer than two malformed answers"
    for case in exercise.malformed:
        verdict = exercise.verdict(case.make())  # must not raise
        assert verdict.startswith("not yet: "), (case.what, verdict)
        assert "Traceback" not in verdict


@pytest.mark.parametrize("exercise", EXERCISES)
def test_none_is_not_answered(exercise):
    assert exercise.verdict(None) == "not answered yet"


@pytest.mark.parametrize("name", MODULES)
def test_each_chapter_asks_for_code(name):
    module = importlib.import_module("exercises." + name)
    assert any(exercise.writes_code for exercise in module.EXERCISES.values())


def test_a_checker_prints_one_line(capsys):
    ch01 = importlib.import_module("exercises.ch01")
    ch01.check_1(None)
    ch01.check_1("eight")
    ch01.check_1(importlib.import_module("grading.key.ch01").solution_1())
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "not answered yet"
    assert lines[1].startswith("not yet: give a number")
    assert lines[2] == "right"


def test_an_exception_says_what_and_where():
    def derivative(f, x):
        raise KeyError("oops")

    ch01 = importlib.import_module("exercises.ch01")
    verdict = ch01.check_3.verdict(derivative)
    assert verdict.startswith("not yet: running it raised KeyError: 'oops'")
    assert "in derivative, line" in verdict   # the learner's line, not ours


def test_an_exception_inside_minichain_names_the_learners_line_too():
    def grad_x(gy, W):
        import minichain.functions as F
        return F.matmul(gy, W).array       # shapes that do not line up

    verdict = importlib.import_module("exercises.ch06").check_3.verdict(grad_x)
    assert "(in " in verdict and "minichain/" in verdict
    assert "called from grad_x line" in verdict and "of your code" in verdict


def test_an_exception_that_cannot_be_printed_is_still_a_verdict():
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no text")

    def judge(answer):
        raise Odd()

    assert common.verdict(judge, 1) == "not yet: running it raised Odd"


def test_config_is_restored_after_a_check():
    import minichain as mc

    def judge(answer):
        mc.config.enable_backprop = False
        raise ValueError("left recording off")

    assert common.verdict(judge, 1).startswith("not yet: running it raised ValueError")
    assert mc.config.enable_backprop is True


def _source(chapter):
    return next((NOTEBOOKS / "src").glob(chapter + "_*.py"))


def _exercises_section(text):
    return text[text.index("# ## Exercises"):]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_calls_the_module_checkers(chapter):
    """Every answer_N = None of the chapter has a checker, and every checker a cell."""
    section = _exercises_section(_source(chapter).read_text())
    module = importlib.import_module("exercises.ch" + chapter)
    asked = sorted(int(n) for n in re.findall(r"^answer_(\d+) = None$", section, re.M))
    called = sorted(int(n) for n in re.findall(
        r"^ch{}\.check_(\d+)\(answer_\1\)$".format(chapter), section, re.M))
    assert asked == called == sorted(module.EXERCISES)
    assert "from exercises import ch" + chapter in section
    assert "def check_" not in section, "checkers belong in notebooks/exercises"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_committed_notebook_shows_not_answered_yet(chapter):
    notebook = json.loads(next(NOTEBOOKS.glob(chapter + "_*.ipynb")).read_text())
    checks = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"
              and re.search(r"^ch\d\d\.check_\d+\(", "".join(cell["source"]), re.M)]
    assert checks
    for cell in checks:
        text = "".join("".join(out.get("text", "")) for out in cell["outputs"])
        assert text == "not answered yet\n", "".join(cell["source"])


def test_the_key_builds_and_every_check_is_right(tmp_path):
    """`make solutions` for one chapter: the key runs and prints only `right`."""
    env = dict(os.environ, JUPYTER_PREFER_ENV_PATH="1", PATH=os.pathsep.join(
        [str(pathlib.Path(sys.executable).parent), os.environ.get("PATH", "")]))
    result = subprocess.run(
        [sys.executable, "-m", "grading.solutions", "--out", str(tmp_path), "01"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    notebook = json.loads(next(tmp_path.glob("01_*.ipynb")).read_text())
    outputs = ["".join(out.get("text", "")) for cell in notebook["cells"]
               if cell["cell_type"] == "code" and "check_" in "".join(cell["source"])
               for out in cell["outputs"]]
    module = importlib.import_module("exercises.ch01")
    assert outputs.count("right\n") == len(module.EXERCISES), outputs


def _spelled(value):
    """How a hint would spell a numeric answer, or None for a short or non-numeric one.
    """
    try:
        number = common.as_number(value)
    except (common.NotYet, Exception):
        return None
    if number == round(number):
        return str(int(number)) if abs(number) >= 10 else None
    return "{:.3f}".format(number)[:-1]


@pytest.mark.parametrize("exercise", EXERCISES)
def test_hints_do_not_spell_a_numeric_answer(exercise):
    spelled = _spelled(exercise.solution())
    if spelled is None:
        pytest.skip("not a number of two digits or more")
    for case in exercise.mistakes + exercise.malformed:
        answer = case.make()
        if spelled in repr(answer):
            continue            # a hint may quote the learner's own answer
        verdict = exercise.verdict(answer)
        assert spelled not in verdict, (case.what, verdict)


def test_make_solutions_runs_the_key_builder():
    """The test above runs grading.solutions; this one holds the Makefile target
    to it."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nsolutions:"):].split("\n\n")[0]
    assert "-m grading.solutions $(CHAPTERS)" in recipe


# ----- grading: probes, judges and hidden cases --------------------------------------
CODE = [param for param in EXERCISES if param.values[0].writes_code]


@pytest.mark.parametrize("exercise", CODE)
def test_code_is_probed_in_its_process_and_judged_on_data(exercise):
    """A code exercise has a probe, visible cases and hidden ones, all plain data."""
    import json as json_module

    assert exercise.probe is not None, "a code exercise needs a probe and a judge"
    assert exercise.cases and exercise.hidden
    for case in exercise.cases + exercise.hidden:
        assert json_module.loads(json_module.dumps(case)) == case


@pytest.mark.parametrize("exercise", CODE)
def test_hidden_cases_accept_every_right_answer_and_no_mistake(exercise):
    for make in [exercise.solution] + [case.make for case in exercise.also_right]:
        verdict = exercise.verdict(make(), hidden=exercise.hidden)
        assert verdict.startswith("right"), verdict
    for case in exercise.mistakes:
        verdict = exercise.verdict(case.make(), hidden=exercise.hidden)
        assert verdict.startswith("not yet: "), (case.what, verdict)


def test_a_probe_cannot_make_a_wrong_answer_right():
    """The judge decides from the data alone: a probe that reports made-up
    values for a wrong answer is still refused, and NotYet from a probe can
    only refuse."""
    ch06 = importlib.import_module("exercises.ch06")
    exercise = ch06.EXERCISES[3]
    forged = {"results": [np.zeros((2, 3))], "dtypes": ["float64"]}
    verdict = common.verdict(lambda seen: exercise.judge(seen, exercise.cases[0]),
                             forged)
    assert verdict.startswith("not yet: ")


# ----- answers that never end, exit, or leave something behind ------------------------
def test_a_probe_that_never_ends_is_stopped(monkeypatch):
    """A learner's endless loop must not hang the notebook's check; an
    ``except Exception`` inside the loop does not keep it going."""
    import time

    monkeypatch.setattr(common, "PROBE_SECONDS", 1)

    def key(rank, push_count):
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001 -- the learner's, on purpose
                pass

    started = time.monotonic()
    verdict = importlib.import_module("exercises.ch05").check_3.verdict(key)
    assert verdict.startswith("not yet: it did not finish within 1 s")
    assert time.monotonic() - started < 30


def test_an_answer_that_exits_is_a_verdict():
    def derivative(f, x):
        raise SystemExit(3)

    verdict = importlib.import_module("exercises.ch01").check_3.verdict(derivative)
    assert verdict.startswith("not yet: running it raised SystemExit: 3")


def test_the_graders_child_puts_hooks_back_after_a_probe():
    """In the grader, a learner's hook that never unregisters must not stay
    registered for the probes and cells that follow."""
    import minichain as mc
    from grading import child

    key = importlib.import_module("grading.key.ch08")
    exercise = importlib.import_module("exercises.ch08").EXERCISES[1]
    leaky = next(c for c in exercise.mistakes if c.what.startswith("an __exit__"))
    before = dict(mc.get_function_hooks())
    with pytest.raises(common.NotYet):
        child.observe("08", 1, leaky.make(), exercise.cases[0])
    assert mc.get_function_hooks() == before
    assert key is not None


def test_the_grader_is_never_called_your_code():
    """A hint names the learner's line; the grader's child, which calls the
    probes, is not the learner's code (nor are the checkers)."""
    from grading import child

    assert not common._is_yours(child.__file__)
    assert not common._is_yours(common.__file__)
    assert common._is_yours("<cell 12>")
