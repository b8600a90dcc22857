"""FunctionNode: one application of a differentiable function in the graph.

A subclass writes ``forward(inputs)`` on plain arrays and
``backward(target_input_indexes, grad_outputs)`` on Variables. Because the
backward is built from minichain's own functions, running it with the graph
switched on (``enable_double_backprop=True``) records a new graph: that is
all double backprop needs.

``apply`` links the node into the graph: it keeps its input *nodes* strongly
(backward must reach them) and its output nodes only weakly (the outputs'
Variables own them, so no reference cycle keeps a graph alive).
"""

import sys
import weakref

import numpy

from minichain import backend
from minichain import function_hook
from minichain.configuration import config
from minichain.utils import type_check
from minichain.variable import Variable, _make_output

_ndarray = numpy.ndarray  # the usual output type, tested by identity first


class _FunctionBase:
    """What both kinds of function share, the old-style ``Function`` and
    ``FunctionNode``: a label, no type check unless a subclass writes one,
    and ``forward`` on arrays, sent to ``forward_gpu`` when an input is a
    CuPy array and to ``forward_cpu`` otherwise."""

    @property
    def label(self):
        """Short text naming the function in graphs, hooks and errors."""
        return type(self).__name__

    @staticmethod
    def check_type_forward(*self_and_in_types):
        """Check input types with ``type_check.expect``; default: no check.

        A subclass writes ``check_type_forward(self, in_types)``. This
        default is a static method so that, looked up on a node, it is this
        very function (no bound method is made): ``apply`` asks "does this
        node check anything?" with one ``is``, once per operation.
        """

    def forward(self, inputs):
        """Compute output arrays from input arrays; returns a tuple."""
        if any(backend.is_gpu_array(x) for x in inputs):
            return self.forward_gpu(inputs)
        return self.forward_cpu(inputs)

    def forward_cpu(self, inputs):
        raise NotImplementedError(
            "{} implements neither forward nor forward_cpu".format(self.label))

    def forward_gpu(self, inputs):
        raise NotImplementedError(
            "{} implements neither forward nor forward_gpu".format(self.label))


