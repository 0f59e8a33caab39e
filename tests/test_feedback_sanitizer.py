"""The feedback sanitizer (:mod:`attnlab.grading.execute`) on a red team's exact payloads.

Each payload is a notebook a student could submit: it is sanitized as grading does
(:func:`~attnlab.grading.execute.sanitize_notebook`), then rendered to HTML by nbconvert as
the feedback page is, and the page must hold no event handler and no link or image whose
target could run script.
"""

from __future__ import annotations

import base64
import re

import nbformat
from nbconvert import HTMLExporter

from attnlab.grading.execute import sanitize_notebook

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
    )
).decode()


def _display(data: dict, metadata: dict | None = None):
    return nbformat.v4.new_output("display_data", data=data, metadata=metadata or {})


def _page(cells: list, outputs: list = ()) -> str:
    """The feedback HTML of a notebook of ``cells`` and one code cell showing ``outputs``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    code = nbformat.v4.new_code_cell("pass")
    code.outputs = list(outputs)
    nb.cells.append(code)
    sanitize_notebook(nb)
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    return body


def _tags(html: str) -> list[str]:
    return re.findall(r"<(?:a|img|area|form|iframe|embed|object)\b[^>]*>", html, flags=re.I)


def test_output_metadata_cannot_add_attributes_to_an_image():
    """x05 O1: metadata of an image/png output written into the ``<img>`` tag unescaped."""
    bad = {"width": "1\" onerror=\"alert('O1')", "height": "2 onload=alert(1)"}
    page = _page([], [_display({"image/png": PNG}, {"image/png": bad})])
    images = [t for t in _tags(page) if t.lower().startswith("<img")]
    assert len(images) == 1
    assert not re.search(r"\bon\w+\s*=", images[0], flags=re.I), images[0]


def test_output_metadata_keeps_whole_number_sizes_only():
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("pass")
    code.outputs = [
        _display(
            {"image/png": PNG},
            {"image/png": {"width": 40, "height": "9", "unconfined": True, "x": "y"},
             "text/html": {"width": 3}, "isolated": True},
        )
    ]  # fmt: skip
    nb.cells = [code]
    sanitize_notebook(nb)
    assert code.outputs[0]["metadata"] == {"image/png": {"width": 40, "unconfined": True}}
