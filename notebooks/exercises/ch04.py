"""Exercises of chapter 04:
Paths that add up, a function whose outputs add up, leaves that keep adding.
"""

import numpy as np

import minichain as mc
import minichain.functions as F
from minichain.utils.type_check import InvalidType

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
    the forward in both dtypes, then, for each dtype, x, the seeds g1 and g2
    and the weights of the second derivative (a backward that makes a
    float64 array, such as zeros for a missing gradient, only fails on
    float32 data)."""
    rng = np.random.default_rng(case["seed"])
    forward = [rng.uniform(-2, 2, shape).astype(dtype)
               for dtype in DTYPES for shape in case["shapes"]]
    shape = tuple(case["shape"])
    backward = []
    for dtype in DTYPES:
        data = rng.uniform(-2, 2, shape).astype(dtype)
        g1, g2, weights = (_seed(rng, shape).astype(dtype) for _ in range(3))
        backward.append((data, g1, g2, weights))
    return forward, backward


DTYPES = (np.float64, np.float32)


def _gradient(outputs, x, seeds, what):
    """x's gradient when only ``outputs`` are used, seeded with ``seeds``."""
    try:
        gx, = mc.grad(list(outputs), [x], grad_outputs=list(seeds))
    except (TypeError, AttributeError) as error:
        if "None" in str(error):
            raise NotYet("when {}, the other output's gradient arrives as "
                         "None: add only the gradients that are there".format(
                             what)) from None
        raise _dtype_hint(x, error) from None
    except (ValueError, InvalidType) as error:
        raise _dtype_hint(x, error) from None
    if gx is None:
        raise NotYet("when {}, x received no gradient".format(what))
    if gx.dtype != x.dtype:
        raise NotYet("for {} data x's gradient comes back {}: a gradient "
                     "keeps its input's dtype".format(x.dtype, gx.dtype))
    return gx.array


def _dtype_hint(x, error):
    """The error of a backward on ``x``: a hint on the dtype when it is about
    dtypes (np.zeros(shape), always float64, meets a float32 gradient), else
    the error itself."""
    text = " ".join(str(error).split())
    if "float" in text or "dtype" in text:
        return NotYet("on {} data your backward fails ({}: {}): every array "
                      "it makes must have the input's dtype; np.zeros(shape) "
                      "is float64 whatever the input, np.zeros_like(x.array) "
                      "follows it".format(x.dtype, type(error).__name__,
                                          text[:160]))
    return error


@EXERCISES.probe(2, cases=[{"seed": 4, "shapes": [[3], [2, 4]], "shape": [2, 3]}])
def probe_2(answer, case):
    """Fork's outputs, and, in both dtypes, x's gradient when both outputs,
    y1 only or y2 only are used, and for y1 * y2 differentiated twice."""
    cls = as_class(answer, mc.FunctionNode, "Fork")
    forward, backward = _fork_inputs(case)
    seen = {"forward": [], "backward": []}
    for array in forward:
        given = array.copy()
        outputs = _fork(cls, mc.Variable(array))
        for y in outputs:
            if y.shape != array.shape or y.dtype != array.dtype:
                raise NotYet("each output must have the input's shape and "
                             "dtype; got another {}".format(
                                 "shape" if y.shape != array.shape
                                 else "dtype, " + str(y.dtype)))
        if not np.array_equal(array, given):
            raise NotYet("forward changed the input array in place")
        seen["forward"].append([y.array for y in outputs])
    for trial in backward:
        seen["backward"].append(_probe_backward(cls, *trial))
    return seen


def _probe_backward(cls, data, g1, g2, weights):
    """x's gradients through Fork for one dtype (see probe_2)."""
    seen = {}
    x = mc.Variable(data.copy())
    y1, y2 = _fork(cls, x)
    try:
        returned = y1.creator_node.backward(
            (0,), (mc.Variable(g1.copy()), mc.Variable(g2.copy())))
    except (TypeError, ValueError, InvalidType) as error:
        raise _dtype_hint(x, error) from None
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

    seen["three forks"] = _three_forks(cls, data, g1, g2)

    x = mc.Variable(data.copy())          # y1 * y2 = x², differentiated twice
    y1, y2 = _fork(cls, x)
    try:
        gx, = mc.grad([y1 * y2], [x], grad_outputs=[g1],
                      enable_double_backprop=True)
        seen["square"] = gx.array
        ggx, = mc.grad([F.sum(gx * weights)], [x])
    except (TypeError, ValueError, InvalidType) as error:
        raise _dtype_hint(x, error) from None
    seen["second"] = None if ggx is None else ggx.array
    return seen