class FunctionNode(_FunctionBase):
    """Base class of every differentiable function.

    Attributes:
        inputs: tuple of input VariableNodes (None before ``apply``).
        outputs: tuple of weak references to the output VariableNodes.
        rank: one more than the largest rank among the inputs' creators;
            backward processes functions from the highest rank down.
    """

    # Class-level defaults, so a subclass __init__ need not call ours.
    inputs = None
    outputs = None
    rank = 0
    lazy_grad_sum = False
    stack = None
    _applied = False
    _input_indexes_to_retain = None
    _output_indexes_to_retain = None
    _retaining = False  # True once retain_inputs or retain_outputs is called
    _retained_output_data = None
    _local_function_hooks = None

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "A function class object ({}) which is derived from "
            "minichain.FunctionNode has been called as if it were a callable. "
            "Use apply() method instead.".format(type(self).__name__))

    @property
    def local_function_hooks(self):
        """Ordered dict of hooks registered on this node only."""
        if self._local_function_hooks is None:
            function_hook.local_hooks_in_use = True
            self._local_function_hooks = {}
        return self._local_function_hooks

    # ----- forward ----------------------------------------------------------
    def apply(self, inputs):
        """Run forward on ``inputs`` and link this node into the graph.

        ``inputs`` may mix Variables and arrays (arrays become inputs that
        need no gradient). Always returns a tuple of Variables.

        This is the fast path: ``_apply_reference`` below does the same steps
        as chapter 02 writes them, and runs instead under
        ``mc.reference_mode()``. What this one adds is only speed: the common
        case (one Variable in, one array out) written out, one read of the
        thread's settings and the cheap output constructor (chapter 13 takes
        each apart).
        """
        # This thread's settings and hooks: one thread-local read for all.
        view = config._view
        if view.reference_mode:
            return self._apply_reference(inputs)
        if self._applied or (type(inputs) is not tuple
                             and not isinstance(inputs, list)):
            _check_arguments(self, inputs)  # raises
        # apply runs once per operation (see the per-op figure of
        # benchmarks/run.py), so its common case, one Variable in and one
        # array out, is written out here; any other mix of inputs and
        # outputs goes through the general helpers below, which do the same.
        if len(inputs) == 1 and type(inputs[0]) is Variable:
            node = inputs[0]._node
            in_data, input_nodes = (inputs[0]._data,), (node,)
            requires_grad, rank, missing = node.requires_grad, node.rank, False
        else:
            in_data, input_nodes, requires_grad, rank, missing = (
                _gather_inputs(self, inputs))
        if backend.available:
            _check_same_device(self, in_data)
        debug = view.debug
        if debug:
            self._record_stack()
        # The check this node runs: its class's, one set on this instance
        # (tests do that with mocks), or the default, which checks nothing
        # and is skipped. Looked up on the instance, never via its
        # ``__dict__``: reading that makes Python build a dict for every node.
        check = self.check_type_forward if view.type_check else _NO_TYPE_CHECK
        if check is not _NO_TYPE_CHECK:
            if missing:  # a check of types expects arrays: say what came
                _refuse_input(self, None)
            # The most common check (type_check.float_input), passing, is
            # its own first line; anything else, or a failure, goes the
            # full way, which also writes the message.
            if not (check is _FLOAT_INPUT and len(in_data) == 1
                    and in_data[0].dtype.kind == "f"):
                type_check.invoke_check(self, in_data)

        if view.function_hooks or (function_hook.local_hooks_in_use
                                   and self._local_function_hooks):
            outputs = self._forward_with_hooks(in_data)
        else:
            outputs = self.forward(in_data)
        if type(outputs) is not tuple:
            _check_forward_outputs(self, outputs)  # raises, naming the type
        if debug:
            _check_nan(self, outputs, "forward")
        self._applied = True

        # Each output array becomes a Variable; with backprop on, its node
        # records this function as its creator, one rank above the inputs.
        record = view.enable_backprop
        creator, out_rank = None, 0
        if record:
            creator, out_rank = self, rank + 1
        if len(outputs) == 1 and type(outputs[0]) is _ndarray:
            var = _make_output(outputs[0], requires_grad, creator, out_rank)
            ret, output_refs = (var,), (weakref.ref(var._node),)
        else:
            ret, output_refs = _wrap_outputs(
                self, outputs, requires_grad, creator, out_rank)
        if record:
            self.rank = rank
            self.inputs = input_nodes
            self.outputs = output_refs
            # One read for what few functions do: each read of a node's
            # attribute here costs about as much as a line, since the
            # node's class changes from call to call and Python cannot
            # specialise the read (about 300 instructions per op saved).
            if self._retaining:
                self._retain_data(input_nodes, in_data, ret, outputs)
            if view.lazy_grad_sum:  # the class default is False
                self.lazy_grad_sum = True
        return ret

    def _apply_reference(self, inputs):
        """``apply`` as chapter 02 builds it: run ``forward`` on the inputs'
        arrays, wrap each output array in a Variable, and, when backprop is
        on, link this node between its input nodes and its output nodes.

        The reference path (``mc.reference_mode()``); ``FunctionNode.apply``
        is the same steps made fast (chapter 13), and a test compares the
        graphs the two build on hundreds of random programs.
        """
        _check_arguments(self, inputs)  # applied once only; a tuple of inputs
        xs = [_as_input(self, x) for x in inputs]  # an array needs no gradient
        in_data = tuple([x.array for x in xs])
        self._check_inputs(in_data)  # devices, types; debug: remember the line
        outputs = self._forward_with_hooks(in_data)  # forward on the arrays
        _check_outputs(self, outputs)  # a tuple of arrays, NaN in debug mode
        self._applied = True
        requires_grad = any([x.requires_grad for x in xs])
        ys = tuple([Variable(y, requires_grad=requires_grad) for y in outputs])
        if config.enable_backprop:  # record the graph
            self.rank = max([x.rank for x in xs], default=0)
            self.inputs = tuple([x.node for x in xs])  # strong: backward needs them
            self.outputs = tuple([weakref.ref(y.node) for y in ys])  # weak
            for y in ys:
                y.node.set_creator_node(self)  # its rank: one above ours
            self._retain_data(self.inputs, in_data, ys, outputs)
            if config.lazy_grad_sum:  # Chainer's flag, noted for its users:
                self.lazy_grad_sum = True  # minichain's sums ignore it
        return ys

    def _check_inputs(self, in_data):
        """The checks before ``forward``, in full (the reference path's)."""
        if backend.available:
            _check_same_device(self, in_data)
        if config.debug:
            self._record_stack()  # debug: remember the line that applied it
        if config.type_check and self.check_type_forward is not _NO_TYPE_CHECK:
            if any(x is None for x in in_data):  # a check expects arrays
                _refuse_input(self, None)
            type_check.invoke_check(self, in_data)

    def _forward_with_hooks(self, in_data):
        """``forward``, with the hooks that watch this node around it."""
        hooks = function_hook.hooks_for(self)
        for hook in hooks:
            hook.forward_preprocess(self, in_data)
        outputs = self.forward(in_data)
        for hook in hooks:
            hook.forward_postprocess(self, in_data)
        return outputs

    def _retain_data(self, input_nodes, in_data, ret, outputs):
        """Keep the arrays named by ``retain_inputs`` and ``retain_outputs``
        (the inputs' on their nodes, the outputs' on this node too)."""
        if self._input_indexes_to_retain is not None:
            for index in self._input_indexes_to_retain:
                input_nodes[index].data = in_data[index]
        if self._output_indexes_to_retain is None:
            return
        retained = []
        for index in self._output_indexes_to_retain:
            ret[index]._node.data = outputs[index]
            retained.append(outputs[index])
        self._retained_output_data = tuple(retained)

    def retain_inputs(self, indexes):
        """Inside ``forward``: keep these inputs' arrays for backward."""
        self._input_indexes_to_retain = tuple(indexes)
        self._retaining = True

    def retain_outputs(self, indexes):
        """Inside ``forward``: keep these outputs' arrays for backward."""
        self._output_indexes_to_retain = tuple(indexes)
        self._retaining = True

    def get_retained_inputs(self):
        """Variables of the retained inputs, in the order given to retain."""
        indexes = self._input_indexes_to_retain
        if indexes is None or self.inputs is None:
            return ()
        return tuple([None if self.inputs[i].data is None
                      else self.inputs[i].get_variable() for i in indexes])

    def get_retained_outputs(self):
        """Variables of the retained outputs (None for an output that
        ``forward`` gave no array).

        If an output Variable was dropped, a new one is made around the
        retained array, with this node as its creator, so backward still
        finds its value.
        """
        indexes = self._output_indexes_to_retain
        if indexes is None or self.outputs is None:
            return ()
        if self._retained_output_data is None:
            raise ValueError(
                "{}: retain_outputs was called, but no output data was "
                "stored (was the graph built with backprop enabled?)".format(
                    self.label))
        ret = []
        outputs = list(self.outputs)
        for index, data in zip(indexes, self._retained_output_data):
            node = outputs[index]()
            if node is None:
                var = Variable(data, requires_grad=True)
                var._node.set_creator_node(self)
                var._node.data = data
                outputs[index] = weakref.ref(var._node)
            else:
                var = node.get_variable()
            ret.append(None if var._data is None else var)
        self.outputs = tuple(outputs)
        return tuple(ret)

    # ----- backward ---------------------------------------------------------
    def backward(self, target_input_indexes, grad_outputs):
        """Gradients w.r.t. the inputs, as Variables (None = no gradient).

        ``grad_outputs`` has one Variable (or None) per output. Return either
        one entry per input or one per target index. The default says the
        function is not differentiable.
        """
        return (None,) * len(target_input_indexes)

    # Optional: ``backward_arrays(target_input_indexes, grad_output_arrays)``.
    #
    # The same gradients as ``backward``, computed on plain arrays and
    # returned as a tuple of arrays, one per target (None = no gradient).
    # Why: in a plain ``loss.backward()`` nothing will differentiate the
    # gradients, so building them out of FunctionNodes (a node, a Variable
    # and a type check per operation of the backward) buys nothing, and for
    # a tiny array it costs several times the arithmetic. The engine calls
    # it instead of ``backward`` only when nobody could tell the difference:
    # no graph is being recorded and no function hook watches. ``backward``
    # stays the reference: double backprop and hooks always use it, and
    # tests/test_backward_arrays.py checks that both give the same numbers.
    # The retained arrays are ``self.inputs[i].data`` and
    # ``self._retained_output_data``. The contract: never write into the
    # incoming gradient arrays (the engine may hold one array in several
    # places: ``x + c`` hands its gradient on unchanged), unless
    # ``writable_gradient`` below gives one, and never return an array that
    # is not a gradient of this call. None means "not defined".
    backward_arrays = None
    # True where ``backward_arrays`` may write into an incoming gradient
    # that ``writable_gradient`` gives it (ReLU's): only then does the fast
    # loop hand its gradients over, which costs a little on every step.
    writes_into_gradient = False

    def backward_accumulate(self, target_input_indexes, grad_outputs,
                            grad_inputs):
        """Backward fused with accumulation into existing gradients.

        ``grad_inputs`` holds, per target, the gradient accumulated so far
        from other paths (None if none; for a repeated input only its first
        occurrence carries it). Returns the new totals, one per target.
        Override it when adding into an existing gradient can be done
        cheaper than computing a gradient and then adding it. A class that
        also defines ``backward_arrays`` must agree with it when every
        ``grad_inputs`` entry is None: the engine then calls that instead
        whenever it may (no target has a gradient yet, and the arrays path
        is allowed), skipping the Variables this method works on.
        """
        gxs = self._backward_targets(target_input_indexes, grad_outputs)
        return tuple([gx if g is None else g if gx is None else gx + g
                      for gx, g in zip(gxs, grad_inputs)])

    def _backward_targets(self, target_input_indexes, grad_outputs):
        """Call ``backward`` and return exactly one gradient per target."""
        gxs = self.backward(target_input_indexes, grad_outputs)
        if isinstance(gxs, Variable):  # ``return gx`` without the comma
            raise TypeError(
                "{}.backward returned a Variable; it must return a tuple of "
                "gradients (write `return gx,`)".format(type(self).__name__))
        if type(gxs) is not tuple and not isinstance(gxs, list):
            # Chainer's words for an array; a clearer type for anything else.
            error = (ValueError if isinstance(gxs, backend.array_types)
                     else TypeError)
            raise error(
                "type of gradients returned from backward is incorrect:\n{} "
                "({}): backward must return a tuple of gradients (one "
                "Variable or None per input), got {}".format(
                    type(self).__name__, self.label, type(gxs)))
        n_targets = len(target_input_indexes)
        n_inputs = len(self.inputs)
        if len(gxs) == n_inputs:
            if n_inputs != n_targets:
                gxs = tuple([gxs[i] for i in target_input_indexes])
        elif len(gxs) != n_targets:
            expected = str(n_inputs) if n_inputs == n_targets else "{} or {}".format(
                n_inputs, n_targets)
            raise ValueError(
                "number of gradients returned from backward is incorrect: "
                "{} != expected {}\n  function={} ({})\n{}".format(
                    len(gxs), expected, type(self).__name__, self.label,
                    self._describe_io()))
        for i, gx in zip(target_input_indexes, gxs):
            if gx is not None and not isinstance(gx, Variable):
                raise ValueError(
                    "type of gradients returned from backward is incorrect: "
                    "{} ({}) returned {} for input {}; a Variable is expected"
                    .format(type(self).__name__, self.label, type(gx), i))
        return gxs

    def _check_gradient_arrays(self, target_input_indexes, gxs):
        """Raise unless ``gxs`` holds one array (or None) per target, so a
        mistake in a ``backward_arrays`` is named here, not deep in the
        engine."""
        if (not isinstance(gxs, tuple)  # HandedOver: grad_outputs returned
                or len(gxs) != len(target_input_indexes)):
            raise TypeError(
                "{} ({}): backward_arrays must return a tuple of one array (or "
                "None) per target ({}), got {!r}".format(
                    type(self).__name__, self.label,
                    len(target_input_indexes), type(gxs)))
        for gx in gxs:
            if gx is not None and not isinstance(gx, backend.array_types):
                raise TypeError(
                    "{} ({}): backward_arrays returned {} for a gradient; an "
                    "array (or None) is expected".format(
                        type(self).__name__, self.label, type(gx)))

    def _describe_io(self):
        lines = []
        for i, node in enumerate(self.inputs or ()):
            lines.append("    input {}: shape={} dtype={}".format(
                i, node.shape, node.dtype))
        for i, ref in enumerate(self.outputs or ()):
            node = ref()
            if node is not None:
                lines.append("    output {}: shape={} dtype={}".format(
                    i, node.shape, node.dtype))
        return "\n".join(lines)

    # ----- hooks and graph surgery ------------------------------------------
    def add_hook(self, hook, name=None):
        """Register ``hook`` on this node only."""
        if not isinstance(hook, function_hook.FunctionHook):
            raise TypeError("Hook must be of type FunctionHook ({}.add_hook "
                            "got {})".format(self.label, type(hook)))
        name = hook.name if name is None else name
        hooks = self.local_function_hooks
        if name in hooks:
            raise KeyError("Hook {} already exists".format(name))
        hooks[name] = hook
        hook.added(self)

    def delete_hook(self, name):
        """Unregister this node's hook called ``name``."""
        hooks = self.local_function_hooks
        if name not in hooks:
            raise KeyError("Hook {} does not exist".format(name))
        hooks[name].deleted(self)
        del hooks[name]

    def unchain(self):
        """Take this node out of the graph: its outputs become leaves."""
        for ref in self.outputs or ():
            node = ref()
            if node is not None:
                node.creator_node = None
        self.inputs = None
        self.outputs = None

    def _record_stack(self):
        import traceback
        # Drop the innermost frames that are this file's (this method,
        # ``apply``, and on the reference path ``_apply_reference`` and
        # ``_check_inputs``): what is left ends at the line that applied
        # the function, whichever path ran.
        stack = traceback.extract_stack()
        while stack and stack[-1].filename == __file__:
            stack.pop()
        self.stack = stack


