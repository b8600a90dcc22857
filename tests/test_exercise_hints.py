"""A hint names what went wrong, never a hidden grading case.

The grader judges every code exercise on the key's hidden cases too, and
shows the learner the hint of the first case that fails. A hint built from
the case's own shapes or numbers ("forward gives shape (2, 3) for an input
of shape (2, 1, 3)") would hand the hidden case over. Here every wrong and
malformed answer of the key is judged on each hidden case alone, and its
hint must quote none of that case's shapes or numbers.
"""

import importlib
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
for _folder in (str(ROOT / "notebooks"), str(ROOT)):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

from exercises import common  # noqa: E402

MODULES = sorted(path.stem for path in
                 (ROOT / "notebooks" / "exercises").glob("ch[0-9][0-9].py"))


def _code_exercises():
    for name in MODULES:
        module = importlib.import_module("exercises." + name)
        importlib.import_module("grading.key." + name)
        for number, exercise in sorted(module.EXERCISES.items()):
            if exercise.probe is not None:
                yield pytest.param(exercise, id="{}-{}".format(name, number))


CODE = list(_code_exercises())


def _on_case(exercise, answer, case):
    """The verdict on ``answer`` judged on ``case`` alone."""
    return common.verdict(lambda a: exercise.judge(
        common.observe(exercise.probe, a, case, common.PROBE_SECONDS), case),
        answer)


def _shown(exercise):
    """What the visible cases spell: a hint may quote those (the notebook
    shows them to the learner anyway)."""
    return set().union(*[common.case_tokens(case) for case in exercise.cases])


RAISED = "not yet: running it raised "


@pytest.mark.parametrize("exercise", CODE)
def test_no_hint_quotes_a_hidden_case(exercise):
    """A checker's own hint on a hidden case quotes none of it; an exception's
    message (NumPy's, minichain's) may, and ``common.conceal`` hides it."""
    assert exercise.hidden, "a code exercise has hidden cases"
    shown = _shown(exercise)
    for case in exercise.hidden:
        for answer in exercise.mistakes + exercise.malformed:
            verdict = _on_case(exercise, answer.make(), case)
            assert verdict.startswith("not yet: "), (answer.what, verdict)
            if verdict.startswith(RAISED):
                verdict = common.conceal(verdict, case)
            leaked = set(common.quotes_case(verdict, case)) - shown
            assert not leaked, (answer.what, leaked, verdict)


def test_the_tokens_find_a_shape_and_a_point():
    """The test above can fail: it sees a quoted shape and a quoted point,
    and not a number that is part of a longer one or of a name."""
    case = {"seed": 4, "shapes": [[2, 1, 3]], "points": [0.3, 12]}
    assert common.quotes_case("forward gives shape (2, 3) for an input of "
                              "shape (2, 1, 3) at x = 0.3", case) == [
                                  "(2, 1, 3)", "0.3"]
    assert common.quotes_case("broadcast (2,1,3) and (4,)", case) == [
        "(2,1,3)"]
    assert common.quotes_case("in ch12.py line 120, seed 4", case) == []


def test_conceal_hides_the_case_and_nothing_else():
    case = {"seed": 101, "shapes": [[5], [3, 1, 2]]}
    text = ("running it raised ValueError: operands could not be broadcast "
            "together with shapes (3,1,2) (5,) (in f, line 15 of your code)")
    assert common.conceal(text, case) == (
        "running it raised ValueError: operands could not be broadcast "
        "together with shapes … … (in f, line 15 of your code)")


def test_shape_kind_names_the_kind_only():
    assert common.shape_kind(()) == "a 0-d input (a single number)"
    assert common.shape_kind((2, 1, 3)) == "an input with an axis of length 1"
    assert common.shape_kind((5,)) == "a 1-d input"
    assert common.shape_kind((2, 2, 2), "float32 input") == \
        "a float32 input with 3 axes"
    assert "2" not in common.shape_kind((2, 1, 3)).replace("length 1", "")


def test_a_unary_hint_on_a_hidden_shape_names_its_kind():
    """The leak the issue quotes: a forward that squeezes the axes of length 1."""
    import minichain as mc

    ch03 = importlib.import_module("exercises.ch03")
    importlib.import_module("grading.key.ch03")

    class Cube(mc.FunctionNode):
        def forward(self, inputs):
            return np.squeeze(inputs[0]) ** 3,

        def backward(self, target_input_indexes, grad_outputs):
            x, = self.get_retained_inputs()
            return grad_outputs[0] * 3 * x ** 2,

    exercise = ch03.EXERCISES[2]
    case = {"seed": 301, "shapes": [[2, 1, 3]], "second_seed": 302}
    verdict = _on_case(exercise, Cube, case)
    assert verdict == ("not yet: the output's shape is not the input's, for "
                       "an input with an axis of length 1"), verdict


def _squeezing_add_one():
    import minichain as mc

    class AddOne(mc.FunctionNode):
        def forward(self, inputs):
            return np.squeeze(inputs[0] + 1),
    return AddOne


def _outer_refusing_length_one_b():
    import minichain as mc
    from minichain.utils import type_check

    class Outer(mc.FunctionNode):
        def check_type_forward(self, in_types):
            a, b = in_types
            type_check.expect(a.ndim == 1, b.ndim == 1, a.dtype.kind == "f",
                              b.dtype.kind == "f", b.shape[0] > 1)

        def forward(self, inputs):
            return np.outer(*inputs),
    return Outer


def _revolve_right_to_twelve(n, s):
    from exercises.ch14 import binomial_cost
    return binomial_cost(n, s) if n <= 12 else 0


# (chapter, exercise, a wrong answer that only a hidden case shows, hidden
# case, words its hint must hold): the hint names the kind of input.
ONLY_HIDDEN = [
    ("02", 2, _squeezing_add_one, 0, "an input with an axis of length 1"),
    ("06", 3, lambda: lambda x, gy: np.squeeze(gy.T @ x), 0,
     "does not have W's shape"),
    ("08", 2, _outer_refusing_length_one_b, 0, "one of them of length 1"),
    ("11", 1, lambda: lambda f, x0: 0.0 if x0 > 1.9 else _third(f, x0), 0,
     "at a positive x0"),
    ("14", 2, lambda: _revolve_right_to_twelve, 0, "larger than the notebook"),
    ("05", 3, lambda: lambda rank, count: (-rank if rank < 50 else rank, -count),
     1, "do not come out highest first"),
]


def _third(f, x0):
    import minichain as mc

    x = mc.Variable(np.array(x0))
    g, = mc.grad([f(x)], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x], enable_double_backprop=True)
    g, = mc.grad([g], [x])
    return float(g.array)


@pytest.mark.parametrize("chapter, number, make, index, words", ONLY_HIDDEN,
                         ids=["{}-{}".format(c, n) for c, n, *_ in ONLY_HIDDEN])
def test_a_mistake_only_a_hidden_case_shows_is_named_not_quoted(
        chapter, number, make, index, words):
    module = importlib.import_module("exercises.ch" + chapter)
    importlib.import_module("grading.key.ch" + chapter)
    exercise = module.EXERCISES[number]
    answer = make()
    assert exercise.verdict(answer).startswith("right"), \
        "the visible cases must not show this mistake"
    case = exercise.hidden[index]
    verdict = _on_case(exercise, answer, case)
    assert verdict.startswith("not yet: ") and words in verdict, verdict
    assert not set(common.quotes_case(verdict, case)) - _shown(exercise), verdict
