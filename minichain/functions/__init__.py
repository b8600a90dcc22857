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
from minichain.functions.array.concat import concat  # NOQA
from minichain.functions.array.get_item import get_item  # NOQA
from minichain.functions.array.reshape import reshape  # NOQA
from minichain.functions.array.split_axis import split_axis  # NOQA
from minichain.functions.array.transpose import transpose  # NOQA
from minichain.functions.array.where import where  # NOQA
from minichain.functions.activation.leaky_relu import leaky_relu  # NOQA
from minichain.functions.activation.log_softmax import log_softmax  # NOQA
from minichain.functions.activation.relu import relu  # NOQA
from minichain.functions.activation.sigmoid import sigmoid  # NOQA
from minichain.functions.activation.softmax import softmax  # NOQA
from minichain.functions.activation.tanh import tanh  # NOQA
from minichain.functions.connection.linear import linear  # NOQA
from minichain.functions.noise.dropout import dropout  # NOQA
from minichain.functions.loss.mean_squared_error import mean_squared_error  # NOQA
from minichain.functions.loss.softmax_cross_entropy import softmax_cross_entropy  # NOQA
from minichain.functions.evaluation.accuracy import accuracy  # NOQA
from minichain.functions.util.forget import forget  # NOQA
