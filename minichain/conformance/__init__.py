"""The conformance suite: judge any engine with minichain's public API.

The build-your-own-engine assignment (``docs/build-your-own-engine.md``)
has eleven tasks with points; this suite judges each one on any package that
offers the public API the tasks build (``Variable``, ``FunctionNode``,
``no_backprop_mode``, ``force_backprop_mode`` and ``functions`` with ``add``,
``exp``, ``tanh``, ``sum``, ``matmul``, ``forget``): the skeleton
``mychain``, a learner's copy of it, or minichain itself.

From a shell::

    python -m minichain.conformance mychain --path build_your_own
    python -m minichain.conformance minichain --json

From Python (a teacher's grading command calls this once per learner)::

    from minichain import conformance
    report = conformance.run("mychain", path="submissions/ada", timeout=10)
    report.earned, report.total        # points
    report.tasks[0].passed, report.tasks[0].message
    report.to_dict()                   # the same data as --json

How it is built: each check's *probe* runs in a child process with the
engine and reports plain values; its *judge* runs in the caller's process,
which never imports the engine (``checks``). The child gets a time limit per
check, and a child that hangs or dies is replaced for the next task
(``runner``).
"""

from minichain.conformance.runner import Report, TaskResult, run  # NOQA
from minichain.conformance.tasks import TASKS, TOTAL_POINTS  # NOQA
