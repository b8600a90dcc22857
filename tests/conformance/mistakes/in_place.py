"""Mistake: a leaf's gradient is summed in place, ``old.array += gx.array``.

The sum lands in an array that may be held elsewhere too: the starting
gradient, or the one gradient a backward hands to several inputs (``x + x``).
"""

from mychain import backprop

LOSES = {5: "in place", 6: "Task 5 fails too"}


def add_gradient(grads, node, gx):
    if node.creator is None:
        variable = node.get_variable_or_none()
        if variable is None:
            return
        if variable.grad_var is None:
            variable.grad_var = gx
        else:
            variable.grad_var.array += gx.array  # the mistake
    elif node in grads:
        grads[node] = grads[node] + gx
    else:
        grads[node] = gx


backprop.add_gradient = add_gradient
