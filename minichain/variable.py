"""Variables and the nodes that stand for them in the graph.

A user holds ``Variable`` objects; the graph holds ``VariableNode`` objects.
The split is what lets memory go: a node remembers the shape, dtype, rank and
creator of its Variable, but holds the array only when some backward needs it
(``retain_inputs``/``retain_outputs``). When the user drops a Variable whose
array no backward needs, the array is freed even though the graph still
needs the node to route gradients along other paths.

The node points back to its Variable through a *weak* reference, so the graph
never keeps a user's Variable alive.
"""

import warnings
import weakref

import numpy

from minichain import backend


def _check_grad_type(function, node, grad_array, is_leaf_check=False,
                     where=None):
    """Check that a gradient array fits the data it is the gradient of.

    ``function`` is the node that produced the gradient (None when the user
    set it directly); its class and label then head the message, so a wrong
    gradient from a user's backward is traced to that function. ``where``
    names the entry point a user-given gradient came through instead.
    """
    if grad_array is None:
        return
    if function is None:
        prefix = "" if where is None else where + ": "
    else:
        prefix = (
            "Function `{}` ({}) has a bug.\n\n"
            "Its backward returned a gradient that does not fit its input.\n"
            .format(type(function).__name__, function.label))
    if not isinstance(grad_array, backend.array_types):
        raise TypeError(
            prefix + "Type of grad is invalid:\nExpected: Any of {}\nActual: {}"
            .format(backend.array_types, type(grad_array)))
    data = node._variable_data()
    if data is not None and type(data) is not type(grad_array):
        raise TypeError(
            prefix + "Type of data and grad mismatch\ngrad: {} != data: {}"
            .format(type(grad_array), type(data)))
    if node.dtype is not None and grad_array.dtype != node.dtype:
        raise TypeError(
            prefix + "Dtype of data and grad mismatch\ngrad: {} != data: {}"
            .format(grad_array.dtype, node.dtype))
    if node.shape is not None and grad_array.shape != node.shape:
        raise ValueError(
            prefix + "Shape of data and grad mismatch\ngrad: {} != data: {}"
            .format(grad_array.shape, node.shape))


class VariableNode:
    """The graph's record of a Variable: metadata, creator, optional array.

    ``data`` is None unless a function retained it for its backward.
    """

    __slots__ = ("_variable", "creator_node", "data", "name", "rank",
                 "requires_grad", "shape", "dtype", "_old_style_grad_generator",
                 "__weakref__")

    def __init__(self, variable, name=None, **kwargs):
        if "grad" in kwargs:
            raise ValueError('unexpected keyword argument "grad": '
                             "pass the gradient to Variable instead")
        if kwargs:
            raise TypeError("VariableNode: unexpected keyword arguments {}"
                            .format(sorted(kwargs)))
        self._variable = weakref.ref(variable)
        self.creator_node = None
        self.data = None
        self.name = name
        self.rank = 0
        self.requires_grad = variable.requires_grad
        self._old_style_grad_generator = None
        array = variable.array
        if array is None:
            self.shape = self.dtype = None
        else:
            self.shape = array.shape
            self.dtype = array.dtype

    @property
    def creator(self):
        """The old-style ``Function`` that made this node, else the FunctionNode."""
        node = self.creator_node
        return None if node is None else getattr(node, "_function", node)

    def set_creator(self, creator):
        """Make ``creator`` this node's creator (Chainer's name for it).

        An old-style ``Function`` stands for its node, so this is
        ``set_creator_node`` for either kind of function.
        """
        self.set_creator_node(_creator_node_of(creator))

    def set_creator_node(self, function_node):
        """Make ``function_node`` this node's creator; rank follows it."""
        if function_node is not None and not hasattr(function_node, "rank"):
            raise TypeError("creator must be a FunctionNode (or an old-style "
                            "Function) or None, got {}".format(
                                type(function_node)))
        self.creator_node = function_node
        if function_node is not None:
            self.rank = function_node.rank + 1

    @property
    def label(self):
        return _shape_dtype_label(self.shape, self.dtype)

    def get_variable_or_none(self):
        """The live Variable of this node, or None if the user dropped it."""
        return self._variable()

    def get_variable(self):
        """The live Variable, or a new one around the retained array.

        The new Variable shares this node, so gradients that flow into it
        reach the rest of the graph.
        """
        var = self._variable()
        if var is not None:
            return var
        var = Variable._from_node(self.data, self)
        return var

    def _variable_data(self):
        var = self._variable()
        return self.data if var is None else var._data

    def retain_data(self):
        """Keep the array in the node even after the Variable is dropped."""
        var = self._variable()
        if var is None:
            raise RuntimeError(
                "cannot retain variable data: the variable has been already "
                "released")
        self.data = var._data

    def unchain(self):
        self.creator_node = None

    def _check_old_style_gradient(self):
        if self._old_style_grad_generator is not None:
            raise RuntimeError(
                'cannot twice-differentiate an old style Function "{}"'.format(
                    self._old_style_grad_generator))


