"""The feedback sanitizer: what a student's notebook can put in front of a reader, made safe.

A graded notebook is shown to people other than its author: the instructor in the formgrader,
and the student again in the feedback HTML nbgrader writes. Everything in it that the student
controls (Markdown and raw cells, and every output, which any cell can print, the course's own
feedback box included) is cleaned here, once the submission has run
(:class:`~attnlab.grading.execute.LimitedExecute`) and again last before nbgrader saves it
(:class:`~attnlab.grading.execute.SanitizeOutputs`). It guards against:

* **script**: ``<script>``, event handlers (``onerror=``), frames, forms, and links or images
  whose target runs script in any spelling (``javascript:``, ``&#106;avascript:``,
  ``java\\tscript:``, ``vbscript:``, ``data:text/html``): :func:`clean_html`, :func:`url_is_safe`;
* **Markdown that renders to such a link** although its source holds no tag
  (``[x](javascript:…)``, reference links, autolinks): :func:`clean_markdown` renders it as
  nbconvert does and looks at the result;
* **MathJax commands** that make a link, load code, set CSS, classes or ids, or define macros
  (``\\href{javascript:…}``, ``\\require``, ``\\style{background:url(…)}``,
  ``\\class{attnlab-feedback}``, ``\\bbox[position: fixed…]``, ``\\newcommand``), however the
  backslash is written: :func:`_clean_tex`;
* **trackers**: a style or an image that makes the reader's browser fetch a URL as the page
  opens (``background:url(…)``, ``<img src="https://…">``);
* **a forged "correct" box**: only the course's own feedback (the grade cells' outputs, with
  ``look``) keeps ``class``, ``style`` and ``id``;
* **output metadata** that nbconvert writes into an ``<img>`` tag unescaped
  (``{"width": "1\\" onerror=…"}``): :func:`clean_metadata`;
* **cost**: fragments with more than :data:`MAX_TAGS` tags are shown as text (cleaning time
  grows with the square of nested tags), and too long cells show a note (:func:`cap_cell_text`).

Why not a library alone: the HTML part *is* bleach (as nbconvert's ``SanitizeHTML``
preprocessor uses it), with the course's allow-list; but an HTML sanitizer (bleach, nh3,
nbconvert's ``SanitizeHTML`` with its defaults or with this allow-list) sees only tags, and
most of the attacks above hold none. Run on ``tests/test_feedback_sanitizer.py`` in this
module's place, nbconvert's ``SanitizeHTML`` (bleach, with this allow-list) failed 33 of the 75
it runs without a browser, and nh3 45:
the Markdown cell ``[click-js](javascript:alert('P1'))`` is rendered by nbconvert to
``<a href="javascript:alert(%27P1%27)">``, and ``$\\href{javascript:alert('P3')}{…}$``,
``$\\require{https://…}$`` and ``$\\class{attnlab-feedback}{…}$`` reach MathJax untouched,
as does the image metadata ``width`` that adds an ``onerror`` handler.
"""

from __future__ import annotations

import html as _html
import re
from html.parser import HTMLParser

import bleach
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer

from attnlab.exercises.rules.lint import MAX_CELL, too_long

#: Output kinds kept in a graded notebook; the rest (``application/javascript``, widget views,
#: ``image/svg+xml``, anything unknown) is dropped.
KEPT_MIME_TYPES = (
    "text/plain",
    "text/html",
    "text/markdown",
    "text/latex",
    "image/png",
    "image/jpeg",
    "image/gif",
    "application/json",
)
#: The kinds that hold HTML, cleaned by :func:`clean_html`.
HTML_MIME_TYPES = ("text/html", "text/markdown")

