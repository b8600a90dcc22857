"""The course map, read from the chapters themselves.

Every chapter source ``notebooks/src/NN_topic.py`` opens with a text cell
whose first line is the heading ``# NN · Title`` and whose first paragraph
after it says, in one to three sentences, what the chapter teaches. That
heading and that paragraph are the chapter's entry in the course map, so the
map shown in chapter 01, on the book's index page and in the README cannot
drift from the chapters: change a chapter's opening and every map follows.

    python notebooks/course_map.py            # the map as a Markdown list
    python notebooks/course_map.py --readme   # write it into README.md
"""

import dataclasses
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOURCES = HERE / "src"
_HEADING = re.compile(r"^#\s+(\d\d)\s+·\s+(.+?)\s*$")


@dataclasses.dataclass(frozen=True)
class Chapter:
    number: str       # "03"
    slug: str         # "03_backprop_on_a_chain"
    title: str        # "Backprop on a chain" (may hold `code`)
    summary: str      # the first paragraph after the heading, on one line

    @property
    def notebook(self):
        return self.slug + ".ipynb"


def _opening_text(source):
    """The lines of the first text cell, with their ``# `` prefix removed."""
    lines = source.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("# %% [markdown]"):
        raise ValueError(f"{source.name}: the first cell must be a text cell")
    text = []
    for line in lines[1:]:
        if line.startswith("# %%"):
            break
        text.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    return text


def read_chapter(source):
    """The map entry of one chapter source."""
    text = _opening_text(source)
    match = _HEADING.match(text[0]) if text else None
    if match is None:
        raise ValueError(
            f"{source.name}: the first line must be the heading '# NN · Title'")
    paragraph = []
    for line in text[1:]:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    if not paragraph:
        raise ValueError(f"{source.name}: no paragraph after the heading")
    return Chapter(number=match.group(1), slug=source.stem,
                   title=match.group(2), summary=" ".join(paragraph))


def chapters(sources=SOURCES):
    """Every chapter, in order."""
    return [read_chapter(path)
            for path in sorted(pathlib.Path(sources).glob("[0-9][0-9]_*.py"))]


def markdown_list(link_prefix="notebooks/", suffix=".ipynb"):
    """The map as a Markdown list, one linked line per chapter."""
    return "\n".join(
        f"- [{c.number} · {c.title}]({link_prefix}{c.slug}{suffix}): {c.summary}"
        for c in chapters())


def markdown_table(link_prefix="", suffix=".ipynb"):
    """The map as a Markdown table (chapter 01 shows this one)."""
    rows = ["| chapter | what it teaches |", "| --- | --- |"]
    rows += [f"| [{c.number} · {c.title}]({link_prefix}{c.slug}{suffix}) "
             f"| {c.summary} |" for c in chapters()]
    return "\n".join(rows)


README = HERE.parent / "README.md"


def with_readme_map(text):
    """README text whose "## Course map" list is the one made here.

    The list is the run of ``- [`` lines in that section; the prose around
    it is the README's own.
    """
    lines = text.splitlines()
    start = lines.index("## Course map")
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("- ["))
    last = first
    while last < len(lines) and lines[last].startswith("- ["):
        last += 1
    lines[first:last] = markdown_list().splitlines()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        README.write_text(with_readme_map(README.read_text(encoding="utf-8")),
                          encoding="utf-8")
        print("README.md: course map rewritten from the chapters")
    else:
        print(markdown_list())
