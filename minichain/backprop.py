"""The backward engine: walk the graph from the outputs to the inputs, once.

Why a heap on rank: a function may run its backward only after every
function that consumed its outputs has run, or its output gradient is still
incomplete. A function's rank is larger than the rank of every function
before it, so popping the *highest* rank first guarantees that order (any
reverse topological order would do; the rank heap is Chainer's way to get
one). Equal ranks leave the heap in the order they were pushed.

The loop is iterative, so a chain of 100 000 functions needs no recursion.
Each output's gradient leaves the table as soon as its function has used it,
so the gradients of the middle of the graph live only briefly.

Two rules keep every gradient right:

* **Add, never overwrite, and never add in place.** A node reached along two
  paths gets the sum of both, as a new array: a backward may hand its
  incoming gradient on unchanged (``x + c`` does), so one array can sit in
  two places of the table, and writing into it would change both. The one
  exception is a Parameter's own gradient buffer (``zerograd()``), which
  nothing else can hold.
* **A Variable keeps a gradient nobody else holds.** When a gradient is
  stored on a Variable (a leaf's ``.grad``, or ``retain_grad``), it is copied
  if this pass has already handed the same array out, or if it is a view of
  another array (``_own``). So two leaves of ``x + y`` never share memory.
"""

import heapq
import itertools
import threading
import warnings
import weakref

import numpy

from minichain import backend
from minichain import function_hook
from minichain.configuration import config, using_config
from minichain.function_node import FunctionNode
from minichain.utils.array import force_array
from minichain.variable import (
    Parameter, Variable, _check_grad_type, _make_output, check_loss_scale)


# ----- public entry points ---------------------------------------------------
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
        _run([(node, gy)], enable_double_backprop, retain_grad, loss_scale)
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
    outputs = _as_sequence("backward", "outputs", outputs, allow_none=False)
    if grad_outputs is not None:
        grad_outputs = _as_sequence("backward", "grad_outputs", grad_outputs)
        _check_same_length("backward", "grad_outputs", grad_outputs,
                           "outputs", outputs)
    seeds, seen = [], set()
    for i, y in enumerate(outputs):
        _check_variable("backward", "outputs", i, y)
        y._node._check_old_style_gradient()
        gy = y._grad_var if grad_outputs is None else _as_grad_variable(
            grad_outputs[i])
        if gy is None or y._node in seen:
            warnings.warn(
                "outputs contains a Variable without grad, or duplicate "
                "outputs. Note that minichain.backward does not set default "
                "grad.", RuntimeWarning, stacklevel=2)
            continue
        _check_grad_type(None, y._node, gy._data, where=(
            "backward: outputs[{}].grad" if grad_outputs is None
            else "backward: grad_outputs[{}]").format(i))
        seen.add(y._node)
        seeds.append((y._node, gy))
    taken = [] if grad_outputs is not None else [
        (y, y._grad_var) for y in outputs]
    for y, _ in taken:
        y._grad_var = None
    try:
        _run(seeds, enable_double_backprop, False, None)
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
    outputs = _as_sequence("grad", "outputs", outputs, allow_none=False)
    inputs = _as_sequence("grad", "inputs", inputs, allow_none=False)
    grad_outputs = _optional_list("grad_outputs", grad_outputs, "outputs",
                                  outputs)
    grad_inputs = _optional_list("grad_inputs", grad_inputs, "inputs", inputs)
    for i, y in enumerate(outputs):
        _check_variable("grad", "outputs", i, y)
        y._node._check_old_style_gradient()
    for i, x in enumerate(inputs):
        _check_variable("grad", "inputs", i, x)
    seeds, seen = [], set()
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs)):
        if y._node in seen:
            continue
        seen.add(y._node)
        gy = _as_grad_variable(_seed(y._data, loss_scale, False)
                               if gy is None else gy)
        _check_grad_type(None, y._node, gy._data,
                         where="grad: grad_outputs[{}]".format(i))
        seeds.append((y._node, gy))
    starts = []  # the inputs' gradients before the walk
    for i, (x, gx) in enumerate(zip(inputs, grad_inputs)):
        if gx is not None:
            gx = _as_grad_variable(gx)
            _check_grad_type(None, x._node, gx._data,
                             where="grad: grad_inputs[{}]".format(i))
            starts.append((x._node, gx))
    input_nodes = [x._node for x in inputs]
    run = _run(seeds, enable_double_backprop, retain_grad, loss_scale,
               input_nodes, starts)
    results = [run.finish(run.grads.get(node), node) for node in input_nodes]
    if set_grad:
        for x, g in zip(inputs, results):
            x.grad_var = g
    return results


