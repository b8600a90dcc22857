"""Adam: a step per coordinate scaled by running gradient statistics.

Each parameter keeps two running averages of its gradient ``g``::

    m <- m + (1 - beta1) * (g - m)        # mean of g       (first moment)
    v <- v + (1 - beta2) * (g * g - v)    # mean of g^2     (second moment)

Both start at zero, so early on they are too small by the factors
``1 - beta1^t`` and ``1 - beta2^t``. The *bias correction* divides those out;
as in Chainer it is folded into the step size::

    lr_t = alpha * sqrt(1 - beta2^t) / (1 - beta1^t)
    W <- W - lr_t * m / (sqrt(v) + eps)

(PyTorch adds ``eps`` to the corrected ``sqrt(v_hat)`` instead; the two
differ only in how much ``eps`` weighs early on.) Dividing by ``sqrt(v)``
makes the step about ``alpha`` long whatever the gradient's scale.
"""

import math

from minichain.optimizer import Optimizer, UpdateRule


class AdamRule(UpdateRule):
    """The Adam step for one parameter; state ``m`` and ``v``."""

    def init_state(self, param):
        xp = param.xp
        self.state["m"] = xp.zeros_like(param.array)
        self.state["v"] = xp.zeros_like(param.array)

    @property
    def lr(self):
        """The bias-corrected step size ``alpha_t`` of the current step."""
        hp = self.hyperparam
        fix1 = 1.0 - hp.beta1 ** self.t
        fix2 = 1.0 - hp.beta2 ** self.t
        return hp.alpha * math.sqrt(fix2) / fix1

    def update_core(self, param):
        hp = self.hyperparam
        grad, m, v = param.grad, self.state["m"], self.state["v"]
        dtype = grad.dtype.type
        xp = param.xp
        m += dtype(1 - hp.beta1) * (grad - m)
        v += dtype(1 - hp.beta2) * (grad * grad - v)
        # `-=` updates the parameter's array in place.
        param.array -= dtype(self.lr) * m / (xp.sqrt(v) + dtype(hp.eps))


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015).

    Args:
        alpha: step size.
        beta1: decay rate of the first-moment average.
        beta2: decay rate of the second-moment average.
        eps: keeps the division finite where ``v`` is tiny.
    """

    def __init__(self, alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(alpha=alpha, beta1=beta1, beta2=beta2, eps=eps)

    def create_update_rule(self):
        return AdamRule(self.hyperparam)

    @property
    def lr(self):
        """The bias-corrected step size for the optimizer's step count."""
        if self.t == 0:
            return 0.0
        rule = AdamRule(self.hyperparam)
        rule.t = self.t
        return rule.lr
