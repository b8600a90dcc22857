"""Measuring the memory that arrays take while a block of code runs.

    with mc.memory.measure() as m:
        loss = model(x)
        loss.backward()
    m.peak      # most bytes held at once, above the level at entry
    m.final     # bytes still held at the end, above the level at entry
    m.timeline  # [("start", 0), ("forward:Linear", 1048576), ...]

    mc.memory.kept_bytes(loss)  # bytes the graph behind loss keeps, counted

NumPy reports every array buffer it allocates to Python's ``tracemalloc``,
so on the CPU the count is exact and the same code gives the same bytes on
every run (which is why tests may assert memory, but never time). The count
also includes the Python objects made in the block (Variables, nodes,
tuples), a few hundred bytes per function. On a GPU the count comes from
CuPy's memory pool instead: the bytes of the blocks the arrays occupy.

Determinism has three conditions, all met by ``measure``'s own habits or
easy to meet: the code has run once before (first calls fill NumPy's and
minichain's caches), the cyclic garbage collector starts from the same
state (``measure`` runs ``gc.collect()`` on entry), and, for byte-exact
comparisons across processes, a fixed ``PYTHONHASHSEED``. Within one
long process the arrays' bytes repeat exactly, while the Python objects
may differ by a few hundred bytes from run to run (a cache of CPython's or
NumPy's that grows during the block), which is noise next to arrays.
Arrays allocated before tracing started (``measure`` starts
``tracemalloc`` if it is off) are not seen when they are freed.

A bare ``tracemalloc`` peak can be asked for only once per interval, since
reading one means restarting it. Here several intervals are open at once
(a ``measure`` block, and inside it each function a ``MemoryHook`` follows),
so every restart first hands the peak reached so far to each open interval
(``_HostCounter._fold``).
"""

import gc
import tracemalloc


class _Interval:
    """The peak of a counter between ``open_interval`` and ``close_interval``."""

    __slots__ = ("start", "peak")

    def __init__(self, start):
        self.start = start
        self.peak = start


class _HostCounter:
    """Bytes traced by ``tracemalloc``: NumPy arrays and Python objects."""

    def __init__(self):
        self._intervals = []
        self._users = 0
        self._started_tracing = False

    def acquire(self):
        """Start tracing if nobody did; ``release`` stops it only if we did."""
        if self._users == 0 and not tracemalloc.is_tracing():
            tracemalloc.start()
            self._started_tracing = True
        self._users += 1

    def release(self):
        self._users -= 1
        if self._users == 0 and self._started_tracing:
            tracemalloc.stop()
            self._started_tracing = False

    def current(self):
        return tracemalloc.get_traced_memory()[0]

    def open_interval(self):
        self._fold()
        interval = _Interval(self.current())
        self._intervals.append(interval)
        return interval

    def close_interval(self, interval):
        self._fold()
        self._intervals.remove(interval)
        return interval.peak

    def _fold(self):
        """Give tracemalloc's peak to every open interval, then restart it."""
        peak = tracemalloc.get_traced_memory()[1]
        for interval in self._intervals:
            if peak > interval.peak:
                interval.peak = peak
        tracemalloc.reset_peak()


class _DeviceCounter:
    """Bytes in use in CuPy's memory pool, followed through a pool hook."""

    def __init__(self):
        self._intervals = []
        self._users = 0
        self._hook = None
        self.used = 0

    def acquire(self):
        if self._users == 0:
            self._hook = _pool_hook(self)
            self._hook.__enter__()
        self._users += 1

    def release(self):
        self._users -= 1
        if self._users == 0:
            self._hook.__exit__(None, None, None)
            self._hook = None

    def current(self):
        return self.used

    def open_interval(self):
        interval = _Interval(self.used)
        self._intervals.append(interval)
        return interval

    def close_interval(self, interval):
        self._intervals.remove(interval)
        return interval.peak

    def allocated(self, size):
        self.used += size
        for interval in self._intervals:
            if self.used > interval.peak:
                interval.peak = self.used

    def freed(self, size):
        self.used -= size


def _pool_hook(counter):
    """A CuPy memory-pool hook that reports each block to ``counter``."""
    from cupy.cuda import memory_hook

    class PoolHook(memory_hook.MemoryHook):
        name = "minichain.memory"

        def malloc_postprocess(self, **kwargs):
            counter.allocated(kwargs["mem_size"])

        def free_postprocess(self, **kwargs):
            counter.freed(kwargs["mem_size"])

    return PoolHook()


