"""Exercises of chapter 04:
Paths that add up, a function whose outputs add up, leaves that keep adding.
"""

import numpy as np

import minichain as mc
import minichain.functions as F

from exercises.common import Exercises, NotYet, as_class, as_number, close

EXERCISES = Exercises()


# ----- 1. y = (x * x) * x at x = 2 ----------------------------------------------------
@EXERCISES.check(1)
def check_1(answer):
    """x.grad of y = (x * x) * x at x = 2: three paths add up."""
    value = as_number(answer)
    x = mc.Variable(np.array(2.0))
    ((x * x) * x).backward()
    if close(value, x.grad):
        return None
    if close(value, 2.0 ** 2):
        raise NotYet("that is what one path contributes; x reaches y along "
                     "three paths, and their contributions add up")
    if close(value, 2 * 2.0 * 2.0):
        raise NotYet("that adds two paths (or is y itself); x reaches y along "
                     "three: twice through x * x, once directly")
    if close(value, 3 * 2.0):
        raise NotYet("each path contributes the product of all the local "
                     "derivatives along it, and a path through x * x passes "
                     "two functions")
    raise NotYet("x reaches y along three paths (twice through x * x, once "
                 "directly); add what each path contributes")


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
])
EXERCISES.malformed(1, [
    ("12", "a string"),
    ((12.0, 12.0), "a tuple"),
    (np.array([12.0]), "an array of shape (1,)"),
])


# ----- 2. code: Fork, one input and two outputs --------------------------------------
def _fork(cls, x):
    """``cls().apply((x,))`` as its two outputs, or a hint."""
    outputs = cls().apply((x,))
    if not isinstance(outputs, tuple) or len(outputs) != 2:
        raise NotYet("Fork().apply((x,)) should give two outputs, y1 and y2; "
                     "forward returns a tuple of two arrays")
    return outputs


def _check_fork_forward(cls, rng):
    for dtype in (np.float64, np.float32):
        for shape in ((3,), (2, 4)):
            data = rng.uniform(-2, 2, shape).astype(dtype)
            given = data.copy()
            for y in _fork(cls, mc.Variable(data)):
                if y.shape != shape or y.dtype != dtype:
                    raise NotYet("each output must have the input's shape and "
                                 "dtype, {} {}; got {} {}".format(
                                     shape, np.dtype(dtype), y.shape, y.dtype))
                if not np.array_equal(y.array, given):
                    raise NotYet("forward: both outputs must equal the input")
            if not np.array_equal(data, given):
                raise NotYet("forward changed the input array in place")


def _seed(rng, shape):
    """A random gradient that is never all ones, so every sum is visible."""
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _gradient(outputs, x, seeds, what):
    """x's gradient when only ``outputs`` are used, seeded with ``seeds``."""
    try:
        gx, = mc.grad(list(outputs), [x], grad_outputs=list(seeds))
    except (TypeError, AttributeError) as error:
        if "None" in str(error):
            raise NotYet("when {}, the other output's gradient arrives as "
                         "None: add only the gradients that are there".format(
                             what)) from None
        raise
    if gx is None:
        raise NotYet("when {}, x received no gradient".format(what))
    return gx.array


@EXERCISES.check(2, writes_code=True)
def check_2(answer):
    """Fork: two copies of its input; backward adds the gradients that came."""
    cls = as_class(answer, mc.FunctionNode, "Fork")
    rng = np.random.default_rng(4)
    _check_fork_forward(cls, rng)
    shape = (2, 3)
    data = rng.uniform(-2, 2, shape)
    g1, g2 = _seed(rng, shape), _seed(rng, shape)

    x = mc.Variable(data.copy())
    y1, y2 = _fork(cls, x)
    returned = y1.creator_node.backward(
        (0,), (mc.Variable(g1.copy()), mc.Variable(g2.copy())))
    if not isinstance(returned, (tuple, list)) or len(returned) != 1:
        raise NotYet("backward returns one gradient per input, and Fork has one "
                     "input: a tuple of one Variable (`return gx,`)")
    if not isinstance(returned[0], mc.Variable):
        raise NotYet("backward gives x's gradient as {}; it works on Variables "
                     "(chapter 03): return a Variable".format(
                         "an array" if isinstance(returned[0], np.ndarray)
                         else type(returned[0]).__name__))
    both = _gradient((y1, y2), x, (g1, g2), "both outputs are used")
    if not close(both, g1 + g2):
        if close(both, g1) or close(both, g2):
            raise NotYet("both outputs were used, and x got the gradient of one "
                         "of them only: the two gradients add up")
        raise NotYet("with gradients g1 and g2 arriving at y1 and y2, x's "
                     "gradient is wrong")

    for used, seed, what in ((0, g1, "only y1 is used"),
                             (1, g2, "only y2 is used")):
        x = mc.Variable(data.copy())
        outputs = _fork(cls, x)
        if not close(_gradient((outputs[used],), x, (seed,), what), seed):
            raise NotYet("when {}, x's gradient must be that output's "
                         "gradient".format(what))

    x = mc.Variable(data.copy())          # y1 * y2 = x², differentiated twice
    y1, y2 = _fork(cls, x)
    gx, = mc.grad([y1 * y2], [x], grad_outputs=[g1], enable_double_backprop=True)
    if not close(gx.array, 2 * data * g1):
        raise NotYet("for y1 * y2 (that is x²), x's gradient is wrong")
    weights = _seed(rng, shape)
    ggx, = mc.grad([F.sum(gx * weights)], [x])
    if ggx is None or not close(ggx.array, 2 * g1 * weights):
        raise NotYet("the gradient your backward returns cannot be "
                     "differentiated again: compute it from the Variables in "
                     "grad_outputs, not from their arrays")
    return None


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


EXERCISES.malformed(2, [
    (0, "a number"),
    (lambda x: (x, x), "a plain function"),
    (dict, "a class that is not a FunctionNode"),
])


# ----- 3. two backward calls on a leaf ------------------------------------------------
@EXERCISES.check(3)
def check_3(answer):
    """x.grad after (x * x).backward() twice at x = 5, without cleargrad."""
    value = as_number(answer)
    x = mc.Variable(np.array(5.0))
    (x * x).backward()
    once = float(x.grad)
    (x * x).backward()
    if close(value, x.grad):
        return None
    if close(value, once):
        raise NotYet("that is x.grad after one call; what does the second call "
                     "do to the gradient a leaf already holds?")
    if close(value, 5.0 ** 2):
        raise NotYet("that is y = x * x itself, not a gradient")
    if close(value, 0.0):
        raise NotYet("nothing cleared the gradient: a leaf keeps it between calls")
    raise NotYet("each call gives 2x, and a leaf adds it to what it already holds")


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
])
EXERCISES.malformed(3, [
    ("twenty", "a string"),
    ([10.0, 10.0], "a list of the two gradients"),
])


# ----- other legitimate forms of the right answers ------------------------------------
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


EXERCISES.right(1, [(12, "an int"), (np.array(12.0), "a 0-d array")])
EXERCISES.right(2, [(_ForkByCases, "copies in forward, one case per None"),
                    (_ForkWithFAdd, "F.add of the gradients there, in a list")])
EXERCISES.right(3, [(20, "an int"), (mc.Variable(np.array(20.0)), "a Variable")])