def _creator_node_of(function):
    """The graph node of ``function``: an old-style ``Function`` is drawn in
    the graph by its adapter node (``function.node``); a FunctionNode, or
    None, is itself."""
    if function is not None and hasattr(function, "node"):
        return function.node
    return function


def _shape_dtype_label(shape, dtype):
    if shape is None:
        return "None"
    if len(shape) == 0:
        return str(dtype)
    return "({}), {}".format(", ".join(str(s) for s in shape), dtype)


class Variable:
    """An array together with its place in the computational graph.

    Args:
        data: a NumPy or CuPy array (or None, for an empty variable).
        name: optional name, shown in graphs and messages.
        grad: optional initial gradient array.
        requires_grad: whether backward should compute a gradient for it.

    Arithmetic on Variables (``+ - * / ** @``, unary ``-``) applies
    FunctionNodes, so every expression records the graph backward will walk.
    """

    __slots__ = ("_data", "_node", "_grad_var", "_loss_scale", "__weakref__")

    # NumPy defers ``ndarray + Variable`` to ``Variable.__radd__`` because of
    # this priority, so the result is a Variable, not an object array.
    __array_priority__ = 200

    def __init__(self, data=None, *, name=None, grad=None, requires_grad=True,
                 **kwargs):
        if "volatile" in kwargs:
            raise ValueError(
                "Variable: the volatile argument is not supported anymore. "
                "Build no graph with `with minichain.no_backprop_mode():` "
                "instead.")
        if kwargs:
            raise TypeError("Variable: unexpected keyword arguments {}".format(
                sorted(kwargs)))
        if data is not None and not isinstance(data, backend.array_types):
            raise TypeError(
                "Variable: data must be a NumPy or CuPy array (or None), "
                "got {}. Wrap numbers with numpy.asarray(..., dtype=numpy."
                "float32) first.".format(type(data)))
        if not isinstance(requires_grad, bool):
            raise TypeError("Variable: requires_grad must be a bool, got {}"
                            .format(type(requires_grad)))
        if name is not None and not isinstance(name, str):
            raise TypeError("Variable: name must be a str or None, got {}"
                            .format(type(name)))
        self._data = data
        self._grad_var = None
        self._loss_scale = None
        self._node = _new_node(self, data, requires_grad, name)
        if grad is not None:  # not validated, as in Chainer
            self._grad_var = Variable(grad)

    @classmethod
    def _from_node(cls, data, node):
        """A Variable around ``data`` that takes over an existing node."""
        var = cls.__new__(cls)
        var._data = data
        var._grad_var = None
        var._loss_scale = None
        var._node = node
        node._variable = weakref.ref(var)
        return var

    # ----- data -----------------------------------------------------------
    @property
    def array(self):
        """The underlying NumPy/CuPy array (same object as ``data``)."""
        return self._data

    @array.setter
    def array(self, value):
        if value is not None and not isinstance(value, backend.array_types):
            # Checked first: a half-done assignment would leave the node's
            # shape and dtype describing an array that is gone.
            raise TypeError("Variable.array: must be a NumPy or CuPy array "
                            "(or None), got {}".format(type(value)))
        self._data = value
        node = self._node
        if value is None:
            node.shape = node.dtype = None
        else:
            node.shape = value.shape
            node.dtype = value.dtype
        if node.data is not None:
            node.data = value

    data = array

    @property
    def node(self):
        return self._node

    @property
    def name(self):
        return self._node.name

    @name.setter
    def name(self, value):
        if value is not None and not isinstance(value, str):
            raise TypeError("Variable.name must be a str or None, got {}"
                            .format(type(value)))
        self._node.name = value

    @property
    def requires_grad(self):
        return self._node.requires_grad

    @property
    def shape(self):
        return self._array_or_raise("shape").shape

    @property
    def ndim(self):
        return self._array_or_raise("ndim").ndim

    @property
    def size(self):
        return self._array_or_raise("size").size

    @property
    def dtype(self):
        return self._array_or_raise("dtype").dtype

    def _array_or_raise(self, what):
        if self._data is None:
            raise AttributeError(
                "Variable.{}: this variable holds no array (data is None)"
                .format(what))
        return self._data

    @property
    def xp(self):
        """The array module (numpy or cupy) of this variable's array."""
        return backend.get_array_module(self._data)

    @property
    def label(self):
        return self._node.label

    def __len__(self):
        array = self._array_or_raise("__len__")
        if array.ndim == 0:
            raise TypeError("Variable.__len__: len() of unsized object (a 0-d "
                            "variable, shape ())")
        return len(array)

    def item(self):
        return self._data.item()

    # ----- graph ----------------------------------------------------------
    @property
    def creator_node(self):
        return self._node.creator_node

    @creator_node.setter
    def creator_node(self, function_node):
        self._node.set_creator_node(_creator_node_of(function_node))

    @property
    def creator(self):
        return self._node.creator

    @creator.setter
    def creator(self, function):
        self._node.set_creator_node(_creator_node_of(function))

    def set_creator(self, gen_func):
        """Record ``gen_func`` as the function that made this variable.

        The same as ``v.creator = gen_func``: the rank becomes the
        function's rank + 1, and None unchains (keeping the rank). An
        old-style ``Function`` or a ``FunctionNode`` may be given.
        """
        self.creator = gen_func

    def set_creator_node(self, fnode):
        """Record ``fnode`` as the node that made this variable.

        The same as ``v.creator_node = fnode`` (an old-style ``Function``
        stands for its node).
        """
        self.creator_node = fnode

    @property
    def rank(self):
        return self._node.rank

    def unchain(self):
        """Cut the link to the creator; this variable becomes a leaf.

        The rank is kept. A later backward stops here and this variable
        receives the gradient itself.
        """
        self._node.creator_node = None

    def unchain_backward(self):
        """Cut every link behind this variable (truncated backprop).

        Walks the creators depth-first with a seen-set and unchains each
        function, so this variable and all its ancestors become leaves.
        """
        creator = self._node.creator_node
        if creator is None:
            return
        stack, seen = [creator], {creator}
        while stack:
            func = stack.pop()
            inputs = func.inputs or ()
            func.unchain()
            for node in inputs:
                parent = node.creator_node
                if parent is not None and parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
                node.creator_node = None

    # ----- gradients ------------------------------------------------------
    @property
    def grad_var(self):
        """The gradient as a Variable (it has a graph after double backprop)."""
        return self._grad_var

    @grad_var.setter
    def grad_var(self, gv):
        if gv is not None:
            _check_grad_type(None, self._node, gv._data,
                             where="Variable.grad_var")
        self._grad_var = gv

    @property
    def grad(self):
        """The gradient array, or None."""
        gv = self._grad_var
        return None if gv is None else gv._data

    @grad.setter
    def grad(self, g):
        if g is None:
            self._grad_var = None
            return
        _check_grad_type(None, self._node, g, where="Variable.grad")
        self._grad_var = Variable(g)

    def cleargrad(self):
        """Forget the gradient (frees its memory)."""
        self._grad_var = None

    def zerograd(self):
        """Deprecated: fill the gradient with zeros (allocating if needed)."""
        warnings.warn("Variable.zerograd is deprecated. Use Variable.cleargrad "
                      "instead.", DeprecationWarning, stacklevel=2)
        self._zerograd()

    def _zerograd(self):
        if self._data is None:
            return
        gv = self._grad_var
        if gv is None:
            xp = backend.get_array_module(self._data)
            self._grad_var = Variable(xp.zeros_like(self._data))
        else:
            gv.unchain()
            gv._data.fill(0)

    def backward(self, retain_grad=False, enable_double_backprop=False,
                 loss_scale=None):
        """Compute the gradient of this variable w.r.t. every leaf behind it.

        A one-element variable with no gradient set is treated as a loss:
        its gradient starts at one (times ``loss_scale``). Any other variable
        needs ``.grad`` set first. Leaves *add* the new gradient to the one
        they already hold; intermediate variables get theirs only with
        ``retain_grad=True``. With ``enable_double_backprop=True`` the
        gradients are Variables with a graph, so they can be differentiated
        again.
        """
        from minichain import backprop_api
        check_loss_scale("Variable.backward", loss_scale)
        backprop_api.backward_from_variable(
            self, retain_grad, enable_double_backprop, loss_scale)

    # ----- devices --------------------------------------------------------
    def to_cpu(self):
        """Move the array (and gradient) to host memory, in place."""
        self._move(backend.to_cpu)
        return self

    def to_gpu(self, device=None):
        """Move the array (and gradient) to the GPU, in place."""
        self._move(lambda a: backend.to_gpu(a, device))
        return self

    def _move(self, convert):
        if self._data is not None:
            self.array = convert(self._data)
        gv = self._grad_var
        if gv is not None:
            gv.array = convert(gv._data)

    # ----- printing -------------------------------------------------------
    def __repr__(self):
        return self._to_string("variable", ", ")

    def __str__(self):
        return self._to_string("variable", " ")

    def _to_string(self, kind, separator):
        """``kind name(array)``, as NumPy prints the array.

        The array's continuation lines are indented to sit under its first
        element, past ``variable x(``. ``repr`` separates elements with
        ``, `` (like ``numpy.array_repr``), ``str`` with a space; both carry
        the name. An empty array of another shape than ``(0,)`` would print
        only ``[]``, so ``repr`` adds its shape.
        """
        prefix = kind + (" " + self.name if self.name else "")
        if self._data is None:
            return prefix + "(None)"
        array = backend.to_cpu(self._data)
        if separator == ", " and array.size == 0 and array.shape != (0,):
            text = "[], shape={!r}".format(array.shape)
        else:
            text = numpy.array2string(array, separator=separator,
                                      prefix=prefix + "(")
        return "{}({})".format(prefix, text)

    def summary(self):
        name = self.name
        if name:
            return "<variable {}>".format(name)
        return "<variable at {:#x}>".format(id(self))

    def debug_print(self):
        """A multi-line report (device, shape, dtype, statistics, grad).

        The lines are always the same six, as in Chainer; a variable with
        no array reports None for each.
        """
        data = self._data
        lines = [self.summary()]
        if data is None:
            lines += ["- {}: None".format(what) for what in
                      ("device", "backend", "shape", "dtype", "statistics")]
        else:
            lines += [
                "- device: {}".format(backend.device_name(data)),
                "- backend: {}".format(type(data)),
                "- shape: {}".format(data.shape),
                "- dtype: {}".format(data.dtype),
                "- statistics: {}".format(_statistics(data)),
            ]
        grad = self.grad
        if grad is None:
            lines.append("- grad: None")
        elif not grad.any():
            lines.append("- grad: 0")
        else:
            lines.append("- grad: {}".format(_statistics(grad)))
        return "\n".join(lines)

    # ----- things a Variable refuses ---------------------------------------
    def __bool__(self):
        raise TypeError("Variables cannot be evaluated as Python bool.")

    __hash__ = None

    def _compare(self, op):
        raise TypeError(
            "Variables do not support {} operator. You could use `array` "
            "attribute instead.".format(op))

    def __eq__(self, other):
        self._compare("==")

    def __ne__(self, other):
        self._compare("!=")

    def __lt__(self, other):
        self._compare("<")

    def __le__(self, other):
        self._compare("<=")

    def __gt__(self, other):
        self._compare(">")

    def __ge__(self, other):
        self._compare(">=")

    # Arithmetic operators (``__add__`` and friends), ``.T``, ``reshape`` and
    # ``transpose`` are attached by minichain.functions.math.basic_math and
    # minichain.functions.array, next to the functions they apply.


