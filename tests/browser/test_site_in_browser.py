"""The course's static site (tools/build_site.py) in Chromium, as a visitor opens it.

Every page of the built site is served from 127.0.0.1 and opened once; each check reads what
that visit saw: no request to another host, every explorer a loaded picture with alt text,
MathJax typeset (no raw ``$...$`` left), no widget repr, each lesson linking the next, hints
folded, lesson 0's self-test saying the page is static, and axe-core with no serious or
critical finding on the whole page. Page weights (every response's bytes) are printed.

The site is ``$ATTNLAB_SITE_DIR`` when set (CI's "site" stage builds it there first, without
network); otherwise this module builds one (about 90 s) into a temporary folder.

The tests' parameter is ``site_page``, not ``name``: tests/browser/conftest.py orders a test
with a ``name`` among the JupyterLab lesson pages, which would split this module's visits.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import a11y
import lab_harness as lab
import pytest

from attnlab.course import COURSE

pytestmark = pytest.mark.browser

ROOT = lab.REPO_ROOT
LESSONS = [entry.notebook for entry in COURSE if entry.ready]
PAGES = ["index", *LESSONS]
WIDGET_REPR = re.compile(r"\b[A-Z]\w*\((children|value|layout|description)=")
#: Text of a page outside code, maths and scripts, as a visitor reads it: raw TeX left over
#: when MathJax did not typeset ($...$, $$...$$, \( \)).
RAW_TEX = re.compile(r"\$[^$\s][^$]*\$|\\\(|\\\[")


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory) -> Path:
    given = os.environ.get("ATTNLAB_SITE_DIR")
    if given:
        folder = Path(given)
        assert (folder / "index.html").is_file(), f"no built site in {folder}"
        return folder
    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    folder = tmp_path_factory.mktemp("site")
    build_site.build(folder)
    return folder


@pytest.fixture(scope="module")
def served(site_dir: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # the suite's output shows what the pages did instead
            pass

    handler = functools.partial(Quiet, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


VISIT = """() => {
  const article = document.querySelector('article') || document.body;
  const pictures = [...document.querySelectorAll('figure.attnlab-explorer-picture img')]
    .map(img => ({alt: img.alt, loaded: img.complete && img.naturalWidth > 0}));
  const figures = [...document.querySelectorAll('figure.attnlab-figure-picture img')]
    .map(img => ({alt: img.alt, loaded: img.complete && img.naturalWidth > 0}));
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const raw = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('pre, code, script, style, mjx-container, .highlight')) continue;
    raw.push(node.textContent);
  }
  const next = document.querySelector('a.right-next');
  return {
    pictures, figures, text: raw.join(' '),
    math: document.querySelectorAll('mjx-container').length,
    next: next ? next.getAttribute('href') : null,
    hints: document.querySelectorAll('details.attnlab-hint').length,
    open_hints: document.querySelectorAll('details.attnlab-hint[open]').length,
    solutions: document.querySelectorAll('details.attnlab-solution').length,
    widget_scripts:
      document.querySelectorAll('script[type^="application/vnd.jupyter.widget"]').length,
    launch: [...document.querySelectorAll('.attnlab-launch a')].map(a => a.href),
    body: document.body.innerText,
  };
}"""


@pytest.fixture(scope="module")
def visits(served: str, site_dir: Path, artifacts_dir: Path, chromium) -> dict:
    """Each page opened once in Chromium: what it showed, what it requested, axe's findings.

    The suite's one Chromium (the session's ``chromium`` fixture): a second ``sync_playwright``
    inside the suite's raises 'Playwright Sync API inside the asyncio loop'."""
    host = urlparse(served).netloc
    seen: dict[str, dict] = {}
    browser = chromium
    for name in PAGES:  # each in a fresh context: its weight is a first visit's
        started = time.monotonic()
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        requests = []
        page.on("request", lambda request, requests=requests: requests.append(request.url))
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if urlparse(route.request.url).netloc == host
                or route.request.url.startswith("data:")
                else route.abort()
            ),
        )
        page.goto(f"{served}/{name}.html", wait_until="load")
        page.evaluate(  # MathJax has typeset the page (a page without maths: at once)
            "() => window.MathJax?.startup?.promise?.then(() => true) ?? false"
        )
        info = page.evaluate(VISIT)
        info["weight"] = page.evaluate(  # every byte the page loaded, before axe runs
            """() => [...performance.getEntriesByType('navigation'),
                       ...performance.getEntriesByType('resource')]
                .reduce((sum, e) => sum + e.encodedBodySize, 0)"""
        )
        page.add_script_tag(path=str(a11y.axe_script_path()))
        info["axe"] = page.evaluate(
            """() => axe.run(document, {resultTypes: ['violations']}).then(r =>
                r.violations.map(v => ({rule: v.id, impact: v.impact,
                                        targets: v.nodes.map(n => n.target.join(' '))})))"""
        )
        info["requests"] = requests
        if name in ("index", "00-start-here", "03-softmax"):
            page.screenshot(path=str(artifacts_dir / f"site-{name}.png"), full_page=False)
        info["seconds"] = time.monotonic() - started
        seen[name] = info
        context.close()
    report = json.loads((site_dir / "build-report.json").read_text(encoding="utf-8"))
    print("\nsite pages: first-visit weight (every response), own (HTML + pictures), seconds")
    for name, info in seen.items():
        own = (site_dir / f"{name}.html").stat().st_size + sum(
            (site_dir / "pictures" / f.name).stat().st_size
            for f in (site_dir / "pictures").glob(f"{name}-*.png")
        )
        print(
            f"  {name:32s} {info['weight'] / 1024:6.0f} KiB {own / 1024:6.0f} KiB"
            f" {info['seconds']:5.1f} s"
        )
    print(f"site build: {report.get('total_seconds')} s, {len(report['pages'])} pages")
    return {"pages": seen, "report": report}


