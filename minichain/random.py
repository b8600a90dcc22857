"""Where minichain's randomness comes from, and how to replay it.

Why this module exists: ``F.forget`` runs a function twice, once in the
forward pass and again in backward to recompute what it threw away. If the
function draws random numbers (``F.dropout`` draws a mask), the second run
must draw *the same* numbers, or the gradient belongs to a different
function than the one whose output was used. So every random draw inside
minichain goes through ``get_generator()``, and ``forget`` brackets its
first run with ``get_state()`` and its second with ``set_state(state)``.

    state = minichain.random.get_state()
    a = F.dropout(x)                 # draws a mask
    minichain.random.set_state(state)
    b = F.dropout(x)                 # draws the same mask: a == b

The state covers minichain's own generators (one per thread: two threads
training two models do not disturb each other's streams) and NumPy's global
``numpy.random`` state, for user code that calls ``numpy.random.rand``
inside a forgotten function.

CuPy's random states live on the GPU and cannot be copied out. For CuPy the
state is therefore captured by *re-keying*: ``get_state`` starts fresh CuPy
streams from a new key (derived from minichain's seed, so runs stay
reproducible) and records that key; ``set_state`` restarts them from it.
"""

import threading

import numpy

from minichain import backend

_local = threading.local()
_lock = threading.Lock()
# Threads that make their generators after ``seed`` derive them from here.
_base_seed_sequence = None


def _thread_state():
    """This thread's generators, made on first use."""
    state = getattr(_local, "initialized", False)
    if not state:
        with _lock:
            base = _base_seed_sequence
            sequence = (numpy.random.SeedSequence() if base is None
                        else base.spawn(1)[0])
        _reset(sequence)
    return _local


def _reset(sequence):
    """Start this thread's generators from a ``SeedSequence``."""
    numpy_sequence, cupy_sequence = sequence.spawn(2)
    _local.numpy_generator = numpy.random.Generator(
        numpy.random.PCG64(numpy_sequence))
    _local.cupy_keys = cupy_sequence   # spawns keys for CuPy streams
    _local.cupy_key = _new_cupy_key()
    _local.cupy_generator = None       # made lazily from cupy_key
    _local.cupy_used = False
    _local.initialized = True


def _new_cupy_key():
    return int(_local.cupy_keys.spawn(1)[0].generate_state(1)[0])


def get_generator(xp=numpy):
    """This thread's random generator for the array module ``xp``.

    Returns a ``numpy.random.Generator`` (or, for ``xp`` = cupy, a CuPy
    generator from ``cupy.random.default_rng``). Draw from it, not from
    ``numpy.random``, in any function that ``forget`` may replay.
    """
    local = _thread_state()
    if xp is numpy:
        return local.numpy_generator
    if local.cupy_generator is None:
        local.cupy_generator = xp.random.default_rng(local.cupy_key)
    local.cupy_used = True
    return local.cupy_generator


def seed(seed):
    """Reseed minichain's generators (this thread's, and threads made later).

    Two runs after ``seed(s)`` with the same ``s`` draw the same numbers.
    NumPy's global ``numpy.random`` is left alone.
    """
    global _base_seed_sequence
    sequence = numpy.random.SeedSequence(seed)
    with _lock:
        _base_seed_sequence = sequence.spawn(1)[0]
    _reset(sequence)


class RandomState:
    """An opaque snapshot made by ``get_state``; pass it to ``set_state``."""

    __slots__ = ("numpy_global", "numpy_generator", "cupy_key",
                 "cupy_global_key")

    def __repr__(self):
        return "<minichain.random.RandomState>"


def get_state():
    """Capture every random state minichain's functions may draw from.

    Returns an opaque ``RandomState`` holding NumPy's global state, the
    state of this thread's minichain generator, and the keys of the CuPy
    streams (see the module docstring) when a GPU is available.
    """
    local = _thread_state()
    state = RandomState()
    state.numpy_global = numpy.random.get_state()
    state.numpy_generator = local.numpy_generator.bit_generator.state
    state.cupy_key = state.cupy_global_key = None
    if backend.available:
        if local.cupy_used:  # re-key, so the stream from here is replayable
            local.cupy_key = _new_cupy_key()
            local.cupy_generator = None
            local.cupy_used = False
        state.cupy_key = local.cupy_key
        state.cupy_global_key = _new_cupy_key()
        backend.cupy.random.seed(state.cupy_global_key)
    return state


def set_state(state):
    """Restore the random states captured by ``get_state``.

    Afterwards, ``get_generator()`` (and ``numpy.random``) draw exactly the
    numbers they drew right after ``get_state`` returned ``state``.
    """
    if not isinstance(state, RandomState):
        raise TypeError("set_state expects the object returned by "
                        "minichain.random.get_state(), got {}"
                        .format(type(state)))
    local = _thread_state()
    numpy.random.set_state(state.numpy_global)
    local.numpy_generator.bit_generator.state = state.numpy_generator
    if state.cupy_key is not None and backend.available:
        local.cupy_key = state.cupy_key
        local.cupy_generator = None
        local.cupy_used = False
        backend.cupy.random.seed(state.cupy_global_key)
