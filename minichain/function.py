"""The old-style ``Function`` of Chainer v1, kept because the reference uses it.

An old-style function works on arrays in both directions: ``forward`` takes
input arrays, ``backward`` takes input arrays and output gradient arrays and
returns input gradient arrays (None = not differentiable). It cannot be
differentiated twice: its backward is opaque arrays, not a graph.

Internally a ``FunctionAdapter`` node carries it in the graph, so the engine
only ever sees FunctionNodes. Before the first call the Function owns its
adapter; once called, the graph owns the adapter and the adapter owns the
Function, which keeps only a weak reference back.
"""

import warnings
import weakref

from minichain import backend
from minichain.function_node import _NO_TYPE_CHECK, FunctionNode, _FunctionBase
from minichain.variable import Variable, _check_grad_type


class FunctionAdapter(FunctionNode):
    """The FunctionNode that stands for an old-style Function in the graph."""

    def __init__(self, function):
        self._function = function

    @property
    def function(self):
        return self._function

    @property
    def label(self):
        return self._function.label

    def forward(self, inputs):
        # Old-style functions get their inputs back in backward unless they
        # release them with ``self.retain_inputs(())``.
        self.retain_inputs(range(len(inputs)))
        return _as_tuple(self._function.forward(inputs), "forward",
                         self.label)

    def backward(self, target_input_indexes, grad_outputs):
        kept = self._input_indexes_to_retain  # the others are None
        in_data = tuple([node.data if i in kept else None
                         for i, node in enumerate(self.inputs)])
        gys = tuple([None if g is None else g._data for g in grad_outputs])
        gxs = _as_tuple(self._function.backward(in_data, gys), "backward",
                        self.label)
        if len(gxs) != len(self.inputs):
            raise ValueError(
                "{}.backward returned {} gradients for {} inputs".format(
                    self.label, len(gxs), len(self.inputs)))
        result = []
        for node, gx in zip(self.inputs, gxs):
            if gx is None:
                result.append(None)
                continue
            _check_grad_type(self, node, gx)
            var = Variable(gx)
            # Remember who made this gradient: a backward or grad that starts
            # from it must fail loudly (a pass that only goes through it finds
            # no graph and gives None).
            var._node._old_style_grad_generator = self.label
            result.append(var)
        return tuple(result)


def _as_tuple(value, method, label):
    if not isinstance(value, tuple):
        raise TypeError("{}.{} must return a tuple, got {}".format(
            label, method, type(value)))
    return value


class Function(_FunctionBase):
    """Base class of old-style functions; call an instance as ``f(x, ...)``.

    Override ``forward``/``backward`` (arrays in, tuple of arrays out), or
    ``forward_cpu``/``forward_gpu`` and ``backward_cpu``/``backward_gpu``.
    An instance may be called once; for several calls make a copy of a
    never-called template each time: ``copy.copy(template)(x)``.
    """

    _node = None
    _node_ref = None
    _output_indexes = None
    _called = False

    def __call__(self, *inputs):
        node = self.node
        if self._called or node._applied:
            raise RuntimeError(
                "{}: an old-style Function instance cannot be called twice. "
                "Keep a template that is never called and call a copy "
                "each time: copy.copy(template)(x)".format(self.label))
        # Looked up on the instance (a check set on one instance counts),
        # never via ``__dict__``, which would build a dict for every call.
        if self.check_type_forward is not _NO_TYPE_CHECK:
            # Only a function that checks types is shown the input types
            # (so a None among the inputs passes when nothing checks them).
            node.check_type_forward = self.check_type_forward
        outputs = node.apply(inputs)
        self._called = True
        # The graph now owns the adapter (and through it, this Function).
        self._node_ref = weakref.ref(node)
        self._node = None
        return outputs[0] if len(outputs) == 1 else outputs

    @property
    def node(self):
        """The FunctionAdapter that represents this function in the graph."""
        if self._node_ref is not None:
            node = self._node_ref()
            if node is not None:
                return node
        if self._node is None:
            self._node = FunctionAdapter(self)
        return self._node

    @property
    def inputs(self):
        return self.node.inputs

    @property
    def outputs(self):
        return self.node.outputs

    @property
    def rank(self):
        return self.node.rank

    @property
    def stack(self):
        return self.node.stack

    @property
    def local_function_hooks(self):
        return self.node.local_function_hooks

    def add_hook(self, hook, name=None):
        self.node.add_hook(hook, name)

    def delete_hook(self, name):
        self.node.delete_hook(name)

    def unchain(self):
        self.node.unchain()

    def backward(self, inputs, grad_outputs):
        arrays = tuple(inputs) + tuple(grad_outputs)
        if any(backend.is_gpu_array(x) for x in arrays):
            return self.backward_gpu(inputs, grad_outputs)
        return self.backward_cpu(inputs, grad_outputs)

    def backward_cpu(self, inputs, grad_outputs):
        return (None,) * len(inputs)

    def backward_gpu(self, inputs, grad_outputs):
        return (None,) * len(inputs)

    def retain_inputs(self, indexes):
        """Inside forward: keep only these inputs for backward."""
        self.node.retain_inputs(indexes)

    def retain_outputs(self, indexes, retain_after_backward=False):
        """Inside forward: keep these outputs; see them as ``output_data``."""
        if retain_after_backward:
            warnings.warn("retain_after_backward option has no effect",
                          DeprecationWarning, stacklevel=2)
        self._output_indexes = tuple(indexes)
        self.node.retain_outputs(indexes)

    @property
    def output_data(self):
        """Retained output arrays, one entry per output (None if not kept)."""
        node = self.node
        if self._output_indexes is None or node._retained_output_data is None:
            raise RuntimeError(
                "{}: retained output data is gone; call "
                "self.retain_outputs(...) in forward to keep outputs for "
                "backward".format(self.label))
        n_outputs = len(node.outputs)
        data = [None] * n_outputs
        for index, array in zip(self._output_indexes,
                                node._retained_output_data):
            data[index] = array
        return tuple(data)
