"""minichain.optimizers: SGD, MomentumSGD and Adam.

Each module writes only its ``UpdateRule`` (the step for one parameter);
the loop, the gradient checks, loss-scale handling and hooks live in
``minichain.optimizer``. The hooks are re-exported here for convenience.
"""

from minichain.optimizer import GradientClipping, WeightDecay  # NOQA
from minichain.optimizers.adam import Adam  # NOQA
from minichain.optimizers.momentum_sgd import MomentumSGD  # NOQA
from minichain.optimizers.sgd import SGD  # NOQA
