"""The key to chapter 13's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch13.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
from exercises.ch13 import EXERCISES, SquaredDifference  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    import numpy as np
    x, y = np.array([1.0, 1.0]), np.array([1.0, -1.0])
    shared = 3.0 * (x + np.maximum(y, 0) > 0)   # the gradient Add hands on twice
    shared *= y > 0                             # the inner ReLU, in place
    return shared


EXERCISES.wrong(1, [
    ([3.0, 3.0], "the right gradient", "that is the right gradient"),
    ([0.0, 3.0], "the chapter's y", "the chapter's answer"),
    ([1.0, 0.0], "forgot the factor 3", "multiplied by 3"),
    ([0.0, 0.0], "everything zeroed", "which entries"),
])


EXERCISES.malformed(1, [
    (3.0, "one number"),
    ("3, 0", "a string"),
    ([3.0, 0.0, 0.0], "three entries"),
])


EXERCISES.right(1, [((3, 0), "a tuple of ints"),
                    (np.array([3.0, 0.0], dtype=np.float32), "float32")])


@EXERCISES.solution(2)
def solution_2():
    def backward_arrays(self, target_input_indexes, grad_outputs):
        x, y = self.inputs[0].data, self.inputs[1].data
        gy, = grad_outputs
        gx = 2 * (x - y) * gy                # a new array, in x's dtype
        return tuple([gx if i == 0 else -gx for i in target_input_indexes])

    return backward_arrays


def _arrays(make):
    """A backward_arrays from ``make(x, y, gy, index)`` for each target."""
    def backward_arrays(self, target_input_indexes, grad_outputs):
        x, y = self.inputs[0].data, self.inputs[1].data
        return tuple([make(x, y, grad_outputs[0], i)
                      for i in target_input_indexes])
    return backward_arrays


def _sign(i):
    return 1 if i == 0 else -1


def _both_always(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gx = 2 * (x - y) * grad_outputs[0]
    return gx, -gx


def _in_place(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gy, = grad_outputs
    gy *= 2 * (x - y)
    return tuple([gy if i == 0 else -gy for i in target_input_indexes])


def _on_variables(self, target_input_indexes, grad_outputs):
    x, y = self.get_retained_inputs()
    gx = 2 * (x - y) * grad_outputs[0]
    return tuple([gx if i == 0 else -gx for i in target_input_indexes])


def _as_list(self, target_input_indexes, grad_outputs):
    x, y = self.inputs[0].data, self.inputs[1].data
    gx = 2 * (x - y) * grad_outputs[0]
    return [gx if i == 0 else -gx for i in target_input_indexes]


_BUFFERS = {}


def _module_buffer(self, target_input_indexes, grad_outputs):
    """One array per shape and dtype, kept in the module and reused."""
    x, y = self.inputs[0].data, self.inputs[1].data
    gy, = grad_outputs
    key = (x.shape, x.dtype)
    if key not in _BUFFERS:
        _BUFFERS[key] = np.empty_like(x)
    gx = _BUFFERS[key]
    np.subtract(x, y, out=gx)
    gx *= 2
    gx *= gy
    return tuple([gx if i == 0 else -gx for i in target_input_indexes])


def _class_buffer(self, target_input_indexes, grad_outputs):
    """A buffer on the class, made again only when the shape or dtype changes."""
    x, y = self.inputs[0].data, self.inputs[1].data
    gy, = grad_outputs
    cls = type(self)
    buffer = getattr(cls, "buffer", None)
    if buffer is None or buffer.shape != x.shape or buffer.dtype != x.dtype:
        buffer = cls.buffer = np.empty_like(x)
    np.multiply(2 * (x - y), gy, out=buffer)
    gxs = {0: buffer, 1: -buffer}
    return tuple([gxs[i] for i in target_input_indexes])


EXERCISES.wrong(2, [
    (_module_buffer, "a gradient buffer kept in the module and reused",
     "ran again, on another node"),
    (_class_buffer, "a gradient buffer kept on the class and reused",
     "ran again, on another node"),
    (_arrays(lambda x, y, gy, i: 2 * (x - y) * gy), "same sign for y",
     "wrong sign"),
    (_arrays(lambda x, y, gy, i: _sign(i) * 2 * (x - y)), "ignores gy",
     "ignores the incoming gradient"),
    (_arrays(lambda x, y, gy, i: _sign(i) * (x - y) * gy), "forgot the 2",
     "a factor is missing"),
    (_arrays(lambda x, y, gy, i: _sign(i) * 2 * (x - y).astype(np.float64) * gy),
     "computed in float64", "keep the inputs' dtype"),
    (_both_always, "both gradients whatever the targets", "one per index"),
    (_in_place, "wrote into gy", "incoming gradient grad_outputs[0]"),
    (_on_variables, "Variables instead of arrays", "plain arrays"),
    (_as_list, "a list", "not a list"),
])


def _by_cases(self, target_input_indexes, grad_outputs):
    """One branch per target, np.multiply and np.negative, in the dtype."""
    x, y = self.inputs[0].data, self.inputs[1].data
    gy, = grad_outputs
    out = []
    for i in target_input_indexes:
        gx = np.multiply(x - y, gy) * x.dtype.type(2)
        out.append(gx if i == 0 else np.negative(gx))
    return tuple(out)


def _fresh_on_self(self, target_input_indexes, grad_outputs):
    """A new array each call, kept on the node itself (harmless)."""
    x, y = self.inputs[0].data, self.inputs[1].data
    self.gx = 2 * (x - y) * grad_outputs[0]
    return tuple(self.gx if i == 0 else -self.gx for i in target_input_indexes)


EXERCISES.right(2, [(_by_cases, "one branch per target, np.multiply"),
                    (_fresh_on_self, "a new array each call, kept on the node")])


EXERCISES.malformed(2, [
    (SquaredDifference, "the class, not a function"),
    (lambda: None, "a function of no argument"),
    ("2 * (x - y) * gy", "a string"),
])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 1301, "shapes": [[5, 1], [4], [2, 2, 3]]}])


# ----- 3. when the engine takes the array path ----------------------------------------
@EXERCISES.solution(3)
def solution_3():
    return "a"   # (b) records a graph, (c) has a hook, (d) is the reference path


EXERCISES.wrong(3, [
    ("ab", "double backprop too", "enable_double_backprop=True"),
    ("ac", "under a hook too", "sets a hook"),
    ("ad", "the reference path too", "reference path never"),
    ("abcd", "every pass", "enable_double_backprop=True"),
    ("b", "only double backprop", "enable_double_backprop=True"),
    ("", "no pass at all", "give letters"),
])


EXERCISES.malformed(3, [
    (1, "a number"),
    (["a"], "a list"),
    ("ae", "a letter not offered"),
])


EXERCISES.right(3, [("A", "a capital letter"), (" a ", "spaces around it")])
