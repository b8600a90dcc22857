"""The course exercises: checkers, solutions and typical mistakes, one module a chapter.

The notebooks run in notebooks/, so ``from exercises import ch03`` finds them.
"""
