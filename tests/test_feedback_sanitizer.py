"""The feedback sanitizer (:mod:`attnlab.grading.sanitize`) on a red team's exact payloads.

Each payload is a notebook a student could submit: it is sanitized as grading does
(:func:`~attnlab.grading.sanitize.sanitize_notebook`), then rendered to HTML by nbconvert as
the feedback page is, and the page must hold no event handler and no link or image whose
target could run script.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from attnlab.grading.sanitize import clean_html, sanitize_notebook, unsafe_parts, url_is_safe

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


# ---------------------------------------- a fake "correct" box, and MathJax that fetches a URL
def _forged_box() -> str:
    """The course's own green "correct" box, as a student can print it from any cell."""
    from attnlab.exercises.kit.feedback import Feedback
    from attnlab.exercises.kit.outcomes import Outcome

    return Feedback(
        "Exercise 8.4 (the whole tiled loop)", Outcome.CORRECT, "Well done."
    )._repr_html_()


def _grade_cell(outputs) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("lesson8.tiled_loop.check(tiled_loop)")
    cell.metadata["nbgrader"] = dict(
        grade=True, solution=False, locked=True, points=2, grade_id="check-tiled-loop"
    )
    cell.outputs = list(outputs)
    return cell


def _looks_like_feedback(page: str) -> list[str]:
    """Tags that carry the course's feedback classes or a box's colours (nbconvert's own style
    sheet in the page's head is not a tag attribute)."""
    return re.findall(
        r"<[a-z][^>]*\b(?:class|style)\s*=\s*\"[^\"]*(?:attnlab-|background|border-left)[^>]*>",
        page,
        flags=re.I,
    )


@pytest.mark.parametrize(
    "where", ["text/html output", "text/markdown output", "markdown cell", "latex class"]
)
def test_a_student_cannot_show_the_courses_correct_box(where):
    """The box is drawn by classes and styles; only the grade cells' outputs, which the course
    writes after grading, keep them (SanitizeOutputs), and the student's own copy of the
    box is plain text by then (LimitedExecute sanitized every output before)."""
    from attnlab.grading.execute import SanitizeOutputs

    box = _forged_box()
    cells, outputs = [], []
    if where == "text/html output":
        outputs = [_display({"text/html": box, "text/plain": "x"})]
    elif where == "text/markdown output":
        outputs = [_display({"text/markdown": box})]
    elif where == "markdown cell":
        cells = [nbformat.v4.new_markdown_cell(box)]
    else:
        tex = r"$\class{attnlab-feedback attnlab-correct}{\style{background:#ecf8ee}{\checkmark}}$"
        outputs = [_display({"text/latex": tex})]
    nb = nbformat.v4.new_notebook()
    student = nbformat.v4.new_code_cell("pass")
    student.outputs = outputs
    nb.cells = [*cells, student]
    sanitize_notebook(nb)  # LimitedExecute, once the submission ran
    nb.cells.append(_grade_cell([_display({"text/html": box, "text/plain": "✓"})]))  # the course's
    SanitizeOutputs().preprocess(nb, {})  # last, before nbgrader saves
    student_page = HTMLExporter(template_name="classic").from_notebook_node(
        nbformat.from_dict({**nb, "cells": nb.cells[:-1]})
    )[0]
    assert "Well done" in student_page or "checkmark" in student_page  # shown, as text
    assert not _looks_like_feedback(student_page), _looks_like_feedback(student_page)
    assert not re.search(r"\\(class|style)\b", student_page)
    course = nb.cells[-1].outputs[0]["data"]["text/html"]
    assert "attnlab-feedback attnlab-correct" in course and "background:" in course


