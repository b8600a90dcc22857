"""minichain: a small define-by-run autodiff package in the spirit of Chainer.

    import minichain as mc
    import minichain.functions as F

    x = mc.Variable(numpy.array(3.0, dtype=numpy.float32))
    y = x * x + 2 * x
    y.backward()
    x.grad  # 2x + 2 = 8
"""

from minichain import backend  # NOQA
from minichain import backend as cuda  # NOQA  (Chainer's name for it)
from minichain.backprop_api import backward, grad  # NOQA
from minichain.configuration import (  # NOQA
    config, force_backprop_mode, global_config, is_debug, no_backprop_mode,
    reference_mode, set_debug, using_config)
from minichain.function import Function, FunctionAdapter  # NOQA
from minichain.function_hook import FunctionHook, get_function_hooks  # NOQA
from minichain import function_hooks  # NOQA  (TimerHook, PrintHook, ...)
from minichain.function_node import FunctionNode  # NOQA
from minichain.variable import (  # NOQA
    Parameter, Variable, VariableNode, as_array, as_variable)

from minichain import functions  # NOQA  (installs the Variable operators)
from minichain import gradient_check  # NOQA
from minichain import random  # NOQA  (minichain's replayable randomness)
from minichain import memory  # NOQA  (bytes held by arrays over a block)
from minichain.checkpoint import checkpoint_sequential  # NOQA
from minichain.checkpoint import checkpoint_revolve  # NOQA
from minichain.utils import type_check  # NOQA
from minichain import computational_graph  # NOQA
from minichain import visualize  # NOQA  (ASCII, Graphviz, order and memory plots)

# Training: links own parameters, optimizers update them, datasets feed them.
from minichain.link import Chain, Link  # NOQA
from minichain import datasets, links, optimizers  # NOQA