#: Tags a cleaned output or Markdown cell may keep (bleach's own list and what tables, details,
#: headings, images and the course's feedback panels use); never ``script``, ``style``,
#: ``iframe``, ``object``, ``form``, ``svg``.
ALLOWED_TAGS = frozenset(bleach.ALLOWED_TAGS) | {
    "p", "div", "span", "br", "hr", "pre", "code", "kbd", "samp", "sub", "sup", "small",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tfoot", "tr", "th", "td",
    "caption", "colgroup", "col", "details", "summary", "img", "figure", "figcaption", "dl",
    "dt", "dd", "mark", "del", "ins", "s", "u", "i", "b", "em", "strong", "blockquote",
}  # fmt: skip
#: Attributes kept on every tag: no ``on*`` handler, no ``src``/``href`` but the ones below.
ALLOWED_ATTRIBUTES = {
    "*": ["class", "style", "title", "role", "id", "aria-label", "aria-hidden", "colspan",
          "rowspan", "align"],
    "a": ["href", "title"],
    "img": ["src", "alt", "width", "height"],
}  # fmt: skip
#: Links and images may point to web pages and to images inside the notebook, never to script.
ALLOWED_PROTOCOLS = ["http", "https", "mailto", "data"]


#: Style properties kept in ``style`` attributes (bleach's list and what boxes are drawn with).
ALLOWED_CSS = frozenset(ALLOWED_CSS_PROPERTIES) | {
    "background", "padding", "padding-left", "padding-right", "padding-top", "padding-bottom",
    "margin", "margin-left", "margin-right", "margin-top", "margin-bottom", "border",
    "border-left", "border-right", "border-top", "border-bottom", "border-radius", "display",
    "gap", "flex", "flex-wrap", "max-width", "min-width", "opacity",
}  # fmt: skip


#: What in a style value makes the browser fetch something (or hides it behind CSS escapes).
_CSS_FETCH = re.compile(r"url\s*\(|image-set|image\s*\(|expression|@import|\\", re.I)


class _NoFetchCSS(CSSSanitizer):
    """bleach's CSS sanitizer that also drops every declaration whose value could make the
    reader's browser fetch a URL (``background: url(https://…)``: a tracking pixel)."""

    def sanitize_css(self, style):
        cleaned = super().sanitize_css(style)
        kept = [
            part
            for part in cleaned.split(";")
            if part.strip() and not _CSS_FETCH.search(_html.unescape(part))
        ]
        return "; ".join(p.strip() for p in kept) + (";" if kept else "")


def _css():
    return _NoFetchCSS(allowed_css_properties=ALLOWED_CSS)


#: Schemes a link may use (a target with no scheme is a relative link, kept); images may also
#: be ``data:image/…`` and nbconvert's ``attachment:``.
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]")
#: Attributes a browser follows as a URL.
_URL_ATTRIBUTES = frozenset(
    {"href", "src", "action", "formaction", "xlink:href", "background", "poster", "srcset",
     "data", "cite", "lowsrc", "dynsrc", "longdesc", "ping"}
)  # fmt: skip


def _bare_url(value: str) -> str:
    """``value`` as a browser reads its scheme: entities decoded, every whitespace and control
    character gone, lower case (``" &#106;ava\tScript:"`` -> ``"javascript:"``)."""
    text = _html.unescape(_html.unescape(value))
    return "".join(c for c in text if ord(c) > 0x20 and c not in "\x7f\u00a0").lower()


def _scheme(value: str) -> str | None:
    match = re.match(r"([a-z][a-z0-9+.\-]*):", _bare_url(value))
    return match.group(1) if match else None


def url_is_safe(value: str, image: bool = False) -> bool:
    """Whether a link (or, ``image``, an image's source) to ``value`` cannot run script.

    Examples
    --------
    >>> [url_is_safe(u) for u in ("https://x.org", "#top", "a/b.html", "mailto:t@x.org")]
    [True, True, True, True]
    >>> [url_is_safe(u) for u in ("javascript:x", "&#106;avascript:x", " Data:text/html,x",
    ...                           "vbscript:x", "java\tscript:x", "DATA:image/png;base64,")]
    [False, False, False, False, False, False]
    >>> url_is_safe("DATA:image/png;base64,AAA", image=True)
    True
    """
    scheme = _scheme(value)
    if image and not (scheme in ("data", "attachment") or value.strip() == ""):
        return False  # a picture from anywhere else is fetched as the page opens (a tracker)
    if scheme is None or scheme in LINK_SCHEMES:
        return True
    if image and scheme == "attachment":
        return True
    return image and scheme == "data" and bool(_IMAGE_DATA.match(_bare_url(value)))


