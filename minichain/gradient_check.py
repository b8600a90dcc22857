"""Check a backward against finite differences.

A backward is a hand-written claim about derivatives; the forward alone
defines them. ``numerical_grad`` estimates derivatives from the forward only
(wiggle one input element, watch the outputs move), and ``check_backward``
compares that estimate with what backward returns.

Comparing every element of every gradient would take one pair of forward
calls per input element. ``check_backward`` instead picks one random
direction ``d`` through all inputs and compares a single number, the
directional derivative::

    numeric  = d/dδ  Σ gy · f(x + δ d)      (finite difference in δ)
    backward = Σ gx · d                     (gx from backward with gy)

Two forward calls, however large the inputs. A wrong gradient in any
element changes ``backward`` (the direction has no zero entries), so one
random direction catches it with probability 1.

``check_double_backward`` applies the same test to the function
``(x, gy) -> gx``: the backward itself, recorded as a graph.

Float32: the finite difference divides a difference of two nearby outputs
by ``2 eps``, so it loses most of float32's 7 digits. Pass ``dtype=numpy.float64``
to run the numerical pass in float64 while backward still runs in the
inputs' own dtype; then only backward's rounding limits the agreement.
"""

import numpy

from minichain import backend
from minichain.backprop_api import grad as _grad
from minichain.configuration import using_config
from minichain.utils.array import force_array
from minichain.variable import Variable


class NondifferentiableError(Exception):
    """The function is not differentiable where the gradient was asked for."""


# ----- numerical_grad ------------------------------------------------------------
def numerical_grad(f, inputs, grad_outputs, eps=1e-3,
                   detect_nondifferentiable=False, diff_atol=0, diff_rtol=1e-2,
                   center_outputs=None):
    """Finite-difference gradient of ``Σ_k grad_outputs[k] · f()[k]``.

    Args:
        f: a function of no arguments returning a tuple of arrays; it must
            read ``inputs``, which are perturbed **in place**, one element at
            a time (and restored afterwards).
        inputs: tuple of float arrays.
        grad_outputs: tuple of arrays or Python scalars, one per output of
            ``f``; an output whose entry is None (or which is None itself)
            is left out. ``f`` may return Python scalars too (a constant
            output, whose gradient is 0).
        eps: the step; must be positive.
        detect_nondifferentiable: use a 5-point stencil and raise
            ``NondifferentiableError`` when the samples do not look like a
            smooth function (a jump in finiteness, or a poor quadratic fit).
        diff_atol, diff_rtol: tolerance of that quadratic fit: the
            root-mean-square distance of the 5 samples from their
            least-squares parabola may be at most
            ``diff_atol + diff_rtol * (max - min)`` of the samples.
        center_outputs: ignored (kept for Chainer's signature).

    Returns:
        A tuple of arrays, one per input, of the input's shape and dtype.
        The differences themselves are taken in float64.

    Example: ``x = numpy.array([1., 2.])`` with ``f = lambda: (x * x,)`` and
    ``gy = numpy.ones(2)`` gives ``(array([2., 4.]),)``.
    """
    if not eps > 0:
        raise ValueError("numerical_grad: eps must be positive, got {}".format(
            eps))
    if not callable(f):
        raise TypeError("numerical_grad: f must be callable, got {}".format(
            type(f)))
    for name, value in (("inputs", inputs), ("grad_outputs", grad_outputs)):
        if not isinstance(value, (tuple, list)):
            raise TypeError("numerical_grad: {} must be a tuple or list of "
                            "arrays, got {}".format(name, type(value)))
    inputs = tuple(inputs)
    grad_outputs = tuple(grad_outputs)
    # Scalars live on no device, so they can go with CPU or GPU arrays.
    arrays = [a for a in inputs + grad_outputs
              if a is not None and not numpy.isscalar(a)]
    if len({backend.is_gpu_array(a) for a in arrays}) > 1:
        raise RuntimeError("Do not mix GPU and CPU arrays in `numerical_grad`")
    for x in inputs:
        if x.dtype.kind != "f":
            raise RuntimeError("The dtype of input arrays must be kind of float")
    xp = backend.get_array_module(*arrays)

    if detect_nondifferentiable:
        # Samples at -eps, -eps/2, +eps/2, +eps; the centre (offset 0) is the
        # unperturbed output, computed once below and used only in the fit.
        offsets = (-eps, -eps / 2, eps / 2, eps)
    else:
        offsets = (-eps, eps)

    grads = [xp.zeros(x.shape, dtype=numpy.float64) for x in inputs]
    with using_config("type_check", False):
        center = _evaluate(f) if detect_nondifferentiable else None
        for x_index, (x, gx) in enumerate(zip(inputs, grads)):
            for index in numpy.ndindex(x.shape):
                original = float(x[index])
                samples = []
                try:
                    for offset in offsets:
                        x[index] = original + offset
                        samples.append(_evaluate(f))
                finally:
                    x[index] = original
                if detect_nondifferentiable:
                    _check_differentiable(samples, center, eps, diff_atol,
                                          diff_rtol, x_index, index)
                gx[index] = _difference(samples, grad_outputs, eps)
    return tuple([g.astype(x.dtype, copy=False) for g, x in zip(grads, inputs)])


