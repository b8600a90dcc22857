"""Gradients that share arrays: the residual shapes that once went wrong.

Why this file exists (issue 14). ``x + c`` and ``x + y`` hand their incoming
gradient on unchanged, so one array can be the gradient of two variables at
once. ReLU's old backward multiplied its incoming gradient by the mask *in
place* when the engine believed nobody else held that array, and the engine
kept that belief by the array's id. In ``relu(x + relu(y))`` the array the
outer relu made went through ``+`` to both ``x`` and ``relu(y)``; the inner
relu wrote its mask into it, into ``x``'s gradient too, and ``x.grad`` came
out ``[0, 3]`` instead of ``[3, 3]``. The property tests of the time never
built a residual shape, so nothing caught it.

Here random small programs are built from residual shapes (``relu(z) + z``,
``relu(a) + relu(b)``, a constant or an identity between two functions,
``f(x, x)``, values used twice), views (reshape, transpose, get_item,
broadcast, sum_to) and linear layers, on leaves of four kinds: plain
Variables, Variables whose ``.grad`` the user set, Parameters after
``zerograd()`` (a buffer of their own, added into in place by design) and
Parameters whose ``.grad`` the user set. Each example checks:

* the values, against numerical gradients (float64) and, where torch is
  installed, against torch.autograd on the same program;
* that every array the user passed or holds is unchanged, bit for bit;
* that gradients which must be independent never share memory;

for ``backward``, ``backward(retain_grad=True)`` and ``mc.grad``, in plain
mode, with a function hook, in debug mode and with ``lazy_grad_sum``, and
with double backprop against numerical second derivatives.
"""
import contextlib
import itertools
from typing import NamedTuple

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import minichain as mc
import minichain.functions as F
from minichain.gradient_check import numerical_grad

R, C = 2, 3
SHAPE = (R, C)  # every value of a program has this shape

# ----- the two programs of the issue, pinned --------------------------------
def test_relu_of_a_sum_with_a_relu_gives_every_path_its_gradient():
    x = mc.Variable(numpy.array([1.0, 1.0]))
    y = mc.Variable(numpy.array([-1.0, 1.0]))
    F.sum(F.relu(x + F.relu(y)) * 3.0).backward()
    # d/dx = 3 where x + relu(y) > 0, which is everywhere
    numpy.testing.assert_array_equal(x.grad, [3.0, 3.0])
    numpy.testing.assert_array_equal(y.grad, [0.0, 3.0])


def test_linear_of_a_residual_gives_every_path_its_gradient():
    x = mc.Variable(numpy.array([[1.0, -1.0]]))
    W = mc.Variable(numpy.array([[1.0, 2.0]]))
    F.sum(F.linear(x + F.relu(x), W)).backward()
    # d/dx = W * (1 + (x > 0)) = [[1 * 2, 2 * 1]]
    numpy.testing.assert_array_equal(x.grad, [[2.0, 2.0]])
    numpy.testing.assert_array_equal(W.grad, [[2.0, -1.0]])


def test_a_pass_through_leaves_the_seed_and_the_preset_gradient_alone():
    # ``+ c`` hands the user's seed on to relu, whose backward must not
    # write into it; x.grad must be a new sum, not the preset added into.
    x = mc.Variable(numpy.array([2.0, -1.0, 0.5]))
    preset = numpy.array([10.0, 20.0, 30.0])
    x.grad = preset
    y = F.relu(x) + 0.25
    seed = numpy.array([1.0, 2.0, 3.0])
    y.grad = seed
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [11.0, 20.0, 33.0])
    numpy.testing.assert_array_equal(seed, [1.0, 2.0, 3.0])
    numpy.testing.assert_array_equal(preset, [10.0, 20.0, 30.0])
    assert not numpy.shares_memory(x.grad, preset)


