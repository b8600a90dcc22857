"""Not a typical mistake but a test of the runner: a backward never ends.

``retain_gradients`` (Task 9) loops forever, so every backward with
``retain_grad=True`` hangs; the other backwards are fine.
"""

from mychain import backprop


def retain_gradients(func, grads):
    while True:
        pass


backprop.retain_gradients = retain_gradients
