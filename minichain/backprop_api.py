"""The three ways to start a backward pass, and the checks of their arguments.

``loss.backward()`` (``Variable.backward``), ``mc.backward(outputs)`` and
``mc.grad(outputs, inputs)`` differ only in where the first gradients come
from and where the results go. Each checks what it was given, turns it into
seeds, ``[(output node, gradient Variable)]``, and hands them to the engine
(``backprop._run``). The engine itself is in ``backprop.py``.
"""

import warnings

from minichain import backend
from minichain import backprop
from minichain.variable import (
    Variable, _check_grad_type, _make_output, check_loss_scale)


def backward_from_variable(y, retain_grad, enable_double_backprop, loss_scale):
    """``y.backward(...)``: see ``Variable.backward``."""
    node = y._node
    node._check_old_style_gradient()
    if y._data is None:
        raise RuntimeError("Variable.backward: the variable holds no array")
    given = gy = y._grad_var
    if gy is None:
        gy = _make_output(_seed(y._data, loss_scale, True), True)
    y._grad_var = None  # the output's gradient is consumed by backward
    if node.creator_node is None:  # backward on a leaf: it gets the seed
        y._grad_var = gy
        return
    try:
        backprop._run([(node, gy)], enable_double_backprop, retain_grad,
                      loss_scale)
    except Exception:
        if y._grad_var is None:
            y._grad_var = given  # a failed pass consumes nothing
        raise


def backward(outputs, grad_outputs=None, *, enable_double_backprop=False,
             **kwargs):
    """Backpropagate from several outputs at once.

    Gradients are taken from ``grad_outputs`` or else from each output's
    ``.grad`` (which is consumed); no default of ones is assumed.
    """
    if kwargs:
        raise TypeError("backward: unexpected keyword arguments {} "
                        "(retain_grad and loss_scale are Variable.backward's)"
                        .format(sorted(kwargs)))
    outputs = _as_list("backward", "outputs", outputs, allow_none=False)
    given = grad_outputs is not None
    grad_outputs = _optional_list("backward", "grad_outputs", grad_outputs,
                                  "outputs", outputs)
    seeds, seen = [], set()
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs)):
        _check_variable("backward", "outputs", i, y)
        y._node._check_old_style_gradient()
        gy = _as_grad_variable(gy) if given else y._grad_var
        if gy is None or y._node in seen:
            warnings.warn(
                "outputs contains a Variable without grad, or duplicate "
                "outputs. Note that minichain.backward does not set default "
                "grad.", RuntimeWarning, stacklevel=2)
            continue
        _check_grad_type(None, y._node, gy._data, where="backward: {}[{}]"
                         .format("grad_outputs" if given else "outputs", i)
                         + ("" if given else ".grad"))
        seen.add(y._node)
        seeds.append((y._node, gy))
    taken = [] if given else [(y, y._grad_var) for y in outputs]
    for y, _ in taken:
        y._grad_var = None  # consumed, once every check has passed
    try:
        backprop._run(seeds, enable_double_backprop, False, None)
    except Exception:
        for y, g in taken:  # a failed pass consumes nothing
            if g is not None and y._grad_var is None:
                y._grad_var = g
        raise