#: Attributes that give HTML a look (the course's feedback boxes are drawn with them): kept
#: only in the outputs the course writes itself, the grade cells' feedback.
LOOK_ATTRIBUTES = frozenset({"class", "style", "id"})


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    """bleach's attribute filter: :data:`ALLOWED_ATTRIBUTES`, and URLs only safe ones."""
    if name not in ALLOWED_ATTRIBUTES["*"] and name not in ALLOWED_ATTRIBUTES.get(tag, ()):
        return False
    if name in _URL_ATTRIBUTES:
        return url_is_safe(value, image=tag == "img")
    return True


def _allowed_plain_attribute(tag: str, name: str, value: str) -> bool:
    """:func:`_allowed_attribute` without :data:`LOOK_ATTRIBUTES`: what a student's output or
    Markdown keeps, so nothing they write can be dressed as the course's green "correct" box."""
    return name not in LOOK_ATTRIBUTES and _allowed_attribute(tag, name, value)


class _UnsafeFinder(HTMLParser):
    """What in rendered HTML could run script: unsafe URLs, event handlers, script tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed", "frame", "base", "meta", "form"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"{tag} {name}")
            elif name in _URL_ATTRIBUTES and not url_is_safe(value or "", image=tag == "img"):
                self.found.append(f"{tag} {name}={value}")

    handle_startendtag = handle_starttag


def unsafe_parts(html: str) -> list[str]:
    """The parts of ``html`` that could run script in a browser (empty when none).

    Examples
    --------
    >>> unsafe_parts('<a href="&#106;avascript:x">a</a><img src=y onerror=z><a href="/ok">')
    ['a href=javascript:x', 'img src=y', 'img onerror']
    """
    finder = _UnsafeFinder()
    finder.feed(html)
    finder.close()
    return finder.found


class _AnyAttachment(dict):
    """Every ``attachment:`` name resolves (to an empty picture): only links are looked at."""

    def __contains__(self, name):
        return True

    def __getitem__(self, name):
        return {"image/png": ""}


def _render_markdown(text: str) -> str:
    """``text`` rendered as nbconvert renders a Markdown cell of the feedback page."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    renderer = IPythonRenderer(escape=False, attachments=_AnyAttachment())
    return MarkdownWithMath(renderer=renderer).render(text)


_TEX_HREF = re.compile(r"\\href\s*\{([^{}]*)\}")
#: MathJax commands that put CSS, classes or ids on the page (``\\style{background:url(…)}``
#: makes the reader's browser fetch a URL; ``\\class{attnlab-feedback}`` dresses text as the
#: course's feedback; ``\\bbox[position: fixed; …]`` lays a box over the whole page), load
#: code (``\\require``), set attributes (``\\mmlToken``, ``\\unicode``'s font) or define
#: macros (``\\def``, ``\\newcommand`` …: a macro can assemble a ``\\href`` whose target
#: the text never spells, ``\\newcommand{\\h}[1]{\\href{#1}{x}}``): made inert
#: (:func:`_clean_tex`). The lessons use none of them.
_TEX_PAGE_COMMANDS = re.compile(
    r"\\(style|class|cssId|require|bbox|mmlToken|unicode|def|gdef|edef|xdef|let|newcommand"
    r"|renewcommand|providecommand|newenvironment|renewenvironment|DeclareMathOperator"
    r"|mathtip|texttip|toggle)(?![A-Za-z])"
)


#: A backslash as HTML can write it: itself, or a character reference (decimal, hex, named; the
#: ``;`` optional, as browsers read numeric ones), escaped again any number of times.
_BACKSLASH = re.compile(r"\\|&(?:amp;)*(?:#0*92;?|#[xX]0*5[cC];?|bsol;)")