def _statistics(array):
    if array.size == 0:
        return "empty"
    if array.dtype.kind not in "fc":
        array = array.astype(numpy.float64)
    return "mean={:.8f}, std={:.8f}".format(float(array.mean()),
                                            float(array.std()))


def _new_node(variable, data, requires_grad, name=None):
    """Make the node of a fresh Variable (faster than ``VariableNode(...)``)."""
    node = VariableNode.__new__(VariableNode)
    node._variable = weakref.ref(variable)
    node.creator_node = None
    node.data = None
    node.name = name
    node.rank = 0
    node.requires_grad = requires_grad
    node._old_style_grad_generator = None
    if data is None:
        node.shape = node.dtype = None
    else:
        node.shape = data.shape
        node.dtype = data.dtype
    return node


# ``_bare(cls)`` is ``object.__new__(cls)``: an instance whose ``__init__``
# does not run. A global, so the hot path need not look it up on a class.
_bare = object.__new__


def _make_output(data, requires_grad, creator=None, rank=0):
    """The Variable for a function's output array (no checks: hot path).

    ``creator`` and ``rank`` are the node's place in the graph (set by
    ``FunctionNode.apply``). The node is built inline rather than by
    ``_new_node``: this runs once per output of every operation, and a
    Python call costs about as much as the eight slot assignments together.
    """
    var = _bare(Variable)
    var._data = data
    var._grad_var = None
    var._loss_scale = None
    var._node = node = _bare(VariableNode)
    node._variable = weakref.ref(var)
    node.creator_node = creator
    node.data = None
    node.name = None
    node.rank = rank
    node.requires_grad = requires_grad
    node._old_style_grad_generator = None
    node.shape = data.shape
    node.dtype = data.dtype
    return var