def test_two_leaves_of_one_sum_get_arrays_of_their_own():
    x = mc.Variable(numpy.array([1.0, 2.0]))
    y = mc.Variable(numpy.array([3.0, 4.0]))
    z = x + y
    z.grad = numpy.array([1.0, 1.0])
    z.backward()
    assert not numpy.shares_memory(x.grad, y.grad)
    x.grad *= 5  # the user may scale one gradient without touching the other
    numpy.testing.assert_array_equal(y.grad, [1.0, 1.0])


# ----- programs ---------------------------------------------------------------
#
# A program is a straight line of steps on values of one shape, SHAPE. The
# first values are the leaves; each step applies one of STEPS to earlier
# values (any of which may be used again). Two more leaves, W (C, C) and
# b (C,), serve the linear layers. The same program runs on minichain, on
# NumPy arrays (for numerical gradients) and on torch tensors, through an
# ``ops`` object that names each operation in that library.


STEPS = {
    # residual shapes (issue 14): ``+`` hands one gradient to two inputs,
    # ``+ c`` and identity hand it on, with relu and linear around them
    "relu_of_sum_with_relu": lambda o, a, b, c, W, bias: o.relu(
        a + o.relu(b)),
    "linear_of_residual": lambda o, a, b, c, W, bias: o.linear(
        a + o.relu(a), W, None),
    "relu_residual": lambda o, a, b, c, W, bias: o.relu(a) + a,
    "residual_block": lambda o, a, b, c, W, bias: o.relu(o.relu(a) + a),
    "relu_pair": lambda o, a, b, c, W, bias: o.relu(a) + o.relu(b),
    "relu_const_relu": lambda o, a, b, c, W, bias: o.relu(o.relu(a) + c),
    "relu_identity_relu": lambda o, a, b, c, W, bias: o.relu(
        o.identity(o.relu(a))),
    "forget_residual": lambda o, a, b, c, W, bias: o.forget_residual(a),
    # one function
    "relu": lambda o, a, b, c, W, bias: o.relu(a),
    "tanh": lambda o, a, b, c, W, bias: o.tanh(a),
    "exp": lambda o, a, b, c, W, bias: o.exp(a),
    "sin": lambda o, a, b, c, W, bias: o.sin(a),
    "identity": lambda o, a, b, c, W, bias: o.identity(a),
    "add_const": lambda o, a, b, c, W, bias: a + c,
    "mul_const": lambda o, a, b, c, W, bias: a * c,
    "linear": lambda o, a, b, c, W, bias: o.linear(a, W, bias),
    # views in the path
    "reshape": lambda o, a, b, c, W, bias: o.reshape(
        o.reshape(a, (R * C,)), SHAPE),
    "transpose": lambda o, a, b, c, W, bias: o.reshape(o.transpose(a), SHAPE),
    "flip": lambda o, a, b, c, W, bias: o.flip_columns(a),
    "row_broadcast": lambda o, a, b, c, W, bias: o.broadcast_to(
        o.first_row(a), SHAPE),
    "sum_to_broadcast": lambda o, a, b, c, W, bias: o.broadcast_to(
        o.sum_rows(a), SHAPE),
    # two operands; the second may be the first (f(x, x))
    "add": lambda o, a, b, c, W, bias: a + b,
    "sub": lambda o, a, b, c, W, bias: a - b,
    "mul": lambda o, a, b, c, W, bias: a * b,
}
RESIDUAL = ("relu_of_sum_with_relu", "linear_of_residual", "relu_residual",
            "residual_block", "relu_pair", "relu_const_relu",
            "relu_identity_relu", "forget_residual")
USES_W = {"linear", "linear_of_residual"}
USES_BIAS = {"linear"}
TWO_OPERANDS = {"relu_of_sum_with_relu", "relu_pair", "add", "sub", "mul"}
# Double backprop needs second derivatives: the residual shapes around
# functions whose second derivative is not zero.
SMOOTH = ("relu_residual", "residual_block", "relu_of_sum_with_relu",
          "relu_pair", "relu_identity_relu",
          "linear_of_residual", "forget_residual", "tanh", "sin", "mul",
          "linear", "add", "identity", "add_const", "reshape", "transpose",
          "sum_to_broadcast")
