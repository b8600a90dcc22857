"""The teacher's side of the course: the student edition and the grader.

- ``release``: ``make release`` writes the student edition (no key, no hidden
  case) and an nbgrader course folder.
- ``grade``: ``make grade`` runs each learner's notebooks in a sandboxed child
  process (``child``, ``sandbox``), brings back what their answers did as
  plain data (``wire``), judges it here and writes the gradebook and one
  feedback page per learner.
- ``key/``: the solutions, the registered mistakes and the hidden grading
  cases; ``points``: what each exercise is worth.

Nothing in this folder is part of the student edition. See docs/teaching.md.
"""

import os
import sys

# The course's exercise modules (``exercises``) live in notebooks/, as the
# chapters import them.
_NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "notebooks")
if _NOTEBOOKS not in sys.path:
    sys.path.insert(0, _NOTEBOOKS)