class Parameter(Variable):
    """A Variable that a link owns and an optimizer updates.

    Unlike a plain Variable, a Parameter may own its gradient buffer: after
    ``zerograd()`` (or once the engine has allocated a sum for it), backward
    adds new gradients into that buffer *in place* instead of allocating a
    new array each step. This is what keeps a training step's memory flat.
    Setting ``.grad`` by hand gives up ownership, so arrays the user holds
    are never written behind their back.
    """

    __slots__ = ("_grad_owned", "update_rule", "initializer")

    def __init__(self, initializer=None, shape=None, *, name=None):
        # ``initializer`` is an array (used as is), a number (fill value) or
        # a callable ``f(shape, dtype, xp) -> array``. Without a shape, a
        # non-array initializer waits for ``initialize(shape)``: that is how
        # Linear learns its input size from the first batch.
        if not (initializer is None or callable(initializer)
                or isinstance(initializer, backend.array_types)
                or (hasattr(initializer, "__float__")
                    and not isinstance(initializer, (str, bytes, bool)))):
            raise TypeError(
                "Parameter: initializer must be an array, a number, a callable "
                "f(shape, dtype, xp) or None, got {}".format(type(initializer)))
        self.initializer = initializer
        data = None
        if isinstance(initializer, backend.array_types):
            data = initializer
        elif shape is not None:
            data = _initial_array(initializer, shape, numpy.float32, numpy)
        super().__init__(data, name=name)
        self._grad_owned = False
        self.update_rule = None

    @Variable.grad.setter
    def grad(self, g):
        Variable.grad.fset(self, g)
        self._grad_owned = False

    @Variable.grad_var.setter
    def grad_var(self, gv):
        Variable.grad_var.fset(self, gv)
        self._grad_owned = False

    def cleargrad(self):
        self._grad_var = None
        self._grad_owned = False

    def zerograd(self):
        """Fill the gradient with zeros, reusing (and owning) its buffer."""
        if self._grad_var is not None and not self._grad_owned:
            self._grad_var = None  # never write into an array we do not own
        self._zerograd()
        self._grad_owned = self._grad_var is not None

    def initialize(self, shape, dtype=numpy.float32, xp=numpy):
        """Allocate the array of a lazily sized parameter."""
        self.array = _initial_array(self.initializer, shape, dtype, xp)
        self._grad_var = None
        self._grad_owned = False

    @property
    def is_initialized(self):
        return self._data is not None

    def __repr__(self):
        return self._to_string("parameter", ", ")


