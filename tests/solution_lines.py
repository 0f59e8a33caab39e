"""Every line of worked-solution code in source/, and where else such a line turns up.

A line "turns up" in a text when the text has the same line, spaces folded. Lines too
general to give anything away (``return total``, a lone bracket, a docstring-free ``def``
line the release notebook shows anyway) are left out: see :func:`telling`.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from attnlab.exercises.solutions import BEGIN, END

SOURCE = Path(__file__).resolve().parents[1] / "source"


def _fold(line: str) -> str:
    line = re.sub(r"\s+#.*$", "", line.strip()) if not line.strip().startswith("#") else ""
    return re.sub(r"\s+", " ", line).strip()


def telling(line: str) -> bool:
    """A folded line long and specific enough that seeing it gives part of an answer away.

    >>> telling("return total"), telling("}"), telling("e = np.exp(x - x.max())")
    (False, False, True)
    """
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|\S", line)
    return len(line) >= 14 and len(words) >= 5


def solution_lines() -> dict[str, str]:
    """Folded telling solution line -> the lesson it comes from."""
    found = {}
    for path in sorted(SOURCE.glob("*/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            inside = False
            for raw in "".join(cell["source"]).splitlines():
                if raw.strip() == BEGIN:
                    inside = True
                elif raw.strip() == END:
                    inside = False
                elif inside and telling(line := _fold(raw)):
                    found.setdefault(line, path.parent.name)
    return found


def folded_lines(text: str) -> set[str]:
    """Every line of ``text`` folded; Markdown code spans and strings are split into lines too."""
    lines = set()
    for raw in text.splitlines():
        lines.add(_fold(raw))
        for piece in re.findall(r"`([^`]+)`", raw):  # hints write code in backticks
            lines.add(_fold(piece))
    return lines


def wheel_texts(wheel: Path) -> dict[str, str]:
    """Name -> text of every text file in the wheel."""
    texts = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            try:
                texts[name] = archive.read(name).decode("utf-8")
            except UnicodeDecodeError:
                continue
    return texts


def notebook_text(path: Path) -> str:
    """The code and Markdown of a notebook, cell after cell."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells)


def leaks(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(file, lesson, line) for every telling solution line found in ``texts``."""
    wanted = solution_lines()
    found = []
    for name, text in texts.items():
        for line in sorted(folded_lines(text) & wanted.keys()):
            found.append((name, wanted[line], line))
    return found
