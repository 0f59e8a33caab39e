"""The course as a whole in JupyterLab (the course's settings, jupyter-config/), at 1366 x 768.

* Lesson 2's Next link, clicked, opens lesson 3.
* Closing a lesson's tab shuts its kernel down (``kernelShutdown``): two lessons open, one
  closed, its kernel is gone from ``/api/kernels`` and the other's is still there.
* Every lesson's name shows whole in the file browser (``scrollWidth <= clientWidth`` of its
  text element).
* axe-core on whole lesson pages, all cells run, light and dark theme: no serious or critical
  finding the course owns. The findings JupyterLab owns are listed in :data:`JUPYTERLAB_OWNS`,
  each by rule and element, with the reason; anything else fails.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import a11y
import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSONS = lab.discover_lessons()
OPEN_S = 60
KERNEL_GONE_S = 30
#: (axe rule, a regex the finding's element (its selector, then its HTML) matches, why it is
#: JupyterLab's). Found on every lesson page, light and dark, JupyterLab 4.6 (none is in an
#: output the course draws: explorers, help panels, feedback, Markdown).
JUPYTERLAB_OWNS: tuple[tuple[str, str, str], ...] = (
    (
        "aria-allowed-attr",
        r"^jp-button|\.validate-button|\.jp-DebuggerBugButton",
        "JupyterLab's toolkit <jp-button> (file browser and notebook toolbars; nbgrader's "
        "Validate button is one too) puts aria-pressed on an element whose role does not allow it",
    ),
    (
        "aria-input-field-name",
        r'class="cm-content',
        "CodeMirror's editable text of a code cell (role=textbox) has no accessible name: "
        "JupyterLab's cell editor",
    ),
    (
        "aria-required-children",
        r"^\.jp-WindowedPanel-viewport$",
        "the notebook's list of cells is role=feed without role=article children: JupyterLab's "
        "windowed notebook",
    ),
    (
        "button-name",
        r"\.jp-collapseHeadingButton",
        "the collapse button JupyterLab puts beside each Markdown heading has no name",
    ),
)


def fresh_page(browser, server: lab.LabServer, name: str):
    """A new browser context at laptop size with ``name`` opened in a reset workspace."""
    context = browser.new_context(viewport=lab.LAPTOP_VIEWPORT)
    page = context.new_page()
    page.goto(server.notebook_url(name), wait_until="domcontentloaded")
    page.wait_for_selector(".jp-DirListing-item", timeout=OPEN_S * 1000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=OPEN_S * 1000)
    return context, page


def sessions(server: lab.LabServer) -> dict[str, str]:
    """Notebook path -> its kernel id, for every running session."""
    return {s["path"]: s["kernel"]["id"] for s in server.api("GET", "/api/sessions") if s["kernel"]}


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"{what} within {timeout_s} s")


def current_tab(page) -> str:
    return page.locator(
        ".jp-mod-current.lm-TabBar-tab, .lm-TabBar-tab.lm-mod-current"
    ).evaluate_all("tabs => tabs.map(t => t.textContent).join(' | ')")


def test_lesson_2_next_link_opens_lesson_3(chromium, lab_server):
    context, page = fresh_page(chromium, lab_server, "02-why-scale.ipynb")
    try:
        # JupyterLab rewrites a relative link to /files/<name>?_xsrf=... and opens it in a tab
        link = page.locator(".jp-RenderedMarkdown a[href*='/03-softmax.ipynb']")

        def scrolled_to_the_end() -> int:  # the notebook renders cells as they come into view
            page.evaluate(
                """() => document.querySelectorAll('.jp-WindowedPanel-outer')
                    .forEach(el => { el.scrollTop = el.scrollHeight; })"""
            )
            return link.count()

        wait_for(scrolled_to_the_end, OPEN_S, "lesson 2 showed no link to 03-softmax.ipynb")
        link.first.scroll_into_view_if_needed()
        link.first.click()
        wait_for(
            lambda: "03-softmax.ipynb" in current_tab(page),
            OPEN_S,
            "clicking Next in lesson 2 did not make 03-softmax.ipynb the current tab",
        )
        page.wait_for_selector(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown h1:has-text('Lesson 3')",
            timeout=OPEN_S * 1000,
        )
    finally:
        context.close()
        lab_server.shutdown_kernels()


def test_closing_a_lesson_shuts_its_kernel_down(chromium, lab_server, artifacts_dir: Path):
    first, second = "01-dot-product-scores.ipynb", "05-weighted-values.ipynb"
    context, page = fresh_page(chromium, lab_server, first)
    try:
        page.locator(f".jp-DirListing-item[title*='{second}']").first.dblclick()
        kernels = wait_for(
            lambda: (found := sessions(lab_server)) and {first, second} <= set(found) and found,
            OPEN_S,
            "two lessons did not both get a kernel",
        )
        page.locator(f".lm-TabBar-tab:has-text('{first}') .lm-TabBar-tabCloseIcon").first.click()
        dialog = page.locator(".jp-Dialog .jp-mod-accept")  # none expected: nothing was changed
        page.wait_for_timeout(500)
        if dialog.count():
            page.screenshot(path=str(artifacts_dir / "close-lesson--dialog.png"))
            dialog.first.click()

        def gone() -> bool:
            running = {k["id"] for k in lab_server.api("GET", "/api/kernels")}
            return kernels[first] not in running

        wait_for(gone, KERNEL_GONE_S, f"{first}'s kernel was still running after its tab closed")
        running = {k["id"] for k in lab_server.api("GET", "/api/kernels")}
        assert kernels[second] in running, "closing one lesson stopped the other's kernel"
    finally:
        context.close()
        lab_server.shutdown_kernels()


def test_every_lesson_name_shows_whole_in_the_file_browser(chromium, lab_server, artifacts_dir):
    context, page = fresh_page(chromium, lab_server, "00-start-here.ipynb")
    try:
        page.wait_for_timeout(1000)  # the sidebar settles its width after the page loads
        shown = page.evaluate(
            """() => [...document.querySelectorAll('.jp-DirListing-item')].map(item => {
                const text = item.querySelector('.jp-DirListing-itemText');
                return [text.textContent, text.scrollWidth, text.clientWidth];
            })"""
        )
        page.screenshot(path=str(artifacts_dir / "file-browser-1366x768.png"))
    finally:
        context.close()
        lab_server.shutdown_kernels()
    widths = {name: (scroll, client) for name, scroll, client in shown}
    missing = [p.name for p in LESSONS if p.name not in widths]
    assert not missing, f"not in the file browser: {missing}"
    cut = {p.name: widths[p.name] for p in LESSONS if widths[p.name][0] > widths[p.name][1]}
    print(f"\nfile browser at 1366 x 768: {len(LESSONS) - len(cut)} of {len(LESSONS)} names whole")
    assert not cut, f"names cut off (text width > room, px): {cut}"


def owned_by_jupyterlab(rule: str, target: str, html: str) -> bool:
    return any(
        rule == r and (re.search(pattern, target) or re.search(pattern, html))
        for r, pattern, _ in JUPYTERLAB_OWNS
    )


@pytest.mark.parametrize("name", [pytest.param(p.name, id=p.stem) for p in LESSONS])
def test_whole_lesson_pages_have_no_serious_axe_findings(name, lesson_pages, artifacts_dir):
    page = lesson_pages("lab", name)
    problems, excused = [], []
    try:
        for theme in ("JupyterLab Light", "JupyterLab Dark"):
            if theme.endswith("Dark"):
                lab.set_theme(page, theme)
                page.page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
                page.page.wait_for_timeout(1500)
            violations, _ = a11y.axe_results(page, ["body"])
            for v in violations:
                if v.impact not in a11y.BLOCKING:
                    continue
                for target, html in zip(v.targets, v.html, strict=False):
                    line = f"{theme}: {v.rule} ({v.impact}) at {target}: {html[:140]}"
                    owned = owned_by_jupyterlab(v.rule, target, html)
                    (excused if owned else problems).append(line)
    finally:
        if page.js("() => document.body.dataset.jpThemeLight") == "false":
            lab.set_theme(page, "JupyterLab Light")  # a user setting: leave it light
            page.page.wait_for_timeout(1000)
    counts: dict[str, int] = {}
    for line in excused:
        counts[line.split(" at ")[0]] = counts.get(line.split(" at ")[0], 0) + 1
    print(f"\n{name}: serious/critical nodes JupyterLab owns (excluded): {counts}")
    a11y.fail_with(page, problems, artifacts_dir, "axe-whole-page")
