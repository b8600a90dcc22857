"""The course map comes from the chapters: each opens with a heading and a summary.

notebooks/course_map.py reads them; chapter 01 shows the map it makes (nbval
compares that output), the book's index inserts it, and the README must carry
the same list, so a chapter's new opening cannot leave a stale map behind.
"""

import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "notebooks"))
import course_map  # noqa: E402

SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_chapter_opens_with_a_heading_and_a_short_summary(source):
    chapter = course_map.read_chapter(source)
    assert chapter.slug == source.stem
    assert chapter.number == source.name[:2]
    sentences = re.findall(r"[.!?](?:\s|$)", chapter.summary)
    assert 1 <= len(sentences) <= 3, chapter.summary
    assert len(chapter.summary) < 500, chapter.summary


def test_the_map_lists_every_chapter_in_order():
    numbers = [c.number for c in course_map.chapters()]
    assert numbers == [p.name[:2] for p in SOURCES] and len(numbers) >= 14
    table = course_map.markdown_table().splitlines()
    assert len(table) == 2 + len(numbers)


def test_the_readme_carries_the_map_made_from_the_chapters():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert course_map.with_readme_map(readme) == readme, (
        "the README's course map is stale: run "
        "`python notebooks/course_map.py --readme`")


def test_a_source_without_a_heading_is_refused(tmp_path):
    source = tmp_path / "99_nothing.py"
    source.write_text("# %% [markdown]\n# Some text\n")
    with pytest.raises(ValueError, match="heading"):
        course_map.read_chapter(source)
