"""Checkpointing a sequence of functions: ``forget`` applied per segment.

A chain of ``L`` blocks keeps ``L`` activations for backward. Cut it into
``s`` segments and wrap each in ``F.forget``: forward then keeps only the
``s`` segment boundaries (the checkpoints), and backward rebuilds one
segment of ``L/s`` activations at a time. The memory for activations falls
from ``L`` to about ``s + L/s``, smallest at ``s = sqrt(L)`` (16 instead of
64 for ``L = 64``); the price is one more forward of the whole chain.

Almost: the last segment keeps its graph from forward to backward instead
of being recomputed. Its backward is the first to run, right after the
forward, when the other segments hold only their checkpoints, so keeping
its activations then costs no more memory than recomputing them would, and
the extra forward shrinks by one segment. (Its graph is dropped as its
backward runs; a second backward, or double backprop, recomputes it.)
"""

from minichain.functions.util.forget import _forget


def checkpoint_sequential(functions, segments, x):
    """Apply ``functions`` in order to ``x``, forgetting inside each segment.

    Args:
        functions: a list of callables (functions or links); each takes the
            previous one's output.
        segments: into how many contiguous groups to cut the list; the
            groups differ in length by at most one, longer ones first.
            More segments than functions gives one function per segment.
        x: the input Variable or array.

    Returns:
        The output of the last function (a Variable, or a tuple if the last
        function returns one).

    >>> blocks = [lambda h: F.tanh(h) for _ in range(4)]
    >>> y = checkpoint_sequential(blocks, 2, x)   # 2 segments of 2 blocks
    """
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError("checkpoint_sequential: segments must be a positive "
                         "int, got {!r}".format(segments))
    if not functions:
        raise ValueError("checkpoint_sequential needs at least one function")
    for i, f in enumerate(functions):
        if not callable(f):
            raise TypeError("checkpoint_sequential: functions[{}] must be "
                            "callable, got {}".format(i, type(f)))
    h = x if isinstance(x, tuple) else (x,)
    groups = split_into_segments(functions, segments)
    for k, group in enumerate(groups):
        h = _forget(_Segment(group), h, keep_graph=k == len(groups) - 1)
        if not isinstance(h, tuple):
            h = (h,)
    return h[0] if len(h) == 1 else h


def split_into_segments(functions, segments):
    """Cut a list into ``min(segments, len)`` contiguous, near-equal groups.

    >>> split_into_segments([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    """
    n = len(functions)
    segments = min(segments, n)
    size, extra = divmod(n, segments)
    groups, start = [], 0
    for k in range(segments):
        stop = start + size + (1 if k < extra else 0)
        groups.append(functions[start:stop])
        start = stop
    return groups


class _Segment:
    """One segment: the functions of a group applied one after another."""

    def __init__(self, functions):
        self.functions = functions

    def __call__(self, *h):
        for f in self.functions:
            h = f(*h)
            if not isinstance(h, tuple):
                h = (h,)
        return h[0] if len(h) == 1 else h