CONSTANTS = (-0.37, 0.29, 0.61, -1.13, 1.7)  # odd values: no exact zeros

LEAF_KINDS = ("variable", "preset", "parameter", "parameter_preset")


class Program(NamedTuple):
    """A program and how its arrays and leaves are made (all drawn)."""
    n_inputs: int
    kinds: tuple  # one per leaf: n_inputs leaves, then W, then b
    steps: tuple  # (step name, i, j, constant)
    seed: int  # of the arrays (inputs, presets, the output gradient)
    seeded: bool  # y.grad = gy; y.backward(), else F.sum(y * gy).backward()


@st.composite
def programs(draw, names=tuple(STEPS), max_inputs=3, max_steps=6,
             kinds=LEAF_KINDS):
    """A random ``Program``; residual steps are drawn as often as the rest
    together, and operands come mostly from the last few values."""
    n_inputs = draw(st.integers(1, max_inputs))
    # Half the programs on plain Variables only: a leaf whose .grad starts
    # empty takes the gradient array as it comes, so sharing shows there.
    mixed = st.tuples(*[st.sampled_from(kinds)] * (n_inputs + 2))
    leaf_kinds = draw(st.one_of(st.just((kinds[0],) * (n_inputs + 2)), mixed))
    residual = [n for n in names if n in RESIDUAL]
    others = [n for n in names if n not in RESIDUAL]
    name_strategy = st.one_of(st.sampled_from(residual),
                              st.sampled_from(others))
    n_steps = draw(st.integers(1, max_steps))
    steps = []
    for k in range(n_steps):
        n_values = n_inputs + k
        recent = st.integers(max(0, n_values - 2), n_values - 1)
        anywhere = st.integers(0, n_values - 1)
        i = n_values - 1 if k == n_steps - 1 else draw(
            st.one_of(recent, anywhere))
        j = draw(st.one_of(st.just(i), recent, anywhere))  # i: f(x, x)
        steps.append((draw(name_strategy), i, j,
                      draw(st.sampled_from(CONSTANTS))))
    return Program(n_inputs, leaf_kinds, tuple(steps),
                   draw(st.integers(0, 2 ** 31 - 1)), draw(st.booleans()))


def run(program, ops, leaves):
    """Every value of ``program`` (the output last), computed with ``ops``
    from ``leaves`` = inputs, then W, then b."""
    n = program.n_inputs
    values = list(leaves[:n])
    W, bias = leaves[n], leaves[n + 1]
    for name, i, j, c in program.steps:
        values.append(STEPS[name](ops, values[i], values[j], c, W, bias))
    return values


def leaves_reached(program):
    """The indexes of the leaves the output depends on (by the graph, not
    by the values: ``x - x`` depends on ``x``)."""
    n = program.n_inputs
    depends = [{k} for k in range(n)]
    for name, i, j, _ in program.steps:
        d = set(depends[i])
        if name in TWO_OPERANDS:
            d |= depends[j]
        if name in USES_W:
            d.add(n)
        if name in USES_BIAS:
            d.add(n + 1)
        depends.append(d)
    return depends[-1]


class Arrays(NamedTuple):
    """The arrays of one example, drawn from ``program.seed``."""
    leaves: list  # inputs (SHAPE), W (C, C), b (C,)
    presets: list  # a gradient the user sets, one per leaf
    gy: numpy.ndarray  # the output gradient


def arrays_of(program):
    """Values away from zero (no relu input near its kink) and of both
    signs; W scaled down so that chains of linear layers stay small."""
    rng = numpy.random.RandomState(program.seed)
    shapes = [SHAPE] * program.n_inputs + [(C, C), (C,)]

    def signed(shape, scale=1.0):
        sign = rng.choice([-1.0, 1.0], size=shape)
        return scale * sign * rng.uniform(0.2, 1.5, size=shape)

    leaves = [signed(s, 0.5 if s == (C, C) else 1.0) for s in shapes]
    presets = [rng.standard_normal(s) for s in shapes]
    return Arrays(leaves, presets, signed(SHAPE))