def _evaluate(f):
    """Call ``f`` and copy its outputs to float64 (f may return a view of an
    input, which the next perturbation would change under our feet).

    An output may be a Python scalar, such as the constant ``1`` of
    ``lambda: (1,)``; it becomes a 0-d float64 array.
    """
    ys = f()
    if not isinstance(ys, (tuple, list)):
        ys = (ys,)
    return [None if y is None
            else numpy.array(y, dtype=numpy.float64) if numpy.isscalar(y)
            else y.astype(numpy.float64) for y in ys]


def _as_float64(gy):
    """An output gradient in float64: a scalar stays a scalar."""
    if numpy.isscalar(gy):
        return float(gy)
    return gy.astype(numpy.float64)


def _difference(samples, grad_outputs, eps):
    """Central difference of ``Σ gy · y`` from 2 or 4 samples."""
    total = 0.0
    for k, gy in enumerate(grad_outputs):
        if gy is None or samples[0][k] is None:
            continue
        if len(samples) == 2:   # (y(+eps) - y(-eps)) / 2eps
            dy = (samples[1][k] - samples[0][k]) / (2 * eps)
        else:  # (y(-eps) - 8 y(-eps/2) + 8 y(+eps/2) - y(+eps)) / 6eps
            y_m2, y_m1, y_p1, y_p2 = [s[k] for s in samples]
            dy = (y_m2 - 8 * y_m1 + 8 * y_p1 - y_p2) / (6 * eps)
        total += float((dy * _as_float64(gy)).sum())
    return total


def _parabola_residual():
    """The 5x5 matrix taking 5 samples at t = -1, -1/2, 0, 1/2, 1 to their
    residual from the least-squares parabola a + b t + c t**2."""
    t = numpy.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    basis = numpy.stack([numpy.ones_like(t), t, t * t], axis=1)
    return numpy.eye(5) - basis @ numpy.linalg.pinv(basis)


_PARABOLA_RESIDUAL = _parabola_residual()