def test_a_quoted_answer_stays_quoted_in_the_courses_feedback():
    """A red team's quiz answer: ``\\class`` (so the MathJax cleaning runs) and the course's
    green box with a link, which the check quotes, escaped, in its reason. The cleaning of the
    grade cell's feedback must not decode the quote back into markup: it once did, and the
    formgrader showed a student-made "correct" box and an outside link inside the course's
    own feedback."""
    import html

    from attnlab.exercises.kit.feedback import Feedback
    from attnlab.exercises.kit.outcomes import Outcome
    from attnlab.grading.execute import SanitizeOutputs

    answer = (
        r"\class x"
        + _forged_box().replace("Well done.", "12 of 12 right.")
        + '<a href="https://evil.example/reset">Grader notice</a>'
    )
    wrong = Feedback("Exercise 7.2 (quiz B)", Outcome.WRONG, f"B1: you said {answer!r}.")
    nb = nbformat.v4.new_notebook()
    nb.cells = [_grade_cell([_display({"text/html": wrong._repr_html_(), "text/plain": "x"})])]
    SanitizeOutputs().preprocess(nb, {})
    course = nb.cells[0].outputs[0]["data"]["text/html"]
    assert "evil.example" in course and "12 of 12 right" in course  # still quoted, as text
    assert '<a href="https://evil' not in course and "<a " not in course
    assert course.count("attnlab-correct") == 0 or html.escape("attnlab-correct") in course
    assert len(re.findall(r"<div\b", course)) == 1, course  # the course's own box alone
    assert not re.search(r"\\class\b", html.unescape(html.unescape(course)))


#: Markup that makes the reader's browser fetch a URL as the feedback page opens (a tracker).
TRACKERS = {
    "tex-style-markdown": r"T1 $\style{background:url(https://t.example/1)}{x}$",
    "tex-style-entity": r"T2 $\st&#121;le{background:url(https://t.example/2)}{x}$",
    "tex-style-spaced": "T3 $$\\style {background-image: url('https://t.example/3')}{x}$$",
    "tex-require": r"T4 $\require{https://t.example/4.js}$",
    "css-url": '<div style="background:url(https://t.example/5)">T5</div>',
    "css-escaped": '<div style="background:u\\72l(https://t.example/6)">T6</div>',
    "remote-img": '<img src="https://t.example/7.png" alt="T7">',
    "remote-img-markdown": "T8 ![t](https://t.example/8.png)",
    "relative-img": '<img src="/formgrader/api/x" alt="T9">',
}


def _fetches(page: str) -> list[str]:
    """What in ``page`` a browser fetches by itself: a style with ``url(…)`` on a real tag, an
    image from anywhere but the page itself, MathJax's ``\\style``/``\\require`` (the URL
    left as text inside ``\\text{…}`` is only shown)."""
    found = re.findall(r"<[a-z][^>]*\bstyle\s*=\s*\"[^\"]*url\s*\(", page, flags=re.I)
    found += [t for t in _tags(page) if re.search(r"\bsrc\s*=\s*\"?(?!data:)", t, re.I)]
    found += re.findall(r"\\(?:style|class|cssId|require)(?![A-Za-z])", page)
    return found


@pytest.mark.parametrize("name", list(TRACKERS))
@pytest.mark.parametrize("where", ["markdown cell", "text/markdown", "text/html", "text/latex"])
def test_feedback_fetches_no_url_a_student_wrote(name, where):
    text = TRACKERS[name]
    if where == "markdown cell":
        page = _page([nbformat.v4.new_markdown_cell(text)])
    else:
        page = _page([], [_display({where: text})])
    assert name and not _fetches(page), _fetches(page)


def test_the_courses_own_feedback_style_cannot_fetch_either():
    cleaned = clean_html(
        '<div style="color:#135e1e;background:url(https://t.example/x)">', look=True
    )
    assert "t.example" not in cleaned and "color" in cleaned


