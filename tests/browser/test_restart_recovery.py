"""After a kernel restart a learner can follow what the page says, in one step (issue 29).

Run All, restart the kernel from the Kernel menu, then:

* no broken-link icon (ipywidgets' ``::before`` on every disconnected widget) shows inside an
  explorer or a help panel, and each help panel says in words that the kernel restarted;
* every explorer slider is disabled, greyed, and says in its tooltip that it is not live
  (issue 41: it still moved, with the figure and readout stale);
* in JupyterLab and Notebook 7, the explorer's banner is followed literally: "Run ▸ Run All
  Cells" is clicked from the Run menu, "run this cell again (Shift+Enter)" is Shift+Enter in
  the explorer's cell. After it, no cell stops with an error, the banner is gone and the
  explorer's slider moves its figure.
"""

from __future__ import annotations

import lab_harness as lab
import pytest

pytestmark = pytest.mark.browser

LESSON = "01-dot-product-scores.ipynb"
BANNER = ".attnlab-kernel-lost"


def before_content(page: lab.LessonPage, selector: str) -> list[str]:
    """The computed ``::before`` content of every element matching ``selector``."""
    return page.js(
        """sel => [...document.querySelectorAll(sel)]
            .map(el => getComputedStyle(el, '::before').content)""",
        selector,
    )


def wait_for(page: lab.LessonPage, predicate: str, arg=None, seconds: float = 30) -> bool:
    for _ in range(int(seconds * 4)):
        if page.js(predicate, arg):
            return True
        page.page.wait_for_timeout(250)
    return False


def restart(page: lab.LessonPage) -> None:
    page.page.locator("li.lm-MenuBar-item:has-text('Kernel')").click()
    page.page.locator("li.lm-Menu-item[data-command='kernelmenu:restart']").click()
    accept = page.page.locator(".jp-Dialog .jp-mod-accept")
    accept.wait_for(timeout=10_000)
    accept.click()
    assert wait_for(page, "s => document.querySelectorAll(s).length > 0", BANNER), "no banner"
    page.page.wait_for_timeout(1000)


def follow_the_banner(page: lab.LessonPage, advice: str) -> None:
    """Do what the banner says, as a learner reading it would."""
    if "Run All Cells" in advice:
        page.run_all()
    elif "run this cell again" in advice.lower():
        cell = page.explorer(0).locator("xpath=ancestor::div[contains(@class,'jp-Cell')]").first
        cell.locator(".jp-InputArea-editor").first.click()
        page.page.keyboard.press("Shift+Enter")
        page.page.wait_for_timeout(5000)
    else:
        pytest.fail(f"the banner's advice is not something to do: {advice!r}")


@pytest.mark.parametrize("server", ["lab_server", "nb7_server"], ids=["lab", "nb7"])
def test_after_a_restart_the_banners_advice_works_in_one_step(chromium, server, request):
    page = lab.LessonPage(chromium, request.getfixturevalue(server), LESSON)
    try:
        page.open()
        assert not page.run_all().errors
        assert wait_for(page, "s => document.querySelectorAll(s).length > 0", lab.EXPLORER)
        restart(page)

        inside = (
            ".attnlab-explorer.jupyter-widgets-disconnected, "
            ".attnlab-explorer .jupyter-widgets-disconnected, "
            ".attnlab-help .jupyter-widgets-disconnected"
        )
        icons = [c for c in before_content(page, inside) if c not in ("none", "normal")]
        assert not icons, f"broken-link icons beside the controls: {len(icons)}"
        panels = before_content(page, ".attnlab-help.jupyter-widgets-disconnected")
        assert panels and all("kernel restarted" in c for c in panels), panels
        # Issue 41: the explorer's sliders are disabled and say why (they moved, with the
        # figure and readout stale, before); the new explorer's slider moves again below.
        sliders = page.page.locator(f"{lab.EXPLORER} {lab.SLIDER}")
        states = sliders.evaluate_all(
            """roots => roots.map(r => ({disabled: r.querySelector('input').disabled,
                title: r.title, opacity: getComputedStyle(r).opacity}))"""
        )
        assert states, "no explorer slider after the restart"
        stale = [s for s in states if not (s["disabled"] and "Not live" in s["title"])]
        assert not stale, f"sliders still live after the restart: {stale}"
        assert all(float(s["opacity"]) < 0.7 for s in states), f"not greyed: {states}"

        advice = page.page.locator(BANNER).first.text_content()
        errors_before = len(page.js("() => window.__attnlab.messages"))
        follow_the_banner(page, advice)
        errors = page.js(
            """since => window.__attnlab.messages.slice(since)
                .filter(m => m.type === 'error').map(m => m.ename + ': ' + m.evalue)""",
            errors_before,
        )
        assert not errors, f"following {advice!r}: {errors}"
        assert wait_for(page, "s => document.querySelectorAll(s).length > 0", lab.EXPLORER)
        live = page.explorer(page.page.locator(lab.EXPLORER).count() - 1)
        assert wait_for(
            page,
            "s => [...document.querySelectorAll(s)].every(b => b.offsetParent === null)",
            BANNER,
        ), "a banner still shows"
        index = page.page.locator(lab.EXPLORER).count() - 1
        before = page.image_digest(index)
        live.locator("input[type=range]").first.focus()
        page.page.keyboard.press("ArrowRight")
        page.page.keyboard.press("ArrowRight")
        assert wait_for(
            page, "([i, d]) => window.__attnlab.imageDigest(i) !== d", [index, before]
        ), "the explorer's figure did not move with its slider"
    finally:
        page.close()
