"""The skeleton ``build_your_own/mychain``: every task is there, says what it
must do and which chapter teaches it, and raises until written; and the
filled engine of the tests differs from it only inside task bodies, so a
learner who fills the skeleton in has all the plumbing that engine had.
"""

import ast
import re

import pytest

from conformance_engines import FILLED, SKELETON
from minichain.conformance.tasks import TASKS

TASK_MESSAGE = re.compile(r"Task (\d+): .* \(chapters? ([0-9, ]+)\)")


def modules(folder):
    return sorted(p.name for p in (folder / "mychain").glob("*.py"))


def task_bodies(folder):
    """``{qualified name: (task number, chapters, docstring)}`` for every
    function whose body raises ``NotImplementedError("Task N: ...")``."""
    found = {}
    for name in modules(folder):
        tree = ast.parse((folder / "mychain" / name).read_text("utf-8"))
        for qualified, function in _functions(tree, name[:-3]):
            message = _raised_message(function)
            if message is None:
                continue
            match = TASK_MESSAGE.fullmatch(message)
            assert match, "{}: {!r}".format(qualified, message)
            found[qualified] = (int(match.group(1)), match.group(2),
                                ast.get_docstring(function) or "")
    return found


def _functions(tree, prefix):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield prefix + "." + node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield "{}.{}.{}".format(prefix, node.name, item.name), item


def _raised_message(function):
    last = function.body[-1]
    if not (isinstance(last, ast.Raise) and isinstance(last.exc, ast.Call)
            and getattr(last.exc.func, "id", None) == "NotImplementedError"):
        return None
    argument = last.exc.args[0] if last.exc.args else None
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    return None  # a formatted message: the base class's forward, not a task


def test_every_task_has_bodies_that_say_what_to_do():
    bodies = task_bodies(SKELETON)
    numbers = {number for number, _, _ in bodies.values()}
    assert numbers == {t.number for t in TASKS}
    chapters = {t.number: t.chapter for t in TASKS}
    for qualified, (number, chapter, docstring) in bodies.items():
        assert chapters[number] in chapter, qualified
        assert docstring.startswith("Task {} (chapter".format(number)), \
            qualified
        assert len(docstring.split()) >= 12, qualified  # says what to do


def test_a_task_body_is_its_docstring_and_the_raise_only():
    for name in modules(SKELETON):
        tree = ast.parse((SKELETON / "mychain" / name).read_text("utf-8"))
        for qualified, function in _functions(tree, name[:-3]):
            if _raised_message(function) is None:
                continue
            body = function.body[1:] if ast.get_docstring(function) else \
                function.body
            assert len(body) == 1, qualified


def test_the_filled_engine_differs_only_inside_task_bodies():
    assert modules(FILLED) == modules(SKELETON)
    tasks = task_bodies(SKELETON)
    filled_tasks = task_bodies(FILLED)
    assert filled_tasks == {}  # every task written
    for name in modules(SKELETON):
        skeleton = _without_task_bodies(SKELETON / "mychain" / name, tasks)
        filled = _without_task_bodies(FILLED / "mychain" / name, tasks)
        assert skeleton == filled, name


def _without_task_bodies(path, tasks):
    """The module's AST as text, with every task's body emptied."""
    tree = ast.parse(path.read_text("utf-8"))
    for qualified, function in _functions(tree, path.stem):
        if qualified in tasks:
            function.body = [ast.Pass()]
    return ast.dump(tree)


@pytest.mark.parametrize("folder", [SKELETON, FILLED])
def test_the_public_names_are_minichains(folder):
    """Every public name of mychain exists in minichain with the same kind."""
    import minichain
    import minichain.functions
    tree = ast.parse((folder / "mychain" / "__init__.py").read_text("utf-8"))
    names = [alias.asname or alias.name for node in tree.body
             if isinstance(node, ast.ImportFrom) for alias in node.names]
    assert {"Variable", "FunctionNode", "no_backprop_mode",
            "force_backprop_mode", "functions"} <= set(names)
    for name in names:
        assert hasattr(minichain, name), name
    for function in ("add", "exp", "tanh", "sum", "matmul", "forget"):
        assert hasattr(minichain.functions, function)
