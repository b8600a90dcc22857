"""minichain.functions (imported as ``F``): differentiable functions by family.

Each family is a sub-package (``math``, ``array``, ``activation``,
``connection``, ``noise``, ``loss``, ``evaluation``, ``util``); every function
is a FunctionNode with its forward and backward side by side, plus a
lowercase wrapper that applies it.
"""

from minichain.functions.array.broadcast import broadcast_to, sum_to  # NOQA
from minichain.functions.array.identity import Identity, identity  # NOQA
from minichain.functions.math.basic_math import add  # NOQA
from minichain.functions.math.exponential import exp, log  # NOQA
from minichain.functions.math.clip import clip  # NOQA
from minichain.functions.math.matmul import matmul  # NOQA
from minichain.functions.math.minmax import max, min  # NOQA
from minichain.functions.math.sqrt import sqrt  # NOQA
from minichain.functions.math.square import square  # NOQA
from minichain.functions.math.sum import mean, sum  # NOQA
from minichain.functions.math.trigonometric import cos, sin  # NOQA
