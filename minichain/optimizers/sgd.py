"""Plain stochastic gradient descent: ``W <- W - lr * grad``."""

from minichain.optimizer import Optimizer, UpdateRule


class SGDRule(UpdateRule):
    """The SGD step for one parameter (no state)."""

    def update_core(self, param):
        grad = param.grad
        data = param.array  # the parameter's own array: `-=` updates it in place
        data -= grad.dtype.type(self.hyperparam.lr) * grad


class SGD(Optimizer):
    """Stochastic gradient descent.

    Args:
        lr: learning rate (step size).
    """

    def __init__(self, lr=0.01):
        super().__init__(lr=lr)

    def create_update_rule(self):
        return SGDRule(self.hyperparam)
