"""One switch, ``config.enable_backprop``, and the with-blocks that set it.

``FunctionNode.apply`` records the graph only while ``config.enable_backprop``
is True (chapter 07). ``using_config`` is given; the two modes built on it are
Task 10.
"""

import contextlib


class Config:
    """Settings the engine reads.

    Attributes:
        enable_backprop: whether ``apply`` records the graph (links inputs,
            outputs and creators). Backward sets it to its
            ``enable_double_backprop`` argument while it runs the functions'
            backwards, so that by default a backward records nothing.
    """

    enable_backprop = True


config = Config()


@contextlib.contextmanager
def using_config(name, value):
    """Set ``config.<name>`` to ``value`` inside a ``with`` block.

    The old value comes back when the block ends, even when it raises, so a
    failed computation never leaves the engine switched off.
    """
    if not hasattr(config, name):
        raise AttributeError("using_config: config has no setting {!r}"
                             .format(name))
    old = getattr(config, name)
    setattr(config, name, value)
    try:
        yield
    finally:
        setattr(config, name, old)


def no_backprop_mode():
    """Task 10 (chapter 07): a with-block in which no graph is recorded.

    ``with no_backprop_mode(): y = F.tanh(x)`` computes ``y`` as usual, but
    ``y`` has no creator: it is a leaf, and backward from it reaches nothing.
    Return ``using_config`` with ``enable_backprop`` set to False.

    Then make sure that ``FunctionNode.apply`` (Task 2) really reads
    ``config.enable_backprop`` and, when it is False, sets no creator and
    keeps no inputs, outputs or retained arrays.
    """
    raise NotImplementedError(
        "Task 10: no_backprop_mode is not written yet (chapter 07)")


def force_backprop_mode():
    """Task 10 (chapter 07): a with-block in which the graph is recorded.

    It switches recording back on inside a ``no_backprop_mode()`` block (or
    inside a backward, which runs with recording off). ``F.forget``
    (Task 11) needs it to record the graph it recomputes in backward.
    """
    raise NotImplementedError(
        "Task 10: force_backprop_mode is not written yet (chapter 07)")
