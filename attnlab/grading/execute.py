"""nbgrader's Execute step with limits that hold, and outputs that are safe to show.

nbgrader's ``Execute`` runs *everything* a student wrote (the grades are decided apart, by
:class:`~attnlab.grading.nbgrader_plugin.GradeOutsideKernel`, but these outputs become the
student's feedback). :class:`LimitedExecute`, used in its place by the course's
``nbgrader_config.py``:

* runs the kernel in the grading sandbox with an **asynchronous** kernel manager
  (:class:`~attnlab.grading.sandbox.AsyncSandboxedKernelManager`): with a synchronous one,
  nbclient's reads block its event loop and its cell timeout never fires;
* stops a cell past ``Execute.timeout`` whatever it does with signals: an interrupt first,
  and when the kernel is still busy ``iopub_timeout`` seconds later, the kernel is killed;
  the cells after it are not run (each says why) and grading goes on with the next step;
* gives the whole notebook ``notebook_timeout`` seconds, and the code the student wrote
  (answer cells, cells they added, lesson cells they changed: :func:`student_cells`)
  ``student_cells_timeout`` seconds together: past it, the rest of that code is not run (each
  such cell says why) while the lesson's own cells go on, so a student who adds cells that
  sleep costs the class that budget, not ``notebook_timeout``; after each such cell the
  kernel's hooks are put back as they were before the first (:data:`HOOKS_SNAPSHOT`,
  :data:`HOOKS_RESTORE`), so a cell that registers an IPython event, an AST transformer, a
  trace function or a garbage-collector callback, or wraps a builtin, to slow the lesson's
  cells does not carry its cost past its own budget; and a student's cell that leaves
  threads or processes running (seen from outside, in the host's ``/proc``) makes every
  later cell count against the student's budget too (a busy thread takes the interpreter
  from every cell after it). What is left, slowing the lesson's cells by other means, is
  bounded by ``notebook_timeout`` and costs only that student's feedback: the grade is
  decided in a fresh kernel;
* starts **no process** from the notebook's first cell on, and makes no memory that no cap
  counts (``memfd_create``, ``shmget``): :data:`BAN_PROCESSES`, the grading worker's seccomp
  filter and audit hook. The memory cap is per process, so a red team's added cell held three
  children of 1.5 GiB each past it (240 were allowed, enough to run the machine out of memory
  and kill the grading of the whole class); no lesson cell starts a process, and a cell that
  tries is told why in its output;
* caps what a cell and the notebook may print **as it arrives** (nbgrader's ``LimitOutput``
  runs only after the whole notebook ran, and by then the grading process holds it all), and
  the size of any one message the kernel sends (``max_message``, a ZeroMQ socket option);
* sanitizes every output and every Markdown/raw cell once the notebook has run
  (:func:`sanitize_notebook`): no script, no event handler, no widget state reaches the
  formgrader or the feedback HTML.

:class:`SanitizeOutputs` does the same sanitizing as a preprocessor of its own, run last
before nbgrader saves the notebook (after the course's own feedback has been written in).
"""

from __future__ import annotations

import asyncio
import html as _html
import json
import re
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import bleach
import nbformat
from bleach.css_sanitizer import ALLOWED_CSS_PROPERTIES, CSSSanitizer
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Integer