_counters = {}


def get_counter(device="cpu"):
    """The shared byte counter of ``device``: ``"cpu"`` or ``"gpu"``."""
    if device not in ("cpu", "gpu"):
        raise ValueError("memory: device must be 'cpu' or 'gpu', got {!r}".format(
            device))
    if device not in _counters:
        if device == "gpu":
            from minichain import backend
            if not backend.available:
                raise RuntimeError(
                    "memory.measure(device='gpu') needs CuPy and a GPU; "
                    "measure NumPy arrays with device='cpu'")
        _counters[device] = _HostCounter() if device == "cpu" else (
            _DeviceCounter())
    return _counters[device]


class measure:
    """Context manager: the bytes arrays hold while the block runs.

    Args:
        device: ``"cpu"`` (NumPy, through ``tracemalloc``) or ``"gpu"``
            (CuPy, through its memory pool).

    After the block (all in bytes, relative to the level at entry):
        peak: the most held at any moment.
        final: what is still held at the end.
        timeline: ``[(event, bytes), ...]``, starting with ``("start", 0)``
            and ending with ``("end", final)``; in between one entry per
            function step, ``"forward:<label>"`` or ``"backward:<label>"``,
            with the bytes held right after that step. A ``MemoryHook``
            registered for the block feeds it.
    """

    def __init__(self, device="cpu"):
        self.device = device
        self.peak = None
        self.final = None
        self.timeline = None

    def __enter__(self):
        from minichain.function_hooks.memory_hook import MemoryHook
        if "_hook" in self.__dict__:  # checked before anything is acquired
            raise RuntimeError(
                "memory.measure: this measure block is already open; nest a "
                "new one instead: with measure() as outer, measure() as inner")
        self._counter = get_counter(self.device)
        self._counter.acquire()
        # A name of its own, so a MemoryHook the user registered (or an
        # enclosing measure block) stays registered beside this one.
        self._hook = MemoryHook(self.device)
        self._hook.name = "MemoryHook(measure {})".format(id(self))
        # Collect garbage left from before, so the cyclic collector starts
        # from zero: it then runs at the same points of the block every
        # time, and frees only garbage the block itself made.
        gc.collect()
        # Register first: the registry's own bookkeeping then happens
        # before the level is read, not inside the measured block.
        self._hook.__enter__()
        self._interval = self._counter.open_interval()
        self._hook.origin = self._interval.start
        return self

    def __exit__(self, *exc):
        self._hook.__exit__(*exc)
        peak = self._counter.close_interval(self._interval)
        base = self._interval.start
        self.peak = peak - base
        self.final = self._counter.current() - base
        self.timeline = ([("start", 0)] + self._hook.timeline
                         + [("end", self.final)])
        self._counter.release()
        del self._hook, self._interval, self._counter


def kept_bytes(*outputs):
    """Bytes of the arrays the graph behind ``outputs`` keeps for backward.

    Counted, not measured: walks from the outputs through their creators
    and adds up the arrays the graph holds, each once (an array two nodes
    hold counts once): the arrays functions retained for their backward
    (``retain_inputs``, kept on the input nodes, and ``retain_outputs``, kept
    by the function even when the output Variable is gone). Arrays a
    function keeps in attributes of its own (a dropout mask) are not seen;
    ``measure`` sees those too. Chapter 07 counts the same bytes by hand.

    >>> x = Variable(numpy.ones(1000, numpy.float32))
    >>> y = F.exp(x)                 # exp keeps its output for backward
    >>> kept_bytes(y) == y.array.nbytes
    True
    """
    from minichain.variable import Variable
    for i, y in enumerate(outputs):
        if not isinstance(y, Variable):
            raise TypeError("kept_bytes: outputs must be Variables; output {} "
                            "is {}".format(i, type(y)))
    arrays, seen = {}, set()
    stack = [y.node.creator_node for y in outputs]
    for y in outputs:
        _note(arrays, y.node.data)
    while stack:
        function = stack.pop()
        if function is None or function in seen or function.inputs is None:
            continue
        seen.add(function)
        for array in function._retained_output_data or ():
            _note(arrays, array)
        for node in function.inputs:
            _note(arrays, node.data)
            stack.append(node.creator_node)
    return sum(array.nbytes for array in arrays.values())


def _note(arrays, array):
    if array is not None:
        arrays[id(array)] = array
