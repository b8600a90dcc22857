"""The backward engine: walk the graph from outputs to inputs, once.

Why a heap on rank: a function may run its backward only after every
function that consumed its outputs has run, or its output gradient is still
incomplete. A function's rank is larger than the rank of every function
before it, so popping the *highest* rank first guarantees that order. A
depth-first walk does not (chapter 5 shows the wrong number it gives).
Equal ranks leave the heap in the order they were pushed.

The loop is iterative, so a chain of 100 000 functions needs no recursion.
Each output's gradient is removed from the table as soon as its function has
used it, so gradients of the middle of the graph live only briefly.
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
from minichain.utils.array import force_array
from minichain.variable import (
    Parameter, Variable, _check_grad_type, _make_output, check_loss_scale)

_ndarray = numpy.ndarray


# ----- public entry points ---------------------------------------------------
def backward_from_variable(y, retain_grad, enable_double_backprop, loss_scale):
    """``y.backward(...)``: see ``Variable.backward``."""
    node = y._node
    node._check_old_style_gradient()
    if y._data is None:
        raise RuntimeError("Variable.backward: the variable holds no array")
    given = gy = y._grad_var
    if gy is None:
        gy = _make_output(_seed(y._data, loss_scale), True)
    y._grad_var = None  # the output's gradient is consumed by backward
    if node.creator_node is None:  # backward on a leaf: it gets the seed
        y._grad_var = gy
        return
    try:
        with using_config("enable_backprop", enable_double_backprop):
            _backprop([(node, gy)], retain_grad=retain_grad,
                      loss_scale=loss_scale)
    except Exception:
        _give_back([(y, given)])  # a failed pass consumes nothing
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
        if grad_outputs is None:
            gy = y._grad_var  # consumed below, once every check has passed
        else:
            gy = _as_grad_variable(grad_outputs[i])
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
        with using_config("enable_backprop", enable_double_backprop):
            _backprop(seeds, retain_grad=False, loss_scale=None)
    except Exception:
        _give_back(taken)
        raise


def _give_back(taken):
    """Undo the consumption of output gradients after a failed pass."""
    for y, g in taken:
        if g is not None and y._grad_var is None:
            y._grad_var = g


def grad(outputs, inputs, grad_outputs=None, grad_inputs=None, set_grad=False,
         retain_grad=False, enable_double_backprop=False, loss_scale=None):
    """Gradients of ``outputs`` w.r.t. ``inputs``, returned as a list.

    Only the part of the graph between the inputs and the outputs is walked.
    The ``.grad`` of the inputs is neither read nor written (unless
    ``set_grad``); an input the outputs do not depend on gets None.
    ``grad_outputs`` entries that are None mean ones (times ``loss_scale``);
    ``grad_inputs`` are added to the result.
    """
    check_loss_scale("grad", loss_scale)
    outputs = _as_sequence("grad", "outputs", outputs, allow_none=False)
    inputs = _as_sequence("grad", "inputs", inputs, allow_none=False)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = _as_sequence("grad", "grad_outputs", grad_outputs)
        _check_same_length("grad", "grad_outputs", grad_outputs, "outputs",
                           outputs)
    if grad_inputs is None:
        grad_inputs = [None] * len(inputs)
    else:
        grad_inputs = _as_sequence("grad", "grad_inputs", grad_inputs)
        _check_same_length("grad", "grad_inputs", grad_inputs, "inputs",
                           inputs)
    for i, y in enumerate(outputs):
        _check_variable("grad", "outputs", i, y)
        y._node._check_old_style_gradient()
    for i, x in enumerate(inputs):
        _check_variable("grad", "inputs", i, x)
    # Checked now, before the walk: added at the end, a gradient of the
    # wrong shape would broadcast silently into every result.
    grad_inputs = [_as_grad_variable(g) for g in grad_inputs]
    for i, (x, g_in) in enumerate(zip(inputs, grad_inputs)):
        if g_in is not None:
            _check_grad_type(None, x._node, g_in._data,
                             where="grad: grad_inputs[{}]".format(i))

    seeds, seen = [], set()
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs)):
        if y._node in seen:
            continue
        seen.add(y._node)
        gy = (Variable(_seed(y._data, loss_scale)) if gy is None
              else _as_grad_variable(gy))
        _check_grad_type(None, y._node, gy._data,
                         where="grad: grad_outputs[{}]".format(i))
        seeds.append((y._node, gy))
    input_nodes = [x._node for x in inputs]
    with using_config("enable_backprop", enable_double_backprop):
        table = _backprop(seeds, retain_grad=retain_grad, loss_scale=loss_scale,
                          input_nodes=input_nodes)
        results = []
        for node, g_in in zip(input_nodes, grad_inputs):
            g = _read_sum(table.get(node))
            if g_in is not None:
                g_in = _as_grad_variable(g_in)
                g = g_in if g is None else g + g_in
            results.append(g)
    if set_grad:
        for x, g in zip(inputs, results):
            x.grad_var = g
    return results


# ----- the loop ----------------------------------------------------------------
def _backprop(seeds, retain_grad, loss_scale, input_nodes=None):
    """Run backward from ``seeds`` = [(output node, gradient Variable)].

    With ``input_nodes`` None (``Variable.backward``), every node that needs
    a gradient gets one and leaves keep theirs; otherwise (``grad``) only the
    part of the graph leading to ``input_nodes`` is walked and the gradient
    table is returned.
    """
    grads = {}  # node -> gradient Variable (or a list, under lazy_grad_sum)
    if input_nodes is not None:
        return _walk(seeds, retain_grad, loss_scale, input_nodes, grads)
    passes = _open_passes()
    outermost = not passes
    if outermost:
        _thread_passes.undo = {}  # see _remember
        _thread_passes.inner_leaves = []  # leaves of the passes inside
    passes.append((grads, loss_scale))
    leaves = []
    try:
        return _walk(seeds, retain_grad, loss_scale, input_nodes, grads, leaves)
    except Exception as error:
        if outermost:  # it speaks for the passes inside it too
            _note_partial_sums(error, leaves + _thread_passes.inner_leaves,
                               grads)
            _restore(_thread_passes.undo)
        raise
    finally:
        passes.pop()
        if outermost:
            _thread_passes.undo = _thread_passes.inner_leaves = None
        else:
            _thread_passes.inner_leaves += leaves


def _walk(seeds, retain_grad, loss_scale, input_nodes, grads, leaves=None):
    """The loop of ``_backprop``, filling the gradient table ``grads``."""
    heap = []
    pushed = set()
    order = itertools.count()
    if leaves is None:
        leaves = []  # leaf nodes that received a gradient, in order
    debug = config.debug
    # The thread's table of global hooks, looked up once per pass. It is a
    # live dict, so a hook registered during the pass is still seen.
    global_hooks = function_hook.get_function_hooks()
    # Without a graph to record, functions that define ``backward_arrays``
    # may compute on arrays (see FunctionNode.backward_arrays); read once.
    recording = config.enable_backprop
    grad_mode = input_nodes is not None
    if grad_mode:
        keep = set(input_nodes)
        depends = _depends_on_inputs([n for n, _ in seeds], keep)
    # Gradient arrays in the table that nobody else holds, which a
    # ``backward_arrays_in_place`` may overwrite: id -> weak reference (an
    # entry whose array is gone can never match a new array with its id).
    new_arrays = {}
    for node, g in seeds:
        grads[node] = g
        creator = node.creator_node
        if creator is not None and creator not in pushed:
            pushed.add(creator)
            heapq.heappush(heap, (-creator.rank, next(order), creator))

    # A plain ``loss.backward()``: nothing below needs Variables, except
    # for functions that only have a Variable-based backward.
    plain = not (grad_mode or retain_grad or recording or debug)

    while heap:
        func = heapq.heappop(heap)[2]
        in_nodes = func.inputs
        if in_nodes is None:  # unchained since the forward
            continue
        outputs = func.outputs
        if (plain and func._has_backward_arrays and len(outputs) == 1
                and not global_hooks and not func._local_function_hooks):
            _plain_step(func, in_nodes, outputs[0](), grads, leaves,
                        new_arrays, heap, pushed, order)
            continue
        hooked = global_hooks or func._local_function_hooks
        # Arrays in, arrays out (see FunctionNode.backward_arrays): the
        # gradients stay bare arrays in the table, and become Variables only
        # if something later needs one (a Variable-based backward, a leaf's
        # .grad, retain_grad).
        arrays = func._has_backward_arrays and not (recording or hooked)
        # In place only on arrays nobody else holds (see new_arrays).
        in_place = (arrays and func._has_backward_arrays_in_place
                    and not grad_mode and not retain_grad)
        out_grads = []
        for ref in outputs:
            out = ref()
            if out is None:
                out_grads.append(None)
                in_place = False
                continue
            g = grads.get(out) if grad_mode and out in keep else grads.pop(
                out, None)
            if type(g) is list:  # only under lazy_grad_sum
                g = _read_sum(g)
            if retain_grad and g is not None:
                var = out._variable()
                if var is not None:
                    g = var._grad_var = _as_variable(g)
                    var._loss_scale = loss_scale
            if in_place:
                in_place = g is not None and _take_new(new_arrays, g)
            if arrays and isinstance(g, Variable):
                g = g._data
            out_grads.append(g)

        if grad_mode:
            targets = tuple([i for i, n in enumerate(in_nodes)
                             if n.requires_grad and n in depends])
        elif len(in_nodes) == 1:  # the common unary case, without a loop
            targets = (0,) if in_nodes[0].requires_grad else ()
        else:
            targets = tuple([i for i, n in enumerate(in_nodes)
                             if n.requires_grad])
        if not targets:
            continue

        if hooked:
            hooks = function_hook.hooks_for(func)
            in_data = tuple([n.data for n in in_nodes])
            gy_data = tuple([_as_array(g) for g in out_grads])
            for hook in hooks:
                hook.backward_preprocess(func, in_data, gy_data)
        else:
            hooks = ()

        # A backward_accumulate override pays only when there is a gradient
        # to add into. With none yet it must agree with backward_arrays (its
        # contract), so the engine takes that cheaper path then.
        accumulate = func._has_backward_accumulate and not (
            arrays and not _has_gradient_to_add_to(in_nodes, targets, grads,
                                                   grad_mode))
        try:
            if arrays and not accumulate:
                gxs = func._checked_backward_arrays(
                    targets, tuple(out_grads), in_place)
                new = (new_arrays if in_place or func.gradients_are_new
                       else None)
                for i, gx in zip(targets, gxs):
                    if gx is not None:
                        _add_gradient(func, in_nodes[i], gx, gx, grads,
                                      leaves, grad_mode, new)
            else:
                for k in range(len(out_grads)):
                    out_grads[k] = _as_variable(out_grads[k])
                out_grads = tuple(out_grads)
                if accumulate:
                    _step_accumulate(func, targets, out_grads, grads, leaves,
                                     grad_mode)
                    gxs = ()
                else:
                    gxs = func._backward_targets(targets, out_grads,
                                                 arrays_ok=False)
                for i, gx in zip(targets, gxs):
                    if gx is not None:
                        _check_is_variable(func, i, gx)
                        _add_gradient(func, in_nodes[i], gx, gx._data, grads,
                                      leaves, grad_mode)
            # Drop these names now: left bound, they would keep this step's
            # gradients alive through the next step (one extra
            # activation-sized array at the peak of a deep backward).
            gxs = gx = out_grads = None
        except Exception as error:
            if func.stack is not None:  # recorded by a debug-mode forward
                _attach_stack(error, func)
            raise

        for hook in hooks:
            hook.backward_postprocess(func, in_data, gy_data)
        if debug:
            _check_nan_gradients(func, targets, grads)
        _push_creators(in_nodes, targets, grads, heap, pushed, order)

    if not grad_mode:
        _store_leaf_gradients(leaves, grads, loss_scale)
    return grads


def _plain_step(func, in_nodes, out, grads, leaves, new_arrays, heap, pushed,
                order):
    """One step of a plain backward, for a one-output ``backward_arrays``.

    The same as the general step of ``_walk`` restricted to its most common
    case, and written out so that case runs few lines: a plain
    ``loss.backward()`` (no graph recorded, no hooks, no retain_grad, no
    ``grad()``) meets mostly such functions. Everything else, and every
    unusual value met here, goes through the general code.
    """
    g = None if out is None else grads.pop(out, None)
    if type(g) is list or isinstance(g, Variable):
        g = _as_array(_read_sum(g))  # a lazy sum's list, or a seed Variable
    if len(in_nodes) == 1:
        targets = (0,) if in_nodes[0].requires_grad else ()
    else:
        targets = tuple([i for i, n in enumerate(in_nodes) if n.requires_grad])
    if not targets:
        return
    try:
        if func._has_backward_accumulate and _has_gradient_to_add_to(
                in_nodes, targets, grads, False):
            # Its own way of adding into existing gradients (Linear's).
            _step_accumulate(func, targets, (_as_variable(g),), grads,
                             leaves, False)
            _push_creators(in_nodes, targets, grads, heap, pushed, order)
            return
        in_place = (func._has_backward_arrays_in_place and g is not None
                    and _take_new(new_arrays, g))
        gxs = (func.backward_arrays_in_place if in_place
               else func.backward_arrays)(targets, (g,))
        if type(gxs) is not tuple or len(gxs) != len(targets):
            func._check_gradient_arrays(targets, gxs)  # raises, naming func
        new = new_arrays if in_place or func.gradients_are_new else None
        for i, gx in zip(targets, gxs):
            if gx is None:
                continue
            node = in_nodes[i]
            # The usual case first: the first gradient to reach a node
            # inside the graph, an array of the right type, simply enters
            # the table. _add_gradient handles all the others.
            if (type(gx) is _ndarray and node.creator_node is not None
                    and node not in grads and gx.shape == node.shape
                    and gx.dtype is node.dtype):
                grads[node] = gx
                if new is not None:
                    _note_new(new, gx)
            else:
                if not isinstance(gx, backend.array_types):
                    func._check_gradient_arrays(targets, gxs)  # raises
                _add_gradient(func, node, gx, gx, grads, leaves, False, new)
    except Exception as error:
        if func.stack is not None:  # recorded by a debug-mode forward
            _attach_stack(error, func)
        raise
    gxs = gx = g = None  # see _walk: free this step's gradients now
    _push_creators(in_nodes, targets, grads, heap, pushed, order)


def _push_creators(in_nodes, targets, grads, heap, pushed, order):
    """Push the creators of the inputs that got a gradient, each once."""
    for i in targets:
        node = in_nodes[i]
        creator = node.creator_node
        if creator is not None and creator not in pushed and node in grads:
            pushed.add(creator)
            heapq.heappush(heap, (-creator.rank, next(order), creator))


def _check_is_variable(func, index, gx):
    """A Variable-based backward must return Variables (or None)."""
    if not isinstance(gx, Variable):
        raise ValueError(
            "type of gradients returned from backward is incorrect: "
            "{} ({}) returned {} for input {}; a Variable is expected".format(
                type(func).__name__, func.label, type(gx), index))


def _add_gradient(func, node, gx, data, grads, leaves, grad_mode,
                  new_arrays=None):
    """Add one returned gradient ``gx`` into the table entry of ``node``.

    ``gx`` is a Variable, or a bare array from ``backward_arrays``; ``data``
    is its array. ``new_arrays``: given when ``gx`` is an array nobody else
    holds; it is noted there if it becomes the entry as it is.
    """
    if data is None:
        return
    # ``is not`` first: NumPy returns the same dtype object for the same
    # built-in type, and the identity test is much cheaper than ``!=``.
    dtype = data.dtype
    if data.shape != node.shape or (dtype is not node.dtype and
                                    dtype != node.dtype):
        _check_grad_type(func, node, data)
    current = grads.get(node)
    if current is None and node.creator_node is None and node not in grads:
        current = _load_leaf(node, leaves, grad_mode)
    if current is None:
        grads[node] = gx
        if new_arrays is not None and node.creator_node is not None:
            _note_new(new_arrays, gx)
    elif type(current) is list:
        current.append(gx)
    elif func.lazy_grad_sum and node.creator_node is not None:
        grads[node] = [current, gx]
    elif _writable_in_place(node, current):
        current._data += data
    elif gx is data and not isinstance(current, Variable):
        # Two bare arrays: a new array, never ``+=``, because ``current``
        # may be shared (``x + c`` passes its gradient on unchanged).
        grads[node] = force_array(current + data)  # 0-d: still an array
    else:
        grads[node] = _as_variable(current) + _as_variable(gx)


def _has_gradient_to_add_to(in_nodes, targets, grads, grad_mode):
    """Has some target input already got a gradient (in the table, or a
    leaf's ``.grad`` that this pass will add to)?"""
    for i in targets:
        node = in_nodes[i]
        if grads.get(node) is not None:
            return True
        if not grad_mode and node.creator_node is None:
            var = node._variable()
            if var is not None and var._grad_var is not None:
                return True
    return False


def _note_new(new_arrays, array):
    try:
        new_arrays[id(array)] = weakref.ref(array)
    except TypeError:  # an array type without weak references: not noted
        pass


def _take_new(new_arrays, g):
    """Is ``g`` an array noted as held by nobody else? (Asked once.)"""
    ref = new_arrays.pop(id(g), None)
    return ref is not None and ref() is g


def _step_accumulate(func, targets, out_grads, grads, leaves, grad_mode):
    """One step through a node that overrides ``backward_accumulate``.

    It receives the gradients accumulated so far (only the first occurrence
    of a repeated input carries one) and returns the new totals.
    """
    in_nodes = func.inputs
    in_grads, first = [], set()
    for i in targets:
        node = in_nodes[i]
        if node in first:
            in_grads.append(None)
            continue
        first.add(node)
        current = grads.get(node)
        if current is None and node not in grads:
            current = _load_leaf(node, leaves, grad_mode)
            if current is not None:
                grads[node] = current
        in_grads.append(_read_sum(current))
    new = func.backward_accumulate(targets, out_grads, tuple(in_grads))
    if len(new) != len(targets):
        raise ValueError(
            "{}: backward_accumulate must return one gradient per target "
            "({}), got {}".format(func.label, len(targets), len(new)))
    seen = set()
    for i, g in zip(targets, new):
        node = in_nodes[i]
        if g is None:
            seen.add(node)
            continue
        _check_grad_type(func, node, g._data)
        if node in seen and grads.get(node) is not None:
            grads[node] = _as_variable(grads[node]) + g
        else:
            grads[node] = g
        seen.add(node)
        if node.creator_node is None and node not in leaves and not grad_mode:
            leaves.append(node)


def _load_leaf(node, leaves, grad_mode):
    """First gradient reaching a leaf: start from the gradient it holds.

    That is how gradients accumulate across ``backward`` calls. The
    Variable keeps its old gradient until the pass ends, so a pass that
    fails half-way leaves it unchanged.
    """
    if grad_mode or node.creator_node is not None:
        return None
    # A gradient made by an old-style Function is a leaf with no graph:
    # backpropagating into it would silently give nothing, so say why.
    node._check_old_style_gradient()
    leaves.append(node)
    var = node._variable()
    if var is None:
        return None
    _take_from_enclosing_passes(node, var)
    return var._grad_var


# Backward passes in progress on this thread, innermost last, as
# (gradient table, loss_scale). A pass runs inside another when F.forget's
# backward backpropagates through its recomputed graph.
_thread_passes = threading.local()


def _open_passes():
    try:
        return _thread_passes.stack
    except AttributeError:
        stack = _thread_passes.stack = []
        return stack


def _take_from_enclosing_passes(node, var):
    """Move an enclosing pass's running sum for leaf ``node`` into ``var``.

    Why: a pass keeps a leaf's new total in its table and writes it to the
    Variable only when it ends. If a pass inside it (``F.forget``'s) adds
    to the same leaf (a Parameter used both inside and outside ``forget``)
    it starts from the Variable, and the outer pass, ending last, would
    overwrite that contribution. Handing the sum over first gives one total:
    the inner pass adds to it, and the outer pass, if it reaches the leaf
    again, reloads it from the Variable.
    """
    passes = _open_passes()
    if len(passes) < 2:  # the usual case: no pass encloses this one
        return
    for table, loss_scale in passes:
        g = table.pop(node, None)
        if g is not None:
            _store_leaf(var, _read_sum(g), loss_scale, nested=True)


def _remember(var):
    """Note a leaf's gradient before a pass inside another changes it.

    A pass writes its leaves only when it ends, so a failed pass changes no
    leaf. Passes inside it (``F.forget``'s backward) end earlier, though:
    they write theirs while the outer pass may still fail. The outermost
    pass keeps the first value each leaf had and puts it back on failure
    (``_restore``), so the whole backward changes no leaf gradient or none.
    """
    # The Variable is held weakly: forget's inputs are temporaries whose
    # gradients must be freed as soon as they are used, not at the end.
    undo = _thread_passes.undo
    entry = undo.get(id(var))
    if entry is None or entry[0]() is not var:
        undo[id(var)] = (weakref.ref(var), var._grad_var, var._loss_scale,
                         getattr(var, "_grad_owned", None))


def _restore(undo):
    for ref, grad_var, loss_scale, owned in undo.values():
        var = ref()
        if var is None:
            continue
        var._grad_var = grad_var
        var._loss_scale = loss_scale
        if owned is not None:
            var._grad_owned = owned


def _writable_in_place(node, current):
    """May the engine add into ``current``'s array instead of allocating?

    Only for a Parameter's own gradient buffer (see ``Parameter.zerograd``)
    and only when no graph is being built for double backprop.
    """
    if config.enable_backprop or node.creator_node is not None:
        return False
    var = node._variable()
    return (isinstance(var, Parameter) and var._grad_owned
            and var._grad_var is current)


def _store_leaf_gradients(leaves, grads, loss_scale):
    nested = len(_open_passes()) > 1
    for node in leaves:
        g = _read_sum(grads.pop(node, None))
        var = node._variable()
        if var is None or g is None:
            continue
        _store_leaf(var, g, loss_scale, nested)


def _store_leaf(var, g, loss_scale, nested=False):
    if nested:
        _remember(var)
    if isinstance(var, Parameter):
        var._grad_owned = var._grad_owned and var._grad_var is g
    var._grad_var = g
    var._loss_scale = loss_scale


def _read_sum(g):
    """A table entry as one Variable (sums a lazy list with one n-ary add)."""
    if type(g) is list:
        if len(g) == 1:
            return _as_variable(g[0])
        from minichain.functions.math.basic_math import add
        return add(*[_as_variable(x) for x in g])
    return _as_variable(g)


def _as_variable(g):
    """A table entry that may be a bare array, as a Variable (or None)."""
    if g is None or isinstance(g, Variable):
        return g
    return _make_output(g, True)  # the cheap constructor: no checks


def _as_array(g):
    """A table entry (Variable or bare array) as its array (or None)."""
    if g is None or not isinstance(g, Variable):
        return g
    return g._data


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
                continue
            if expanded:
                done.add(node)
                if any(n in result for n in creator.inputs):
                    result.add(node)
                continue
            stack.append((node, True))
            for parent in creator.inputs:
                if parent not in done:
                    stack.append((parent, False))
    return result


# ----- small helpers -----------------------------------------------------------
def _seed(array, loss_scale):
    """The starting gradient of a loss: ones (times ``loss_scale``)."""
    if array.size != 1:
        raise RuntimeError(
            "backward: the output has shape {} ({} elements) and no gradient "
            "was set. Only a loss with one element gets the gradient 1 by "
            "default: reduce the output to a scalar (e.g. F.sum(y)), or set "
            "y.grad to an array of shape {} before calling backward.".format(
                array.shape, array.size, array.shape))
    if array.ndim != 0:
        warnings.warn(
            "Treating a variable with only one element as a scalar in "
            "backward is deprecated. A scalar variable must be a "
            "0-dimensional array: reshape it with F.reshape(y, ()).",
            DeprecationWarning, stacklevel=4)
    xp = backend.get_array_module(array)
    seed = xp.empty_like(array)  # ones_like, without its Python wrapper
    seed.fill(1)
    if loss_scale is not None:
        seed *= loss_scale
    return seed


def _as_sequence(where, name, value, allow_none=True):
    """``value`` as a list; ``where`` (``grad``, ``backward``) heads errors."""
    if not isinstance(value, (tuple, list)):
        if allow_none:
            raise TypeError("{}: {} must be a tuple or a list or None, not {}."
                            .format(where, name, type(value)))
        raise TypeError("{}: {} must be a tuple or a list, not {}.".format(
            where, name, type(value)))
    return list(value)


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


def _check_nan_gradients(func, targets, grads):
    for i in targets:
        g = _read_sum(grads.get(func.inputs[i]))
        if g is None or g._data is None or g._data.dtype.kind != "f":
            continue
        xp = backend.get_array_module(g._data)
        if bool(xp.isnan(g._data).any()):
            raise RuntimeError("NaN is detected on backward computation of {}"
                               .format(func.label))


def _note_partial_sums(error, leaves, grads):
    """Say which Parameters a failed pass had already added into.

    Every leaf keeps its gradient until a pass ends, except a Parameter that
    owns its buffer (``zerograd()``): for memory's sake the engine adds into
    that buffer in place as soon as a gradient arrives (see
    ``_writable_in_place``), so a pass that fails later leaves part of its
    sum there. Undoing it would need a copy per step; instead the error
    names those Parameters, so the learner knows to clear them.
    """
    if config.enable_backprop:  # double backprop: nothing was written
        return
    names = []
    for node in dict.fromkeys(leaves):
        var = node._variable()
        if (isinstance(var, Parameter) and var._grad_owned
                and var._grad_var is not None
                and grads.get(node, var._grad_var) is var._grad_var):
            names.append(var.name or "<unnamed {}>".format(node.label))
    if not names:
        return
    first = error.args[0] if error.args else ""
    note = ("\n\nThe backward failed after adding into the gradient buffer of "
            "these Parameters in place: {}. Their .grad may hold part of this "
            "pass's sum: call cleargrads() (or zerograds()) before the next "
            "step.".format(", ".join(names)))
    error.args = (str(first) + note,) + tuple(error.args[1:])


def _attach_stack(error, func):
    import traceback
    text = "".join(traceback.format_list(func.stack))
    message = "{}\n{}\nStacktrace of the function is below:\n{}".format(
        error.args[0] if error.args else "", "-" * 60, text)
    error.args = (message,) + tuple(error.args[1:])