# ----- the three libraries ----------------------------------------------------
class MinichainOps:
    """The operations of ``STEPS`` in minichain (used as the class itself:
    the functions are not bound to an instance)."""
    relu, tanh, exp, sin = F.relu, F.tanh, F.exp, F.sin
    identity, reshape, transpose, broadcast_to, linear = (
        F.identity, F.reshape, F.transpose, F.broadcast_to, F.linear)

    @staticmethod
    def flip_columns(a):
        return F.get_item(a, (slice(None), slice(None, None, -1)))

    @staticmethod
    def first_row(a):
        return F.get_item(a, slice(0, 1))

    @staticmethod
    def sum_rows(a):
        return F.sum_to(a, (1, C))

    @staticmethod
    def forget_residual(a):
        return F.forget(lambda t: F.relu(t) + t, a)


class NumpyOps:
    """The same operations on arrays; notes every relu input (kinks)."""

    def __init__(self):
        self.relu_inputs = []

    def relu(self, a):
        self.relu_inputs.append(a)
        return numpy.maximum(a, 0.0)

    tanh, exp, sin = (staticmethod(numpy.tanh), staticmethod(numpy.exp),
                      staticmethod(numpy.sin))
    broadcast_to = staticmethod(numpy.broadcast_to)

    @staticmethod
    def identity(a):
        return a

    @staticmethod
    def reshape(a, shape):
        return a.reshape(shape)

    @staticmethod
    def transpose(a):
        return a.T

    @staticmethod
    def flip_columns(a):
        return a[:, ::-1]

    @staticmethod
    def first_row(a):
        return a[0:1]

    @staticmethod
    def sum_rows(a):
        return a.sum(axis=0, keepdims=True)

    @staticmethod
    def linear(a, W, b):
        return a @ W.T + (0.0 if b is None else b)

    def forget_residual(self, a):
        return self.relu(a) + a


def assume_well_conditioned(program, arrays):
    """Skip examples whose values blow up, or whose relu inputs (other than
    exact zeros, such as ``relu(x - x)``) come near the kink."""
    ops = NumpyOps()
    with numpy.errstate(over="ignore", invalid="ignore"):
        values = run(program, ops, arrays.leaves)
    assume(all(numpy.all(numpy.abs(v) < 1e3) for v in values))
    for a in ops.relu_inputs:
        near = numpy.abs(a[a != 0])
        assume(near.size == 0 or near.min() > 1e-3)


def numerical_gradients(program, arrays):
    """Gradients of ``sum(y * gy)`` w.r.t. every leaf, by central
    differences in float64 (``numerical_grad`` perturbs ``inputs``)."""
    inputs = [a.copy() for a in arrays.leaves]
    return numerical_grad(lambda: (run(program, NumpyOps(), inputs)[-1],),
                          inputs, (arrays.gy,), eps=1e-6)


