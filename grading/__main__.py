"""``python -m grading release|grade|points ...``: the teacher's commands.

    python -m grading release [--out DIR] [CHAPTER ...]
    python -m grading grade SUBMISSIONS [--out DIR] [--chapters NN ...]
    python -m grading points

See docs/teaching.md.
"""

import argparse
import os
import sys

# One notebook per core: a notebook's process is single-threaded (the
# sandbox sets OMP_NUM_THREADS=1); more than 4 at once mostly waits on memory.
DEFAULT_JOBS = max(1, min(4, os.cpu_count() or 1))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m grading",
                                     description="The course's teacher tools.")
    commands = parser.add_subparsers(dest="command", required=True)

    grade = commands.add_parser(
        "grade", help="grade a folder of submissions (one folder per learner)")
    grade.add_argument("submissions", help="the folder of the learners' folders")
    grade.add_argument("--out", default="_build/grades",
                       help="where the gradebook and feedback go "
                       "(default: _build/grades)")
    grade.add_argument("--chapters", nargs="*", metavar="NN",
                       help="grade these chapters only (default: every chapter "
                       "some learner submitted)")
    grade.add_argument("--sandbox", default="auto",
                       choices=["auto", "bubblewrap", "separate user", "none"],
                       help="how to isolate a submission (default: the best "
                       "this machine has)")
    grade.add_argument("--no-sandbox-i-trust-this-class", dest="unsandboxed",
                       action="store_true",
                       help="when no sandbox works, run the learners' code as "
                       "you anyway (it can then read the key and change your "
                       "files); without it the grader refuses")
    grade.add_argument("--timeout", type=float, default=30.0,
                       help="seconds one cell or one grading case may take "
                       "(default: 30)")
    grade.add_argument("--budget", type=float, default=600.0,
                       help="seconds one notebook may take in all (default: 600)")
    grade.add_argument("--memory", type=int, default=4096,
                       help="MiB of address space per process (default: 4096)")
    grade.add_argument("--jobs", type=int, default=DEFAULT_JOBS,
                       help="notebooks graded at once (default: this machine's "
                       "cores, at most 4: {})".format(DEFAULT_JOBS))

    release = commands.add_parser(
        "release", help="write the student edition and the nbgrader course")
    release.add_argument("chapters", nargs="*", metavar="NN",
                         help="chapters to release (default: all)")
    release.add_argument("--out", default="_build",
                         help="the folder that gets release/ and nbgrader/ "
                         "(default: _build)")

    commands.add_parser("points", help="print what each exercise is worth")
    args = parser.parse_args(argv)

    if args.command == "grade":
        from grading import grade as grading
        options = grading.Options(
            chapters=args.chapters, sandbox=args.sandbox,
            cell_timeout=args.timeout, notebook_budget=args.budget,
            memory_mib=args.memory, jobs=args.jobs, unsandboxed=args.unsandboxed)
        try:
            grading.grade(args.submissions, args.out, options)
        except (FileNotFoundError, RuntimeError) as error:
            parser.exit(2, "{}\n".format(error))
        print("grading: wrote {0}/gradebook.csv and {0}/feedback/".format(args.out))
        return 0
    if args.command == "release":
        from grading import release
        return release.main(args.chapters, args.out)
    from grading.points import POINTS
    for name, value in POINTS.items():
        print("{:<6} {}".format(name, value))
    print("total  {}".format(sum(POINTS.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
