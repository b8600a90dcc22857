"""Links and chains: objects that own parameters.

A ``Link`` is a piece of a model with parameters (``Linear`` owns ``W`` and
``b``); a ``Chain`` is a link made of other links (an ``MLP`` owns three
``Linear``). Both register what they own by plain attribute assignment
inside ``with self.init_scope():``::

    class TwoLayer(mc.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(2, 10)   # a child link
                self.l2 = L.Linear(10, 3)

        def forward(self, x):
            return self.l2(F.relu(self.l1(x)))

Why a scope and not "every Parameter attribute is a parameter"? The scope
makes registration explicit: a Parameter stored outside it (a frozen copy,
a cache) is never returned by ``params()``, so an optimizer never updates it.

The registry is only a list of attribute *names*; the objects themselves
stay ordinary attributes, so ``model.l1.W`` is how you reach them.
"""

import contextlib
import warnings

from minichain import backend
from minichain.variable import Parameter


class Link:
    """A model component that owns Parameters.

    Attributes set inside ``with self.init_scope():`` to a ``Parameter`` are
    registered under their attribute name. Calling a link calls its
    ``forward`` method, which subclasses write.
    """

    def __init__(self):
        # object.__setattr__: our own __setattr__ reads these two fields.
        object.__setattr__(self, "_param_names", [])
        object.__setattr__(self, "_within_init_scope", False)
        self.name = None
        self._device = "cpu"

    # ----- registration ----------------------------------------------------
    @property
    def within_init_scope(self):
        """True inside ``with self.init_scope():`` (registration is on)."""
        return getattr(self, "_within_init_scope", False)

    @contextlib.contextmanager
    def init_scope(self):
        """Register Parameters (and, in a Chain, Links) assigned in the block."""
        if not hasattr(self, "_param_names"):
            raise RuntimeError(
                "{}.init_scope(): call super().__init__() first".format(
                    type(self).__name__))
        old = self._within_init_scope
        object.__setattr__(self, "_within_init_scope", True)
        try:
            yield
        finally:
            object.__setattr__(self, "_within_init_scope", old)

    def __setattr__(self, name, value):
        if self.within_init_scope and isinstance(value, Parameter):
            value.name = name
            if name not in self._param_names:
                self._param_names.append(name)
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in getattr(self, "_param_names", ()):
            self._param_names.remove(name)
        super().__delattr__(name)

    # ----- calling ---------------------------------------------------------
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            "{} defines no forward(): write one to make the link callable"
            .format(type(self).__name__))

    # ----- walking the parameters -------------------------------------------
    def params(self, include_uninit=True):
        """Yield every registered Parameter (of this link and its children).

        A lazily sized parameter (``Linear(None, 3)`` before its first call)
        has no array yet; ``include_uninit=False`` leaves those out.
        The same walk as ``namedparams`` without building path strings:
        the optimizer and ``cleargrads`` take it every step.
        """
        for name in self._param_names:
            param = getattr(self, name)
            if include_uninit or param.array is not None:
                yield param

    def namedparams(self, include_uninit=True):
        """Yield ``(path, Parameter)`` pairs; the path of ``W`` here is ``'/W'``.

        In a Chain the path names the way down: ``'/l1/W'``.
        """
        for name in self._param_names:
            param = getattr(self, name)
            if include_uninit or param.array is not None:
                yield "/" + name, param

    def children(self):
        """Yield the direct child links (a plain Link has none)."""
        return iter(())

    def links(self, skipself=False):
        """Yield this link (unless ``skipself``) and every link below it."""
        for _, link in self.namedlinks(skipself):
            yield link

    def namedlinks(self, skipself=False):
        """Yield ``(path, link)`` for this link (path ``'/'``) and below."""
        if not skipself:
            yield "/", self

    def count_params(self):
        """The number of scalars in all parameters.

        A lazily sized parameter counts as zero, with a warning: its size is
        only known after the first forward.
        """
        total = 0
        for path, param in self.namedparams():
            if param.array is None:
                warnings.warn(
                    "{} has not been initialized yet (its size comes from the "
                    "first forward), so it counts as 0".format(path),
                    stacklevel=2)
                continue
            total += param.array.size
        return total

    # ----- gradients -------------------------------------------------------
    def cleargrads(self):
        """Drop every parameter's gradient (``grad`` becomes None).

        Prefer this before each backward: the gradient arrays are freed, and
        backward then allocates fresh ones. It costs one allocation per
        parameter per step and nothing in between.
        """
        for param in self.params():
            param.cleargrad()

    def zerograds(self):
        """Fill every parameter's gradient with zeros, reusing its buffer.

        Each parameter then *owns* its gradient buffer and backward adds into
        it in place (see ``Parameter.zerograd``), so the same arrays serve
        every step: no allocation per step, at the price of keeping the
        buffers alive between steps. Prefer it when allocation is the cost
        you are watching (large parameters, a GPU memory pool) and
        ``cleargrads`` otherwise. Lazily sized parameters are skipped.
        """
        for param in self.params(include_uninit=False):
            param.zerograd()

    # ----- devices ---------------------------------------------------------
    @property
    def xp(self):
        """The array module of this link's parameters (numpy or cupy)."""
        return backend.cupy if self._device == "gpu" else backend.numpy

    def to_cpu(self):
        """Move every parameter (and gradient) to host memory; returns self."""
        for param in self.params():
            param.to_cpu()
        for link in self.links():
            object.__setattr__(link, "_device", "cpu")
        return self

    def to_gpu(self, device=None):
        """Move every parameter (and gradient) to the GPU; returns self.

        Raises a RuntimeError naming what is missing when CuPy or a GPU is
        not available. Lazily sized parameters are created on the device of
        the first input they see.
        """
        if not backend.available:
            raise RuntimeError(
                "{}.to_gpu(): CuPy with a working GPU is needed, but none was "
                "found. Install CuPy (pip install 'minichain[gpu]') on a "
                "machine with an NVIDIA GPU, or stay on the CPU."
                .format(type(self).__name__))
        for param in self.params():
            param.to_gpu(device)
        for link in self.links():
            object.__setattr__(link, "_device", "gpu")
        return self

    def __repr__(self):
        return "{}()".format(type(self).__name__)