def grad(outputs, inputs, grad_outputs=None, grad_inputs=None, set_grad=False,
         retain_grad=False, enable_double_backprop=False, loss_scale=None):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned as a list.

    Only the part of the graph between the inputs and the outputs is walked.
    The ``.grad`` of the inputs is neither read nor written (unless
    ``set_grad``); an input the outputs do not depend on gets None.
    A None in ``grad_outputs`` means ones of that output's shape (times
    ``loss_scale``). ``grad_inputs`` start the inputs' gradients before the
    walk, so an input's ``grad_inputs`` also flows to the inputs behind it.
    """
    check_loss_scale("grad", loss_scale)
    outputs = _as_list("grad", "outputs", outputs, allow_none=False)
    inputs = _as_list("grad", "inputs", inputs, allow_none=False)
    grad_outputs = _optional_list("grad", "grad_outputs", grad_outputs,
                                  "outputs", outputs)
    grad_inputs = _optional_list("grad", "grad_inputs", grad_inputs,
                                 "inputs", inputs)
    for i, y in enumerate(outputs):
        _check_variable("grad", "outputs", i, y)
        y._node._check_old_style_gradient()
    for i, x in enumerate(inputs):
        _check_variable("grad", "inputs", i, x)
    seeds, starts = [], []
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs)):
        if all(y._node is not node for node, _ in seeds):  # once per output
            seeds.append((y._node, _checked_gradient(
                "grad_outputs", i, y, gy, loss_scale)))
    for i, (x, gx) in enumerate(zip(inputs, grad_inputs)):
        if gx is not None:
            starts.append((x._node, _checked_gradient("grad_inputs", i, x, gx)))
    nodes = [x._node for x in inputs]
    depends = _depends_on_inputs([node for node, _ in seeds], nodes)
    run = backprop._run(seeds, enable_double_backprop, retain_grad,
                        loss_scale, nodes, starts, depends)
    results = [run.finish(run.grads.get(node), node) for node in nodes]
    if set_grad:
        for x, g in zip(inputs, results):
            x.grad_var = g
    return results


def _checked_gradient(name, index, var, g, loss_scale=None):
    """``grad``'s gradient for ``var`` as a Variable (None: ones), checked."""
    g = _as_grad_variable(_seed(var._data, loss_scale, False) if g is None
                          else g)
    _check_grad_type(None, var._node, g._data,
                     where="grad: {}[{}]".format(name, index))
    return g


def _seed(array, loss_scale, scalar_only):
    """The starting gradient of a loss: ones (times ``loss_scale``).

    ``Variable.backward`` gives it only to a one-element output (anything
    else must have its ``.grad`` set); ``grad()`` to an output of any shape.
    """
    if scalar_only and array.size != 1:
        raise RuntimeError(
            "backward: the output has shape {} ({} elements) and no gradient "
            "was set. Only a loss with one element gets the gradient 1 by "
            "default: reduce the output to a scalar (e.g. F.sum(y)), or set "
            "y.grad to an array of shape {} before calling backward.".format(
                array.shape, array.size, array.shape))
    if scalar_only and array.ndim != 0:
        warnings.warn(
            "Treating a variable with only one element as a scalar in "
            "backward is deprecated. A scalar variable must be a "
            "0-dimensional array: reshape it with F.reshape(y, ()).",
            DeprecationWarning, stacklevel=4)
    seed = backend.get_array_module(array).ones_like(array)
    if loss_scale is not None:
        seed *= loss_scale
    return seed


def _as_list(where, name, value, allow_none=True):
    """``value`` as a list; ``where`` (``grad``, ``backward``) heads errors."""
    if not isinstance(value, (tuple, list)):
        raise TypeError("{}: {} must be a tuple or a list{}, not {}.".format(
            where, name, " or None" if allow_none else "", type(value)))
    return list(value)


def _optional_list(where, name, values, other_name, others):
    """An optional list with one entry per output or input (None: all None)."""
    if values is None:
        return [None] * len(others)
    values = _as_list(where, name, values)
    if len(values) != len(others):
        raise ValueError(
            "{}: {} must be of the same length as {}.\nlen({}) = {}, len({}) "
            "= {}".format(where, name, other_name, other_name, len(others),
                          name, len(values)))
    return values


def _check_variable(function, argument, index, value):
    if not isinstance(value, Variable):
        raise TypeError("{}: {}[{}] must be a Variable, got {}".format(
            function, argument, index, type(value)))


def _as_grad_variable(g):
    return g if g is None or isinstance(g, Variable) else Variable(g)


def _depends_on_inputs(output_nodes, input_nodes):
    """Nodes behind ``output_nodes`` from which some input can be reached.

    ``grad`` walks only this part of the graph. Computed with an explicit
    stack (post-order), so deep graphs need no recursion.
    """
    result, done = set(input_nodes), set()
    stack = [(node, False) for node in output_nodes]
    while stack:
        node, expanded = stack.pop()
        creator = node.creator_node
        if node in done:
            continue
        if expanded or creator is None or creator.inputs is None:
            done.add(node)
            if expanded and any(n in result for n in creator.inputs):
                result.add(node)
        else:
            stack.append((node, True))
            stack.extend([(p, False) for p in creator.inputs if p not in done])
    return result