# ----- one example in minichain, with everything the user holds ------------------
class Case:
    """The leaves of one example, made the way ``program.kinds`` says, and
    every array the user passed or holds, with a copy of each."""

    def __init__(self, program, arrays):
        self.program, self.arrays = program, arrays
        self.leaves, self.held, self.snapshots, self.buffers = [], [], [], {}
        for k, (kind, a, preset) in enumerate(
                zip(program.kinds, arrays.leaves, arrays.presets)):
            x = mc.Parameter(a) if kind.startswith("parameter") else (
                mc.Variable(a))
            self.hold("leaf {} data".format(k), a, owner=("data", k))
            if kind.endswith("preset"):
                x.grad = preset
                self.hold("leaf {} .grad set by the user".format(k), preset,
                          owner=k)
            if kind == "parameter":
                x.zerograd()  # its own buffer: added into, by design
                self.buffers[k] = x.grad
                self.hold("leaf {} zerograd buffer".format(k), x.grad,
                          owner=k)
            self.leaves.append(x)
        self.hold("gy", arrays.gy, owner="gy")

    def hold(self, name, array, owner):
        """Note an array of the user's, and a copy of it; ``owner`` groups
        arrays that may share memory (a leaf's .grad with the array it
        started from)."""
        self.held.append((name, array, owner))
        self.snapshots.append((name, array, array.copy()))

    def output(self):
        return run(self.program, MinichainOps, self.leaves)

    def backward(self, retain_grad=False, enable_double_backprop=False):
        """Build the program, backpropagate ``sum(y * gy)``; every value."""
        values = self.output()
        y = values[-1]
        if self.program.seeded:
            y.grad = self.arrays.gy
            y.backward(retain_grad=retain_grad,
                       enable_double_backprop=enable_double_backprop)
        else:
            loss = F.sum(y * self.arrays.gy)
            values.append(loss)
            loss.backward(retain_grad=retain_grad,
                          enable_double_backprop=enable_double_backprop)
        return values

    def assert_user_arrays_unchanged(self, buffers_too=False):
        """Bit for bit; a zerograd'ed Parameter's buffer is left out unless
        ``buffers_too`` (backward adds into it by design, grad() must not)."""
        for name, array, copy in self.snapshots:
            if not buffers_too and any(
                    array is b for b in self.buffers.values()):
                continue
            assert array.dtype == copy.dtype and array.shape == copy.shape
            assert array.tobytes() == copy.tobytes(), (
                "{} was changed by backward:\n{}\nwas\n{}".format(
                    name, array, copy))

    def expected_leaf_grads(self, gradients, times=1):
        """What each leaf's .grad should be after ``times`` passes that add
        ``gradients`` (None where the leaf is not reached)."""
        reached = leaves_reached(self.program)
        expected = []
        for k, (kind, g) in enumerate(zip(self.program.kinds, gradients)):
            start = (self.arrays.presets[k] if kind.endswith("preset") else
                     numpy.zeros_like(g) if kind == "parameter" else None)
            if k not in reached:
                expected.append(start)
            else:
                expected.append(times * g if start is None else
                                start + times * g)
        return expected


def assert_independent(named):
    """No two arrays of ``[(name, array, owner)]`` with different owners
    share memory."""
    for (n1, a1, o1), (n2, a2, o2) in itertools.combinations(named, 2):
        if o1 != o2 and a1 is not None and a2 is not None:
            assert not numpy.shares_memory(a1, a2), (
                "{} and {} share memory".format(n1, n2))


def assert_writeable(named):
    """A gradient that nobody else holds can be written to (an optimizer
    scales it in place); a read-only broadcast view would refuse."""
    for name, a, _ in named:
        assert a is None or a.flags.writeable, "{} is read-only".format(name)


def leaf_grads(case):
    return [("leaf {} .grad".format(k), x.grad, k)
            for k, x in enumerate(case.leaves)]


def assert_leaf_grads_are_new(case):
    """A reached leaf's .grad is a new array, not the one the user set."""
    reached = leaves_reached(case.program)
    for k, x in enumerate(case.leaves):
        preset = case.arrays.presets[k]
        if k in reached and case.program.kinds[k].endswith("preset"):
            assert not numpy.shares_memory(x.grad, preset), (
                "leaf {} .grad is (a view of) the array the user set".format(
                    k))


def assert_close(got, want, what, rtol=1e-5, atol=1e-6):
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None, "{} {}: expected no gradient, got {}".format(
                what, k, g)
        else:
            assert g is not None, "{} {}: no gradient".format(what, k)
            numpy.testing.assert_allclose(
                g, w, rtol=rtol, atol=atol, err_msg="{} {}".format(what, k))


# ----- modes: each must give the same gradients ---------------------------------
class CountingHook(mc.FunctionHook):
    """Any registered hook sends the engine down the Variable path."""
    name = "SharedGradientsCountingHook"

    def __init__(self):
        self.calls = 0

    def backward_preprocess(self, function, in_data, out_grad):
        self.calls += 1