def _check_differentiable(samples, center, eps, atol, rtol, x_index, index):
    """Raise NondifferentiableError if the 5 samples do not look smooth.

    Smooth means: each output element is finite at all 5 points or at none,
    and a parabola through the 5 points fits them to within
    ``atol + rtol * (max - min)``. The misfit is the root-mean-square of
    the 5 residuals from the least-squares parabola, as in Chainer, not the
    largest one: rounding errors then count by their typical size. So
    ``-3x**3 + 2x**2 + 1`` at 0 in float32, whose samples differ by only a
    few rounding steps, is smooth (misfit 1.3e-8 within the tolerance
    2.0e-8, though one residual is 2.04e-8), while a kink such as ``abs``
    at 0 leaves a misfit of the order of the spread itself. An output that
    is the same at all 5 points is smooth.
    """
    for k, y0 in enumerate(center):
        if y0 is None:
            continue
        ys = [samples[0][k], samples[1][k], y0, samples[2][k], samples[3][k]]
        ys = numpy.stack([backend.to_cpu(y) for y in ys]).reshape(5, -1)
        finite = numpy.isfinite(ys)
        mixed = finite.any(axis=0) & ~finite.all(axis=0)
        if mixed.any():
            _raise_nondifferentiable(
                "finiteness of output {} changes between the sample points"
                .format(k), ys, eps, x_index, index)
        ys = ys[:, finite.all(axis=0)]
        # Subtract the centre first: a constant output then fits exactly.
        ys = ys - ys[2]
        residual = _PARABOLA_RESIDUAL @ ys
        misfit = numpy.sqrt((residual * residual).mean(axis=0))
        spread = ys.max(axis=0) - ys.min(axis=0)
        if ((misfit > atol + rtol * spread) & (spread > 0)).any():
            _raise_nondifferentiable(
                "output {} is not fitted by a quadratic within "
                "diff_atol={} diff_rtol={} (root-mean-square residual {})"
                .format(k, atol, rtol, misfit.max()),
                ys, eps, x_index, index)


def _raise_nondifferentiable(reason, ys, eps, x_index, index):
    raise NondifferentiableError(
        "Tried to compute the numeric gradient on a non-differentiable "
        "point.\n\n{}\ninput: {}, element: {}, eps: {}\nsampling points: "
        "[-eps, -eps/2, 0, eps/2, eps]\nsampled values (rows):\n{}".format(
            reason, x_index, index, eps, ys))