#: What stands for a backslash in text that tried to reach the page through MathJax.
NO_BACKSLASH = "\u2216"  # ∖ (set minus): looks like one, starts no command


_HREF_COMMAND = re.compile(r"\\href(?![A-Za-z])\s*")


def _unsafe_href(plain: str) -> bool:
    """Whether MathJax would read a ``\\href`` in ``plain`` (decoded text) whose target is not
    a safe link, as MathJax reads its argument: balanced braces (``\\href{javascript:f()//{}}``
    slipped past a pattern of brace-free targets), or a single token when no brace follows.

    Examples
    --------
    >>> _unsafe_href(r"$\\href{https://x.org}{}$"), _unsafe_href(r"$\\href{javascript:f()//{}}{}$")
    (False, True)
    """
    for match in _HREF_COMMAND.finditer(plain):
        rest = plain[match.end() :]
        if not rest.startswith("{"):
            return True
        depth, end = 0, None
        for i, char in enumerate(rest):
            if char == "\\":
                continue
            if char == "{" and (i == 0 or rest[i - 1] != "\\"):
                depth += 1
            elif char == "}" and rest[i - 1] != "\\":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end is None or not url_is_safe(rest[1:end]):
            return True
    return False


def _clean_tex(text: str) -> str:
    """Where a command of :data:`_TEX_PAGE_COMMANDS` appears, or a ``\\href`` whose target is
    not a safe link (:func:`_unsafe_href`) (read also through HTML entities, which the browser
    decodes before MathJax reads the page), every backslash of the text, however it is
    written, becomes :data:`NO_BACKSLASH`, and nothing else changes.

    The text is never decoded to be cleaned: decoding the whole of it turned a check's escaped
    quote of a student's answer (``\\class`` and a ``<div class="attnlab-feedback">``) back
    into live HTML, dressed as the course's feedback (a red team's, 2026-12-06).

    Examples
    --------
    >>> _clean_tex(r"$\\class{x}{y}$ &lt;b&gt;")
    '$∖class{x}{y}$ &lt;b&gt;'
    >>> _clean_tex(r"$\\frac{1}{2}$")
    '$\\\\frac{1}{2}$'
    """
    plain = _html.unescape(_html.unescape(text))
    if _TEX_PAGE_COMMANDS.search(plain) or _unsafe_href(plain):
        text = _BACKSLASH.sub(NO_BACKSLASH, text)
        if _TEX_PAGE_COMMANDS.search(_html.unescape(_html.unescape(text))):  # pragma: no cover
            return _html.escape(_html.unescape(text)).replace("\\", NO_BACKSLASH)
    return _TEX_HREF.sub(lambda m: m.group(0) if url_is_safe(m.group(1)) else "\\href{#}", text)


#: The most tags (``<``) one fragment of HTML or Markdown may hold and still be cleaned; one with
#: more is shown as escaped text, which takes no parsing. Cleaning time grows with the square
#: of nested tags: a red team's 20,000 nested ``<div>`` in an added Markdown cell took a
#: class's grading from 4.8 to 51 s, and a 1 MB output would have taken about an hour. The
#: lessons' own cells hold at most 10.
MAX_TAGS = 1_000


def _escaped(text: str) -> str:
    """``text`` shown as it is, in a ``<pre>`` block: nothing in it is markup."""
    return "<pre>" + _html.escape(text) + "</pre>"


def clean_markdown(text: str, look: bool = False) -> str:
    """Markdown that renders without script: cleaned as HTML source (:func:`clean_html`, only
    when that takes something out), then **rendered** as nbconvert renders it; when the page
    would still hold an unsafe link (``[x](javascript:…)``, ``&#106;avascript:``, a reference
    link, an autolink, ``vbscript:``, a ``data:`` page), the Markdown is replaced by its
    rendered HTML cleaned by bleach, and if even that renders unsafe, by its escaped text.

    Examples
    --------
    >>> clean_markdown("[x](https://x.org) *ok*")
    '[x](https://x.org) *ok*'
    >>> clean_markdown("[x](&#106;avascript:alert(1))")
    '<p><a>x</a></p>\\n'
    """
    if text.count("<") > MAX_TAGS:
        return _escaped(text)
    text = _clean_tex(text)
    cleaned = clean_html(text, look=look) if _differs(text, look) else text
    if not unsafe_parts(_render_markdown(cleaned)):
        return cleaned
    cleaned = clean_html(_render_markdown(cleaned), strip=True, look=look)
    if not unsafe_parts(_render_markdown(cleaned)):
        return cleaned
    return "<pre>" + _html.escape(text) + "</pre>"  # pragma: no cover - belt and braces


