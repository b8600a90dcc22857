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
    if close(value, 2.0):
        raise NotYet("2 is x itself; read x.grad after y.backward(), or add "
                     "what the three paths contribute")
    if close(value, 3 * 2.0):
        raise NotYet("each path contributes the product of all the local "
                     "derivatives along it, and a path through x * x passes "
                     "two functions")
    raise NotYet("x reaches y along three paths (twice through x * x, once "
                 "directly); add what each path contributes")


# ----- 2. code: Fork, one input and two outputs --------------------------------------
def _fork(cls, x):
    """``cls().apply((x,))`` as its two outputs, or a hint."""
    outputs = cls().apply((x,))
    if not isinstance(outputs, tuple) or len(outputs) != 2:
        raise NotYet("Fork().apply((x,)) should give two outputs, y1 and y2; "
                     "forward returns a tuple of two arrays")
    return outputs


def _seed(rng, shape):
    """A random gradient that is never all ones, so every sum is visible."""
    return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _fork_inputs(case):
    """The arrays of one case, the same wherever they are made: inputs for
    the forward in both dtypes, then x, the seeds g1 and g2 and the weights
    of the second derivative."""
    rng = np.random.default_rng(case["seed"])
    forward = [rng.uniform(-2, 2, shape).astype(dtype)
               for dtype in (np.float64, np.float32) for shape in case["shapes"]]
    shape = tuple(case["shape"])
    data = rng.uniform(-2, 2, shape)
    g1, g2 = _seed(rng, shape), _seed(rng, shape)
    return forward, data, g1, g2, _seed(rng, shape)


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


@EXERCISES.probe(2, cases=[{"seed": 4, "shapes": [[3], [2, 4]], "shape": [2, 3]}])
def probe_2(answer, case):
    """Fork's outputs, and x's gradient when both outputs, y1 only or y2 only
    are used, and for y1 * y2 differentiated twice."""
    cls = as_class(answer, mc.FunctionNode, "Fork")
    forward, data, g1, g2, weights = _fork_inputs(case)
    seen = {"forward": []}
    for array in forward:
        given = array.copy()
        outputs = _fork(cls, mc.Variable(array))
        for y in outputs:
            if y.shape != array.shape or y.dtype != array.dtype:
                raise NotYet("each output must have the input's shape and "
                             "dtype, {} {}; got {} {}".format(
                                 array.shape, array.dtype, y.shape, y.dtype))
        if not np.array_equal(array, given):
            raise NotYet("forward changed the input array in place")
        seen["forward"].append([y.array for y in outputs])

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
    seen["both"] = _gradient((y1, y2), x, (g1, g2), "both outputs are used")
    _judge_both(seen["both"], g1, g2)
    for used, seed, what in ((0, g1, "only y1 is used"),
                             (1, g2, "only y2 is used")):
        x = mc.Variable(data.copy())
        outputs = _fork(cls, x)
        seen[what] = _gradient((outputs[used],), x, (seed,), what)

    x = mc.Variable(data.copy())          # y1 * y2 = x², differentiated twice
    y1, y2 = _fork(cls, x)
    gx, = mc.grad([y1 * y2], [x], grad_outputs=[g1], enable_double_backprop=True)
    seen["square"] = gx.array
    ggx, = mc.grad([F.sum(gx * weights)], [x])
    seen["second"] = None if ggx is None else ggx.array
    return seen


def _judge_both(both, g1, g2):
    if not close(both, g1 + g2) or np.shape(both) != np.shape(g1):
        if close(both, g1) or close(both, g2):
            raise NotYet("both outputs were used, and x got the gradient of one "
                         "of them only: the two gradients add up")
        raise NotYet("with gradients g1 and g2 arriving at y1 and y2, x's "
                     "gradient is wrong")


def _same(value, expected):
    return isinstance(value, np.ndarray) and value.shape == np.shape(expected) \
        and close(value, expected)


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """Fork: two copies of its input; backward adds the gradients that came."""
    forward, data, g1, g2, weights = _fork_inputs(case)
    if len(seen["forward"]) != len(forward) or not all(
            len(outputs) == 2 and all(
                _same(y, array) and y.dtype == array.dtype for y in outputs)
            for array, outputs in zip(forward, seen["forward"])):
        raise NotYet("forward: both outputs must equal the input")
    _judge_both(seen["both"], g1, g2)
    for seed, what in ((g1, "only y1 is used"), (g2, "only y2 is used")):
        if not _same(seen[what], seed):
            raise NotYet("when {}, x's gradient must be that output's "
                         "gradient".format(what))
    if not _same(seen["square"], 2 * data * g1):
        raise NotYet("for y1 * y2 (that is x²), x's gradient is wrong")
    if seen["second"] is None or not _same(seen["second"], 2 * g1 * weights):
        raise NotYet("the gradient your backward returns cannot be "
                     "differentiated again: compute it from the Variables in "
                     "grad_outputs, not from their arrays")
    return None


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
    if close(value, 5.0):
        raise NotYet("5 is x itself, not its gradient; read x.grad")
    if close(value, 5.0 ** 2):
        raise NotYet("that is y = x * x itself, not a gradient")
    if close(value, 0.0):
        raise NotYet("nothing cleared the gradient: a leaf keeps it between calls")
    raise NotYet("each call gives 2x, and a leaf adds it to what it already holds")


# ----- other legitimate forms of the right answers ------------------------------------
