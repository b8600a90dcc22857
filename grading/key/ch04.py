"""The key to chapter 04's exercises: solutions, typical mistakes, other forms.

Registered into ``exercises.ch04.EXERCISES`` on import; the tests,
``make solutions`` and the grader read them. Learners never get this file.
"""

import numpy as np
import minichain as mc
import minichain.functions as F
from exercises.ch04 import EXERCISES  # noqa: F401


@EXERCISES.solution(1)
def solution_1():
    x = mc.Variable(np.array(2.0))
    ((x * x) * x).backward()
    return x.grad


EXERCISES.wrong(1, [
    (4.0, "only the direct path", "one path contributes"),
    (8.0, "only the two paths through x * x", "adds two paths"),
    (6.0, "counted each path as x", "product of all the local derivatives"),
    (3.0, "counted the paths", "add what each path contributes"),
    (mc.Variable(np.array(2.0)), "gave x, not x.grad", "x itself"),
])


EXERCISES.malformed(1, [
    ("12", "a string"),
    ((12.0, 12.0), "a tuple"),
    (np.array([12.0, 12.0]), "an array of shape (2,)"),
])


@EXERCISES.solution(2)
def solution_2():
    class Fork(mc.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            return x, x

        def backward(self, target_input_indexes, grad_outputs):
            gx = None
            for gy in grad_outputs:       # None for an output nobody used
                if gy is not None:
                    gx = gy if gx is None else gx + gy
            return gx,

    return Fork


def _fork_with(backward, forward=lambda x: (x, x)):
    class Fork(mc.FunctionNode):
        def forward(self, inputs):
            return forward(inputs[0])

        def backward(self, target_input_indexes, grad_outputs):
            return backward(*grad_outputs)
    return Fork


@EXERCISES.mistake(2, "kept the first output's gradient only", "one of them only")
def _():
    return _fork_with(lambda gy1, gy2: (gy1 if gy1 is not None else gy2,))


@EXERCISES.mistake(2, "added both, forgetting an unused output's None",
                   "arrives as None")
def _():
    return _fork_with(lambda gy1, gy2: (gy1 + gy2,))


@EXERCISES.mistake(2, "summed with sum(), which meets the None too",
                   "arrives as None")
def _():
    return _fork_with(lambda *gys: (sum(gys),))


@EXERCISES.mistake(2, "added the arrays and wrapped them in a new Variable",
                   "cannot be differentiated again")
def _():
    def backward(gy1, gy2):
        arrays = [g.array for g in (gy1, gy2) if g is not None]
        return mc.Variable(sum(arrays[1:], arrays[0])),
    return _fork_with(backward)


@EXERCISES.mistake(2, "returned one gradient per output", "one gradient per input")
def _():
    return _fork_with(lambda gy1, gy2: (gy1, gy2))


@EXERCISES.mistake(2, "forward gives one output", "two outputs")
def _():
    return _fork_with(lambda gy1, gy2: (gy1,), forward=lambda x: (x,))


@EXERCISES.mistake(2, "returned the sum of the arrays", "return a Variable")
def _():
    def backward(gy1, gy2):
        arrays = [g.array for g in (gy1, gy2) if g is not None]
        return sum(arrays[1:], arrays[0]),
    return _fork_with(backward)


@EXERCISES.mistake(2, "returned the bare Variable, not a tuple", "a tuple of one")
def _():
    return _fork_with(lambda gy1, gy2: gy1 + gy2)


@EXERCISES.mistake(2, "multiplied the gradients", "gradient is wrong")
def _():
    def backward(gy1, gy2):
        if gy1 is None or gy2 is None:
            return (gy2 if gy1 is None else gy1),
        return gy1 * gy2,
    return _fork_with(backward)


@EXERCISES.mistake(2, "started the sum from float64 zeros",
                   "np.zeros(shape) is float64 whatever")
def _():
    class Fork(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0], inputs[0]

        def backward(self, target_input_indexes, grad_outputs):
            gx = mc.Variable(np.zeros(self.inputs[0].shape))
            for gy in grad_outputs:
                if gy is not None:
                    gx = gx + gy
            return gx,
    return Fork


@EXERCISES.mistake(2, "float64 zeros for a missing gradient",
                   "np.zeros(shape) is float64 whatever")
def _():
    class Fork(mc.FunctionNode):
        def forward(self, inputs):
            return inputs[0], inputs[0]

        def backward(self, target_input_indexes, grad_outputs):
            zeros = mc.Variable(np.zeros(self.inputs[0].shape))
            gy1, gy2 = (zeros if gy is None else gy for gy in grad_outputs)
            return gy1 + gy2,
    return Fork


@EXERCISES.mistake(2, "kept the shape for the zeros on the class",
                   "three Forks in one graph")
def _():
    class Fork(mc.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            Fork.shape, Fork.dtype = x.shape, x.dtype
            return x, x

        def backward(self, target_input_indexes, grad_outputs):
            zeros = mc.Variable(np.zeros(Fork.shape, dtype=Fork.dtype))
            gy1, gy2 = (zeros if gy is None else gy for gy in grad_outputs)
            return gy1 + gy2,
    return Fork


class _ForkShapeOnSelf(mc.FunctionNode):
    """The shape and dtype kept on the node itself: one node, one shape."""

    def forward(self, inputs):
        x, = inputs
        self.shape, self.dtype = x.shape, x.dtype
        return x, x

    def backward(self, target_input_indexes, grad_outputs):
        zeros = mc.Variable(np.zeros(self.shape, dtype=self.dtype))
        gy1, gy2 = (zeros if gy is None else gy for gy in grad_outputs)
        return gy1 + gy2,


EXERCISES.malformed(2, [
    (0, "a number"),
    (lambda x: (x, x), "a plain function"),
    (dict, "a class that is not a FunctionNode"),
])


@EXERCISES.solution(3)
def solution_3():
    x = mc.Variable(np.array(5.0))
    (x * x).backward()
    (x * x).backward()
    return x.grad


EXERCISES.wrong(3, [
    (10.0, "one call only", "after one call"),
    (25.0, "the value x * x", "not a gradient"),
    (0.0, "thought backward clears it", "nothing cleared"),
    (40.0, "counted four contributions", "adds it to what it already holds"),
    (np.array(5.0), "x.data, not x.grad", "x itself"),
])


EXERCISES.malformed(3, [
    ("twenty", "a string"),
    ([10.0, 10.0], "a list of the two gradients"),
])


class _ForkByCases(mc.FunctionNode):
    def forward(self, inputs):
        return inputs[0].copy(), inputs[0].copy()

    def backward(self, target_input_indexes, grad_outputs):
        gy1, gy2 = grad_outputs
        if gy1 is None:
            return gy2,
        if gy2 is None:
            return gy1,
        return gy1 + gy2,


class _ForkWithFAdd(mc.FunctionNode):
    def forward(self, inputs):
        x, = inputs
        return x, x

    def backward(self, target_input_indexes, grad_outputs):
        return [F.add(*[g for g in grad_outputs if g is not None])]


class _ForkZerosLike(mc.FunctionNode):
    """Zeros in the input's dtype for a missing gradient, then the sum."""

    def forward(self, inputs):
        x, = inputs
        return x.copy(), x.copy()

    def backward(self, target_input_indexes, grad_outputs):
        x = self.inputs[0]
        zeros = mc.Variable(np.zeros(x.shape, dtype=x.dtype))
        gy1, gy2 = (zeros if gy is None else gy for gy in grad_outputs)
        return gy1 + gy2,


class _ForkSumFromZeroLike(mc.FunctionNode):
    """A sum started from zeros_like of the first gradient there."""

    def forward(self, inputs):
        x, = inputs
        return x, x

    def backward(self, target_input_indexes, grad_outputs):
        there = [gy for gy in grad_outputs if gy is not None]
        gx = mc.Variable(np.zeros_like(there[0].array))
        for gy in there:
            gx = gx + gy
        return gx,


EXERCISES.right(1, [(12, "an int"), (np.array(12.0), "a 0-d array"),
                    (np.array([12.0]), "an array of shape (1,)")])


EXERCISES.right(2, [(_ForkByCases, "copies in forward, one case per None"),
                    (_ForkWithFAdd, "F.add of the gradients there, in a list"),
                    (_ForkZerosLike, "zeros of the input's dtype for a None"),
                    (_ForkSumFromZeroLike, "a sum started from zeros_like"),
                    (_ForkShapeOnSelf, "the shape for the zeros kept on self")])


EXERCISES.right(3, [(20, "an int"), (mc.Variable(np.array(20.0)), "a Variable")])


# ----- the grader's own cases ---------------------------------------------------------
EXERCISES.hidden(2, [{"seed": 401, "shapes": [[1], [3, 1, 2]], "shape": [4]},
                     {"seed": 402, "shapes": [[]], "shape": [2, 2, 2]}])
