"""grading/points.py names every exercise of the course, and nothing else."""

from grading import course, points


def test_points_name_every_exercise_and_nothing_else():
    registered = {"{}.{}".format(chapter, number)
                  for chapter in course.chapters()
                  for number in course.module(chapter).EXERCISES}
    assert set(points.POINTS) == registered
    assert all(isinstance(v, int) and v > 0 for v in points.POINTS.values())
