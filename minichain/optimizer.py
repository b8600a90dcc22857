"""Optimizers: turn the gradients backward left in the parameters into steps.

The pieces, in the order one ``update()`` runs them:

1. **Check** every gradient (type, shape, dtype; NaN/inf in debug mode)
   *before touching anything*, so an update that fails changes no parameter.
2. **Unscale**: a backward run with ``loss_scale=s`` left every gradient
   multiplied by ``s`` (and marked the parameter with ``_loss_scale``);
   divide it out so the step is the same as without scaling.
3. **Hooks** (``add_hook``): functions of the whole optimizer that edit the
   gradients first, e.g. ``WeightDecay`` and ``GradientClipping`` below.
4. **Update rules**: each parameter has its own ``UpdateRule`` (stored in
   ``param.update_rule``) holding its state (momentum, Adam's moments) and
   changing ``param.array`` in place.

``SGD``, ``MomentumSGD`` and ``Adam`` (in ``minichain.optimizers``) only
write the update rule; everything else is here.
"""

import math

from minichain import backend
from minichain.configuration import config
from minichain.variable import Variable


class Hyperparameter:
    """The hyperparameters of an optimizer (``lr``, ``momentum``...).

    One object is shared by the optimizer and all its update rules, so
    ``optimizer.lr = 0.1`` changes the rate of every parameter. To give one
    parameter its own value, give its rule a copy:
    ``rule.hyperparam = rule.hyperparam.copy(); rule.hyperparam.lr = 0``.
    """

    def __init__(self, **values):
        self.__dict__.update(values)

    def copy(self):
        return Hyperparameter(**self.__dict__)

    def __repr__(self):
        return "Hyperparameter({})".format(", ".join(
            "{}={!r}".format(k, v) for k, v in sorted(self.__dict__.items())))


class UpdateRule:
    """How one parameter is updated; holds that parameter's state.

    Subclasses write ``init_state(param)`` (make ``self.state`` arrays with
    the parameter's array module, so CuPy works) and ``update_core(param)``
    (change ``param.array`` in place using ``param.grad``).

    Attributes:
        hyperparam: the (shared) hyperparameters.
        state: dict of state arrays, made on the first update.
        t: how many times this parameter has been updated.
        enabled: set to False to freeze the parameter.
    """

    def __init__(self, hyperparam):
        self.hyperparam = hyperparam
        self.state = None
        self.t = 0
        self.enabled = True

    def update(self, param):
        """One step for ``param`` (skipped when disabled or without grad)."""
        if not self.enabled or param.grad is None:
            return
        if self.state is None:
            self.state = {}
            self.init_state(param)
        elif self.state:  # SGD keeps none: nothing to move
            self._follow_device(param)
        self.t += 1
        self.update_core(param)

    def init_state(self, param):
        """Create the state arrays of ``param`` (none by default)."""

    def update_core(self, param):
        raise NotImplementedError

    def _follow_device(self, param):
        # After link.to_gpu()/to_cpu() the state must move with the param.
        xp = backend.get_array_module(param.array)
        for key, value in self.state.items():
            if backend.get_array_module(value) is not xp:
                convert = backend.to_cpu if xp is backend.numpy else \
                    backend.to_gpu
                self.state[key] = convert(value)