def current_pass():
    """The backward pass running on this thread (innermost), or None.

    For pictures of backward (``visualize.animate_backward``): its ``heap``
    holds ``(-rank, push order, function)`` entries, its ``grads`` the
    gradients that have arrived and wait to be used. Read it, never change it.
    """
    passes = _passes()
    return passes[-1] if passes else None


# ----- one pass ----------------------------------------------------------------
class _Pass:
    """What one backward pass knows: its heap, its table, how it runs.

    ``arrays``: no graph is recorded and no global hook watches, so the
    gradients travel as bare arrays (see ``FunctionNode.backward_arrays``);
    otherwise as Variables. ``keep``: under ``grad()``, the input nodes, whose
    gradients stay in the table to be returned.
    """

    def __init__(self, retain_grad, loss_scale, input_nodes):
        self.heap, self.grads, self.pushed = [], {}, set()
        self.order = itertools.count()
        self.hooks = function_hook.get_function_hooks()  # a live dict
        self.recording = bool(config.enable_backprop)
        self.arrays = not (self.recording or self.hooks)
        self.debug = config.debug
        self.retain_grad, self.loss_scale = retain_grad, loss_scale
        self.keep = frozenset(input_nodes or ())
        self.depends = None  # under grad(): the nodes worth walking
        self.handed_out = {}  # id of an array -> node whose Variable has it
        self.given = {}  # output node -> the gradient the caller gave it
        self.old_style = {}  # id of an array -> old-style Function that made it

    def finish(self, g, node):
        """A table entry as a Variable of its own, to hand to the user."""
        return None if g is None else _own(self, g, node)


def _run(seeds, enable_double_backprop, retain_grad, loss_scale,
         input_nodes=None, starts=()):
    """Run one pass from ``seeds`` = [(output node, gradient Variable)].

    Under ``grad()``, ``input_nodes`` are the inputs asked for and ``starts``
    their gradients before the walk.

    The outermost pass of a thread keeps the undo log: every leaf gradient
    the pass (or a pass inside it, as ``F.forget``'s backward runs) changes
    is noted first, and put back if the pass fails, so a failed backward
    changes no ``.grad`` (except a Parameter's own buffer, see ``_note_in_place``).
    """
    passes = _passes()
    outermost = not passes
    if outermost:
        _local.undo, _local.in_place = {}, []  # see _remember, _note_in_place
    with using_config("enable_backprop", enable_double_backprop):
        run = _Pass(retain_grad, loss_scale, input_nodes)
        if input_nodes is not None:
            run.depends = _depends_on_inputs([n for n, _ in seeds], run.keep)
        for node, g in list(seeds) + list(starts):
            run.handed_out[id(g._data)] = node  # the caller holds these
        run.given = dict(seeds)
        passes.append(run)
        try:
            for node, g in starts:
                _add_gradient(run, node, g._data if run.arrays else g)
            _walk(run, [(n, g._data if run.arrays else g) for n, g in seeds])
        except Exception as error:
            if outermost:
                _note_in_place(error, _local.in_place)
                _undo(_local.undo)
            raise
        finally:
            passes.pop()
            if outermost:
                _local.undo = _local.in_place = None
    return run


