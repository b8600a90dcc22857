"""The engines the conformance suite is tested on, built into a folder.

- ``filled/mychain``: the skeleton filled in with a correct engine, written
  from the chapters (not copied from minichain);
- ``mistakes/<name>.py``: one typical mistake each. An engine with that
  mistake is the filled engine plus the module, imported last by its
  ``__init__``, which replaces the one piece a learner would get wrong.
  ``LOSES`` in the module maps each task the mistake must lose to words its
  failure message must contain.

(pytest puts this folder on ``sys.path``, so tests import it by name.)
"""

import importlib.util
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SKELETON = ROOT / "build_your_own"
FILLED = HERE / "filled"
MISTAKES = HERE / "mistakes"
TYPICAL = ["numpy_scalar", "rank_off_by_one", "apply_twice", "seed_float64",
           "passes_none_on", "holds_variables", "overwrite", "in_place",
           "ignores_gradient", "mul_swapped", "preorder", "heap_lowest_first",
           "recursive", "broadcast_second_only", "keeps_all_grads",
           "forget_keeps_everything", "forget_recording_off",
           "forget_no_replay"]
PARTIAL = ["after_chapter_03"]  # work in progress, not a mistake


def build_with_mistake(name, folder):
    """A copy of the filled engine with mistake ``name``, in ``folder``;
    returns the folder to pass as ``path``."""
    package = pathlib.Path(folder) / name / "mychain"
    shutil.copytree(FILLED / "mychain", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(MISTAKES / (name + ".py"), package / "_mistake.py")
    with open(package / "__init__.py", "a", encoding="utf-8") as file:
        file.write("from mychain import _mistake  # NOQA  (the mistake)\n")
    return package.parent


def expected_losses(name):
    """``LOSES`` of mistake ``name``: task number -> words of its message.

    Read without importing the engine: the module is loaded on its own,
    with a stand-in for the ``mychain`` it patches.
    """
    source = (MISTAKES / (name + ".py")).read_text(encoding="utf-8")
    start = source.index("LOSES = ")
    end = source.index("}", start) + 1
    spec = importlib.util.spec_from_loader("losses", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(source[start:end], module.__dict__)
    return module.LOSES