def test_deeply_nested_tags_are_shown_as_text_not_parsed():
    """Cleaning time grows with the square of nested tags: a red team's added Markdown cell of
    20,000 nested ``<div>`` took a class's grading from 4.8 to 51 s. Past MAX_TAGS a fragment
    is shown escaped, which takes no parsing (and runs no script)."""
    import time

    from attnlab.grading.sanitize import MAX_TAGS, clean_html, clean_markdown

    nested = "<div>" * 20_000 + "<script>alert(1)</script>"
    started = time.perf_counter()
    for clean in (clean_html, clean_markdown):
        shown = clean(nested)
        assert shown.startswith("<pre>&lt;div&gt;") and "<script" not in shown
    assert time.perf_counter() - started < 5  # quadratic cleaning took minutes here
    assert not clean_html("<b>x</b>" * (MAX_TAGS // 2)).startswith("<pre>")  # cleaned
    assert clean_html("<b>x</b>" * (MAX_TAGS // 2 + 1)).startswith("<pre>")  # shown as text


def test_too_long_cells_are_replaced_by_a_note_before_cleaning():
    """A student's cell longer than MAX_CELL_TEXT, and every cell once the notebook's text
    passes MAX_NOTEBOOK_TEXT, show a note instead; the lesson's cells and the graded ones keep
    their source (cleaning and rendering cost time in proportion to the text)."""
    from attnlab.grading import sanitize

    lesson = nbformat.v4.new_markdown_cell("## Softmax\n\nThe weights add up to 1.")
    big = nbformat.v4.new_markdown_cell("**_" * 10**6)
    answer = nbformat.v4.new_code_cell("x = 1  # " + "y" * (sanitize.MAX_CELL_TEXT + 10))
    answer.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "a"}
    many = [nbformat.v4.new_raw_cell("z" * 60_000) for _ in range(10)]
    nb = nbformat.v4.new_notebook(cells=[lesson, big, answer, *many])
    sanitize_notebook(nb)
    assert nb.cells[0].source == lesson.source
    assert "not shown by the grader" in nb.cells[1].source and len(nb.cells[1].source) < 200
    assert nb.cells[2].source.startswith("x = 1")  # graded: nbgrader's to check
    kept = [c for c in nb.cells[3:] if "not shown" not in c.source]
    assert len(kept) == sanitize.MAX_NOTEBOOK_TEXT // 60_000


# ------------------------------------------------ MathJax's page commands, in a real browser
ROOT = Path(__file__).resolve().parents[1]
#: MathJax 2.7.7, the version the feedback page loads (nbconvert's ``mathjax_url``, with the
#: ``Safe`` extension) from a CDN; the test serves a local copy in its place, offline.
MATHJAX2 = ROOT / "build" / "feedback-assets" / "node_modules" / "mathjax"
MATHJAX2_INSTALL = "npm install --prefix build/feedback-assets --no-save mathjax@2.7.7"
CHROMIUM = Path(os.environ.get("ATTNLAB_CHROMIUM", "/usr/bin/chromium"))

#: A student's TeX that would put a script link or a box over the whole page (issue 39), and
#: one honest formula, which MathJax must render (so the page's MathJax did run).
OVERLAY = "position: fixed; top: 0; left: 0; width: 100%; height: 100%; background: red"
PAGE_COMMANDS = {
    "href": r"$\href{javascript:window.ran='href'}{\text{HREF}}$",
    "href-braces": r"$\href{javascript:window.ran='braces'//{}}{\text{BRACES}}$",
    "href-macro": r"$\newcommand{\go}[1]{\href{#1}{\text{MACRO}}}\go{javascript:window.ran=1}$",
    "href-entity": r"$&#92;href{javascript:window.ran='entity'}{\text{ENTITY}}$",
    "bbox": rf"$\bbox[{OVERLAY}]{{\text{{BBOX}}}}$",
    "style": rf"$\style{{{OVERLAY}}}{{\text{{STYLE}}}}$",
    "class": r"$\class{attnlab-feedback}{\text{CLASS}}$",
    "cssId": r"$\cssId{notebook-container}{\text{CSSID}}$",
}
HONEST_TEX = r"$\frac{\text{HONEST}}{\sqrt{d_k}}$"


def test_mathjax_page_commands_reach_the_page_inert():
    """Each of :data:`PAGE_COMMANDS`, alone in a Markdown cell and in a ``text/latex`` output,
    reaches the page without the backslash that would make MathJax read it as a command (the
    browser test below renders them)."""
    cells = [nbformat.v4.new_markdown_cell(tex) for tex in PAGE_COMMANDS.values()]
    page = _page(cells, [_display({"text/latex": tex}) for tex in PAGE_COMMANDS.values()])
    shown = [re.search(r"text\{(\w+)\}", tex).group(1) for tex in PAGE_COMMANDS.values()]
    assert all(page.count(word) == 2 for word in shown)  # each cell and output, as text
    live = r"(\\|&#0*92;?|&bsol;)(href|bbox|style|class|cssId|newcommand)(?![A-Za-z])"
    assert not re.search(live, page), re.findall(live, page)


def _feedback_page() -> str:
    """The feedback page nbgrader writes (its ``feedback`` template) for a notebook whose
    Markdown cells and ``text/latex`` outputs hold :data:`PAGE_COMMANDS` and
    :data:`HONEST_TEX`, sanitized as grading sanitizes it."""
    import nbgrader

    nb = nbformat.v4.new_notebook()  # one cell and one output each: none cleans another
    texts = [HONEST_TEX, *PAGE_COMMANDS.values()]
    nb.cells = [nbformat.v4.new_markdown_cell(text) for text in texts]
    code = nbformat.v4.new_code_cell("pass")
    code.outputs = [_display({"text/latex": text}) for text in texts]
    nb.cells.append(code)
    sanitize_notebook(nb)
    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    bootstrap = formgrader / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    exporter = HTMLExporter(  # as nbgrader's GenerateFeedback configures it
        template_name="feedback",
        extra_template_basedirs=[str(formgrader / "templates")],
        extra_template_paths=[str(bootstrap)],
    )
    scores = {"score": 0.0, "max_score": 1.0, "late_penalty": 0.0, "notebook": "feedback"}
    return exporter.from_notebook_node(nb, resources={"nbgrader": scores})[0]


def _browser_skip() -> str | None:
    wanted = (
        os.environ.get("CI", "").lower() in ("true", "1")
        or os.environ.get("ATTNLAB_BROWSER") == "1"
    )
    if not wanted:
        return "browser tests are off (ATTNLAB_BROWSER=1 or CI=true runs them)"
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM}"
    if not (MATHJAX2 / "MathJax.js").is_file() and os.environ.get("CI", "").lower() not in (
        "true",
        "1",
    ):  # in CI (./run.sh test --all installs it) a missing copy fails the test, never skips it
        return f"no local MathJax 2.7.7 at {MATHJAX2} ({MATHJAX2_INSTALL})"
    return None


#: What the page shows once MathJax is done: links with a script target, elements that a
#: style made fixed (an overlay), math given the page's own id or the course's feedback
#: class, whether a script link ran, the honest formula rendered.
_SEEN = """() => ({
    links: [...document.querySelectorAll('a[href]')]
        .map(a => a.getAttribute('href')).filter(h => /^\\s*(javascript|data|vbscript):/i.test(h)),
    fixed: [...document.querySelectorAll('body *')]
        .filter(e => getComputedStyle(e).position === 'fixed' && e.offsetWidth > 100)
        .map(e => e.outerHTML.slice(0, 200)),
    chosen: [...document.querySelectorAll('.MathJax_CHTML [id], .MathJax_CHTML [class]')]
        .filter(e => e.id === 'notebook-container' || e.classList.contains('attnlab-feedback'))
        .map(e => e.outerHTML.slice(0, 200)),
    ran: window.ran || null,
    rendered: document.querySelectorAll('.mjx-chtml, .MathJax_CHTML').length,
    honest: document.querySelectorAll('.mjx-mfrac .mjx-msqrt').length,
})"""


@pytest.mark.browser
@pytest.mark.skipif(_browser_skip() is not None, reason=str(_browser_skip()))
@pytest.mark.parametrize("safe", [True, False], ids=["as-shipped", "without-mathjax-safe"])
def test_mathjax_page_commands_are_inert_in_the_rendered_feedback(tmp_path, safe):
    """In Chromium, with the feedback page's MathJax (2.7.7) served locally: no ``javascript:``
    link, no fixed overlay, no id or class a student chose. ``without-mathjax-safe`` loads
    MathJax without its ``Safe`` extension: the sanitizer alone must hold."""
    from playwright.sync_api import sync_playwright

    page_html = _feedback_page()
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7" in page_html
    if not safe:
        page_html = page_html.replace(",Safe", "")
    (tmp_path / "feedback.html").write_text(page_html, encoding="utf-8")
    cdn = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/"

    def serve(route):  # the page, MathJax from the local copy (latest.js falls back to 2.7.7
        # when its version lookup fails), nothing else
        url = route.request.url
        if url.startswith("file:"):
            return route.continue_()
        if url.startswith(cdn):
            local = MATHJAX2 / url[len(cdn) :].split("?")[0]
            if local.is_file():
                return route.fulfill(path=str(local))
        return route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.route("**/*", serve)
            page.goto((tmp_path / "feedback.html").as_uri())
            page.wait_for_function(
                "window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                " && document.querySelectorAll('.mjx-chtml, .MathJax_CHTML').length > 0",
                timeout=60_000,
            )
            for link in page.query_selector_all("a[href]"):
                link.click(no_wait_after=True, timeout=2000, force=True)
            seen = page.evaluate(_SEEN)
        finally:
            browser.close()
    assert seen["honest"] and seen["rendered"] > 0, seen  # MathJax ran on the page
    assert seen["links"] == [] and seen["ran"] is None, seen
    assert seen["fixed"] == [] and seen["chosen"] == [], seen
