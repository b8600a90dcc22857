"""mychain: your own define-by-run autodiff engine, built task by task.

This package is the skeleton of minichain's build-your-own-engine assignment
(``docs/build-your-own-engine.md``). Each piece you write raises
``NotImplementedError("Task N: ...")`` until you write it, and its docstring
says what it must do and which chapter teaches it. Everything else (imports,
operators, printing, a few worked functions) is given.

The public names are a subset of minichain's, with the same meanings, so the
course's tests and pictures work on your engine as on minichain:

    import mychain as mc
    import mychain.functions as F

    x = mc.Variable(numpy.array(3.0))
    y = x * x + 2 * x
    y.backward()
    x.grad            # 2x + 2 = 8

Judge it with minichain's conformance suite:

    python -m minichain.conformance mychain --path build_your_own

The modules, in the order the tasks visit them: ``variable`` (Task 1),
``function_node`` (2, 4), ``backprop`` (3, 5, 7, 9), ``functions`` (6, 8),
``configuration`` (10) and ``forget`` (11).
"""

from mychain.configuration import (  # NOQA
    config, force_backprop_mode, no_backprop_mode, using_config)
from mychain.function_node import FunctionNode  # NOQA
from mychain.variable import Variable, VariableNode  # NOQA
from mychain import backprop  # NOQA
from mychain import functions  # NOQA