MODES = {
    "plain": contextlib.nullcontext,
    "hook": CountingHook,
    "debug": lambda: mc.using_config("debug", True),
    "lazy_grad_sum": lambda: mc.using_config("lazy_grad_sum", True),
}

FIRST_ORDER = settings(max_examples=150, deadline=None,
                       suppress_health_check=[HealthCheck.filter_too_much])


# ----- backward ------------------------------------------------------------------
@pytest.mark.parametrize("mode", sorted(MODES))
@FIRST_ORDER
@given(program=programs(), times=st.integers(1, 2))
def test_backward_matches_numerical_gradients_and_leaves_user_arrays_alone(
        mode, program, times):
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    case = Case(program, arrays)
    with MODES[mode]() as hook:
        for _ in range(times):  # a second pass adds to the first
            case.backward()
    if mode == "hook":
        assert hook.calls > 0
    expected = case.expected_leaf_grads(numerical_gradients(program, arrays),
                                        times)
    assert_close([x.grad for x in case.leaves], expected, "leaf")
    case.assert_user_arrays_unchanged()
    assert_leaf_grads_are_new(case)
    assert_independent(leaf_grads(case) + case.held)
    assert_writeable(leaf_grads(case))


@FIRST_ORDER
@given(program=programs())
def test_every_mode_gives_identical_gradients(program):
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    results = {}
    for mode, context in MODES.items():
        case = Case(program, arrays)
        with context():
            case.backward()
        results[mode] = [x.grad for x in case.leaves]
    for mode, grads in results.items():
        for k, (got, want) in enumerate(zip(grads, results["plain"])):
            assert (got is None) == (want is None)
            if got is not None:
                assert got.tobytes() == want.tobytes(), (
                    "leaf {}: {} gives {}, plain mode {}".format(
                        k, mode, got, want))


@pytest.mark.parametrize("mode", ["plain", "hook"])
@FIRST_ORDER
@given(program=programs())
def test_retained_gradients_are_right_and_independent(mode, program):
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    case = Case(program, arrays)
    with MODES[mode]():
        values = case.backward(retain_grad=True)
    expected = case.expected_leaf_grads(numerical_gradients(program, arrays))
    assert_close([x.grad for x in case.leaves], expected, "leaf")
    # Each intermediate holds its full gradient: the one mc.grad gives on
    # a fresh copy of the graph (mc.grad's results are checked above).
    n = program.n_inputs
    fresh = run(program, MinichainOps, [mc.Variable(a) for a in arrays.leaves])
    if program.seeded:
        outputs, gys = [fresh[-1]], [arrays.gy]
    else:
        fresh.append(F.sum(fresh[-1] * arrays.gy))
        outputs, gys = [fresh[-1]], [None]
    wanted = mc.grad(outputs, fresh[n:], grad_outputs=gys)
    for m, (v, w) in enumerate(zip(values[n:], wanted)):
        if w is not None:
            numpy.testing.assert_allclose(
                v.grad, w.array, rtol=1e-12, atol=1e-12,
                err_msg="value {}".format(n + m))
    case.assert_user_arrays_unchanged()
    # The output keeps the seed the user gave it (as in Chainer).
    retained = []
    for m, v in enumerate(values[n:]):
        owner = "gy" if (v is values[-1] and program.seeded) else ("value", m)
        retained.append(("value {} .grad".format(n + m), v.grad, owner))
    assert_independent(retained + leaf_grads(case) + case.held)
    assert_writeable(retained + leaf_grads(case))


# ----- mc.grad ---------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["plain", "hook", "debug"])
@FIRST_ORDER
@given(program=programs(), retain_grad=st.booleans(),
       grad_inputs=st.booleans(), intermediates=st.booleans())