def clean_html(html: str, strip: bool = False, look: bool = False) -> str:
    """``html`` without script, event handlers, frames, forms or style sheets (bleach);
    ``strip``: drop what is refused instead of showing it escaped. Without ``look`` (anything
    but the course's own feedback) ``class``, ``style`` and ``id`` go too, so no output can
    pass for the course's feedback box; with it, styles that would fetch a URL still go.

    Examples
    --------
    >>> clean_html('<b onclick="x()">hi</b><script>alert(1)</script>')
    '<b>hi</b>&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> clean_html('<a href="javascript:alert(1)">x</a>')
    '<a>x</a>'
    """
    if html.count("<") > MAX_TAGS:
        return _escaped(html)
    cleaned = bleach.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=_allowed_attribute if look else _allowed_plain_attribute,
        protocols=ALLOWED_PROTOCOLS,
        css_sanitizer=_css(),
        strip=strip,
        strip_comments=True,
    )
    return _no_data_script(cleaned)


def _no_data_script(html: str) -> str:
    """Only images may be ``data:`` URLs (``data:text/html`` in a link would run script); the
    attribute filter already refuses them, whatever their case or spacing."""
    return re.sub(r'href="\s*data:', 'href="#data:', html, flags=re.I)


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def sanitize_output(output, look: bool = False) -> None:
    """Drop the kinds not in :data:`KEPT_MIME_TYPES` and clean the HTML ones, in place;
    ``look``: the output is the course's own feedback, which keeps its classes and styles."""
    if output.get("output_type") not in ("display_data", "execute_result"):
        return
    data = output.get("data", {})
    for mime in list(data):
        if mime not in KEPT_MIME_TYPES:
            del data[mime]
        elif mime == "text/markdown":
            data[mime] = clean_markdown(_joined(data[mime]), look)
        elif mime == "text/latex":
            data[mime] = _clean_tex(_joined(data[mime]))
        elif mime in HTML_MIME_TYPES:
            data[mime] = clean_html(_clean_tex(_joined(data[mime])), look=look)
    if not data:
        data["text/plain"] = "[output removed by the grader: a kind it does not show]"
    if "metadata" in output:
        output["metadata"] = clean_metadata(output["metadata"], data)


#: What an output's metadata may keep per kind: nbconvert writes ``width`` and ``height`` into
#: the ``<img>`` tag unescaped, so only whole numbers pass; ``unconfined`` only as a bool.
_METADATA_NUMBERS = ("width", "height")


def clean_metadata(metadata, data) -> dict:
    """An output's ``metadata`` with only whole-number ``width``/``height`` and a boolean
    ``unconfined`` for the kinds in ``data``; everything else is dropped.

    Examples
    --------
    >>> clean_metadata({"image/png": {"height": "2 onload=alert(1)", "width": 40,
    ...                               "unconfined": True}, "x": 1}, {"image/png": ""})
    {'image/png': {'width': 40, 'unconfined': True}}
    """
    kept = {}
    for mime, values in (metadata or {}).items():
        if mime not in data or not isinstance(values, dict):
            continue
        clean = {
            name: values[name]
            for name in _METADATA_NUMBERS
            if type(values.get(name)) is int and 0 <= values[name] <= 100_000
        }
        if type(values.get("unconfined")) is bool:
            clean["unconfined"] = values["unconfined"]
        if clean:
            kept[mime] = clean
    return kept