def _check_arguments(function, inputs):
    """``apply``'s first two rules: a node is applied once, to a tuple."""
    if function._applied:
        raise RuntimeError(
            "{}: a FunctionNode instance cannot be applied twice; make a "
            "new instance for every application".format(function.label))
    if type(inputs) is not tuple and not isinstance(inputs, list):
        raise TypeError(
            "{}: apply takes a tuple (or list) of inputs, got {}; write "
            "apply((x,)) for one input".format(function.label, type(inputs)))


def _as_input(function, x):
    """An input of ``apply`` as a Variable (an array: one that needs no
    gradient); anything else is refused, naming the function."""
    if isinstance(x, Variable):
        return x
    if x is None or isinstance(x, backend.array_types):
        return Variable(x, requires_grad=False)
    _refuse_input(function, x)


def _check_outputs(function, outputs):
    """What ``forward`` returned: a tuple of arrays (or None); in debug
    mode, no NaN in them."""
    if type(outputs) is not tuple or not all(
            y is None or isinstance(y, backend.array_types) for y in outputs):
        _check_forward_outputs(function, outputs)  # raises, naming the type
    if config.debug:
        _check_nan(function, outputs, "forward")


def _gather_inputs(function, inputs):
    """The inputs' arrays and nodes (arrays become inputs that need no
    gradient), whether any needs a gradient, the largest rank, and whether
    a None came (Chainer allows one).

    A plain loop, not comprehensions: in Python 3.11 a comprehension is a
    hidden function call, and for two or three inputs the loop is faster.
    """
    in_data, input_nodes = [], []
    requires_grad, rank, missing = False, 0, False
    for x in inputs:
        if not isinstance(x, Variable):
            missing = missing or x is None
            x = _wrap_input(function, x)
        node = x._node
        in_data.append(x._data)
        input_nodes.append(node)
        requires_grad = requires_grad or node.requires_grad
        if node.rank > rank:
            rank = node.rank
    return tuple(in_data), tuple(input_nodes), requires_grad, rank, missing