# ----- check_backward ------------------------------------------------------------
def check_backward(func, x_data, y_grad, params=(), eps=1e-3, atol=1e-5,
                   rtol=1e-4, no_grads=None, dtype=None,
                   detect_nondifferentiable=False):
    """Assert that ``func``'s backward agrees with finite differences.

    Args:
        func: takes Variables (one per entry of ``x_data``) and returns a
            Variable or a tuple of Variables.
        x_data: an array or a tuple of arrays, the inputs.
        y_grad: an array or tuple of arrays, the gradient of each output
            (None entries leave an output out). ``None`` as a whole is
            allowed only for a single output of shape ``()``: ones is used.
        params: Variables that ``func`` uses internally (e.g. a link's
            weights); their gradients are checked too. Their arrays are
            perturbed in place during the numerical pass and then restored.
        eps: finite-difference step.
        atol, rtol: the check passes if
            ``|numeric - backward| <= atol + rtol * |numeric|``.
        no_grads: one bool per input, True for an input that must receive
            no gradient at all (RuntimeError otherwise, as in Chainer); its
            gradient is then not compared either. Default: True for the
            inputs that are not floats.
        dtype: a float dtype for the numerical pass (e.g. ``numpy.float64``
            to check a float32 function without float32 round-off).
        detect_nondifferentiable: see ``numerical_grad``; the quadratic
            fit there is held to ``diff_atol=0, diff_rtol=rtol``.

    Raises:
        AssertionError: the two directional derivatives differ; the message
            shows inputs, grad_outputs, directions and both numbers.

    Example::

        x = numpy.random.uniform(-1, 1, (3,))
        check_backward(F.sin, x, numpy.ones(3))
    """
    if not callable(func):
        raise TypeError("check_backward: func must be callable, got {}".format(
            type(func)))
    x_data = _as_tuple(x_data)
    params = _as_tuple(params)
    if dtype is not None and numpy.dtype(dtype).kind != "f":
        raise ValueError("`dtype` is allowed only float type")
    for x in x_data:
        if not isinstance(x, backend.array_types):
            raise TypeError("check_backward: x_data must hold arrays, got {}"
                            .format(type(x)))
    if no_grads is None:
        no_grads = [x.dtype.kind != "f" for x in x_data]
    elif len(no_grads) != len(x_data):
        raise ValueError(
            "Length of no_grads param and xs should be same.\n"
            "Actual: {0} != {1}".format(len(no_grads), len(x_data)))
    for i, (x, skip) in enumerate(zip(x_data, no_grads)):
        if not skip and x.dtype.kind != "f":
            raise ValueError(
                "check_backward: input {} has dtype {}; only float inputs can "
                "be checked (set no_grads[{}] = True)".format(i, x.dtype, i))

    # 1. backward. Every input asks for a gradient, also those left out of
    #    the check: a backward that still returns one for them is wrong.
    xs = [Variable(x, requires_grad=True) for x in x_data]
    ys = _as_tuple(func(*xs))
    y_grad = _check_output_gradients(ys, y_grad)
    gxs = _backward(ys, y_grad, xs + list(params))
    for i, (x, skip, gx) in enumerate(zip(xs, no_grads, gxs)):
        if skip and gx is not None:
            raise RuntimeError(_unexpected_gradient_message(i, x.dtype))
    targets = [x for x, skip in zip(xs, no_grads) if not skip] + list(params)
    target_grads = [gx for gx, skip in zip(gxs, no_grads) if not skip]
    target_grads += gxs[len(xs):]
    for t, g in zip(targets, target_grads):
        if g is not None and g.shape != t.shape:
            raise ValueError(
                "check_backward: backward returned a gradient of shape {} for "
                "an input of shape {}".format(g.shape, t.shape))

    # 2. one random direction through every checked input and parameter.
    directions = _random_directions([t.array for t in targets])

    # 3. the numerical directional derivative, as a function of delta.
    xp = backend.get_array_module(*x_data)
    delta = xp.zeros((), dtype=numpy.float64)
    param_arrays = [p.array for p in params]

    def shifted():
        inputs, k = [], 0
        for x, skip in zip(x_data, no_grads):
            if x.dtype.kind != "f":
                inputs.append(x)
                continue
            out_dtype = x.dtype if dtype is None else dtype
            if skip:
                inputs.append(x.astype(out_dtype))
                continue
            inputs.append(force_array(
                x.astype(numpy.float64) + delta * directions[k], out_dtype))
            k += 1
        for p, original, d in zip(params, param_arrays, directions[k:]):
            out_dtype = original.dtype if dtype is None else dtype
            p.array = force_array(
                original.astype(numpy.float64) + delta * d, out_dtype)
        outs = _as_tuple(func(*[Variable(a) for a in inputs]))
        return tuple([None if y is None else y.array for y in outs])

    try:
        # The smoothness test uses this check's own rtol (and no atol), as
        # Chainer's does: a kink too small to matter at rtol passes.
        numeric, = numerical_grad(
            shifted, (delta,), y_grad, eps=eps,
            detect_nondifferentiable=detect_nondifferentiable,
            diff_atol=0, diff_rtol=rtol)
    finally:
        for p, original in zip(params, param_arrays):
            p.array = original
    numeric = float(numeric)

    # 4. the same number from backward.
    backward = 0.0
    for g, d in zip(target_grads, directions):
        if g is not None:
            backward += float((g.array.astype(numpy.float64) * d).sum())

    if not abs(numeric - backward) <= atol + rtol * abs(numeric):
        raise AssertionError(_failure_message(
            eps, atol, rtol, [t.array for t in targets], y_grad, directions,
            numeric, backward))


def _unexpected_gradient_message(index, dtype):
    """Why input ``index``, left out of the check, must get no gradient."""
    if dtype.kind != "f":
        return ("gradient of int variable must be None: input {} has dtype "
                "{}, and backward returned a gradient for it".format(
                    index, dtype))
    return ("check_backward: gradient of input {} must be None: it is marked "
            "True in no_grads, yet backward returned a gradient for it. Set "
            "no_grads[{}] = False to check that gradient, or let func use "
            "the input's .array so that no gradient flows to it".format(
                index, index))