def _other(data):
    """An input of another shape than ``data`` (one element more), in its dtype."""
    flat = data.ravel()
    return np.concatenate([flat, flat[:1] * 0.5]).astype(data.dtype)


def _three_forks(cls, data, g1, g2):
    """x's and u's gradients through three Forks in one graph: y1, y2 =
    Fork(x); z1, z2 = Fork(y2); u1, u2 = Fork(u), u of another shape; only
    y1, z1 and u2 used. State one Fork keeps on the class (a shape for the
    zeros of a missing gradient) is overwritten by another here."""
    x, u = mc.Variable(data.copy()), mc.Variable(_other(data))
    y1, y2 = _fork(cls, x)
    z1, z2 = _fork(cls, y2)
    u1, u2 = _fork(cls, u)
    try:
        gx, gu = mc.grad([y1, z1, u2], [x, u],
                         grad_outputs=[g1, g2, _other(g1)])
    except (TypeError, ValueError, AttributeError, InvalidType) as error:
        raise NotYet("with three Forks in one graph (one fed by another, one "
                     "on an input of another shape), backward fails ({}): does "
                     "one Fork read what another stored, on the class or in "
                     "the module? Each node keeps its own".format(
                         type(error).__name__)) from None
    return [None if g is None else g.array for g in (gx, gu)]


def _judge_both(both, g1, g2):
    if not close(both, g1 + g2, rtol=1e-4, atol=1e-5) \
            or np.shape(both) != np.shape(g1):
        if close(both, g1, rtol=1e-4, atol=1e-5) \
                or close(both, g2, rtol=1e-4, atol=1e-5):
            raise NotYet("both outputs were used, and x got the gradient of one "
                         "of them only: the two gradients add up")
        raise NotYet("with gradients g1 and g2 arriving at y1 and y2, x's "
                     "gradient is wrong")


def _same(value, expected, dtype=None):
    return isinstance(value, np.ndarray) and value.shape == np.shape(expected) \
        and (dtype is None or value.dtype == dtype) \
        and close(value, expected, rtol=1e-4, atol=1e-5)


@EXERCISES.check(2, writes_code=True)
def check_2(seen, case):
    """Fork: two copies of its input; backward adds the gradients that came,
    in float64 and in float32."""
    forward, backward = _fork_inputs(case)
    if len(seen["forward"]) != len(forward) or not all(
            len(outputs) == 2 and all(
                _same(y, array, array.dtype) for y in outputs)
            for array, outputs in zip(forward, seen["forward"])):
        raise NotYet("forward: both outputs must equal the input")
    if len(seen["backward"]) != len(backward):
        raise NotYet("backward was not tried in every dtype")
    for (data, g1, g2, weights), got in zip(backward, seen["backward"]):
        _judge_backward(got, data, g1, g2, weights)
    return None


def _judge_backward(got, data, g1, g2, weights):
    dtype = data.dtype
    _judge_both(got["both"], g1, g2)
    if not _same(got["both"], g1 + g2, dtype):
        raise NotYet("for {} data x's gradient is not {}: a gradient keeps "
                     "its input's dtype".format(dtype, dtype))
    for seed, what in ((g1, "only y1 is used"), (g2, "only y2 is used")):
        if not _same(got[what], seed, dtype):
            raise NotYet("when {}, x's gradient must be that output's "
                         "gradient".format(what))
    three = got.get("three forks")
    if not (isinstance(three, list) and len(three) == 2
            and _same(three[0], g1 + g2, dtype)
            and _same(three[1], _other(g1), dtype)):
        raise NotYet("with three Forks in one graph (one fed by another, one "
                     "on an input of another shape), the gradients are wrong: "
                     "does one Fork read what another stored, on the class or "
                     "in the module? Each node keeps its own")
    x64 = data.astype(np.float64)
    if not _same(got["square"], 2 * x64 * g1, dtype):
        raise NotYet("for y1 * y2 (that is x²), x's gradient is wrong")
    if got["second"] is None or not _same(got["second"], 2 * g1 * weights,
                                          dtype):
        raise NotYet("the gradient your backward returns cannot be "
                     "differentiated again: compute it from the Variables in "
                     "grad_outputs, not from their arrays")


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