#: The longest cell a graded notebook shows (characters of source), and the most text its
#: cells without nbgrader metadata may hold together; a cell past either shows a note
#: instead. The lessons' longest cell holds about 6,000 characters, and all the Markdown of
#: a lesson under 27,000. Cleaning and rendering cost time in proportion to the text: a red
#: team's added Markdown cell of 3 MB took a submission's autograde from 8.6 to 75 s, and
#: its feedback page as long again, in the one process that grades the class.
MAX_CELL_TEXT = 64 * 1024
MAX_NOTEBOOK_TEXT = 512 * 1024


def cap_cell_text(nb, answers: bool = False) -> None:
    """Put a note in place of the source of each cell longer than :data:`MAX_CELL_TEXT`, and of
    each cell that would take the text shown past :data:`MAX_NOTEBOOK_TEXT` (cells nbgrader
    grades or locks keep theirs: nbgrader checks and restores them).

    ``answers``: once grading is done, an answer cell longer than grading reads
    (:data:`~attnlab.exercises.rules.lint.MAX_CELL`, graded 0 with the reason) shows a note
    too; before, grading needs its source to say why. (A red team's 1 MB answer cell, kept
    whole, added 3.5 min to its feedback in the one process that grades the class.)"""
    total = 0
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        if isinstance(meta, dict) and any(meta.get(k) for k in ("grade", "solution", "locked")):
            size = len(_joined(cell.get("source", "")))
            if answers and meta.get("solution") and size > MAX_CELL:
                cell.source = f"# [not shown by the grader: {too_long(size)[len('line 1: ') :]}]"
                cell.pop("attachments", None)
            continue
        size = len(_joined(cell.get("source", "")))
        if size <= MAX_CELL_TEXT and total + size <= MAX_NOTEBOOK_TEXT:
            total += size  # what is shown
        else:
            why = (
                f"a cell of {size:,} characters, longer than the {MAX_CELL_TEXT:,} it shows"
                if size > MAX_CELL_TEXT
                else f"the notebook's cells hold more than the {MAX_NOTEBOOK_TEXT:,} "
                "characters it shows"
            )
            note = f"[not shown by the grader: {why}]"
            cell.source = f"# {note}" if cell.cell_type == "code" else f"*{note}*"
            cell.pop("attachments", None)


def sanitize_notebook(nb, course_feedback: bool = False) -> None:
    """Sanitize every output, every Markdown and raw cell and the widget state, in place
    (too long a cell is replaced first: :func:`cap_cell_text`).

    ``course_feedback``: the grade cells' outputs are the course's own feedback, written by
    :class:`~attnlab.grading.nbgrader_plugin.GradeOutsideKernel` (and only after grading
    ran: every output was sanitized once before, with nothing of a look left), so they keep
    their classes and styles; everything else loses them.
    """
    nb.metadata.pop("widgets", None)
    cap_cell_text(nb, answers=course_feedback)
    for cell in nb.cells:
        grading = cell.get("metadata", {}).get("nbgrader", {})
        look = course_feedback and bool(grading.get("grade")) and not grading.get("solution")
        if cell.cell_type == "markdown":
            source = _joined(cell.source)
            cleaned = clean_markdown(source)
            if cleaned != source:
                cell.source = cleaned
        if cell.cell_type in ("markdown", "raw"):
            source = _joined(cell.source)
            if cell.cell_type == "raw" and _differs(_clean_tex(source)):
                cell.source = clean_html(_clean_tex(source))
            for attachment in cell.get("attachments", {}).values():
                for mime in list(attachment):
                    if not mime.startswith("image/") or mime == "image/svg+xml":
                        del attachment[mime]
        for output in cell.get("outputs", []):
            sanitize_output(output, look)


def _differs(source: str, look: bool = False) -> bool:
    """Whether cleaning ``source`` takes anything out (bleach's escaping of a lone ``&``,
    ``<`` or ``>`` in text is not counted: Markdown renders those the same, and a clean cell is
    left exactly as written)."""
    stripped = clean_html(source, strip=True, look=look)
    unescaped = stripped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return unescaped != source