def _wrap_outputs(function, outputs, requires_grad, creator, rank):
    """Each output array as a Variable made by ``creator`` (a None output,
    which Chainer allows, as a Variable without an array), and a weak
    reference to each one's node."""
    ret, refs = [], []
    for y in outputs:
        if isinstance(y, backend.array_types):
            var = _make_output(y, requires_grad, creator, rank)
        elif y is None:
            var = Variable(None, requires_grad=requires_grad)
            var._node.creator_node, var._node.rank = creator, rank
        else:
            _check_forward_outputs(function, outputs)  # raises
        ret.append(var)
        refs.append(weakref.ref(var._node))
    return tuple(ret), tuple(refs)


def _wrap_input(function, x):
    if isinstance(x, backend.array_types):
        return _make_output(x, False)  # the cheap constructor: x is checked
    if x is None:
        return Variable(None, requires_grad=False)
    _refuse_input(function, x)


def _refuse_input(function, x):
    """Raise for an input ``apply`` cannot take, naming the function."""
    raise TypeError(
        "{}: inputs must be Variables or NumPy/CuPy arrays, got {}".format(
            function.label, type(x)))


def _check_same_device(function, in_data):
    kinds = {type(x) for x in in_data if x is not None}
    if len(kinds) > 1:
        raise TypeError(
            "incompatible array types are mixed in the forward input ({}).\n"
            "Actual: {}".format(function.label,
                                ", ".join(sorted(str(k) for k in kinds))))


