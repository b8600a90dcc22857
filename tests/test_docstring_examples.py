"""The ``>>>`` examples in minichain's docstrings run and print what they say.

Learners read ``minichain/`` beside the chapters, so an example in a
docstring is teaching material: it is run here, in its module's namespace
plus the names every example may assume (``mc``, ``F``, ``np``/``numpy``,
``Variable``).
"""

import doctest
import importlib
import pathlib
import pkgutil

import numpy
import pytest

import minichain as mc
import minichain.functions as F

PACKAGE = pathlib.Path(mc.__file__).parent


def _modules():
    names = [info.name for info in pkgutil.walk_packages(
        [str(PACKAGE)], prefix="minichain.")]
    return ["minichain"] + sorted(names)


def _examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, name, module=module) if t.examples]


MODULES = [name for name in _modules() if _examples(name)]


def test_some_docstrings_carry_examples():
    assert len(MODULES) >= 5, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS
                                   | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(name):
        test.globs.update(mc=mc, F=F, np=numpy, numpy=numpy,
                          Variable=mc.Variable)  # beside the module's names
        mc.random.seed(0)
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "{}: {} of {} examples failed".format(
        name, results.failed, results.attempted)
