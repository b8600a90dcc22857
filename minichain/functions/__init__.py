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
