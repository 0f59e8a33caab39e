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
import pytest
from nbconvert import HTMLExporter

from attnlab.grading.execute import clean_html, sanitize_notebook, unsafe_parts, url_is_safe

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


#: The red team's Markdown cells (x05): links a click on runs script, in every spelling.
MARKDOWN = {
    "P1": "P1 [click-js](javascript:alert('P1'))",
    "P2": "P2 [click-ent](&#106;avascript:alert('P2'))",
    "P3": r"P3 $\href{javascript:alert('P3')}{\text{click for a hint}}$",
    "P4": 'P4 <a href="Data:text/html;base64,PHNjcmlwdD5hbGVydCgnUDQnKTwvc2NyaXB0Pg==">open</a>',
    "P6": "P6 [ref-js][r6]\n\n[r6]: javascript:alert('P6')",
    "P7": "P7 <javascript:alert('P7')>",
    "P10": "P10 <img src=x onerror=alert('P10')>",
    "P11": 'P11 <a href=" data:text/html,<script>alert(11)</script>">sp</a>',
    "P12": "P12 [x](vbscript:msgbox)",
    "P13": r"P13 $\href{data:text/html,<script>alert(13)</script>}{x}$",
    "tab": "[x](java\tscript:alert(1)) [y](JAVASCRIPT:alert(1)) [z](&#x6A;avascript:x)",
    "ref-entity": "[a][b]\n\n[b]: &#106;avascript:alert(1)",
}

#: The red team's outputs (x05 O2-O6).
OUTPUTS = {
    "O2": {"text/latex": r"O2 $\href{javascript:alert('O2')}{\text{click}}$"},
    "O3": {
        "text/markdown": "O3 [md-js](javascript:alert('O3')) and "
        "<a href=\"Data:text/html,<script>alert('O3b')</script>\">x</a>"
    },
    "O4": {"text/html": "<a href=\"DATA:text/html,<script>alert('O4')</script>\">O4</a>"},
    "O5": {
        "text/html": "<b>O5</b>",
        "application/javascript": "alert('O5')",
        "image/svg+xml": "<svg onload=alert('O5')/>",
    },
    "O6": {"text/markdown": r"O6 $\href{javascript:alert('O6')}{x}$"},
}


def _unsafe_links(page: str) -> list[str]:
    found = unsafe_parts("".join(_tags(page)))
    found += re.findall(r"\\href\s*\{\s*(?!https?:|mailto:|#)[^}]*\}", page, flags=re.I)
    return found


@pytest.mark.parametrize("name", list(MARKDOWN))
def test_markdown_cells_render_no_script_link(name):
    page = _page([nbformat.v4.new_markdown_cell(MARKDOWN[name])])
    assert name.split("-")[0] in page or name in ("tab", "ref-entity")  # the cell is shown
    assert not _unsafe_links(page), _unsafe_links(page)


@pytest.mark.parametrize("name", list(OUTPUTS))
def test_outputs_render_no_script_link(name):
    page = _page([], [_display(OUTPUTS[name])])
    assert name in page
    assert not _unsafe_links(page), _unsafe_links(page)
    assert "alert('O5')" not in page


def test_raw_html_cells_lose_data_links_whatever_their_case():
    cell = nbformat.v4.new_raw_cell(
        "R1 <b>raw</b> <a href=\"DaTa:text/html,<script>alert('R1')</script>\">r</a>"
    )
    cell.metadata["format"] = "text/html"
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell]
    sanitize_notebook(nb)
    assert "DaTa:" not in cell.source and "<b>raw</b>" in cell.source


def test_safe_markdown_is_left_exactly_as_written():
    text = "# T\n\n[site](https://example.org), [top](#top), ![f](attachment:f.png) $x<y$ & b"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text)]
    sanitize_notebook(nb)
    assert nb.cells[0].source == text


@pytest.mark.parametrize(
    "url",
    ["javascript:x", " Data:text/html,x", "DATA:text/html,x", "&#106;avascript:x",
     "java\nscript:x", "\x01javascript:x", "vbscript:x", "jAvAsCrIpT&colon;x"],
)  # fmt: skip
def test_script_urls_are_refused_in_every_spelling(url):
    assert not url_is_safe(url)
    assert "href" not in clean_html(f'<a href="{url}">x</a>')


def test_images_may_be_data_urls_of_pictures_only():
    assert url_is_safe("data:image/png;base64,AAAA", image=True)
    assert not url_is_safe("data:image/svg+xml,<svg onload=x>", image=True)
    assert not url_is_safe("data:image/png;base64,AAAA")