class Optimizer:
    """Base class: owns the target link, the hooks and the update loop.

    Usage::

        optimizer = mc.optimizers.SGD(lr=0.1)
        optimizer.setup(model)
        model.cleargrads(); loss = lossfun(x, t); loss.backward()
        optimizer.update()
        # or, the same in one call:
        optimizer.update(lossfun, x, t)
    """

    target = None
    t = 0
    loss_scale = None  # used by update(lossfun, ...) for its backward

    def __init__(self, **hyperparams):
        _check_numbers(type(self).__name__, hyperparams)
        self.hyperparam = Hyperparameter(**hyperparams)
        self._hooks = {}

    def __getattr__(self, name):
        # optimizer.lr reads the shared hyperparameter.
        hyperparam = self.__dict__.get("hyperparam")
        if hyperparam is not None and name in hyperparam.__dict__:
            return hyperparam.__dict__[name]
        raise AttributeError("{} has no attribute {!r}".format(
            type(self).__name__, name))

    def __setattr__(self, name, value):
        hyperparam = self.__dict__.get("hyperparam")
        if hyperparam is not None and name in hyperparam.__dict__:
            setattr(hyperparam, name, value)
        else:
            super().__setattr__(name, value)

    def create_update_rule(self):
        """A new UpdateRule sharing ``self.hyperparam`` (subclasses write it)."""
        raise NotImplementedError

    def setup(self, link):
        """Attach to ``link``: give each of its parameters an update rule."""
        from minichain.link import Link
        if not isinstance(link, Link):
            raise TypeError("{}.setup: expected a Link, got {}".format(
                type(self).__name__, type(link)))
        self.target = link
        self.t = 0
        for param in link.params():
            param.update_rule = self.create_update_rule()
        return self

    # ----- hooks -------------------------------------------------------------
    def add_hook(self, hook, name=None):
        """Run ``hook(optimizer)`` before every update (after unscaling)."""
        if not callable(hook):
            raise TypeError("add_hook: the hook must be callable")
        name = name or getattr(hook, "name", None) or type(hook).__name__
        if name in self._hooks:
            raise KeyError("hook {} already exists".format(name))
        self._hooks[name] = hook

    def remove_hook(self, name):
        del self._hooks[name]

    # ----- the update --------------------------------------------------------
    def update(self, lossfun=None, *args, **kwargs):
        """Update every parameter of the target from its gradient.

        With ``lossfun``: clear the gradients, compute
        ``loss = lossfun(*args, **kwargs)``, backprop it (with
        ``self.loss_scale``), drop the loss (so its graph is freed before the
        step), then update.
        """
        if self.target is None:
            raise RuntimeError("{}.update: call setup(link) before update()"
                               .format(type(self).__name__))
        if lossfun is not None:
            if not callable(lossfun):
                raise TypeError("{}.update: lossfun must be callable, got {}"
                                .format(type(self).__name__, type(lossfun)))
            self.target.cleargrads()
            loss = lossfun(*args, **kwargs)
            if not isinstance(loss, Variable):
                raise TypeError("{}.update: lossfun must return a Variable "
                                "(the loss), got {}".format(
                                    type(self).__name__, type(loss)))
            loss.backward(loss_scale=self.loss_scale)
            del loss
        params = self._params_to_update()
        self._check_grads(params)
        for param in params:
            if param._loss_scale is not None:
                scale_grad(param, 1.0 / param._loss_scale)
                param._loss_scale = None
        for hook in self._hooks.values():
            hook(self)
        self.t += 1
        for param in params:
            param.update_rule.update(param)

    def params_with_grad(self):
        """The parameters this step will update: ``[(path, param), ...]``."""
        chosen = {id(param) for param in self._params_to_update()}
        return [(path, param) for path, param
                in self.target.namedparams(include_uninit=False)
                if id(param) in chosen]

    def _params_to_update(self):
        result = []
        for param in self.target.params(include_uninit=False):
            if param.update_rule is None:  # added after setup()
                param.update_rule = self.create_update_rule()
            if param.update_rule.enabled and param.grad is not None:
                result.append(param)
        return result

    def _path_of(self, param):
        """``'/l1/W'``: found only to word an error (walking with paths
        every step would cost a string per parameter)."""
        for path, candidate in self.target.namedparams():
            if candidate is param:
                return path
        return "<unregistered>"

    def _check_grads(self, params):
        """Raise, naming the parameter, before any parameter is changed."""
        check_finite = config.debug
        checked = None  # the hyperparameters most parameters share
        for param in params:
            # ``optimizer.lr = "0.1"`` after construction would otherwise
            # fail half-way through the loop, some parameters updated.
            hyperparams = param.update_rule.hyperparam.__dict__
            if hyperparams is not checked:
                if not all(map(_is_number, hyperparams.values())):
                    _check_numbers("{} ({})".format(type(self).__name__,
                                                    self._path_of(param)),
                                   hyperparams)
                checked = hyperparams
            data, grad = param.array, param.grad
            if type(grad) is type(data) and grad.shape == data.shape and (
                    grad.dtype == data.dtype) and not check_finite:
                continue  # the common case; the checks below word errors
            path = self._path_of(param)
            if type(grad) is not type(data):
                raise TypeError(
                    "{}: parameter {} is a {} but its gradient is a {}".format(
                        type(self).__name__, path, type(data).__name__,
                        type(grad).__name__))
            if grad.shape != data.shape or grad.dtype != data.dtype:
                raise ValueError(
                    "{}: the gradient of {} has shape {} and dtype {}, but the "
                    "parameter has shape {} and dtype {}".format(
                        type(self).__name__, path, grad.shape, grad.dtype,
                        data.shape, data.dtype))
            if check_finite:
                xp = backend.get_array_module(grad)
                if not bool(xp.isfinite(grad).all()):
                    raise RuntimeError(
                        "{}: NaN or inf in the gradient of {}; no parameter "
                        "was updated".format(type(self).__name__, path))


def _is_number(value):
    return (not isinstance(value, (bool, str, bytes))
            and hasattr(value, "__float__"))


def _check_numbers(where, hyperparams):
    for name, value in hyperparams.items():
        if not _is_number(value):
            raise TypeError("{}: hyperparameter {} must be a number, got {!r}"
                            .format(where, name, value))


# ----- editing gradients safely ----------------------------------------------
def writable_grad(param):
    """``param.grad``, made safe to change in place, and returned.

    A buffer the parameter owns (after ``zerograds()``) is changed directly.
    Any other gradient array may be shared (a backward can hand the same
    array to two inputs), so it is copied first; the parameter then owns the
    copy, and later edits in this step reuse it.
    """
    if not param._grad_owned:
        param.grad = param.grad.copy()
        param._grad_owned = True
    return param.grad


def scale_grad(param, factor):
    """Multiply ``param.grad`` by ``factor`` in place (keeps its dtype)."""
    grad = writable_grad(param)
    grad *= grad.dtype.type(factor)


class WeightDecay:
    """Optimizer hook: ``grad += rate * param`` (L2 regularisation).

    Adding ``rate * W`` to the gradient is the gradient of
    ``rate / 2 * ||W||^2``, so every step also shrinks the weights a little.
    """

    name = "WeightDecay"

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, optimizer):
        for _, param in optimizer.params_with_grad():
            grad = writable_grad(param)
            grad += grad.dtype.type(self.rate) * param.array


class GradientClipping:
    """Optimizer hook: rescale all gradients so their total L2 norm <= threshold.

    The norm is taken over *all* parameters together, so the direction of the
    step is kept and only its length is capped: a guard against the rare
    huge gradient that would throw the weights far away.
    """

    name = "GradientClipping"

    def __init__(self, threshold):
        self.threshold = threshold

    def __call__(self, optimizer):
        params = [p for _, p in optimizer.params_with_grad()]
        squares = 0.0
        for param in params:
            grad = param.grad
            xp = backend.get_array_module(grad)
            squares += float(xp.vdot(grad.ravel(), grad.ravel()))
        norm = math.sqrt(squares)
        if norm > self.threshold:
            rate = self.threshold / norm
            for param in params:
                scale_grad(param, rate)
