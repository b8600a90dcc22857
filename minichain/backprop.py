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
  exception is a Parameter's own gradient buffer (``zerograd()``): the
  engine never hands that array to anyone, so only a reference the user
  took to ``p.grad`` sees it change.
* **A Variable keeps a gradient nobody else holds.** When a gradient is
  stored on a Variable (a leaf's ``.grad``, or ``retain_grad``), it is copied
  if this pass has already handed the same array out, or if it is a view of
  another array (``_own``). So two leaves of ``x + y`` never share memory.
"""

import heapq
import threading

import numpy

from minichain import backend
from minichain import backward_undo
from minichain import function_hook
from minichain.configuration import config, using_config
from minichain.function_node import FunctionNode, HandedOver, _check_nan
from minichain.utils.array import force_array
from minichain.variable import (
    Parameter, Variable, _check_grad_type, _make_output)


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

    def __init__(self, seeds, starts, retain_grad, loss_scale, input_nodes,
                 depends):
        self.heap, self.pushed = [], set()
        self.hooks = function_hook.get_function_hooks()  # a live dict
        self.recording = bool(config.enable_backprop)
        self.reference = bool(config.reference_mode)  # the chapters' loop
        self.arrays = not (self.recording or self.hooks or self.reference)
        self.debug = config.debug
        self.retain_grad, self.loss_scale = retain_grad, loss_scale
        self.keep = frozenset(input_nodes or ())
        self.grads = {} if input_nodes is None else _KeepingTable(self.keep)
        self.depends = depends  # grad(): the nodes on a way to an input
        # id of an array -> the node whose Variable has it (the caller's
        # gradients to begin with), see _own
        self.handed_out = {id(g._data): n for n, g in list(seeds) + starts}
        self.given = dict(seeds)  # output node -> the gradient given for it
        self.old_style = {}  # id of an array -> old-style Function that made it
        self.func = None  # the function whose step runs (for its errors)

    @property
    def into_leaves(self):
        """backward() gives a leaf its gradient on ``.grad``; grad() (which
        has the nodes to walk, ``depends``) returns them instead."""
        return self.depends is None

    def finish(self, g, node):
        """A table entry as a Variable of its own, to hand to the user."""
        return None if g is None else _own(self, g, node)


class _KeepingTable(dict):
    """The gradient table under ``grad()``: taking a gradient out of it
    leaves those of the input nodes asked for, to be returned at the end."""

    def __init__(self, keep):
        super().__init__()
        self.keep = keep

    def pop(self, node, default=None):
        if node in self.keep:
            return self.get(node, default)
        return super().pop(node, default)


def _run(seeds, enable_double_backprop, retain_grad, loss_scale,
         input_nodes=None, starts=(), depends=None):
    """Run one pass from ``seeds`` = [(output node, gradient Variable)].

    Under ``grad()``, ``input_nodes`` are the inputs asked for, ``starts``
    their gradients before the walk, and ``depends`` the nodes from which
    one of them can be reached (only those are walked).

    The outermost pass of a thread keeps the undo log (``backward_undo``),
    so a failed backward changes no ``.grad`` (but a Parameter's own buffer).
    """
    passes = _passes()
    outermost = not passes
    if outermost:
        backward_undo.begin()
    with using_config("enable_backprop", enable_double_backprop):
        run = _Pass(seeds, list(starts), retain_grad, loss_scale, input_nodes,
                    depends)
        passes.append(run)
        try:
            add = _add_gradient_reference if run.reference else _add_gradient
            for node, g in starts:
                add(run, node, g._data if run.arrays else g)
            for node, g in seeds:
                add(run, node, g._data if run.arrays else g)
                _push(run, node)
            (_walk_reference if run.reference else _walk)(run)
        except Exception as error:
            if run.func is not None and run.func.stack is not None:
                _attach_stack(error, run.func)  # its forward ran in debug mode
            if outermost:
                backward_undo.roll_back(error)
            raise
        finally:
            passes.pop()
            run.func = None  # the pass is returned: it holds no function
            if outermost:
                backward_undo.end()
    return run


# ----- the loop, as the chapters build it (the reference path) -----------------
def _walk_reference(run):
    """Backward as chapter 05 builds it: while a function is waiting, take
    the one of highest rank and do its step.

    ``_run`` (which ``backward()`` calls) has put the seeds in the dict
    ``run.grads`` and their creators on the heap. This is the reference
    path (``mc.reference_mode()``); the fast ``_walk`` (chapter 13) is the
    same loop made fast; a test compares the two exactly on random programs.
    """
    while run.heap:
        run.func = func = heapq.heappop(run.heap)[2]  # the highest rank
        if func.inputs is not None:  # None: cut from the graph (unchain)
            _step_reference(run, func)


def _step_reference(run, func):
    """One function's step: its backward on its outputs' gradients, then
    each input's gradient added in and its creator pushed."""
    gys = tuple([run.grads.pop(ref(), None) for ref in func.outputs])
    _retain_output_grads(run, func, gys)  # retain_grad=True (chapter 07)
    targets = _targets(run, func.inputs)  # the inputs that need a gradient
    if not targets:
        return
    hooks, seen = _hooks_before(run, func, gys)  # hooks (chapter 08)
    gxs = _backward_on_variables(run, func, targets, gys)
    for i, gx in zip(targets, gxs):
        if gx is not None:
            _check_gradient(run, func, i, gx)  # its input's shape and dtype
            _add_gradient_reference(run, func.inputs[i], gx)
            _push(run, func.inputs[i])  # its creator, once per pass
    for hook in hooks:
        hook.backward_postprocess(func, *seen)


def _add_gradient_reference(run, node, gx):
    """Add ``gx`` to the gradient ``node`` has received so far (chapter 04).

    Add, never overwrite: a node reached along two paths (a branch, or
    ``f(x, x)``) needs the sum of both. The sum is a new Variable, never
    ``+=``: the gradient so far may be held elsewhere too (``x + c`` hands
    its incoming gradient on as it is). A leaf keeps its gradient on its
    Variable's ``.grad``, added to what it holds already: that is how
    gradients add up across ``backward()`` calls.
    """
    if node.creator_node is None and run.into_leaves:
        _add_to_leaf(run, node, gx)
    elif node in run.grads:
        run.grads[node] = run.grads[node] + gx
    else:
        run.grads[node] = gx


# ----- the loop made fast (the default path) -----------------------------------
def _walk(run):
    """``_walk_reference`` and its step in one loop, made fast (chapter 13).

    The same steps in the same order, with these differences, none of which
    changes a number, an order or an event: the step is written inline;
    gradients travel as bare arrays and ``backward_arrays`` runs when nothing
    could tell (no graph recorded, no hook); the common case (one input, one
    output, a first gradient) is written out; a gradient's shape and dtype
    are checked in full only when they do not match at a glance.
    """
    heap, pushed, grads, debug = run.heap, run.pushed, run.grads, run.debug
    take, plain, arrays = grads.pop, run.depends is None, run.arrays
    while heap:
        run.func = func = heapq.heappop(heap)[2]  # named by errors: _run
        inputs = func.inputs
        if inputs is None:  # unchained since its forward
            continue
        outputs = func.outputs  # weak references: a dead one gives None
        grad_outputs = ((take(outputs[0](), None),) if len(outputs) == 1
                        else tuple([take(ref(), None) for ref in outputs]))
        if arrays and type(func).writes_into_gradient:  # writable_gradient
            grad_outputs = HandedOver(grad_outputs)
        if run.retain_grad:
            _retain_output_grads(run, func, grad_outputs)
        # The inputs to give a gradient (plain: not under grad(), where all
        # that require one do): one input, the common case, without a call.
        targets = (0,) if len(inputs) == 1 and plain else _targets(run, inputs)
        if not targets or not inputs[targets[0]].requires_grad:
            continue
        hooks = ()  # the hooks watching func (decided inline: rarely any)
        if run.hooks or (function_hook.local_hooks_in_use
                         and func._local_function_hooks):
            hooks, seen = _hooks_before(run, func, grad_outputs)
        if (arrays and not hooks and type(func).backward_arrays is not None
                and type(func).backward_accumulate is _DEFAULT_ACCUMULATE):
            gxs = func.backward_arrays(targets, grad_outputs)  # chapter 13
        else:  # on Variables, or a class that accumulates: the general way
            gxs = _call_backward(run, func, targets, grad_outputs, hooks)
        if type(gxs) is not tuple or len(gxs) != len(targets):
            func._check_gradient_arrays(targets, gxs)  # raises
        for k, gx in enumerate(gxs):  # a zip would cost more
            if gx is None:
                continue
            x = inputs[targets[k]]
            if (type(gx) is not _ndarray or gx.shape != x.shape
                    or gx.dtype is not x.dtype or debug):
                _check_gradient(run, func, targets[k], gx)  # raises if unfit
            creator = x.creator_node
            if creator is not None and x not in grads:  # what _add_gradient
                grads[x] = gx  # would do: a first gradient, nothing to add
            else:
                _add_gradient(run, x, gx)
            if creator is not None and creator not in pushed:
                pushed.add(creator)
                heapq.heappush(heap, (-creator.rank, len(pushed), creator))
        grad_outputs = gxs = gx = None  # or they live on into the next step
        for hook in hooks:  # as in Chainer: after the gradients are added
            hook.backward_postprocess(func, *seen)
        seen = None  # what the hooks were shown: freed here, as the reference does


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
        heapq.heappush(run.heap, (-func.rank, len(run.pushed), func))


def _targets(run, inputs):
    """The indexes of the inputs that need a gradient (under ``grad()``,
    only those that lead to the inputs asked for)."""
    return tuple([i for i, x in enumerate(inputs) if x.requires_grad
                  and (run.depends is None or x in run.depends)])


def _retain_output_grads(run, func, grad_outputs):
    """``retain_grad=True``: each output Variable still alive keeps the
    gradient it got (one the caller gave stays as it is)."""
    if not run.retain_grad:
        return
    for ref, g in zip(func.outputs, grad_outputs):
        node = ref()
        var = None if node is None or g is None else node._variable()
        if var is not None:
            given = run.given.get(node)
            var._grad_var = (given if given is not None and given._data is
                             _as_array(g) else _own(run, g, node))
            var._loss_scale = run.loss_scale


def _hooks_before(run, func, grad_outputs):
    """Call the hooks watching ``func`` before its backward; return them
    and what they are shown (for their ``backward_postprocess``)."""
    hooks = function_hook.hooks_for(func)
    seen = (tuple([x.data for x in func.inputs]),
            tuple([_as_array(g) for g in grad_outputs]))
    for hook in hooks:
        hook.backward_preprocess(func, *seen)
    return hooks, seen


def _call_backward(run, func, targets, grad_outputs, hooks):
    """Run ``func``'s backward, in the cases ``_walk`` does not do inline:
    one gradient (or None) per target, in the form of the table (arrays or
    Variables)."""
    cls = type(func)  # the class says which backward it has
    if run.arrays and not hooks and cls.backward_arrays is not None and (
            cls.backward_accumulate is _DEFAULT_ACCUMULATE
            or not _accumulates_here(run, func, targets)):
        return func.backward_arrays(targets, grad_outputs)
    return _backward_on_variables(run, func, targets, grad_outputs)


def _backward_on_variables(run, func, targets, grad_outputs):
    """``func.backward`` (or its ``backward_accumulate``) on Variables."""
    gys = tuple([_as_variable(g) for g in grad_outputs])
    if type(func).backward_accumulate is not _DEFAULT_ACCUMULATE:
        _accumulate(run, func, targets, gys)
        return (None,) * len(targets)  # already added
    result = []
    for gx in func._backward_targets(targets, gys):
        if gx is None or gx._data is None:  # no gradient for this input
            result.append(None)
        elif run.arrays:
            if gx._node._old_style_grad_generator is not None:  # keep the mark
                run.old_style[id(gx._data)] = gx._node._old_style_grad_generator
            result.append(gx._data)
        else:
            result.append(gx)
    return tuple(result)


def _accumulates_here(run, func, targets):
    """Does the ``backward_accumulate`` that ``func``'s class defines have to
    run? Only if some target already has a gradient to add into: with none
    yet, its contract says it agrees with ``backward_arrays``, the cheaper
    way. (Asked without making a Variable of each gradient to test it.)"""
    for i in targets:
        node = func.inputs[i]
        if node.creator_node is None and run.depends is None:  # a leaf
            var = node._variable()
            if var is not None and var._grad_var is not None:
                return True
        elif node in run.grads:
            return True
    return False


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
    backward_undo.remember(var)
    if g is not var._grad_var:
        if isinstance(var, Parameter):
            var._grad_owned = False
        g = _own(run, g, var._node)
    elif isinstance(var, Parameter) and var._grad_owned:
        backward_undo.added_in_place(var)
    var._grad_var, var._loss_scale = g, run.loss_scale


def _owns_buffer(var, current):
    """May the engine add into ``current``'s array instead of allocating?

    Only for a Parameter's own gradient buffer (``Parameter.zerograd``
    allocates it, and the engine never hands it out: only a reference the
    user took to ``p.grad`` sees it change) and only when no graph is
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
    mark = run.old_style.get(id(data))  # an old-style gradient, see below
    if mark is None and isinstance(g, Variable):  # on Variables, it says so
        mark = g._node._old_style_grad_generator
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


# ----- checks --------------------------------------------------------------------
def _check_gradient(run, func, index, gx):
    """Raise, naming ``func`` (and in debug mode the line that applied it),
    unless ``gx`` fits input ``index``; in debug mode also if it has a NaN."""
    data, node = _as_array(gx), func.inputs[index]
    try:
        if not isinstance(data, backend.array_types):  # backward_arrays did
            raise TypeError(
                "{} ({}): backward_arrays returned {} for a gradient; an "
                "array (or None) is expected".format(
                    type(func).__name__, func.label, type(data)))
        _check_grad_type(func, node, data)
    except (TypeError, ValueError) as error:
        arrays = isinstance(data, backend.array_types)
        what = "shape" if arrays and data.shape != node.shape else "dtype"
        if run.debug and arrays and getattr(data, what) != getattr(node, what):
            error = ValueError(  # Chainer's words in debug mode, then ours
                "{} of gradients returned from backward is incorrect: "
                "input-index={}, actual {} != expected {}\n{}".format(
                    what, index, getattr(data, what), getattr(node, what),
                    error))
        raise error from None
    if run.debug:
        _check_nan(func, (data,), "backward")


def _attach_stack(error, func):
    import traceback
    text = "".join(traceback.format_list(func.stack))
    message = "{}\n{}\nStacktrace of the function is below:\n{}".format(
        error.args[0] if error.args else "", "-" * 60, text)
    error.args = (message,) + tuple(error.args[1:])


def _as_variable(g):
    """A table entry that may be a bare array, as a Variable (or None)."""
    if g is None or isinstance(g, Variable):
        return g
    return _make_output(g, True)  # the cheap constructor: no checks


def _as_array(g):
    """A table entry (Variable or bare array) as its array (or None)."""
    return g._data if isinstance(g, Variable) else g