def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _check_output_gradients(ys, y_grad):
    """Return one gradient array (or None) per output, checking shapes."""
    if y_grad is None:
        if len(ys) == 1 and ys[0] is not None and ys[0].shape == ():
            xp = backend.get_array_module(ys[0].array)
            return (xp.ones((), dtype=ys[0].dtype),)
        raise ValueError(
            "y_grad argument cannot be omitted if the target function is not "
            "a loss function, which has a single output with shape ().\n"
            "Actual output shapes: {}".format(", ".join(
                str(None if y is None else y.shape) for y in ys)))
    y_grad = _as_tuple(y_grad)
    if len(y_grad) != len(ys):
        raise ValueError(
            "Output gradients must contain equally as many elements as the "
            "number of output elements.\nActual: {} != {}".format(
                len(ys), len(y_grad)))
    for y, gy in zip(ys, y_grad):
        if y is None or gy is None:
            continue
        if gy.shape != y.shape or gy.dtype != y.dtype:
            raise ValueError(
                "Shapes and/or dtypes of outputs and output gradients do not "
                "match.\nOutput shapes and dtypes         : {}\nOutput "
                "gradient shapes and dtypes: {}".format(
                    _shapes_dtypes(ys), _shapes_dtypes(y_grad)))
    return y_grad


def _shapes_dtypes(arrays):
    return ", ".join("None" if a is None else "{}:{}".format(a.shape, a.dtype)
                     for a in arrays)


def _backward(ys, y_grad, inputs, enable_double_backprop=False):
    """Gradients of ``Σ gy · y`` w.r.t. ``inputs`` (None where unreachable).

    An output may appear twice (``lambda x: (x, x)``) or be an input itself;
    the seeds of repeated outputs are summed first, because ``grad`` keeps
    only one seed per output.
    """
    seeds = {}
    for y, gy in zip(ys, y_grad):
        if y is None or gy is None:
            continue
        gy = Variable(gy.copy(), requires_grad=enable_double_backprop) \
            if not isinstance(gy, Variable) else gy
        key = id(y.node)
        if key in seeds:
            seeds[key] = (y, seeds[key][1] + gy)
        else:
            seeds[key] = (y, gy)
    if not seeds:
        return [None] * len(inputs)
    outputs = [y for y, _ in seeds.values()]
    grad_outputs = [gy for _, gy in seeds.values()]
    return _grad(outputs, inputs, grad_outputs,
                 enable_double_backprop=enable_double_backprop)


def _random_directions(arrays):
    """Unit-length direction over all ``arrays``, no element near zero.

    Each element is drawn from N(0, 1) and its magnitude kept at least 0.1
    before normalising, so every gradient element weighs in.
    """
    draws = []
    for a in arrays:
        d = numpy.random.normal(size=a.shape)
        d = numpy.where(d < 0, numpy.minimum(d, -0.1), numpy.maximum(d, 0.1))
        draws.append(d)
    norm = numpy.sqrt(sum(float((d * d).sum()) for d in draws))
    if norm == 0:
        return [_like(d, a) for d, a in zip(draws, arrays)]
    return [_like(d / norm, a) for d, a in zip(draws, arrays)]


def _like(d, a):
    """Put the float64 direction ``d`` on the device of ``a``."""
    return backend.to_gpu(d) if backend.is_gpu_array(a) else d