# ----- the loop ----------------------------------------------------------------
def _walk(run, seeds):
    """Backpropagate from ``seeds``: pop the function of highest rank, hand
    its backward the gradients of its outputs, add what it returns to its
    inputs' gradients, and push the functions that made those inputs."""
    heap, pushed = run.heap, run.pushed
    for node, g in seeds:
        _add_gradient(run, node, g)
        _push(run, node)
    while heap:
        func = heapq.heappop(heap)[2]
        inputs = func.inputs
        if inputs is None:  # unchained since its forward
            continue
        grad_outputs = _take_output_grads(run, func)
        targets = _targets(run, inputs)
        if not targets:
            continue
        hooks, seen = _hooks_before(run, func, grad_outputs)
        grad_inputs = _call_backward(run, func, targets, grad_outputs, hooks)
        for i, gx in zip(targets, grad_inputs):
            if gx is None:
                continue
            x = inputs[i]
            if (type(gx) is not _ndarray or gx.shape != x.shape
                    or gx.dtype is not x.dtype):
                _check_gradient(run, func, i, gx)  # raises if it does not fit
            _add_gradient(run, x, gx)
            creator = x.creator_node
            if creator is not None and creator not in pushed:
                pushed.add(creator)
                heapq.heappush(heap, (-creator.rank, next(run.order), creator))
        # Drop these names now: left bound, they would keep this step's
        # gradients alive through the next step.
        grad_outputs = grad_inputs = gx = None
        for hook in hooks:
            hook.backward_postprocess(func, *seen)
        if run.debug:
            _check_nan_gradients(run, func, targets)


def _add_gradient(run, node, gx):
    """Add ``gx`` to the gradient ``node`` has received so far.

    Add, never overwrite: a node reached along two paths (a branch, or
    ``f(x, x)``) needs the sum of both. The sum is a new array, never ``+=``:
    the gradient so far may be shared (``x + c`` hands its gradient on
    unchanged), and writing into it would change another node's gradient
    too. A leaf (a node no function made) keeps its gradient on its
    Variable, added to what it already holds, which is how gradients
    accumulate across ``backward()`` calls.
    """
    if node.creator_node is None and run.depends is None:
        _add_to_leaf(run, node, gx)
        return
    current = run.grads.get(node)
    if current is None:
        run.grads[node] = gx
    else:
        run.grads[node] = force_array(current + gx)  # 0-d stays an array


def _push(run, node):
    """Push the function that made ``node``, once per pass, if it has a
    gradient to work with."""
    func = node.creator_node
    if func is not None and func not in run.pushed and node in run.grads:
        run.pushed.add(func)
        heapq.heappush(run.heap, (-func.rank, next(run.order), func))


def _targets(run, inputs):
    """The indexes of the inputs that need a gradient (under ``grad()``,
    only those that lead to the inputs asked for)."""
    if len(inputs) == 1 and run.depends is None:  # the common case, fast
        return (0,) if inputs[0].requires_grad else ()
    return tuple([i for i, x in enumerate(inputs) if x.requires_grad
                  and (run.depends is None or x in run.depends)])


def _take_output_grads(run, func):
    """The gradients of ``func``'s outputs, taken out of the table (each is
    used once); None for an output that got none or is gone."""
    grads = []
    for ref in func.outputs:
        node = ref()
        if node is None:
            grads.append(None)
            continue
        g = run.grads.get(node) if node in run.keep else run.grads.pop(
            node, None)
        if run.retain_grad and g is not None:
            var = node._variable()
            given = run.given.get(node)
            if given is not None and given._data is _as_array(g):
                var._grad_var = given  # what the caller gave, untouched
            elif var is not None:
                var._grad_var = _own(run, g, node)
            if var is not None:
                var._loss_scale = run.loss_scale
        grads.append(g)
    return tuple(grads)


def _hooks_before(run, func, grad_outputs):
    """Call the hooks watching ``func`` before its backward; return them
    and what they are shown (for their ``backward_postprocess``)."""
    if not run.hooks and not func._local_function_hooks:
        return (), None
    hooks = function_hook.hooks_for(func)
    seen = (tuple([x.data for x in func.inputs]),
            tuple([_as_array(g) for g in grad_outputs]))
    for hook in hooks:
        hook.backward_preprocess(func, *seen)
    return hooks, seen


