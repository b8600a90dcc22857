"""minichain.utils.source.print_marked, the margin the chapters print."""

import pytest

from minichain.utils.source import print_marked


def _sample(x):
    y = x + 1
    z = y * 2  # not shown
    return z


def test_print_marked_marks_matching_lines_and_skips(capsys):
    print_marked([_sample], {"y = x": "add", "return": "out"},
                 skip=("not shown",))
    lines = capsys.readouterr().out.splitlines()
    assert "add    |     y = x + 1" in lines
    assert "out    |     return z" in lines
    assert "       | def _sample(x):" in lines
    assert not any("not shown" in line for line in lines)


def test_print_marked_raises_when_a_mark_lands_nowhere(capsys):
    with pytest.raises(ValueError, match="_sample.*'no such line'"):
        print_marked([_sample], {"no such line": "x", "return": "out"})
