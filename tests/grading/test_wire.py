"""exercises.wire: what a learner's process may send back, and nothing else."""

import importlib
import json
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "notebooks"))

from exercises import common, wire  # noqa: E402
from grading import course  # noqa: E402


def _value_answers():
    for chapter in course.chapters():
        course.gradables(chapter)                       # the key registers them
        for number, exercise in course.module(chapter).EXERCISES.items():
            if exercise.probe is not None:
                continue
            cases = [exercise.solution] + [c.make for c in exercise.mistakes
                                           + exercise.malformed + exercise.also_right]
            for make in cases:
                yield pytest.param(exercise, make, id="{}.{}".format(chapter, number))


@pytest.mark.parametrize("exercise, make", list(_value_answers()))
def test_an_answer_has_the_same_verdict_after_the_wire(exercise, make):
    answer = make()
    assert exercise.verdict(wire.loads(wire.dumps(answer))) == exercise.verdict(answer)


def test_plain_data_comes_back_as_it_went():
    value = {"a": [1, 2.5, None, True, "text"], (1, 2): {3, 4},
             "arrays": [np.arange(6, dtype=np.int16).reshape(2, 3),
                        np.array([1 + 2j]), np.float32(0.5), np.bool_(True)],
             "complex": 1 - 1j, "nan": float("nan")}
    back = wire.loads(wire.dumps(value))
    assert back["a"] == value["a"] and back[(1, 2)] == {3, 4}
    for got, sent in zip(back["arrays"], value["arrays"]):
        assert type(got) is type(sent) and np.array_equal(got, sent)
        assert np.asarray(got).dtype == np.asarray(sent).dtype
    assert back["complex"] == 1 - 1j and np.isnan(back["nan"])


def test_text_comes_back_as_text():
    """np.str_ and arrays of strings are answers too (a label, a list of labels)."""
    back = wire.loads(wire.dumps([np.str_("sqrt"), np.array([["_ * _", "exp"]])]))
    assert type(back[0]) is str and back[0] == "sqrt"
    assert back[1].dtype == np.dtype("<U5") and back[1].tolist() == [["_ * _", "exp"]]


def test_an_exception_that_is_a_value_is_not_one_that_was_raised():
    back = wire.loads(wire.dumps([ValueError("x"), 10 ** 400, -(10 ** 400)]))
    assert type(back[0]).__name__ == "ValueError"
    assert isinstance(back[0], wire.Opaque)
    assert back[1:] == [float("inf"), float("-inf")]


def test_anything_else_comes_back_as_its_type_name_only():
    back = wire.loads(wire.dumps([len, object(), np.array([None, 1])]))
    assert [type(v).__name__ for v in back] == ["builtin_function_or_method",
                                                "object", "ndarray"]
    assert all(isinstance(v, wire.Opaque) for v in back)
    assert common.verdict(lambda a: common.as_number(a), back[0]).startswith(
        "not yet: give a number, not a builtin_function_or_method")


@pytest.mark.parametrize("line", [
    '{"~": "pickle", "data": "gASV"}',                    # no such tag
    '{"~": "array", "dtype": "O", "shape": [1], "data": [1]}',
    '{"~": "array", "dtype": "<U3", "shape": [1], "data": [1]}',
    '{"~": "array", "dtype": "<U9000", "shape": [1], "data": ["a"]}',
    '{"~": "array", "dtype": "<f8", "shape": [3], "data": [1, 2]}',
    '{"~": "array", "dtype": "<f8", "shape": [100000, 100000], "data": []}',
    '{"~": "scalar", "dtype": "<i1", "value": 1000}',
    '{"~": "dict", "items": [[[1], 2]]}',
    '{"not": "tagged"}',
    "[" * 5000 + "]" * 5000,
    "not json",
])
def test_what_is_not_this_format_is_refused(line):
    with pytest.raises(wire.WireError):
        wire.loads(line)


def test_a_message_over_the_limit_is_refused():
    with pytest.raises(wire.WireError):
        wire.loads(json.dumps(list(range(wire.MAX_ELEMENTS + 1))))


def test_an_exception_crosses_as_data():
    try:
        raise KeyError("oops")
    except KeyError as error:
        back = wire.loads(json.dumps(wire.error_data(error, "line 2 of the cell")))
    assert isinstance(back, wire.RemoteError)
    assert back.sentence() == "KeyError: 'oops' (line 2 of the cell)"


def test_every_exercise_module_is_importable_without_the_key():
    """The student edition has the modules and not the key: they must import."""
    import subprocess

    for chapter in course.chapters():
        code = ("import sys; sys.path.insert(0, 'notebooks'); "
                "import exercises.ch{0} as m; "
                "assert 'grading.key.ch{0}' not in sys.modules; "
                "assert all(e.solution is None for e in m.EXERCISES.values())"
                .format(chapter))
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    importlib.import_module("grading.key")
