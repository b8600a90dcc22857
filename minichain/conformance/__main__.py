"""``python -m minichain.conformance [ENGINE] [--path DIR] [--json] ...``

Judges the engine task by task and prints one line per task; a failed task
gets the sentence of its first failing check. Exit status: 0 when every
task judged passed, 1 when one failed, 2 for a wrong command line.
"""

import argparse
import sys

from minichain.conformance.runner import run
from minichain.conformance.tasks import TASKS


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m minichain.conformance",
        description="Judge an autodiff engine with minichain's public API, "
        "task by task (the build-your-own-engine assignment).")
    parser.add_argument(
        "engine", nargs="?", default="mychain",
        help="the package to judge, by name (default: mychain) or as a "
        "folder (build_your_own/mychain)")
    parser.add_argument(
        "--path", help="the folder that holds the package's folder; without "
        "it, the package is imported as installed")
    parser.add_argument(
        "--task", type=int, action="append", dest="tasks", metavar="N",
        choices=[t.number for t in TASKS],
        help="judge task N only (repeat for several)")
    parser.add_argument(
        "--timeout", type=float, default=10.0,
        help="seconds each check may take (default: 10)")
    parser.add_argument(
        "--json", action="store_true",
        help="print the report as JSON instead of text")
    parser.add_argument(
        "--list", action="store_true",
        help="list the tasks and what each one checks, and judge nothing")
    args = parser.parse_args(argv)
    if args.list:
        print(task_list())
        return 0
    try:
        report = run(args.engine, args.path, tasks=args.tasks,
                     timeout=args.timeout)
    except (FileNotFoundError, ValueError) as error:
        parser.exit(2, "{}\n".format(error))
    print(report.to_json() if args.json else report.text())
    return 0 if report.passed else 1


def task_list():
    """Every task, its chapter, points and what it runs, with its checks."""
    lines = []
    for task in TASKS:
        lines.append("Task {} (after chapter {}, {} points): {}".format(
            task.number, task.chapter, task.points, task.title))
        lines.append("  you write: " + task.what)
        lines += ["  - " + one.title for one in task.checks]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