@pytest.mark.parametrize("site_page", PAGES)
def test_no_request_leaves_the_site(visits, site_page, served):
    host = urlparse(served).netloc
    outside = [
        u
        for u in visits["pages"][site_page]["requests"]
        if urlparse(u).netloc != host and not u.startswith("data:")
    ]
    assert outside == [], f"{site_page} asked another host: {outside}"


@pytest.mark.parametrize("site_page", LESSONS)
def test_every_explorer_is_a_picture_with_alt_text(visits, site_page):
    entry = next(e for e in COURSE if e.notebook == site_page)
    info = visits["pages"][site_page]
    assert len(info["pictures"]) == len(entry.explorers), info["pictures"]
    for picture in info["pictures"]:  # the picture a learner sees, said in words
        assert picture["loaded"], f"{site_page}: an explorer's picture did not load"
        assert picture["alt"].startswith("The ") and " explorer at " in picture["alt"], picture
        assert "Figure:" in picture["alt"], picture
    for picture in info["figures"]:
        assert picture["loaded"] and len(picture["alt"]) > 10, f"{site_page}: {picture}"


@pytest.mark.parametrize("site_page", PAGES)
def test_maths_is_typeset_and_no_widget_repr_shows(visits, site_page):
    info = visits["pages"][site_page]
    assert info["math"] > 0, f"{site_page}: MathJax typeset nothing"
    assert not RAW_TEX.search(info["text"]), RAW_TEX.search(info["text"]).group(0)
    assert not WIDGET_REPR.search(info["body"]), WIDGET_REPR.search(info["body"]).group(0)
    assert info["widget_scripts"] == 0


@pytest.mark.parametrize("site_page", PAGES)
def test_each_page_links_the_next_lesson_and_launches(visits, site_page):
    info = visits["pages"][site_page]
    following = PAGES[PAGES.index(site_page) + 1] if site_page != PAGES[-1] else None
    if following:
        assert info["next"] == f"{following}.html", info["next"]
    if site_page != "index":
        assert any("mybinder.org" in link and site_page in link for link in info["launch"])


@pytest.mark.parametrize("site_page", LESSONS)
def test_hints_are_folded_and_solutions_follow_the_setting(visits, site_page):
    info = visits["pages"][site_page]
    if site_page == "00-start-here":
        assert "This is a static page" in info["body"]
        assert "✗ Widgets are NOT live" not in info["body"]
    assert info["hints"] > 0 and info["open_hints"] == 0
    if visits["report"]["solutions"]:
        assert info["solutions"] > 0
    else:
        assert info["solutions"] == 0


@pytest.mark.parametrize("site_page", PAGES)
def test_axe_finds_nothing_serious(visits, site_page):
    blocking = [v for v in visits["pages"][site_page]["axe"] if v["impact"] in a11y.BLOCKING]
    assert blocking == [], blocking


def test_the_site_has_every_explorer_and_every_help_panel(visits):
    from attnlab.exercises.kit.exercise_map import EXERCISES

    lessons = visits["report"]["lessons"]
    # Each lesson's page shows each of the explorers the course map gives it (a count written
    # here went stale when lesson 10 brought two).
    shown = {name: counts["explorers"] for name, counts in lessons.items()}
    assert shown == {entry.notebook: len(entry.explorers) for entry in COURSE if entry.ready}
    assert sum(shown.values()) >= 11  # lessons 1-9 alone have 11
    assert sum(counts["help"] for counts in lessons.values()) == len(EXERCISES)
    assert sum(info["hints"] > 0 for info in visits["pages"].values()) == len(LESSONS)