def test_grad_returns_independent_arrays_and_touches_no_grad(
        mode, program, retain_grad, grad_inputs, intermediates):
    # The leaves are asked for, and with ``intermediates`` every later value
    # too (the output included); with ``grad_inputs``, each leaf's gradient
    # starts from an array of the user's.
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    case = Case(program, arrays)
    n_leaves, n = len(case.leaves), program.n_inputs
    starts = [p + 1.0 for p in arrays.presets] if grad_inputs else None
    for k, start in enumerate(starts or []):
        case.hold("grad_inputs[{}]".format(k), start, owner=k)
    before = [x.grad for x in case.leaves]
    with MODES[mode]():
        values = case.output()
        inputs = case.leaves + (values[n:] if intermediates else [])
        grads = mc.grad(
            [values[-1]], inputs, grad_outputs=[arrays.gy],
            grad_inputs=None if starts is None else (
                starts + [None] * (len(inputs) - n_leaves)),
            retain_grad=retain_grad)
    got = [None if g is None else g.array for g in grads]
    reached = leaves_reached(program)
    expected = []
    for k, g in enumerate(numerical_gradients(program, arrays)):
        start = None if starts is None else starts[k]
        expected.append(start if k not in reached else
                        g if start is None else start + g)
    assert_close(got[:n_leaves], expected, "mc.grad result")
    for x, old in zip(case.leaves, before):  # .grad neither read nor written
        assert x.grad is old
    case.assert_user_arrays_unchanged(buffers_too=True)
    for k in reached:  # a reached leaf's result is a new sum
        if starts is not None:
            assert not numpy.shares_memory(got[k], starts[k])
    # Allowed to share: an unreached leaf's result with its own start, an
    # intermediate's result with its own retained .grad, the output's with
    # its grad_outputs (the user gave it for that very variable).
    results = [("mc.grad result {}".format(k), g, k) for k, g in
               enumerate(got[:n_leaves])]
    named_values = []
    for m, v in enumerate(values[n:]):
        owner = "gy" if v is values[-1] else ("value", m)
        named_values.append(("value {} .grad".format(n + m), v.grad, owner))
        if intermediates:
            named_values.append(("mc.grad result for value {}".format(n + m),
                                 got[n_leaves + m], owner))
    assert_independent(results + named_values + case.held)
    assert_writeable(results + named_values)


# ----- double backprop ------------------------------------------------------------
def first_order(program, leaf_arrays, gy):
    """Gradients of ``sum(y * gy)`` w.r.t. the leaves, as arrays (zeros
    where the leaf is not reached)."""
    leaves = [mc.Variable(a) for a in leaf_arrays]
    y = run(program, MinichainOps, leaves)[-1]
    grads = mc.grad([y], leaves, grad_outputs=[gy])
    return tuple(numpy.zeros_like(a) if g is None else g.array
                 for a, g in zip(leaf_arrays, grads))


def directions(arrays):
    return [numpy.linspace(-1.0, 1.5, a.size).reshape(a.shape)
            for a in arrays.leaves]


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(program=programs(names=SMOOTH, max_steps=5), through=st.sampled_from(
    ["grad", "backward"]))
def test_double_backprop_matches_numerical_second_derivatives(program,
                                                              through):
    # H v two ways: mc.grad of <first-order gradient, v> (the first-order
    # gradient taken with enable_double_backprop=True, by mc.grad or into
    # the leaves' .grad by backward), and central differences of the
    # first-order gradients along v (numerical_grad with grad_outputs=v).
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    case = Case(program, arrays)
    if through == "grad":
        y = case.output()[-1]
        grads = mc.grad([y], case.leaves, grad_outputs=[arrays.gy],
                        enable_double_backprop=True)
    else:
        case.backward(enable_double_backprop=True)
        grads = [x.grad_var for x in case.leaves]
    vs = directions(arrays)
    terms = [F.sum(g * v) for g, v in zip(grads, vs) if g is not None]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    hv = mc.grad([total], case.leaves)
    case.assert_user_arrays_unchanged()
    inputs = [a.copy() for a in arrays.leaves]
    expected = numerical_grad(lambda: first_order(program, inputs, arrays.gy),
                              inputs, tuple(vs), eps=1e-6)
    got = [numpy.zeros_like(a) if h is None else h.array
           for a, h in zip(arrays.leaves, hv)]
    assert_close(got, expected, "H v, leaf", rtol=1e-4, atol=1e-5)


