"""Checkers, solutions and typical mistakes of the course exercises, one module per chapter.

The notebooks import them (``from exercises import ch03``) from notebooks/, where they run.
"""
