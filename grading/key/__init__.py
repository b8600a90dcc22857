"""The key: each chapter's solutions, typical mistakes, other right forms and
the grader's hidden cases, registered into ``exercises.chNN.EXERCISES`` when
``grading/key/chNN.py`` is imported. Nothing here goes into the student edition.
"""