def _failure_message(eps, atol, rtol, inputs, grad_outputs, directions,
                     numeric, backward):
    lines = ["check_backward failed (eps={} atol={} rtol={})".format(
        eps, atol, rtol)]
    for name, arrays in (("inputs", inputs), ("grad_outputs", grad_outputs),
                         ("directions", directions)):
        for i, a in enumerate(arrays):
            lines.append("{}[{}]:".format(name, i))
            lines.append(str(None if a is None else backend.to_cpu(a)))
    lines.append("gradients (numeric):  {!r}".format(numeric))
    lines.append("gradients (backward): {!r}".format(backward))
    lines.append("")
    lines.append("Not equal to tolerance: |numeric - backward| = {!r} > "
                 "atol + rtol * |numeric| = {!r}".format(
                     abs(numeric - backward), atol + rtol * abs(numeric)))
    return "\n".join(lines)


# ----- check_double_backward -------------------------------------------------------
def check_double_backward(func, x_data, y_grad, x_grad_grad, params=(),
                          params_grad_grad=(), eps=1e-3, atol=1e-4, rtol=1e-3,
                          no_grads=None, dtype=None,
                          detect_nondifferentiable=False):
    """Assert that the backward of ``func`` is itself differentiable, correctly.

    It runs ``check_backward`` on the first-order function
    ``(x..., gy...) -> (gx..., gparams...)``, built by running ``func`` and
    then backward with ``enable_double_backprop=True``. Only the second
    order is checked: test the first order with ``check_backward``.

    Args:
        func, x_data, y_grad, params: as in ``check_backward``. ``y_grad``
            may be None for a single ``()`` output (then it is ones, not
            checked).
        x_grad_grad: the gradient of each checked input's gradient (one
            array per float input that is not in ``no_grads``).
        params_grad_grad: the same for each parameter's gradient.
        no_grads: one bool per input, True to leave it out: a float input
            so marked is held constant (func receives it with no graph
            behind it), so neither order is computed or checked for it.
        eps, atol, rtol, dtype, detect_nondifferentiable: as in
            ``check_backward``.

    A backward computed on raw arrays (``Variable(gy.array * 2)``) records
    no graph, so its second order reads as 0 and this check fails.
    """
    x_data = _as_tuple(x_data)
    params = _as_tuple(params)
    n_x = len(x_data)
    if no_grads is None:
        no_grads = [x.dtype.kind != "f" for x in x_data]
    checked = [i for i, skip in enumerate(no_grads) if not skip]

    # Which outputs get a gradient, and are those gradients inputs to check?
    if y_grad is None:
        gy_data = ()
    else:
        y_grad = _as_tuple(y_grad)
        gy_data = tuple([gy for gy in y_grad if gy is not None])

    def first_order(*inputs):
        xs, gys = inputs[:n_x], list(inputs[n_x:])
        # A float input left out is held constant: with no graph behind it,
        # the second-order pass sends it nothing (check_backward would
        # otherwise report the gradient it legitimately has).
        xs = [Variable(x.array, requires_grad=False)
              if skip and x.dtype.kind == "f" else x
              for x, skip in zip(xs, no_grads)]
        ys = _as_tuple(func(*xs))
        if y_grad is None:
            grad_outputs = _check_output_gradients(ys, None)
        else:
            grad_outputs = [None if gy is None else gys.pop(0) for gy in y_grad]
            _check_output_gradients(
                ys, [None if g is None else g.array for g in grad_outputs])
        targets = [xs[i] for i in checked] + list(params)
        return tuple(_backward(ys, grad_outputs, targets,
                               enable_double_backprop=True))

    grad_grad = _as_tuple(x_grad_grad) + _as_tuple(params_grad_grad)
    try:
        check_backward(first_order, x_data + gy_data, grad_grad, params=params,
                       eps=eps, atol=atol, rtol=rtol,
                       no_grads=list(no_grads) + [False] * len(gy_data),
                       dtype=dtype,
                       detect_nondifferentiable=detect_nondifferentiable)
    except AssertionError as error:
        raise AssertionError(
            "check_double_backward failed (eps={} atol={} rtol={})\n"
            "(caused by)\n{}".format(eps, atol, rtol, error)) from None
