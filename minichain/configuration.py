"""Configuration: global defaults plus per-thread overrides.

Chainer keeps two objects. ``global_config`` holds the defaults every thread
sees; ``config`` is a thread-local view on top of it. Reading
``config.debug`` returns this thread's value if it set one, otherwise the
global one. So ``no_backprop_mode()`` in one thread never changes what another
thread builds (two threads can train two models at once).
"""

import contextlib
import os
import sys
import threading
import weakref


# The settings ``FunctionNode.apply`` reads on every operation.
ENGINE_SETTINGS = ("debug", "type_check", "enable_backprop", "lazy_grad_sum",
                   "reference_mode")


class _EngineView:
    """One thread's engine settings and global hooks, in slots.

    Why: reading ``config.debug`` first finds the calling thread's values
    (``threading.local`` does that on every read), which costs about a tenth
    of NumPy's time to multiply ten numbers, and ``apply`` needs four
    settings and the hooks per operation. So each thread keeps them here:
    ``config._view`` is one thread-local read, its slots are plain ones.
    ``LocalConfig`` and ``GlobalConfig`` write every change of those four
    settings here too, so the view always reads what ``config`` reads;
    ``own`` names the settings this thread set itself, which a global
    change does not touch.
    """

    __slots__ = ENGINE_SETTINGS + ("function_hooks", "own", "__weakref__")


_views = weakref.WeakSet()  # every thread's view, for GlobalConfig
_lock = threading.Lock()    # a global change and a new view never interleave


class LocalConfig(threading.local):
    """Per-thread view: an attribute set here shadows the global one.

    ``threading.local`` keeps one attribute dict per thread. The global
    defaults are stored as *class* attributes of this class, so a name the
    thread never set is found by ordinary attribute lookup, and a later
    change to the global value shows through at once.
    """

    def __init__(self):
        # Runs once per thread, on its first use of ``config``.
        view = _EngineView()
        view.function_hooks, view.own = {}, set()
        with _lock:
            for name in ENGINE_SETTINGS:
                _copy_global(view, name)
            _views.add(view)
        super().__setattr__("_view", view)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name in ENGINE_SETTINGS:
            view = self._view
            with _lock:
                view.own.add(name)
                setattr(view, name, value)

    def __delattr__(self, name):
        super().__delattr__(name)
        if name in ENGINE_SETTINGS:
            view = self._view
            with _lock:
                view.own.discard(name)
                _copy_global(view, name)

    def show(self, file=sys.stdout):
        merged = global_config._values()
        merged.update(vars(self))
        del merged["_view"]
        _show(merged, file)


def _copy_global(view, name):
    """Give ``view`` the global value of ``name`` (none if it has none)."""
    if hasattr(LocalConfig, name):
        setattr(view, name, getattr(LocalConfig, name))
    elif hasattr(view, name):
        delattr(view, name)


class GlobalConfig:
    """The defaults shared by all threads (stored on ``LocalConfig``)."""

    def __init__(self):
        object.__setattr__(self, "_names", set())

    def __getattr__(self, name):
        if name in self._names:
            return getattr(LocalConfig, name)
        raise AttributeError("global config has no key {!r}".format(name))

    def __setattr__(self, name, value):
        with _lock:
            self._names.add(name)
            setattr(LocalConfig, name, value)
            _update_views(name)

    def __delattr__(self, name):
        if name not in self._names:
            raise AttributeError(name)
        with _lock:
            self._names.discard(name)
            delattr(LocalConfig, name)
            _update_views(name)

    def _values(self):
        return {name: getattr(LocalConfig, name) for name in self._names}

    def show(self, file=sys.stdout):
        _show(self._values(), file)


def _update_views(name):
    """A global value changed: every thread that did not set its own sees it."""
    if name in ENGINE_SETTINGS:
        for view in _views:
            if name not in view.own:
                _copy_global(view, name)


def _show(values, file):
    """Print ``key value`` lines, keys padded to the longest key plus one."""
    if not values:
        return
    width = max(len(key) for key in values)
    for key in sorted(values):
        file.write(f"{key.ljust(width)} {values[key]}\n")


def _env_flag(name, default):
    value = os.environ.get(name)
    if value is None:
        return default
    if value.strip() not in ("0", "1"):
        raise ValueError("environment variable {} must be 0 or 1, got {!r}"
                         .format(name, value))
    return value.strip() == "1"


global_config = GlobalConfig()
global_config.debug = _env_flag("MINICHAIN_DEBUG", False)
global_config.enable_backprop = True
global_config.train = True
global_config.type_check = _env_flag("MINICHAIN_TYPE_CHECK", True)
global_config.lazy_grad_sum = _env_flag("MINICHAIN_LAZY_GRAD_SUM", False)
# The engine as the chapters print it (see ``reference_mode`` below).
global_config.reference_mode = _env_flag("MINICHAIN_REFERENCE_MODE", False)
global_config.in_recomputing = False
global_config.will_recompute = False

config = LocalConfig()

_MISSING = object()


@contextlib.contextmanager
def using_config(name, value, config=config):
    """Set ``config.<name>`` to ``value`` inside a ``with`` block, then restore.

    On exit the previous *local* value comes back; if the thread had none, the
    local key is removed so the global default shows through again.
    """
    if isinstance(config, LocalConfig):
        old = config.__dict__.get(name, _MISSING)  # this thread's own value
    else:
        old = getattr(config, name, _MISSING)
    setattr(config, name, value)
    try:
        yield
    finally:
        if old is _MISSING:
            delattr(config, name)
        else:
            setattr(config, name, old)


def no_backprop_mode():
    """Build no graph inside the block: outputs get no creator.

    Use it for evaluation and for any computation you will not differentiate;
    the arrays that backward would need are then freed at once.
    """
    return using_config("enable_backprop", False)


def force_backprop_mode():
    """Build the graph again, even inside ``no_backprop_mode()``."""
    return using_config("enable_backprop", True)


def reference_mode():
    """Run the engine on its reference path inside the block.

    The reference path is the engine as chapters 02–05 build it by hand:
    ``FunctionNode._apply_reference`` and ``backprop._walk_reference``, with
    every gradient a Variable and every check made in full. The default path
    gives the same values, the same gradients bit for bit and the same graph,
    only faster (chapter 13 shows each of its shortcuts as a difference from
    the reference; tests/test_reference_path.py compares them exactly). Use it to
    step through the engine in a debugger, or to rule the fast path out.
    ``MINICHAIN_REFERENCE_MODE=1`` turns it on for a whole process.
    """
    return using_config("reference_mode", True)


def is_debug():
    """True when debug mode is on (NaN checks, stack traces, extra checks)."""
    return bool(config.debug)


def set_debug(debug):
    """Turn debug mode on or off for this thread."""
    if not isinstance(debug, bool):
        raise TypeError("set_debug: debug must be True or False, got {!r}"
                        .format(debug))
    config.debug = debug
