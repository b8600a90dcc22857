"""Hidden cases stay hidden, and a forged probe does not score.

- a learner's process holds no hidden case before its turn: a cell that
  searches every frame before the exercises, and an answer that searches
  them each time it runs, never find one early, nor two at once;
- a feedback page never shows a hidden input: not in the judge's hint, not
  in the learner's own error message (results.json keeps the hint for the
  teacher);
- a learner who leaves exercise 04.2 wrong and replaces its probe (the
  attribute and the module's function) with one that reports a right
  answer's observations earns nothing: the child runs its own copy.
Cost: three learners of chapter 04, cut to its exercises: about 5 s.
"""

import json
import textwrap

import pytest

import synthetic_class
from grading import course, grade

HIDDEN_SEEDS = [case["seed"] for case in synthetic_class.exercise("04", 2).hidden]

SEARCH = textwrap.dedent('''\
    import json as _json, sys as _sys
    def _hidden_in_frames(seeds):
        found, frame = set(), _sys._getframe()
        while frame is not None:
            for value in list(frame.f_locals.values()):
                try:
                    text = _json.dumps(value, default=repr)
                except Exception:
                    continue
                found |= {s for s in seeds if '"seed": {}'.format(s) in text}
            frame = frame.f_back
        for name, module in list(_sys.modules.items()):
            if name.startswith(("grading", "exercises")):
                for value in list(vars(module).values()):
                    try:
                        text = _json.dumps(value, default=repr)
                    except Exception:
                        continue
                    found |= {s for s in seeds if '"seed": {}'.format(s) in text}
        return found
    HIDDEN = SEEDS
    early = _hidden_in_frames(HIDDEN)
    sightings = []
    ''').replace("SEEDS", repr(HIDDEN_SEEDS))


def _spying_fork():
    """The key's Fork, searching the frames each time its forward runs."""
    right = synthetic_class.solution("04", 2)
    return right.replace("def forward(self, inputs):",
                         "def forward(self, inputs):\n"
                         "            sightings.append(_hidden_in_frames(HIDDEN))", 1)


def _wrong_on_3d():
    """Right on the visible case (2-d and 1-d inputs), raising on 3-d ones
    with its input's shape in the message."""
    right = synthetic_class.solution("04", 2)
    return right.replace(
        "def forward(self, inputs):",
        "def forward(self, inputs):\n"
        "            if inputs[0].ndim == 3:\n"
        "                raise ValueError('SHAPE-LEAK {}'.format(inputs[0].shape))", 1)


FORGER = textwrap.dedent('''\
    {right}
    _right = answer_2
    _real = ch04.EXERCISES[2].probe
    def _forged(answer, case):
        return _real(_right, case)
    ch04.EXERCISES[2].probe = _forged
    ch04.probe_2 = _forged
    answer_2 = 0''')


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hidden")
    learners = {
        "spy": (SEARCH, {2: _spying_fork(),
                         3: "assert not early and all(len(s) <= 1 for s in "
                            "sightings), (early, sightings)\nanswer_3 = None"}),
        "leaky": ("", {2: _wrong_on_3d()}),
        "forger": ("", {2: FORGER.format(right=synthetic_class.solution("04", 2))}),
    }
    for name, (first, answers) in learners.items():
        filename, notebook = synthetic_class.chapter_cells("04")
        notebook = synthetic_class.answered(notebook, "04", answers)
        if first:
            notebook["cells"].insert(1, {"cell_type": "code", "metadata": {},
                                         "source": first, "outputs": [],
                                         "execution_count": None})
        (folder / "submissions" / name).mkdir(parents=True)
        (folder / "submissions" / name / filename).write_text(json.dumps(notebook))
    summary = grade.grade(str(folder / "submissions"), str(folder / "grades"),
                          grade.Options(cell_timeout=30, jobs=2, unsandboxed=True),
                          log=lambda line: None)
    return summary, folder / "grades"


def _exercise(summary, name, exercise):
    record = next(r for r in summary["learners"] if r["learner"] == name)
    return record, next(o for o in record["chapters"]["04"]["exercises"]
                        if o["exercise"] == exercise)


def test_no_hidden_case_before_its_turn_nor_two_at_once(graded):
    summary, _ = graded
    record, fork = _exercise(summary, "spy", "04.2")
    assert fork["status"] == "right"
    assert record["chapters"]["04"]["cells"] == {}     # the search found nothing


def test_a_page_names_what_went_wrong_never_the_hidden_input(graded):
    summary, out = graded
    _, fork = _exercise(summary, "leaky", "04.2")
    assert fork["earned"] == 0
    assert fork["verdict"].startswith("not yet: " + course.HIDDEN_PREFIX)
    assert fork["teacher_note"]                         # the hint, for the teacher
    page = (out / "feedback" / "leaky.html").read_text()
    assert course.HIDDEN_PREFIX in page
    for case in synthetic_class.exercise("04", 2).hidden:
        for shape in case["shapes"] + [case["shape"]]:
            if len(shape) > 1:
                assert str(tuple(shape)) not in page
    assert "SHAPE-LEAK" not in page and "teacher_note" not in page


def test_a_forged_probe_does_not_score(graded):
    summary, _ = graded
    _, fork = _exercise(summary, "forger", "04.2")
    assert fork["earned"] == 0 and fork["status"] == "not yet"