# ----- against torch.autograd (skipped where torch is not installed) ------------
class TorchOps:
    """The operations of ``STEPS`` in torch (imported only by the tests
    that need it)."""

    def __init__(self, torch):
        self.torch = torch

    def relu(self, a):
        return self.torch.relu(a)

    def tanh(self, a):
        return self.torch.tanh(a)

    def exp(self, a):
        return self.torch.exp(a)

    def sin(self, a):
        return self.torch.sin(a)

    def identity(self, a):
        return a

    def reshape(self, a, shape):
        return a.reshape(shape)

    def transpose(self, a):
        return a.T

    def flip_columns(self, a):
        return self.torch.flip(a, [1])

    def first_row(self, a):
        return a[0:1]

    def broadcast_to(self, a, shape):
        return a.expand(shape)

    def sum_rows(self, a):
        return a.sum(dim=0, keepdim=True)

    def linear(self, a, W, b):
        return self.torch.nn.functional.linear(a, W, b)

    def forget_residual(self, a):
        return self.torch.relu(a) + a


def torch_gradients(torch, program, arrays, second_order=False):
    """torch.autograd's gradients of ``sum(y * gy)`` (or, with
    ``second_order``, H v along ``directions``); zeros where unused."""
    leaves = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
              for a in arrays.leaves]
    y = run(program, TorchOps(torch), leaves)[-1]
    loss = (y * torch.tensor(arrays.gy)).sum()
    grads = torch.autograd.grad(loss, leaves, allow_unused=True,
                                create_graph=second_order)
    if second_order:
        total = sum((g * torch.tensor(v)).sum() for g, v in
                    zip(grads, directions(arrays)) if g is not None)
        grads = (torch.autograd.grad(total, leaves, allow_unused=True)
                 if torch.is_tensor(total) and total.requires_grad else
                 [None] * len(leaves))
    return [numpy.zeros_like(a) if g is None else g.detach().numpy()
            for a, g in zip(arrays.leaves, grads)]


@pytest.mark.parametrize("mode", ["plain", "hook"])
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(program=programs())
def test_backward_and_grad_agree_with_torch(mode, program):
    torch = pytest.importorskip("torch")
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    want = torch_gradients(torch, program, arrays)
    case = Case(program, arrays)
    with MODES[mode]():
        case.backward()
    assert_close([x.grad for x in case.leaves], case.expected_leaf_grads(want),
                 "leaf", rtol=1e-10, atol=1e-12)
    case.assert_user_arrays_unchanged()
    assert_independent(leaf_grads(case) + case.held)
    fresh = Case(program, arrays)
    grads = mc.grad([fresh.output()[-1]], fresh.leaves,
                    grad_outputs=[arrays.gy])
    reached = leaves_reached(program)
    assert_close([None if g is None else g.array for g in grads],
                 [w if k in reached else None for k, w in enumerate(want)],
                 "mc.grad result", rtol=1e-10, atol=1e-12)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(program=programs(names=SMOOTH, max_steps=5))
def test_double_backprop_agrees_with_torch(program):
    torch = pytest.importorskip("torch")
    arrays = arrays_of(program)
    assume_well_conditioned(program, arrays)
    want = torch_gradients(torch, program, arrays, second_order=True)
    case = Case(program, arrays)
    y = case.output()[-1]
    grads = mc.grad([y], case.leaves, grad_outputs=[arrays.gy],
                    enable_double_backprop=True)
    terms = [F.sum(g * v) for g, v in zip(grads, directions(arrays))
             if g is not None]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    hv = mc.grad([total], case.leaves)
    assert_close([numpy.zeros_like(a) if h is None else h.array
                  for a, h in zip(arrays.leaves, hv)], want, "H v, leaf",
                 rtol=1e-10, atol=1e-12)
