"""What each exercise is worth: the one place a teacher sets the points.

Keys are ``"NN.K"``: exercise K of chapter NN. An exercise earns all its
points when it is right on every case, visible and hidden, and none
otherwise. As set here, an answer that is a value (a number, a list, a
string) is worth 2 and one that is code (a function or a class, run on
hidden cases too) is worth 4; change any of them freely.
``tests/grading/test_points.py`` checks that the table names every exercise
of the course and nothing else.

The build-your-own-engine tasks keep their own points, in
``minichain.conformance.tasks``.
"""

POINTS = {
    "01.1": 2, "01.2": 2, "01.3": 4,
    "02.1": 2, "02.2": 4, "02.3": 2,
    "03.1": 2, "03.2": 4, "03.3": 2,
    "04.1": 2, "04.2": 4, "04.3": 2,
    "05.1": 2, "05.2": 2, "05.3": 4,
    "06.1": 2, "06.2": 2, "06.3": 4,
    "07.1": 2, "07.2": 4, "07.3": 4,
    "08.1": 4, "08.2": 4, "08.3": 2,
    "09.1": 4, "09.2": 4, "09.3": 4,
    "10.1": 2, "10.2": 2, "10.3": 4,
    "11.1": 4, "11.2": 4, "11.3": 2,
    "12.1": 2, "12.2": 4, "12.3": 2,
    "13.1": 2, "13.2": 4, "13.3": 2,
    "14.1": 2, "14.2": 4, "14.3": 2,
}


def points(chapter, number):
    """The points of exercise ``number`` of chapter ``chapter`` ("04", 2)."""
    key = "{}.{}".format(chapter, number)
    if key not in POINTS:
        raise KeyError("grading.points: exercise {} has no points in POINTS "
                       "(grading/points.py); add it there".format(key))
    return POINTS[key]
