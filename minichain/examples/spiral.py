"""Train an MLP on the spiral data: the code of the training chapter.

Everything the chapter shows is a function here, so the notebook imports it
instead of pasting it and the text never drifts from the code:

- ``train(...)``: the training loop (minibatches, Adam, a tqdm progress bar,
  a loss/accuracy history per epoch). With ``segments=k`` the same model is
  trained with ``mc.checkpoint_sequential``: the same numbers, less memory.
- ``evaluate(model, x, t)``: loss and accuracy in evaluation mode.
- ``decision_boundary(model, ...)``: the predicted class over a grid, ready
  for ``plt.contourf``.
- ``step_memory(model, x, t, segments)``: the peak bytes of one
  forward+backward, measured with ``mc.memory.measure()``;
  ``compare_memory()`` does it for a deep MLP, plain and checkpointed.

    from minichain.examples import spiral
    result = spiral.train(n_epochs=100)
    result.accuracy            # >= 0.95
    result.history["loss"]     # one value per epoch
"""

import dataclasses

import numpy

import minichain as mc
import minichain.functions as F
from minichain.links import MLP


@dataclasses.dataclass
class TrainingResult:
    """What ``train`` returns.

    Attributes:
        model: the trained MLP.
        history: ``{"loss": [...], "accuracy": [...]}``, one entry per epoch:
            the mean over that epoch's minibatches, in training mode.
        accuracy: the final accuracy on the whole training set, in
            evaluation mode (``config.train`` False).
    """

    model: MLP
    history: dict
    accuracy: float


def forward(model, x, segments=None):
    """The class scores ``(N, n_classes)`` of ``x`` ``(N, 2)``.

    With ``segments`` the model's steps (``model.functions()``) run under
    ``checkpoint_sequential``: forward keeps only the segment boundaries and
    backward recomputes each segment when it needs it.
    """
    if segments is None:
        return model(x)
    return mc.checkpoint_sequential(model.functions(), segments, x)


def loss_and_accuracy(model, x, t, segments=None):
    """Softmax cross-entropy loss (a Variable) and accuracy of a minibatch."""
    y = forward(model, x, segments)
    return F.softmax_cross_entropy(y, t), F.accuracy(y, t)


def evaluate(model, x, t):
    """``(loss, accuracy)`` as floats, in evaluation mode with no graph.

    ``using_config("train", False)`` switches off what behaves differently in
    training (dropout); ``no_backprop_mode`` builds no graph, so nothing is
    kept for a backward that will never come.
    """
    with mc.using_config("train", False), mc.no_backprop_mode():
        loss, accuracy = loss_and_accuracy(model, x, t)
    return float(loss.array), float(accuracy.array)


def train(n_epochs=100, batch_size=30, n_units=32, n_layers=2, alpha=0.01,
          seed=0, data=None, segments=None, progress=True, optimizer=None):
    """Train an ``MLP`` on the spiral data and return a ``TrainingResult``.

    Args:
        n_epochs: passes over the data.
        batch_size: examples per step.
        n_units, n_layers: the MLP's hidden layers.
        alpha: Adam's step size.
        seed: seeds the weights (``minichain.random.seed``), the data and the
            order of the minibatches, so a run is reproducible.
        data: ``(x, t)``; by default ``make_spiral(seed=seed)``.
        segments: if given, train through ``checkpoint_sequential`` with this
            many segments (same results, less memory).
        progress: show a tqdm progress bar (if tqdm is installed).
        optimizer: an optimizer to use instead of ``Adam(alpha)``.
    """
    x, t = mc.datasets.make_spiral(seed=seed) if data is None else data
    mc.random.seed(seed)
    model = MLP(n_units, int(t.max()) + 1, n_layers)
    if mc.backend.get_array_module(x) is not numpy:  # CuPy data: a GPU model
        model.to_gpu()
    optimizer = optimizer or mc.optimizers.Adam(alpha=alpha)
    optimizer.setup(model)
    batches = mc.datasets.SerialIterator((x, t), batch_size, seed=seed)
    history = {"loss": [], "accuracy": []}

    bar = _progress_bar(n_epochs, disable=not progress)
    for _ in range(n_epochs):
        loss_sum = correct = 0.0
        for _ in range(len(batches)):
            x_batch, t_batch = next(batches)
            loss, accuracy = loss_and_accuracy(model, x_batch, t_batch,
                                               segments)
            model.cleargrads()
            loss.backward()
            optimizer.update()
            loss_sum += float(loss.array) * len(t_batch)
            correct += float(accuracy.array) * len(t_batch)
        history["loss"].append(loss_sum / len(t))
        history["accuracy"].append(correct / len(t))
        bar.set_postfix(loss="{:.4f}".format(history["loss"][-1]),
                        accuracy="{:.3f}".format(history["accuracy"][-1]))
        bar.update(1)
    bar.close()
    _, final_accuracy = evaluate(model, x, t)
    return TrainingResult(model, history, final_accuracy)