class Chain(Link):
    """A link made of child links, registered like parameters.

    Inside ``with self.init_scope():`` an attribute set to a Link becomes a
    child; ``params()`` then walks this chain's own parameters and every
    child's, and the paths name the way down (``'/l1/W'``).
    """

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_child_names", [])

    def __setattr__(self, name, value):
        if self.within_init_scope and isinstance(value, Link):
            if value is self:
                raise ValueError("{}: a chain cannot be its own child".format(
                    type(self).__name__))
            value.name = name
            if name not in self._child_names:
                self._child_names.append(name)
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in getattr(self, "_child_names", ()):
            self._child_names.remove(name)
        super().__delattr__(name)

    def __getitem__(self, name):
        """``chain['l1']``: the child named ``name``."""
        if name not in self._child_names:
            raise KeyError(name)
        return getattr(self, name)

    def children(self):
        for name in self._child_names:
            yield getattr(self, name)

    def params(self, include_uninit=True):
        yield from super().params(include_uninit)
        for name in self._child_names:
            yield from getattr(self, name).params(include_uninit)

    def namedparams(self, include_uninit=True):
        yield from super().namedparams(include_uninit)
        for name in self._child_names:
            prefix = "/" + name
            for path, param in getattr(self, name).namedparams(include_uninit):
                yield prefix + path, param

    def namedlinks(self, skipself=False):
        if not skipself:
            yield "/", self
        for name in self._child_names:
            prefix = "/" + name
            for path, link in getattr(self, name).namedlinks():
                yield (prefix if path == "/" else prefix + path), link

    def __repr__(self):
        lines = ["{}(".format(type(self).__name__)]
        for name in self._child_names:
            child = repr(getattr(self, name)).replace("\n", "\n  ")
            lines.append("  ({}): {}".format(name, child))
        lines.append(")")
        return "\n".join(lines)
