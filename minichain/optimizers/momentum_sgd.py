"""SGD with momentum: a velocity that remembers past steps.

::

    v <- momentum * v - lr * grad
    W <- W + v

Along a direction where the gradient keeps its sign the steps add up
(up to ``1 / (1 - momentum)`` times longer); where it flips they cancel,
which damps the zig-zag across a narrow valley.
"""

from minichain.optimizer import Optimizer, UpdateRule


class MomentumSGDRule(UpdateRule):
    """The momentum step for one parameter; state ``v`` (the velocity)."""

    def init_state(self, param):
        xp = param.xp
        self.state["v"] = xp.zeros_like(param.array)

    def update_core(self, param):
        grad, v = param.grad, self.state["v"]
        dtype = grad.dtype.type
        v *= dtype(self.hyperparam.momentum)
        v -= dtype(self.hyperparam.lr) * grad
        data = param.array  # the parameter's own array: `+=` updates it in place
        data += v


class MomentumSGD(Optimizer):
    """Momentum SGD.

    Args:
        lr: learning rate.
        momentum: how much of the previous velocity is kept each step.
    """

    def __init__(self, lr=0.01, momentum=0.9):
        super().__init__(lr=lr, momentum=momentum)

    def create_update_rule(self):
        return MomentumSGDRule(self.hyperparam)