def decision_boundary(model, x=None, resolution=200, margin=0.1):
    """The class the model predicts at every point of a grid.

    Args:
        model: a trained classifier of 2-D points.
        x: the data ``(N, 2)``, to fit the grid around (default: the square
            ``[-1, 1]^2``, where the spiral lies).
        resolution: grid points per axis.
        margin: extra room around the data, as a fraction of its extent.

    Returns:
        ``(xx, yy, classes)``, each ``(resolution, resolution)``:
        ``plt.contourf(xx, yy, classes)`` draws the regions.
    """
    if x is None:
        low, high = numpy.array([-1.0, -1.0]), numpy.array([1.0, 1.0])
    else:
        low, high = x.min(axis=0), x.max(axis=0)
    pad = margin * (high - low)
    xs = numpy.linspace(low[0] - pad[0], high[0] + pad[0], resolution)
    ys = numpy.linspace(low[1] - pad[1], high[1] + pad[1], resolution)
    xx, yy = numpy.meshgrid(xs, ys)
    points = numpy.stack([xx.ravel(), yy.ravel()], axis=1).astype(
        numpy.float32)
    if model.xp is not numpy:  # a model on the GPU
        points = mc.backend.to_gpu(points)
    with mc.using_config("train", False), mc.no_backprop_mode():
        scores = model(points).array
    classes = mc.backend.to_cpu(scores.argmax(axis=1)).reshape(xx.shape)
    return xx, yy, classes


def step_memory(model, x, t, segments=None):
    """Peak bytes held during one forward+backward (``mc.memory.measure``).

    The parameters' gradients are cleared first, so every call measures the
    same thing; the numbers are deterministic on the CPU.
    """
    model.cleargrads()
    with mc.memory.measure() as measured:
        loss, _ = loss_and_accuracy(model, x, t, segments)
        loss.backward()
        del loss
    return measured.peak


def compare_memory(n_layers=12, n_units=64, n_per_class=200, segments=4,
                   seed=0):
    """Peak bytes of one step of a deep MLP, plain and checkpointed.

    The spiral MLP is too small for memory to matter, so this takes a deeper
    one (``n_layers`` hidden layers): plain, backward needs every hidden
    activation kept; with ``segments`` only the boundaries stay and one
    segment is recomputed at a time.

    Returns:
        dict with ``plain`` and ``checkpointed`` (peak bytes) and
        ``activation`` (bytes of one hidden activation, for scale).
    """
    x, t = mc.datasets.make_spiral(n_per_class=n_per_class, seed=seed)
    mc.random.seed(seed)
    model = MLP(n_units, int(t.max()) + 1, n_layers)
    model(x)  # create the lazy weights outside the measurement
    return {
        "plain": step_memory(model, x, t),
        "checkpointed": step_memory(model, x, t, segments),
        "activation": x.shape[0] * n_units * x.dtype.itemsize,
    }


class _NoBar:
    """Stands in for tqdm when it is missing or disabled."""

    def set_postfix(self, **kwargs):
        pass

    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress_bar(total, disable):
    if disable:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc="epochs")