from attnlab.grading.lint import MAX_CELL, too_long
from attnlab.grading.sandbox import AsyncSandboxedKernelManager

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
    (:data:`~attnlab.grading.lint.MAX_CELL`, graded 0 with the reason) shows a note too; before,
    grading needs its source to say why. (A red team's 1 MB answer cell, kept whole, added
    3.5 min to its feedback in the one process that grades the class.)"""
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


class LimitedAsyncKernelClient(AsyncKernelClient):
    """An asynchronous kernel client whose sockets refuse any message larger than
    :attr:`max_message` bytes (ZeroMQ drops the connection instead of reading it)."""

    max_message = Integer(32 * 2**20, help="Largest message the kernel may send (bytes).").tag(
        config=True
    )

    def _context_default(self):
        import zmq

        context = super()._context_default()
        context.setsockopt(zmq.MAXMSGSIZE, self.max_message)
        return context


#: Message kinds that carry output, counted against the caps.
_OUTPUT_MESSAGES = frozenset(
    {
        "stream",
        "display_data",
        "execute_result",
        "error",
        "update_display_data",
        "comm_open",
        "comm_msg",
    }
)


def _message_size(msg) -> int:
    content = msg.get("content", {})
    if msg["msg_type"] == "stream":
        size = len(content.get("text", ""))
    else:
        size = len(json.dumps(content, default=str))
    return size + sum(len(b) for b in msg.get("buffers") or [])


def _note(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=f"\n[{text}]\n")


def _same_code(code) -> str:
    """``code`` as two copies of one cell compare: joined, each line's trailing spaces and the
    blank lines around it dropped."""
    text = code if isinstance(code, str) else "".join(code)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def student_cells(nb, source_nb=None) -> list[int]:
    """Indices of the code cells of ``nb`` whose code the student wrote.

    Those are the answer cells (nbgrader's solution cells), and, when the lesson's source
    notebook ``source_nb`` (nbformat JSON) is given, every code cell that is neither one of
    its grade cells (nbgrader puts their code back before Execute) nor a copy of one of its
    lesson cells: cells the student added or changed. Each lesson cell of the source matches
    one cell of ``nb`` at most, so a lesson cell pasted twice counts once as the lesson's.

    Parameters
    ----------
    nb : NotebookNode or dict
        The submitted notebook.
    source_nb : dict, optional
        The lesson's source notebook; without it only the answer cells are found.

    Returns
    -------
    list of int
        Indices into ``nb``'s cells, in order.

    Examples
    --------
    >>> lesson = {"cell_type": "code", "metadata": {}, "source": "x = 1"}
    >>> answer = {"cell_type": "code", "source": "def f(): pass",
    ...           "metadata": {"nbgrader": {"solution": True, "grade_id": "f"}}}
    >>> added = {"cell_type": "code", "metadata": {}, "source": "import time"}
    >>> source = {"cells": [lesson, answer]}
    >>> student_cells({"cells": [lesson, answer, added, lesson]}, source)
    [1, 2, 3]
    >>> student_cells({"cells": [lesson, answer, added]})
    [1]
    """
    lesson = Counter()
    grade_ids = set()
    for cell in (source_nb or {}).get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code" or meta.get("solution"):
            continue
        if meta.get("grade"):
            grade_ids.add(meta.get("grade_id"))
        else:
            lesson[_same_code(cell.get("source", ""))] += 1
    found = []
    for index, cell in enumerate(nb["cells"]):
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if cell.get("cell_type") != "code":
            continue
        if meta.get("solution"):
            found.append(index)
        elif source_nb is None:
            continue
        elif meta.get("grade") and meta.get("grade_id") in grade_ids:
            grade_ids.discard(meta.get("grade_id"))  # a second copy of it is the student's
        elif lesson[_same_code(cell.get("source", ""))] > 0:
            lesson[_same_code(cell.get("source", ""))] -= 1
        else:
            found.append(index)
    return found


def source_notebook(parent, config, resources) -> dict | None:
    """The lesson's source notebook (nbformat JSON) of the submission nbgrader is processing,
    found through its course directory; None when ``resources`` names none or it is missing."""
    info = (resources or {}).get("nbgrader") or {}
    if not info.get("assignment") or not info.get("notebook"):
        return None
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(parent=parent, config=config)
    folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
    path = folder / f"{info['notebook']}.ipynb"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


#: Run silently before the first cell the student wrote: remembers the kernel's hooks.
HOOKS_SNAPSHOT = """
def _attnlab_hooks():
    import builtins, gc, sys, threading
    ip = get_ipython()
    kept = dict(
        events=ip.events,
        callbacks={k: list(v) for k, v in ip.events.callbacks.items()},
        ast=list(ip.ast_transformers),
        post=list(ip.input_transformers_post),
        cleanup=list(ip.input_transformer_manager.cleanup_transforms),
        line=list(ip.input_transformer_manager.line_transforms),
        interval=sys.getswitchinterval(),
        gc=list(gc.callbacks),
        builtins=dict(vars(builtins)),
    )
    settrace, setprofile, setinterval = sys.settrace, sys.setprofile, sys.setswitchinterval
    thread_trace, thread_profile = threading.settrace, threading.setprofile

    def restore():
        ip.events = kept["events"]
        ip.events.callbacks = {k: list(v) for k, v in kept["callbacks"].items()}
        ip.ast_transformers[:] = kept["ast"]
        ip.input_transformers_post[:] = kept["post"]
        ip.input_transformer_manager.cleanup_transforms[:] = kept["cleanup"]
        ip.input_transformer_manager.line_transforms[:] = kept["line"]
        settrace(None), setprofile(None), thread_trace(None), thread_profile(None)
        setinterval(kept["interval"])
        gc.callbacks[:] = kept["gc"]
        for name, value in kept["builtins"].items():
            if vars(builtins).get(name) is not value:
                setattr(builtins, name, value)

    sys._attnlab_restore_hooks = restore
_attnlab_hooks()
del _attnlab_hooks
"""

#: Run silently after each cell the student wrote: puts the hooks back (see HOOKS_SNAPSHOT).
HOOKS_RESTORE = "import sys as _s; _s._attnlab_restore_hooks(); del _s"

#: Seconds the kernel has to put its hooks back; past them it counts as stopped.
HOOKS_TIMEOUT = 10

#: What a cell that tries to start a process is told (a ``PermissionError`` in its output).
NO_PROCESSES_HERE = (
    "the grader runs your notebook without starting processes (each would hold memory past "
    "the grading kernel's cap); your grade does not depend on this cell"
)

#: Run silently before the notebook's first cell: from then on the kernel starts no process
#: and makes no memory that no cap counts (``memfd_create``, ``shmget``):
#: :func:`attnlab.grading.worker.forbid_processes`. No lesson cell starts one.
BAN_PROCESSES = f"""
import attnlab.grading.worker as _attnlab_worker
_attnlab_why = _attnlab_worker.forbid_processes({NO_PROCESSES_HERE!r})
del _attnlab_worker
if _attnlab_why is not None:
    raise RuntimeError(_attnlab_why)
del _attnlab_why
"""


class LimitedExecute(Execute):
    """nbgrader's ``Execute`` with a sandboxed kernel, limits that hold and clean outputs.

    Configure as ``Execute`` (``--Execute.timeout=5``) or with this class's own options:
    ``notebook_timeout``, ``max_cell_output``, ``max_output``, ``max_outputs_per_cell``.
    """

    notebook_timeout = Integer(
        300, help="Seconds the whole notebook may run; the cells left then are not run."
    ).tag(config=True)
    student_cells_timeout = Integer(
        60,
        help="Seconds the code the student wrote (answer cells, cells they added or changed) "
        "may run in all; past it the rest of that code is not run, and the lesson's own cells "
        "go on.",
    ).tag(config=True)
    max_cell_output = Integer(
        1 * 2**20, help="Bytes of output one cell may produce; the rest is dropped as it comes."
    ).tag(config=True)
    max_output = Integer(8 * 2**20, help="Bytes of output the whole notebook may produce.").tag(
        config=True
    )
    max_outputs_per_cell = Integer(
        500, help="Outputs (prints are batched; displays are not) one cell may add."
    ).tag(config=True)

    def __init__(self, **kwargs):
        kwargs.setdefault("kernel_manager_class", AsyncSandboxedKernelManager)
        super().__init__(**kwargs)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.client_class = f"{__name__}.LimitedAsyncKernelClient"
        return km

    def preprocess(self, nb, resources=None, km=None):
        self._deadline = time.monotonic() + self.notebook_timeout
        self._stopped: str | None = None
        source_nb = source_notebook(self.parent, self.config, resources)
        if source_nb is None:
            self.log.info("No source notebook found: only answer cells count as student code")
        self._student = {id(nb.cells[i]) for i in student_cells(nb, source_nb)}
        self._student_left = float(self.student_cells_timeout)
        self._hooks_kept = False
        self._processes_banned = False
        #: Why the cells after a student's cell count against the student's budget too: that
        #: cell left threads or processes running (None while none did).
        self._left_running: str | None = None
        self._used = 0
        self._cell_used: dict[int, tuple[int, int]] = {}  # id(cell) -> (bytes, outputs)
        self._truncated: set[int] = set()
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            sanitize_notebook(nb)
        return nb, resources

    # ------------------------------------------------------------------ time
    def _get_timeout(self, cell):
        timeout = super()._get_timeout(cell)
        left = max(1, int(self._deadline - time.monotonic()))
        if self._charged(cell):
            left = min(left, max(1, int(self._student_left)))
        return left if timeout is None else min(timeout, left)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell
        if self._stopped is None and time.monotonic() >= self._deadline:
            await self._stop(f"the notebook's {self.notebook_timeout} s of running were used up")
        if self._stopped is not None:
            cell.outputs = [_note(f"not run by the grader: {self._stopped}")]
            return cell
        if len(cell.source) > MAX_CELL:  # graded 0 with the reason, never run or parsed
            size = len(cell.source)
            cell.outputs = [
                _note(
                    f"not run by the grader: a cell longer than {MAX_CELL:,} "
                    f"characters is not run (this one holds {size:,})"
                )
            ]
            return cell
        if not self._processes_banned:
            # a red team's added cell held 3 children of 1.5 GiB each, past the per-process
            # memory cap (up to 240 were allowed): the class's grading ran out of memory
            self._processes_banned = True
            if not await self._silently(BAN_PROCESSES):
                self.log.warning("The kernel's processes could not be banned")
        student, charged = id(cell) in self._student, self._charged(cell)
        if charged and self._student_left < 1:
            cell.outputs = [_note(self._student_note())]
            return cell
        if student and not self._hooks_kept:
            self._hooks_kept = await self._silently(HOOKS_SNAPSHOT)
        threads = self._running_threads() if student else None
        started, given = time.monotonic(), self._get_timeout(cell)
        cut = charged and given < (self.timeout or float("inf"))  # the budget, not the cell limit
        try:
            cell = await super().async_execute_cell(
                cell, cell_index, execution_count=execution_count, store_history=store_history
            )
            if cut and time.monotonic() - started >= given:
                cell.outputs.append(_note(self._student_note(stopped=given)))
            return cell
        except (CellTimeoutError, DeadKernelError) as error:
            reason = getattr(self.km, "stopped_because", None) or self._why(error, cell)
            await self._stop(reason)
            cell.outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename="CellStoppedByGrader",
                    evalue=reason,
                    traceback=[f"CellStoppedByGrader: {reason}"],
                )
            )
            return cell
        finally:
            if student and self._hooks_kept and self._stopped is None:
                await self._silently(HOOKS_RESTORE)
            if student and self._stopped is None:
                await self._note_left_running(cell, threads)
            if charged:
                self._student_left -= time.monotonic() - started

    execute_cell = run_sync(async_execute_cell)

    def _charged(self, cell) -> bool:
        """Whether ``cell``'s time counts against the student's budget: a cell the student
        wrote, or any cell after one that left threads or processes running."""
        return id(cell) in self._student or self._left_running is not None

    def _running_threads(self) -> int | None:
        counting = getattr(self.km, "running_threads", None)
        return counting() if callable(counting) else None

    async def _note_left_running(self, cell, before: int | None, grace: float = 1.0) -> None:
        """After a student's ``cell``: when the kernel and its processes run more threads than
        before it (``before``) and still do ``grace`` seconds later, the cell left them
        running (a busy thread that holds the interpreter slows every cell after it; the
        hooks put back cannot stop it), and every later cell's time counts against the
        student's budget; the cell says so. The count is the host's (``/proc``), which no
        code in the kernel can change."""
        if before is None or self._left_running is not None:
            return
        deadline = time.monotonic() + grace
        while True:
            now = self._running_threads()
            if now is None or now <= before:
                return
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.1)
        self._left_running = (
            f"this cell left {now - before} more thread(s) or process(es) running after it "
            "ended, so every cell after it counts against the time your code gets"
        )
        self.log.info("The student's code left threads running: %s", self._left_running)
        cell.outputs.append(
            _note(
                f"the grader: {self._left_running} ({self.student_cells_timeout} s for all "
                "the code you wrote). Your grade does not depend on it: grading runs your "
                "answer cells again in a fresh kernel"
            )
        )

    async def _silently(self, code: str) -> bool:
        """Run ``code`` in the kernel, silently (no output, no history, no IPython events);
        whether it ran. A kernel that does not answer within :data:`HOOKS_TIMEOUT` seconds is
        stopped (the student's code made it so), and one that reports an error is logged."""
        if self.kc is None or self._stopped is not None:
            return False
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        try:
            reply = await asyncio.wait_for(self._reply(msg_id), HOOKS_TIMEOUT)
        except asyncio.TimeoutError:
            await self._stop(
                f"the kernel did not answer the grader within {HOOKS_TIMEOUT} s after a cell "
                "the student wrote"
            )
            return False
        ok = reply.get("content", {}).get("status") == "ok"
        if not ok:
            self.log.warning("The kernel's hooks could not be kept or put back: %s", reply)
        return ok

    async def _reply(self, msg_id: str) -> dict:
        """The shell channel's reply to ``msg_id`` (replies to anything else are dropped)."""
        while True:
            msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=None))
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def _student_note(self, stopped: float | None = None) -> str:
        """Why a cell of the student's was stopped after ``stopped`` seconds, or not run."""
        what = "not run during grading" if stopped is None else f"stopped after {stopped:g} s"
        running = f" ({self._left_running})" if self._left_running else ""
        return (
            f"{what}: the code you wrote (your answer cells and the cells you added or changed) "
            f"{'had used' if stopped is None else 'used'} up the {self.student_cells_timeout} s "
            f"the grader gives it in all{running}. Your grade does not depend on it: grading "
            "runs your answer cells again in a fresh kernel"
        )

    def _why(self, error, cell) -> str:
        if isinstance(error, DeadKernelError):
            return "the kernel died (a memory, process or disk limit, or the code ended it)"
        return (
            f"this cell was still running {self._get_timeout(cell)} s after it started "
            "and did not stop when interrupted"
        )

    async def _stop(self, reason: str) -> None:
        """Kill the kernel (an interrupt can be caught, a kill cannot); run nothing more."""
        self._stopped = reason
        self.log.warning("Stopping the student's kernel: %s", reason)
        try:
            if self.km is not None and await ensure_async(self.km.is_alive()):
                await ensure_async(self.km.shutdown_kernel(now=True))
        except RuntimeError as error:  # already gone
            self.log.debug("kernel already stopped: %s", error)

    # ------------------------------------------------------------------ output caps
    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] in _OUTPUT_MESSAGES:
            key = id(cell)  # one cell's budget, however the caller numbers its cells
            size = _message_size(msg)
            used, count = self._cell_used.get(key, (0, 0))
            over = self._over(used + size, count + 1, self._used + size)
            if over and msg["msg_type"] == "stream" and not msg.get("buffers"):
                # keep what fits of a stream (the kernel sends many prints as one message)
                room = min(self.max_cell_output - used, self.max_output - self._used)
                if room > 0 and count + 1 <= self.max_outputs_per_cell:
                    content = msg["content"]
                    msg = {**msg, "content": {**content, "text": content["text"][:room]}}
                    self._cell_used[key] = (used + room, count + 1)
                    self._used += room
                    super().process_message(msg, cell, cell_index)
            if over:
                self._truncate(cell, key, over)
                return None
            self._cell_used[key] = (used + size, count + 1)
            self._used += size
        return super().process_message(msg, cell, cell_index)

    def _over(self, cell_bytes: int, cell_count: int, total: int) -> str | None:
        if cell_bytes > self.max_cell_output:
            return f"this cell printed more than {self.max_cell_output:,} bytes"
        if cell_count > self.max_outputs_per_cell:
            return f"this cell made more than {self.max_outputs_per_cell} outputs"
        if total > self.max_output:
            return f"the notebook printed more than {self.max_output:,} bytes"
        return None

    def _truncate(self, cell, key: int, why: str) -> None:
        if key in self._truncated:
            return
        self._truncated.add(key)
        cell.outputs.append(_note(f"output truncated by the grader: {why}"))


class SanitizeOutputs(NbGraderPreprocessor):
    """:func:`sanitize_notebook` as an nbgrader preprocessor (run it last before saving)."""

    def preprocess(self, nb, resources):
        sanitize_notebook(nb, course_feedback=True)
        return nb, resources