def _check_forward_outputs(function, outputs):
    if type(outputs) is not tuple:
        raise TypeError("forward output must be a tuple ({})\nActual: {}"
                        .format(function.label, type(outputs)))
    for y in outputs:
        if not isinstance(y, backend.array_types):
            raise TypeError(
                "forward output must be a tuple of ndarrays.\nFunction: {}\n"
                "Actual output types: {}".format(
                    function.label, tuple(type(y) for y in outputs)))


def _check_nan(function, arrays, phase):
    for a in arrays:
        if a is None or a.dtype.kind != "f":
            continue
        xp = backend.get_array_module(a)
        if bool(xp.isnan(a).any()):
            raise RuntimeError("NaN is detected on {} computation of {}".format(
                phase, function.label))


_NO_TYPE_CHECK = _FunctionBase.check_type_forward  # the default does nothing
_FLOAT_INPUT = type_check.expect_float_input  # type_check.float_input's check


# ----- gradients a backward may write into (the fast path) ---------------------
class HandedOver(tuple):
    """The ``grad_outputs`` the fast loop (``backprop._walk``) gives to a
    ``backward_arrays``: a tuple that says "the engine has taken these
    gradients out of its table and will not read them again"."""

    __slots__ = ()


def writable_gradient(grad_outputs):
    """The first incoming gradient, if ``backward_arrays`` may write into it;
    otherwise None.

    Why: hand-written NumPy computes ``ga *= h > 0`` in place, where a
    backward that must not touch its incoming gradient allocates a new array
    the size of the layer. Writing is safe only for an array that nothing
    else can see, so three things must hold: the engine handed the tuple
    over (``HandedOver``: anyone else calling ``backward_arrays`` may read
    their gradients again); the tuple is the array's only holder, which is
    asked of the interpreter (``sys.getrefcount``: a user's ``.grad``, a
    retained gradient, another entry of the gradient table, as ``x + c``
    hands its gradient on, and a view of the array each hold a reference);
    and the array owns its memory and may be written.
    """
    if type(grad_outputs) is not HandedOver:
        return None
    g = grad_outputs[0]
    if type(g) is not _ndarray or _getrefcount(g) != _SOLE_HOLDER:
        return None
    flags = g.flags  # its own memory: not a view, nor a buffer lent to it
    return g if flags.owndata and flags.writeable else None


def _references_when_held_by_a_tuple_alone():
    """What ``sys.getrefcount`` says in ``writable_gradient`` when the tuple
    is the array's only holder: counted here in the same situation (a tuple,
    a local name, the call's argument), not assumed, since interpreters
    count the references of a call differently."""
    grad_outputs = (numpy.empty(1),)
    g = grad_outputs[0]
    return sys.getrefcount(g)


_getrefcount = sys.getrefcount
_SOLE_HOLDER = _references_when_held_by_a_tuple_alone()