def _call_backward(run, func, targets, grad_outputs, hooks):
    """Run ``func``'s backward: one gradient (or None) per target, in the
    form of the table (arrays or Variables)."""
    try:
        if (run.arrays and not hooks and func.backward_arrays is not None
                and not _accumulates_here(run, func, targets)):
            gxs = func.backward_arrays(targets, grad_outputs)
            if type(gxs) is not tuple or len(gxs) != len(targets):
                func._check_gradient_arrays(targets, gxs)  # raises
        else:
            gxs = _backward_on_variables(run, func, targets, grad_outputs)
    except Exception as error:
        if func.stack is not None:  # recorded by a debug-mode forward
            _attach_stack(error, func)
        raise
    return gxs


def _backward_on_variables(run, func, targets, grad_outputs):
    """``func.backward`` (or its ``backward_accumulate``) on Variables."""
    gys = tuple([_as_variable(g) for g in grad_outputs])
    if _overrides_accumulate(func):
        _accumulate(run, func, targets, gys)
        return (None,) * len(targets)  # already added
    gxs = func._backward_targets(targets, gys)
    result = []
    for i, gx in zip(targets, gxs):
        if gx is not None and not isinstance(gx, Variable):
            raise ValueError(
                "type of gradients returned from backward is incorrect: {} "
                "({}) returned {} for input {}; a Variable is expected".format(
                    type(func).__name__, func.label, type(gx), i))
        if gx is None or gx._data is None:  # no gradient for this input
            result.append(None)
        elif run.arrays:
            if gx._node._old_style_grad_generator is not None:  # keep the mark
                run.old_style[id(gx._data)] = gx._node._old_style_grad_generator
            result.append(gx._data)
        else:
            result.append(gx)
    return tuple(result)


def _overrides_accumulate(func):
    """Does ``func``'s class define its own ``backward_accumulate``?"""
    return type(func).backward_accumulate is not _DEFAULT_ACCUMULATE


def _accumulates_here(run, func, targets):
    """Does ``func``'s own ``backward_accumulate`` have to run?

    Only if it overrides it and some target already has a gradient to add
    into: with none yet, its contract says it agrees with ``backward_arrays``,
    the cheaper way.
    """
    return _overrides_accumulate(func) and any(
        _current_gradient(run, func.inputs[i]) is not None for i in targets)


def _accumulate(run, func, targets, gys):
    """Chainer's ``backward_accumulate``: the function is given the
    gradients its inputs have so far (only the first occurrence of a
    repeated input carries one) and returns their new totals."""
    nodes = [func.inputs[i] for i in targets]
    so_far = []
    for k, node in enumerate(nodes):
        first = node not in nodes[:k]
        so_far.append(_current_gradient(run, node) if first else None)
    totals = func.backward_accumulate(targets, gys, tuple(so_far))
    if len(totals) != len(targets):
        raise ValueError(
            "{}: backward_accumulate must return one gradient per target "
            "({}), got {}".format(func.label, len(targets), len(totals)))
    for k, (node, total) in enumerate(zip(nodes, totals)):
        if total is None:
            continue
        _check_gradient(run, func, targets[k], total)
        if node in nodes[:k]:  # a later occurrence: its part is added
            _add_gradient(run, node, total._data if run.arrays else total)
        elif node.creator_node is None and run.depends is None:
            if node._variable() is not None:
                _set_leaf(run, node._variable(), total)
        else:
            run.grads[node] = total._data if run.arrays else total
        _push(run, node)


def _current_gradient(run, node):
    """The gradient ``node`` has so far, as a Variable (or None)."""
    if node.creator_node is None and run.depends is None:
        var = node._variable()
        return None if var is None else var._grad_var
    return _as_variable(run.grads.get(node))


