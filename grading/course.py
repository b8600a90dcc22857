"""The course as the grader sees it: chapters, exercises, their cases and judges.

Each chapter's module ``notebooks/exercises/chNN.py`` (the one the learner's
notebook imports) registers its exercises in ``EXERCISES``. For grading, an
exercise is either

- a **value** exercise (a number, a list, a string...): the learner's answer
  itself crosses back as data (``exercises.wire``) and the exercise's judge
  runs on it here; or
- a **code** exercise (a function or a class): its *probe* runs the answer on
  each case in the learner's process and returns plain data; its judge turns
  that data into the verdict here. Its cases are the visible ones of the
  module (the notebook's self-check runs those too) followed by the hidden
  ones the key ``grading/key/chNN.py`` registers, which only the grader reads.

A verdict is the text a check prints: ``right``, ``not yet: <hint>`` or
``not answered yet``.
"""

import builtins
import importlib
import os
import re
import warnings

import numpy as np

from grading import points as points_table
from exercises import wire
from grading.runner import Trouble

from exercises import common

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NOTEBOOKS = os.path.join(ROOT, "notebooks")

# What a feedback page says when a hidden case decides: never the judge's
# hint (it may quote the case: "forward gives shape (2, 3) for an input of
# shape (2, 1, 3)") nor the learner's own error message (an answer could put
# its input in it); results.json keeps the hint for the teacher.
HIDDEN_PREFIX = "on a grading case you have not seen: "
HIDDEN_WORDS = {
    "wrong": "your answer is right on the cases your notebook's check shows "
             "but not on this one; try it on other inputs (other shapes, "
             "dtypes, values) than the check's",
    "raised": "running your answer raised {}",
    "trouble": "your answer {}",
}


def chapters():
    """The two-digit numbers of the chapters that have exercises."""
    folder = os.path.join(NOTEBOOKS, "exercises")
    return sorted(name[2:4] for name in os.listdir(folder)
                  if re.fullmatch(r"ch\d\d\.py", name))


def module(chapter):
    return importlib.import_module("exercises.ch" + chapter)


def key_module(chapter):
    """``grading/key/chNN.py`` (solutions, mistakes, hidden cases), or None."""
    try:
        return importlib.import_module("grading.key.ch" + chapter)
    except ModuleNotFoundError as error:
        if error.name in ("grading.key", "grading.key.ch" + chapter):
            return None
        raise


class Gradable:
    """One exercise as graded: what to probe, on which cases, and the judge."""

    def __init__(self, chapter, exercise):
        self.chapter, self.number = chapter, exercise.number
        self.exercise = exercise
        self.points = points_table.points(chapter, exercise.number)
        self.is_code = exercise.probe is not None
        visible = list(exercise.cases) if self.is_code else [None]
        self.cases = visible + (list(exercise.hidden) if self.is_code else [])
        self.first_hidden = len(visible)
        self.gradable = self.is_code or not exercise.writes_code

    @property
    def name(self):
        return "{}.{}".format(self.chapter, self.number)

    def verdict(self, seen):
        """The verdict on observations ``seen`` (case index -> data).

        The first case that is not right decides. On a hidden case the
        verdict says so and says only what kind of thing went wrong (see
        ``HIDDEN_WORDS``); :meth:`teacher_note` has the judge's own hint.
        """
        for index, case in enumerate(self.cases):
            observation = seen.get(index, Trouble("budget", None))
            text = self._one(observation, case)
            if not text.startswith(common.RIGHT):
                if index >= self.first_hidden and text.startswith(common.NOT_YET):
                    text = common.NOT_YET + HIDDEN_PREFIX + _hidden_words(observation)
                return text
        return common.RIGHT

    def teacher_note(self, seen):
        """The judge's own words on the first hidden case that is not right
        (for the teacher's results.json, never a page), or None."""
        for index in range(self.first_hidden, len(self.cases)):
            text = self._one(seen.get(index, Trouble("budget", None)),
                             self.cases[index])
            if not text.startswith(common.RIGHT):
                return "case {}: {}".format(index - self.first_hidden, text)
        return None

    def _one(self, observation, case):
        if isinstance(observation, Trouble):
            return common.NOT_YET + "your answer " + observation.sentence()
        if isinstance(observation, wire.RemoteError):
            if observation.type_name == "NotYet":      # a probe's own refusal
                return common.NOT_YET + observation.message
            return common.NOT_YET + "running it raised " + observation.sentence()
        if not self.is_code:
            return common.verdict(self.exercise.judge, observation)
        if observation is None:    # the answer was None: nothing was probed
            return common.NOT_ANSWERED
        return judge_report(self.exercise.judge, observation, case)


def _hidden_words(observation):
    if isinstance(observation, Trouble):
        return HIDDEN_WORDS["trouble"].format(observation.sentence())
    if isinstance(observation, wire.RemoteError) and observation.type_name != "NotYet":
        # Only a built-in exception's name: a class of the learner's could
        # be named after the input.
        name = observation.type_name
        builtin = isinstance(getattr(builtins, name, None), type) and issubclass(
            getattr(builtins, name), BaseException)
        return HIDDEN_WORDS["raised"].format(name if builtin else "an exception")
    return HIDDEN_WORDS["wrong"]


def judge_report(judge, seen, case):
    """``judge(seen, case)`` as a verdict. The report comes from the learner's
    process: one the judge cannot read (a key missing, a value of the wrong
    kind) was not made by the course's probe, and is refused as such."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            remark = judge(seen, case)
    except common.NotYet as hint:
        return common.NOT_YET + str(hint)
    except Exception as error:  # noqa: BLE001 -- a report the probe did not make
        return (common.NOT_YET + "the report of your notebook's process could "
                "not be judged ({}): was the course's check changed in your "
                "notebook?".format(type(error).__name__))
    return common.RIGHT + (": " + remark if remark else "")


def gradables(chapter):
    """The exercises of ``chapter`` in order, with the key's hidden cases."""
    exercises = module(chapter).EXERCISES
    if key_module(chapter) is None:
        raise RuntimeError("grading: no key grading/key/ch{}.py: the grader needs "
                           "it for the hidden cases".format(chapter))
    return [Gradable(chapter, exercise)
            for number, exercise in sorted(exercises.items())]


# ----- where a notebook answers each exercise -------------------------------------
def answer_cells(cells, chapter, numbers):
    """number -> the indexes of the cells that answer or check it.

    A cell answers exercise K when it assigns ``answer_K`` or calls
    ``chNN.check_K(``: in the course's notebooks one cell does both, in the
    nbgrader release the answer cell comes first and the check cell after it.
    """
    found = {number: [] for number in numbers}
    for index, source in cells:
        for number in numbers:
            assigns = re.search(r"^\s*answer_{}\s*=".format(number), source, re.M)
            checks = re.search(r"\bch{}\.check_{}\s*\(".format(chapter, number),
                               source)
            if assigns or checks:
                found[number].append(index)
    return found
