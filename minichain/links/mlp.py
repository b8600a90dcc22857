"""A multi-layer perceptron: the small model of the training chapter.

``MLP(n_units, n_out, n_layers=2)`` is ``n_layers`` hidden layers of
``n_units`` ReLU units, then a linear output layer of ``n_out`` units (the
class scores, before softmax). Input sizes are learned on the first call.
"""

from minichain.link import Chain
from minichain.links.linear import Linear


class MLP(Chain):
    """Linear -> ReLU, ``n_layers`` times, then a final Linear.

    The layers are children ``l1, l2, ...``; with the defaults the model has
    ``l1`` and ``l2`` (hidden) and ``l3`` (output), so its parameter paths are
    ``/l1/W, /l1/b, ..., /l3/b``.
    """

    def __init__(self, n_units, n_out, n_layers=2):
        super().__init__()
        if n_layers < 0:
            raise ValueError("n_layers must be >= 0, got {}".format(n_layers))
        self.n_layers = n_layers
        with self.init_scope():
            for i in range(n_layers):
                setattr(self, "l{}".format(i + 1), Linear(None, n_units))
            setattr(self, "l{}".format(n_layers + 1), Linear(None, n_out))

    def functions(self):
        """The forward pass as a list of callables, applied one after another.

        ``model(x)`` equals applying them in turn; this is the form
        ``mc.checkpoint_sequential(model.functions(), segments, x)`` takes.
        """
        from minichain import functions as F
        layers = list(self.children())
        steps = []
        for layer in layers[:-1]:
            steps += [layer, F.relu]
        steps.append(layers[-1])
        return steps

    def forward(self, x):
        h = x
        for step in self.functions():
            h = step(h)
        return h