# ----- leaves ------------------------------------------------------------------
def _add_to_leaf(run, node, gx):
    """Add ``gx`` to a leaf Variable's ``.grad``, as it arrives.

    Written at once, not at the end of the pass, so a pass inside this one
    (``F.forget``'s backward adds to the Parameters it uses) and this pass
    always add to the same, current total.
    """
    node._check_old_style_gradient()
    var = node._variable()
    if var is None:
        return
    old = var._grad_var
    if old is None:
        _set_leaf(run, var, gx)
    elif _owns_buffer(var, old):
        old._data += _as_array(gx)  # its own buffer: nobody else holds it
        _set_leaf(run, var, old)
    elif run.arrays:
        _set_leaf(run, var, force_array(old._data + gx))
    else:
        _set_leaf(run, var, old + gx)


def _set_leaf(run, var, g):
    """Give leaf ``var`` the gradient ``g`` (noting the old one for undo)."""
    _remember(var)
    if g is not var._grad_var:
        if isinstance(var, Parameter):
            var._grad_owned = False
        g = _own(run, g, var._node)
    elif isinstance(var, Parameter) and var._grad_owned:
        _local.in_place.append(var)
    var._grad_var, var._loss_scale = g, run.loss_scale


def _owns_buffer(var, current):
    """May the engine add into ``current``'s array instead of allocating?

    Only for a Parameter's own gradient buffer (``Parameter.zerograd``
    allocates it, and nothing else can hold it) and only when no graph is
    recorded for double backprop.
    """
    return (not config.enable_backprop and isinstance(var, Parameter)
            and var._grad_owned and var._grad_var is current)


def _own(run, g, node):
    """``g`` as a Variable for ``node`` whose array nobody else holds.

    Copied if this pass already gave the same array to another Variable
    (two leaves of ``x + y`` receive one array), or if it is a view of
    another array. A copy can only cost time, never change a number, so
    this errs on the side of copying (an id may be reused once its array is
    freed). Under double backprop the gradients are Variables of a graph,
    handed out as they are (as in Chainer): a copy would cut them from it.
    """
    data = _as_array(g)
    holder = run.handed_out.get(id(data), node)
    mark = run.old_style.get(id(data))
    if not run.recording and (holder is not node
                              or getattr(data, "base", None) is not None):
        g = data = data.copy()
    run.handed_out[id(data)] = node
    var = _as_variable(g)
    if mark is not None:  # see Variable.backward into such a gradient
        var._node._old_style_grad_generator = mark
    return var


_local = threading.local()
_ndarray = numpy.ndarray  # the usual gradient type, tested by identity first
_DEFAULT_ACCUMULATE = FunctionNode.backward_accumulate


def _passes():
    """The passes running on this thread, innermost last."""
    try:
        return _local.passes
    except AttributeError:
        _local.passes = []
        return _local.passes


def _remember(var):
    """Note a leaf's gradient before a pass first changes it (see ``_run``).

    The Variable is held weakly: ``forget``'s inputs are temporaries whose
    gradients must be freed as soon as they are used, not at the end.
    """
    undo = _local.undo
    entry = undo.get(id(var))
    if entry is None or entry[0]() is not var:
        undo[id(var)] = (weakref.ref(var), var._grad_var, var._loss_scale,
                         getattr(var, "_grad_owned", None))


def _undo(undo):
    for ref, grad_var, loss_scale, owned in undo.values():
        var = ref()
        if var is not None:
            var._grad_var, var._loss_scale = grad_var, loss_scale
            if owned is not None:
                var._grad_owned = owned


def _note_in_place(error, written):
    """Say which Parameters a failed pass had already added into.

    A Parameter that owns its buffer (``zerograd()``) is added to in place,
    for memory's sake, so a failed pass cannot put its old value back; the
    error names those Parameters so the learner knows to clear them.
    """
    params = {id(p): p for p in written}.values()
    names = [p.name or "<unnamed {}>".format(p.node.label) for p in params]
    if names:
        error.args = (str(error.args[0] if error.args else "") + (
            "\n\nThe backward failed after adding into the gradient buffer "
            "of these Parameters in place: {}. Their .grad may hold part of "
            "this pass's sum: call cleargrads() (or zerograds()) before the "
            "next step.".format(", ".join(names))),) + error.args[1:]