def _initial_array(initializer, shape, dtype, xp):
    from minichain.utils.array import as_shape
    shape = as_shape("Parameter", shape)
    if any(n < 0 for n in shape):
        raise ValueError("Parameter: sizes in shape must not be negative, got "
                         "{}".format(shape))
    if initializer is None:
        return xp.zeros(shape, dtype=dtype)
    if callable(initializer):
        array = initializer(shape, dtype, xp)
        if (not isinstance(array, backend.array_types)
                or array.shape != shape):
            raise ValueError(
                "Parameter: the initializer {!r} must return an array of shape "
                "{}, got {}".format(initializer, shape, getattr(
                    array, "shape", type(array))))
        return array
    return xp.full(shape, initializer, dtype=dtype)


def check_loss_scale(where, loss_scale):
    """A loss scale must be None or a positive number: the optimizer divides
    the gradients by it, and a string or zero would fail only there."""
    if loss_scale is None:
        return
    if (isinstance(loss_scale, (bool, str, bytes))
            or not hasattr(loss_scale, "__float__")):
        raise TypeError("{}: loss_scale must be a positive number or None, "
                        "got {!r}".format(where, loss_scale))
    if not float(loss_scale) > 0:  # also refuses NaN
        raise ValueError("{}: loss_scale must be positive, got {!r}".format(
            where, loss_scale))


def as_variable(obj):
    """Return ``obj`` if it is a Variable, else wrap the array (no gradient)."""
    if isinstance(obj, Variable):
        return obj
    return Variable(obj, requires_grad=False)


def as_array(obj):
    """Return the array of a Variable, or ``obj`` itself if it is an array."""
    return obj._data if isinstance(obj, Variable) else obj
