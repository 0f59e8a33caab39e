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


#: Lines of any array code that give no answer away: reading sizes off a shape, and the end
#: of a block (every blocked loop has one; the library's own tiled attention, which lesson 8
#: teaches, too).
GENERIC = (
    re.compile(r"^[\w\s,]+ = \w+\.shape(\[[^]]*\])?(, \w+\.shape(\[[^]]*\])?)*$"),
    re.compile(r"^\w+ = min\(\w+ \+ \w+, \w+\)$"),
)


def telling(line: str) -> bool:
    """A folded line long and specific enough that seeing it gives part of an answer away.

    >>> telling("return total"), telling("}"), telling("e = np.exp(x - x.max())")
    (False, False, True)
    >>> telling("n, d_k = q.shape"), telling("j1 = min(j0 + block, n)")
    (False, False)
    """
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*|\S", line)
    return len(line) >= 14 and len(words) >= 5 and not any(g.match(line) for g in GENERIC)


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


def leaks(texts: dict[str, str], in_order: bool = False) -> list[tuple[str, str, str]]:
    """(file, lesson, line) for every telling solution line found in ``texts``.

    ``in_order``: the texts are lesson notebooks named ``NN-...``, released one after another,
    so a notebook may show a line that answers an *earlier* lesson's exercise (lesson 6
    writes a softmax out; lesson 3's exercises are due by then).
    """
    wanted = solution_lines()
    found = []
    for name, text in texts.items():
        for line in sorted(folded_lines(text) & wanted.keys()):
            if in_order and wanted[line][:2] < name[:2]:
                continue
            found.append((name, wanted[line], line))
    return found


KEYS = Path(__file__).resolve().parents[1] / "answer_keys"


def quiz_key_lines() -> dict[str, str]:
    """Folded telling line of any quiz key (``answer_keys/*.py``) -> its key file.

    Imports, comments and the module docstring are left out: they name the package, not the
    answers.
    """
    found = {}
    for path in sorted(KEYS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        body = re.sub(r'^(?:"""|r""").*?"""', "", text.lstrip(), count=1, flags=re.S)
        for raw in body.splitlines():
            line = _fold(raw)
            if telling(line) and not line.startswith(("from ", "import ")):
                found.setdefault(line, path.name)
    return found


def quiz_key_pairs() -> dict[str, list[str]]:
    """Key file -> the letter/name pairs of each ``{"A": "name", ...}`` literal in it, written
    as source (``"A": "link"``); a file holding all of one literal's pairs holds that key."""
    found = {}
    for path in sorted(KEYS.glob("*.py")):
        for literal in re.findall(r"\{([^{}]*)\}", path.read_text(encoding="utf-8")):
            pairs = re.findall(r"""["'](\w)["']\s*:\s*["']([\w ]+)["']""", literal)
            if len(pairs) >= 2:
                found[path.name] = [f"{k}: {v}" for k, v in pairs]
    return found


def quiz_key_leaks(texts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(file, key file, what) for every quiz key line or letter-to-name mapping in ``texts``."""
    wanted = quiz_key_lines()
    pairs = quiz_key_pairs()
    found = []
    for name, text in texts.items():
        found += [(name, wanted[line], line) for line in sorted(folded_lines(text) & wanted.keys())]
        plain = re.sub(r"""["'\s]""", "", text)
        for key_file, mapping in pairs.items():
            if all(re.sub(r"\s", "", pair) in plain for pair in mapping):
                found.append((name, key_file, ", ".join(mapping)))
    return found