# ----- checks --------------------------------------------------------------------
def _check_gradient(run, func, index, gx):
    """Raise, naming ``func``, unless ``gx`` fits input ``index``."""
    node = func.inputs[index]
    data = _as_array(gx)
    if (isinstance(data, backend.array_types) and data.shape == node.shape
            and data.dtype == node.dtype):
        return
    if run.arrays and not isinstance(data, backend.array_types):
        raise TypeError(
            "{} ({}): backward_arrays returned {} for a gradient; an array "
            "(or None) is expected".format(type(func).__name__, func.label,
                                           type(data)))
    try:
        _check_grad_type(func, node, data)
    except (TypeError, ValueError) as error:
        if not run.debug:
            raise
        raise ValueError(  # Chainer's words in debug mode, then ours
            "shape/dtype of gradients returned from backward is incorrect: "
            "input-index={}, actual {} {} != expected {} {}\n{}".format(
                index, data.shape, data.dtype, node.shape, node.dtype,
                error)) from None


def _check_nan_gradients(run, func, targets):
    for i in targets:
        node = func.inputs[i]
        g = _current_gradient(run, node)
        data = None if g is None else g._data
        if data is None or data.dtype.kind != "f":
            continue
        if bool(backend.get_array_module(data).isnan(data).any()):
            raise RuntimeError("NaN is detected on backward computation of {}"
                               .format(func.label))


def _attach_stack(error, func):
    import traceback
    text = "".join(traceback.format_list(func.stack))
    message = "{}\n{}\nStacktrace of the function is below:\n{}".format(
        error.args[0] if error.args else "", "-" * 60, text)
    error.args = (message,) + tuple(error.args[1:])


def _depends_on_inputs(output_nodes, input_nodes):
    """Nodes behind ``output_nodes`` from which some input can be reached.

    ``grad`` walks only this part of the graph. Computed with an explicit
    stack (post-order), so deep graphs need no recursion.
    """
    result = set(input_nodes)
    done = set()
    for start in output_nodes:
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            creator = node.creator_node
            if creator is None or creator.inputs is None:
                done.add(node)
            elif expanded:
                done.add(node)
                if any(n in result for n in creator.inputs):
                    result.add(node)
            else:
                stack.append((node, True))
                stack.extend([(p, False) for p in creator.inputs
                              if p not in done])
    return result


# ----- small helpers -----------------------------------------------------------
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


def _as_variable(g):
    """A table entry that may be a bare array, as a Variable (or None)."""
    if g is None or isinstance(g, Variable):
        return g
    return _make_output(g, True)  # the cheap constructor: no checks


def _as_array(g):
    """A table entry (Variable or bare array) as its array (or None)."""
    return g._data if isinstance(g, Variable) else g


def _as_sequence(where, name, value, allow_none=True):
    """``value`` as a list; ``where`` (``grad``, ``backward``) heads errors."""
    if not isinstance(value, (tuple, list)):
        raise TypeError("{}: {} must be a tuple or a list{}, not {}.".format(
            where, name, " or None" if allow_none else "", type(value)))
    return list(value)


def _optional_list(name, values, other_name, others):
    """``grad``'s optional per-output or per-input list (None: all None)."""
    if values is None:
        return [None] * len(others)
    values = _as_sequence("grad", name, values)
    _check_same_length("grad", name, values, other_name, others)
    return values


def _check_same_length(where, name, values, other_name, others):
    if len(values) != len(others):
        raise ValueError(
            "{}: {} must be of the same length as {}.\nlen({}) = {}, len({}) "
            "= {}".format(where, name, other_name, other_name, len(others),
                          name, len(values)))


def _check_variable(function, argument, index, value):
    if not isinstance(value, Variable):
        raise TypeError("{}: {}[{}] must be a Variable, got {}".format(
            function, argument, index, type(value)))


def _as_grad_variable(g):
    if g is None or isinstance(g, Variable):
        return g
    return Variable(g)
