"""Accessibility and keyboard helpers for the browser suite (axe-core, names, keys, focus).

* :func:`axe_results` runs axe-core (the copy bundled by the ``axe-playwright-python`` wheel,
  so nothing downloads while tests run) on the explorers and help panels of a page;
  :func:`format_axe_table` prints its findings per lesson.
* What axe does not see: :func:`name_problems` (each control named by exactly one label of its
  own, ids unique), :func:`spoken_value` (a slider's value as a screen reader reads it) and
  :func:`live_region_problems` (readouts announced when they change).
* :func:`controls` lists every keyboard-operable control inside an explorer (native inputs,
  selects, buttons, ARIA roles, anything with a tabindex, editable readouts), whatever widget
  library drew it; :func:`press_control` focuses one, presses the key a learner would and
  reports what changed: the control's own state, the figure, the kernel traffic and the
  notebook's active cell. :func:`tab_order_problems` walks the explorer with Tab and
  :func:`focus_ring_problems` measures each control's focus indicator in the page's pixels.

Works in JupyterLab and Notebook 7 alike (both use ``.jp-Notebook`` / ``.jp-Cell``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lab_harness as lab
import pytest

BLOCKING = ("serious", "critical")
ALL_IMPACTS = ("minor", "moderate", "serious", "critical")
EXPLORER = lab.EXPLORER
HELP_PANEL = ".attnlab-help"
CONTROL_ATTR = "data-attnlab-a11y-control"
KEY_SETTLE_MS = 2500
FIGURE_LATE_S = 20.0  # how much longer a slow step may take to change the figure (loaded CI)


def axe_script_path() -> Path:
    """Path of ``axe.min.js`` as shipped inside the ``axe-playwright-python`` wheel.

    Raises
    ------
    RuntimeError
        If the package is missing (it is pinned in requirements-dev.txt).
    """
    try:
        from axe_playwright_python.base import AXE_FILE_PATH
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "axe-core is needed for the accessibility tests: pip install -r requirements-dev.txt "
            "(it comes bundled in the pinned axe-playwright-python wheel)"
        ) from exc
    return Path(AXE_FILE_PATH)


# --------------------------------------------------------------------------- opening a lesson


def fail_with(page: lab.LessonPage, problems: list[str], artifacts_dir: Path, what: str) -> None:
    """Screenshot the page and fail listing every problem, if there are any."""
    if not problems:
        return
    front_end = getattr(page, "front_end", None)  # set by the tests that run in both front ends
    where = f" in {front_end}" if front_end else ""
    shot = artifacts_dir / (
        f"{Path(page.name).stem}{f'--{front_end}' if front_end else ''}--FAILED-{what}.png"
    )
    page.screenshot(shot)
    details = "\n".join(f"  - {p}" for p in problems)
    pytest.fail(f"{page.name}{where}: {what}:\n{details}\n  screenshot: {shot}", pytrace=False)


def explorer_label(page: lab.LessonPage, index: int) -> str:
    """``explorer 'name' (#i)`` for messages."""
    return f"explorer {page.explorers()[index]['name']!r} (#{index})"


def problems_in_every_explorer(page: lab.LessonPage, check) -> list[str]:
    """``check(page, index)`` for every explorer of the page, each problem labelled with its
    explorer; skips the test when the lesson has no explorer."""
    count = page.page.locator(EXPLORER).count()
    if not count:
        pytest.skip(f"{page.name} has no explorer")
    return [
        f"{explorer_label(page, index)}: {problem}"
        for index in range(count)
        for problem in check(page, index)
    ]


# --------------------------------------------------------------------------- axe-core


@dataclass
class Violation:
    """One axe rule failed on some nodes."""

    rule: str
    impact: str
    help: str
    targets: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """``rule (impact, N nodes): help; first offending HTML``."""
        first = self.html[0][:160] if self.html else ""
        return f"{self.rule} ({self.impact}, {len(self.targets)} nodes): {self.help}; e.g. {first}"


def inject_axe(page: lab.LessonPage) -> None:
    """Load axe-core into the page once (from the local wheel, never from the network)."""
    if not page.js("() => typeof window.axe === 'object'"):
        page.page.add_script_tag(path=str(axe_script_path()))


def axe_results(
    page: lab.LessonPage, selectors: Iterable[str] = (EXPLORER, HELP_PANEL)
) -> tuple[list[Violation], list[str]]:
    """Run axe-core inside every element matching ``selectors``.

    Every rule axe runs by default (WCAG 2.x A/AA and best practices) is checked. Returns
    (violations of any impact, ids of the rules that found something to check and passed);
    ([], []) when no element matches (a lesson without explorers or help panels).
    """
    include = [[s] for s in selectors if page.page.locator(s).count()]
    if not include:
        return [], []
    inject_axe(page)
    raw = page.js(
        """include => window.axe.run({include}, {resultTypes: ['violations']})
            .then(r => ({
              passed: r.passes.map(p => p.id),
              violations: r.violations.map(v => ({
                rule: v.id, impact: v.impact, help: v.help,
                targets: v.nodes.map(n => n.target.join(' ')),
                html: v.nodes.map(n => n.html)}))}))""",
        include,
    )
    return [Violation(**v) for v in raw["violations"]], raw["passed"]


def axe_violations(
    page: lab.LessonPage,
    selectors: Iterable[str] = (EXPLORER, HELP_PANEL),
    impacts: Iterable[str] = ALL_IMPACTS,
) -> list[Violation]:
    """axe-core's violations of the given ``impacts`` inside the elements matching ``selectors``."""
    wanted = set(impacts)
    return [v for v in axe_results(page, selectors)[0] if v.impact in wanted]


def summarise(violations: list[Violation]) -> dict[str, int]:
    """``{"rule (impact)": node count}``, sorted by rule."""
    counts: dict[str, int] = {}
    for v in sorted(violations, key=lambda v: v.rule):
        key = f"{v.rule} ({v.impact})"
        counts[key] = counts.get(key, 0) + len(v.targets)
    return counts


def format_axe_table(rows: dict[str, tuple[int, int, list[Violation]]]) -> str:
    """A plain-text table per lesson: explorers, help panels, serious + critical nodes by rule,
    and the moderate and minor findings by rule (reported, not failed on).

    ``rows`` maps a lesson name to (explorers, help panels, violations of any impact).

    >>> v = Violation("label", "critical", "needs a label", ["#a", "#b"])
    >>> w = Violation("empty-table-header", "minor", "th needs text", ["th"])
    >>> print(format_axe_table({"00-x": (1, 0, [v, w])}))
    lesson  explorers  help  serious+critical  by rule              moderate/minor
    00-x            1     0                 2  label (critical): 2  empty-table-header (minor): 1
    """
    header = ("lesson", "explorers", "help", "serious+critical", "by rule", "moderate/minor")
    lines = []
    for lesson, (n_explorers, n_help, violations) in rows.items():
        blocking = [v for v in violations if v.impact in BLOCKING]
        others = [v for v in violations if v.impact not in BLOCKING]
        nodes = sum(len(v.targets) for v in blocking)
        lines.append(
            (
                lesson,
                str(n_explorers),
                str(n_help),
                str(nodes),
                _by_rule(blocking),
                _by_rule(others),
            )
        )
    width = [max(len(r[i]) for r in [header, *lines]) for i in range(5)]
    out = []
    for row in [header, *lines]:
        cells = [row[0].ljust(width[0])] + [row[i].rjust(width[i]) for i in (1, 2, 3)]
        out.append("  ".join([*cells, row[4].ljust(width[4]), row[5]]).rstrip())
    return "\n".join(out)


def _by_rule(violations: list[Violation]) -> str:
    """``rule (impact): nodes, ...`` or ``-``."""
    return ", ".join(f"{k}: {n}" for k, n in summarise(violations).items()) or "-"


# --------------------------------------------------------------------------- keyboard

# Every element a keyboard user can reach or operate inside an explorer, in document order.
_LIST_CONTROLS = """([root, attr]) => {
  const focusable = 'input, select, button, textarea, [role=slider], [role=radio], '
    + '[role=checkbox], [role=switch], [role=button], [tabindex], [contenteditable=true]';
  const shown = el => el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== 'hidden';
  const label = el => {
    const own = el.getAttribute('aria-label') || (el.labels && el.labels[0]
      && el.labels[0].textContent) || el.getAttribute('title') || el.textContent;
    const box = el.closest('.widget-inline-hbox, .widget-box, label, fieldset, [role=group]');
    const boxLabel = box && box.querySelector('.widget-label, legend, label');
    const text = (own || '').trim() || (boxLabel ? boxLabel.textContent.trim() : '');
    return text.replace(/\\s+/g, ' ').slice(0, 60);
  };
  const kind = el => {
    const role = el.getAttribute('role');
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (el.isContentEditable || el.tagName === 'TEXTAREA'
        || (el.tagName === 'INPUT' && !['range', 'checkbox', 'radio', 'button', 'submit']
            .includes(type))) return 'text';
    if (role === 'slider' || type === 'range') return 'slider';
    if (el.tagName === 'SELECT' || role === 'listbox' || role === 'combobox') return 'select';
    if (type === 'checkbox' || role === 'checkbox' || role === 'switch') return 'checkbox';
    if (type === 'radio' || role === 'radio') return 'radio';
    if (el.tagName === 'BUTTON' || role === 'button' || type === 'button') return 'button';
    return 'other';
  };
  const rootEl = document.querySelectorAll('.attnlab-explorer')[root];
  const found = [...rootEl.querySelectorAll(focusable)]
    .filter(el => el !== rootEl && !el.disabled && shown(el)
      && !(el.getAttribute('tabindex') === '-1' && !el.getAttribute('role')));
  return found.map((el, i) => {
    el.setAttribute(attr, `${root}-${i}`);
    const radio = (el.getAttribute('type') || '').toLowerCase() === 'radio';
    return { id: `${root}-${i}`, kind: kind(el), label: label(el), tag: el.tagName.toLowerCase(),
             tabIndex: el.isContentEditable && !el.hasAttribute('tabindex') ? 0 : el.tabIndex,
             group: radio ? el.name : null, checked: radio && el.checked };
  });
}"""

# What a control shows as its value, read the same way for native and ARIA controls.
_CONTROL_STATE = """id => {
  const el = document.querySelector(`[data-attnlab-a11y-control="${id}"]`);
  if (!el) return null;
  const options = el.tagName === 'SELECT' ? el.options.length : null;
  const num = a => el.getAttribute(a) === null ? null : parseFloat(el.getAttribute(a));
  const type = (el.getAttribute('type') || '').toLowerCase();
  const range = type === 'range';
  return {
    value: 'value' in el && el.tagName !== 'BUTTON' ? String(el.value) : null,
    checked: 'checked' in el && ['checkbox', 'radio'].includes(type) ? el.checked : null,
    selectedIndex: el.tagName === 'SELECT' ? el.selectedIndex : null,
    options,
    now: range ? parseFloat(el.value) : num('aria-valuenow'),
    min: range ? parseFloat(el.min || '0') : num('aria-valuemin'),
    max: range ? parseFloat(el.max || '100') : num('aria-valuemax'),
    pressed: el.getAttribute('aria-pressed'),
    ariaChecked: el.getAttribute('aria-checked'),
    ariaSelected: el.getAttribute('aria-selected'),
    active: el.classList.contains('mod-active'),
    focused: document.activeElement === el,
  };
}"""

# Index of the notebook's active cell (JupyterLab and Notebook 7) and the notebook's mode.
_ACTIVE_CELL = """() => {
  const nb = [...document.querySelectorAll('.jp-Notebook')]
    .find(n => n.getClientRects().length > 0);
  if (!nb) return null;
  const cells = [...nb.querySelectorAll('.jp-Cell')].filter(c => c.closest('.jp-Notebook') === nb);
  return { index: cells.findIndex(c => c.classList.contains('jp-mod-active')),
           mode: nb.classList.contains('jp-mod-editMode') ? 'edit' : 'command' };
}"""


# A number with a run of six 0s or 9s after the point and more digits: binary float noise.
FLOAT_NOISE = re.compile(r"\d\.\d*(0{6,}|9{6,})\d")


def spoken_value(page: lab.LessonPage, control_id: str) -> str | None:
    """What assistive technology reads as a slider's value: aria-valuetext, else its value."""
    return page.js(
        """id => { const el = document.querySelector(`[data-attnlab-a11y-control="${id}"]`);
                   return el && (el.getAttribute('aria-valuetext')
                     || el.getAttribute('aria-valuenow') || el.value || null); }""",
        control_id,
    )


def live_region_problems(page: lab.LessonPage, explorer: int) -> list[str]:
    """Whether every ``.attnlab-readout`` of an explorer is, is inside, or wraps its content in
    a polite live region."""
    found = page.js(
        """i => [...document.querySelectorAll('.attnlab-explorer')[i]
                 .querySelectorAll('.attnlab-readout')].map(r => {
              const sel = '[aria-live], [role=status], [role=log]';
              const live = r.closest(sel) || r.querySelector(sel);
              return live ? (live.getAttribute('aria-live')
                             || {status: 'polite', log: 'polite'}[live.getAttribute('role')])
                          : null; })""",
        explorer,
    )
    if not found:
        return ["has no .attnlab-readout"]
    return [
        f"readout {k} is not in a live region (aria-live is {live!r})"
        for k, live in enumerate(found)
        if live not in ("polite", "assertive")
    ]


def name_problems(page: lab.LessonPage, explorer: int) -> list[str]:
    """Whether each form control of an explorer is named by its own label, and ids are unique.

    A native input or select must have exactly one ``<label>`` (``el.labels``, the browser's own
    association) or an aria-label / aria-labelledby; every id inside the explorer must be
    unique in the whole page, or a ``<label for>`` names another control (axe 4.12 does not
    notice: the label exists, just not for this control).
    """
    return page.js(
        """i => {
          const root = document.querySelectorAll('.attnlab-explorer')[i];
          const problems = [];
          for (const el of root.querySelectorAll('[id]')) {
            const same = document.querySelectorAll(`[id="${CSS.escape(el.id)}"]`).length;
            const text = `id ${el.id} is used by ${same} elements`;
            if (same > 1 && !problems.includes(text)) problems.push(text);
          }
          for (const el of root.querySelectorAll('input, select, textarea')) {
            const type = (el.getAttribute('type') || '').toLowerCase();
            if (['hidden', 'button', 'submit'].includes(type)) continue;
            if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) continue;
            const labels = el.labels ? [...el.labels].map(l => l.textContent.trim()) : [];
            if (labels.length !== 1) {
              const what = `${el.tagName.toLowerCase()}${type ? ' type=' + type : ''}`;
              problems.push(labels.length ? `${what} is named by ${labels.length} labels: `
                + labels.map(t => JSON.stringify(t)).join(' + ') : `${what} has no label`);
            }
          }
          return problems;
        }""",
        explorer,
    )


def controls(page: lab.LessonPage, explorer: int) -> list[dict]:
    """Every visible focusable element of explorer ``explorer``: id, kind, label, tag, tabIndex,
    and for a native radio its group name and whether it is checked.

    ``kind`` is slider, select, checkbox, radio, button, text (readouts one can type into) or
    other. Each element is tagged with ``data-attnlab-a11y-control=id`` to find it again.
    """
    return page.js(_LIST_CONTROLS, [explorer, CONTROL_ATTR])


def control_state(page: lab.LessonPage, control_id: str) -> dict | None:
    """The control's value as the page shows it (value, checked, aria-*, mod-active, focus)."""
    return page.js(_CONTROL_STATE, control_id)


def active_cell(page: lab.LessonPage) -> dict | None:
    """``{"index": i, "mode": "command"|"edit"}`` of the notebook's active cell."""
    return page.js(_ACTIVE_CELL)


def is_selected(kind: str, state: dict) -> bool:
    """Whether a radio or toggle-button option is the one currently chosen."""
    if kind == "radio" and (state["checked"] or state["ariaChecked"] == "true"):
        return True
    return bool(state["active"] or state["pressed"] == "true" or state["ariaSelected"] == "true")


def key_for(kind: str, state: dict, press_number: int) -> str | None:
    """The key a learner presses to operate a control, or None when it cannot change.

    Sliders step towards their free side; selects go down (up from the last option);
    checkboxes take Space; radios and toggle buttons that are already chosen are left alone;
    other buttons alternate Space and Enter.

    >>> key_for("slider", {"now": 1, "min": 0, "max": 1}, 0)
    'ArrowLeft'
    >>> key_for("select", {"selectedIndex": 0, "options": 3}, 0)
    'ArrowDown'
    """
    if kind == "slider":
        return lab.key_towards_free_side(state)
    if kind == "select":
        return "ArrowUp" if state["selectedIndex"] == state["options"] - 1 else "ArrowDown"
    if kind == "checkbox":
        return "Space"
    if kind in ("radio", "button"):
        if is_selected(kind, state):
            return None
        return "Space" if kind == "radio" or press_number % 2 == 0 else "Enter"
    return None


@dataclass
class KeyResult:
    """What one key press on one control did."""

    control: dict
    key: str
    value_changed: bool
    figure_changed: bool
    reached_kernel: bool
    cell_before: dict | None
    cell_after: dict | None
    focused: bool
    state_before: dict
    state_after: dict | None

    def problems(self) -> list[str]:
        """Plain sentences for everything a learner would find wrong."""
        name = f"{self.control['kind']} {self.control['label']!r} ({self.control['tag']})"
        found = []
        if not self.focused:
            found.append(f"{name}: could not be focused")
        if (
            self.cell_before
            and self.cell_after
            and (self.cell_after["index"] != self.cell_before["index"])
        ):
            found.append(
                f"{name}: {self.key} moved the notebook's active cell from "
                f"{self.cell_before['index']} to {self.cell_after['index']}"
            )
        if self.control["kind"] == "button" and not self.value_changed:
            if not self.reached_kernel:
                found.append(
                    f"{name}: {self.key} did not press the button (nothing reached the kernel)"
                )
            return found
        if not self.value_changed:
            found.append(f"{name}: {self.key} did not change its value")
        elif not self.figure_changed:
            found.append(f"{name}: {self.key} changed its value but not the figure")
        return found


def press_control(page: lab.LessonPage, explorer: int, control: dict, key: str) -> KeyResult:
    """Focus ``control`` (as Tab would), press ``key``, wait for the explorer to settle."""
    target = page.page.locator(f"[{CONTROL_ATTR}='{control['id']}']")
    target.scroll_into_view_if_needed()
    page.wait_quiet(explorer)
    frame_before = page.snapshot(explorer)["frame"]
    digest_before = page.image_digest(explorer)
    target.focus()
    state_before = control_state(page, control["id"])
    cell_before = active_cell(page)
    t0 = page.js("() => performance.now()")
    page.page.keyboard.press(key)
    page.page.wait_for_timeout(150)
    page.wait_quiet(explorer, quiet_ms=400, timeout_ms=KEY_SETTLE_MS * 4)
    state_after = control_state(page, control["id"])
    sent = page.js(
        "t => window.__attnlab.messages.filter(m => m.t >= t && m.dir === 'out'"
        " && m.type === 'comm_msg').length",
        t0,
    )
    frame_after = page.snapshot(explorer)["frame"]
    figure_changed = frame_after != frame_before and page.image_digest(explorer) != digest_before
    # A slow step (lesson 9's training explorer trains a run when its scaling changes) can
    # outlast the settle wait on a loaded machine (CI at load 9): give the figure up to
    # FIGURE_LATE_S more to change, as a learner would wait, before calling it unchanged.
    deadline = time.monotonic() + FIGURE_LATE_S
    while not figure_changed and time.monotonic() < deadline:
        page.page.wait_for_timeout(500)
        frame_after = page.snapshot(explorer)["frame"]
        figure_changed = (
            frame_after != frame_before and page.image_digest(explorer) != digest_before
        )
    return KeyResult(
        control=control,
        key=key,
        value_changed=_value_of(state_after) != _value_of(state_before),
        figure_changed=figure_changed,
        reached_kernel=sent > 0,
        cell_before=cell_before,
        cell_after=active_cell(page),
        focused=bool(state_before and state_before["focused"]),
        state_before=state_before,
        state_after=state_after,
    )


def _value_of(state: dict | None) -> Any:
    """The parts of a control state that are its value (not focus)."""
    if state is None:
        return None
    return {k: v for k, v in state.items() if k not in ("focused", "min", "max", "options")}


def press_every_control(page: lab.LessonPage, explorer: int) -> list[KeyResult]:
    """Press the learner's key on every operable control of one explorer, in document order.

    Controls that are already in the chosen state (the selected toggle button) are skipped:
    the key cannot change them. Readouts one can type into (kind "text") are not pressed.
    """
    results = []
    for number, control in enumerate(c for c in controls(page, explorer) if c["kind"] != "text"):
        state = control_state(page, control["id"])
        if state is None:
            continue
        key = key_for(control["kind"], state, number)
        if key is None:
            continue
        results.append(press_control(page, explorer, control, key))
        page.page.wait_for_timeout(50)
    return results


def _tab_stops(found: list[dict]) -> list[dict]:
    """The controls Tab stops at: a native radio group is one stop, its checked radio.

    >>> radios = [{"group": "g", "checked": c} for c in (False, True)]
    >>> _tab_stops([{"group": None}, *radios])
    [{'group': None}, {'group': 'g', 'checked': True}]
    """
    stops, groups = [], {}
    for control in found:
        group = control.get("group")
        if not group:
            stops.append(control)
        elif group not in groups:
            groups[group] = len(stops)
            stops.append(control)
        elif control["checked"]:
            stops[groups[group]] = control
    return stops


def tab_order_problems(page: lab.LessonPage, explorer: int) -> list[str]:
    """Whether Tab walks through the explorer's controls in document order, reaching each.

    Focus the first control and press Tab: focus must move to the next tabbable control of
    the explorer each time (and never leave the explorer before the last one).
    """
    tabbable = _tab_stops([c for c in controls(page, explorer) if c["tabIndex"] >= 0])
    problems = [
        f"{c['kind']} {c['label']!r} cannot be reached with Tab (tabindex -1)"
        for c in controls(page, explorer)
        if c["tabIndex"] < 0 and c["kind"] != "text"
    ]
    if len(tabbable) < 2:
        return problems
    page.page.locator(f"[{CONTROL_ATTR}='{tabbable[0]['id']}']").focus()
    for previous, expected in zip(tabbable, tabbable[1:], strict=False):
        page.page.keyboard.press("Tab")
        focused = page.js(f"() => document.activeElement.getAttribute('{CONTROL_ATTR}')")
        if focused != expected["id"]:
            where = page.js("() => document.activeElement.outerHTML.slice(0, 120)")
            problems.append(
                f"Tab from {previous['kind']} {previous['label']!r} went to {where} instead of "
                f"{expected['kind']} {expected['label']!r}"
            )
            break
    return problems


# --------------------------------------------------------------------------- focus ring

RING_MARGIN_PX = 8
# WCAG 2.2's focus appearance (2.4.13): the pixels that change between unfocused and focused
# with a contrast ratio of at least 3:1 must cover at least the area of a 2 CSS px thick line
# around the control's perimeter. A 1 px outline covers about half of that.
RING_MIN_PER_PERIMETER = 2.0
RING_MIN_CONTRAST = 3.0

# The box a control's focus ring is drawn around: the control, or for a visually hidden input
# (a radio drawn as a button) the label that draws it. Viewport CSS px.
_RING_BOX = """id => {
  let el = document.querySelector(`[data-attnlab-a11y-control="${id}"]`);
  if (!el) return null;
  let r = el.getBoundingClientRect();
  if (r.width < 4 || r.height < 4) {
    el = el.closest('label') || el.parentElement;
    r = el.getBoundingClientRect();
  }
  return { x: r.x, y: r.y, width: r.width, height: r.height };
}"""


def _clip_pixels(page: lab.LessonPage, box: dict) -> Any:
    """The page's pixels around ``box`` (widened by RING_MARGIN_PX), as an (h, w, 3) array."""
    import io

    import numpy as np
    from PIL import Image

    m, view = RING_MARGIN_PX, page.page.viewport_size
    x0, y0 = max(box["x"] - m, 0), max(box["y"] - m, 0)
    x1 = min(box["x"] + box["width"] + m, view["width"])
    y1 = min(box["y"] + box["height"] + m, view["height"])
    clip = {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0}
    png = page.page.screenshot(clip=clip, animations="disabled", caret="hide")
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)  # (h, w, 3)


def relative_luminance(rgb: Any) -> Any:
    """WCAG relative luminance of sRGB pixels ``rgb`` (..., 3) in 0..255; shape (...).

    >>> import numpy as np
    >>> relative_luminance(np.array([[255, 255, 255], [0, 0, 0]])).round(3).tolist()
    [1.0, 0.0]
    """
    import numpy as np

    c = np.asarray(rgb, dtype=float) / 255.0  # (..., 3)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)  # (..., 3)
    return linear @ np.array([0.2126, 0.7152, 0.0722])  # (...)


def contrast_changed_pixels(before: Any, after: Any) -> int:
    """How many pixels differ between two (h, w, 3) pictures by a contrast of 3:1 or more.

    >>> import numpy as np
    >>> white = np.full((2, 2, 3), 255)
    >>> grey, black = white.copy(), white.copy()
    >>> grey[0, 0], black[0, 0] = 200, 0
    >>> contrast_changed_pixels(white, grey), contrast_changed_pixels(white, black)
    (0, 1)
    """
    import numpy as np

    lum_a, lum_b = relative_luminance(before), relative_luminance(after)  # (h, w)
    ratio = (np.maximum(lum_a, lum_b) + 0.05) / (np.minimum(lum_a, lum_b) + 0.05)  # (h, w)
    return int((ratio >= RING_MIN_CONTRAST).sum())


def _settled_box(page: lab.LessonPage, control: dict) -> dict:
    """The control's ring box once it is mid-screen and has stopped moving (the notebook may
    still scroll after a blur); raises if it never settles within 3 s."""
    view = page.page.viewport_size
    last = None
    for _ in range(30):
        # the middle of the notebook, clear of the toolbar and status bar that overlap its ends
        page.js(
            'id => document.querySelector(`[data-attnlab-a11y-control="${id}"]`)'
            ".scrollIntoView({block: 'center', inline: 'nearest'})",
            control["id"],
        )
        page.page.wait_for_timeout(100)
        box = page.js(_RING_BOX, control["id"])
        inside = box["y"] >= 0 and box["y"] + box["height"] <= view["height"]
        if inside and box == last:
            return box
        last = box
    raise AssertionError(f"{control['kind']} {control['label']!r} kept moving: {last}")


# What has the focus, for messages: the tag, its label or class, and the notebook cell it is in.
_FOCUSED = """attr => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'the page itself (nothing focused)';
  const cell = el.closest('.jp-Cell');
  const cells = cell ? [...document.querySelectorAll('.jp-Cell')] : [];
  const name = el.getAttribute('aria-label') || el.getAttribute(attr)
    || (el.textContent || '').trim().slice(0, 30) || String(el.className).slice(0, 60);
  return `<${el.tagName.toLowerCase()}> ${JSON.stringify(name)}`
    + (cell ? ` in cell ${cells.indexOf(cell)}` : ' outside the cells');
}"""


def _keyboard_focus(page: lab.LessonPage, stops: list[dict], k: int) -> tuple[str | None, str]:
    """Put the focus on stop ``k`` with the keyboard, so ``:focus-visible`` applies: Tab from
    the previous stop, or Shift+Tab from the next for the first. A lone stop is reached with
    Tab from whatever precedes it in the page's tab order (Shift+Tab from it first).

    Tab then Shift+Tab does not bring a lone stop back in a notebook: Tab leaves the explorer
    for the next cell's first control (lesson 11: a help panel's "Next hint"), which makes that
    cell the active one, and JupyterLab puts the active cell (tabindex 0) and, in Notebook 7,
    its toolbar in the tab order before that control; Shift+Tab lands there, not back on the
    slider (a learner presses it once or twice more).

    Returns the focused control's id (None if the focus is not on a control) and a description
    of the focused element for messages.
    """

    def focus(control: dict) -> None:
        page.page.locator(f"[{CONTROL_ATTR}='{control['id']}']").focus()

    if k > 0:
        focus(stops[k - 1])
        page.page.keyboard.press("Tab")
    elif len(stops) > 1:
        focus(stops[1])
        page.page.keyboard.press("Shift+Tab")
    else:
        focus(stops[0])
        page.page.keyboard.press("Shift+Tab")  # to the element before it in the tab order
        page.page.wait_for_timeout(50)
        before = page.js(f"() => document.activeElement.getAttribute('{CONTROL_ATTR}')")
        if before == stops[0]["id"]:
            return None, "the control itself (Shift+Tab did not leave it: Tab cannot arrive)"
        page.page.keyboard.press("Tab")
    page.page.wait_for_timeout(50)
    focused = page.js(f"() => document.activeElement.getAttribute('{CONTROL_ATTR}')")
    return focused, page.js(_FOCUSED, CONTROL_ATTR)


def focus_ring_problems(page: lab.LessonPage, explorer: int) -> list[str]:
    """Whether every Tab stop of the explorer shows a clear focus ring when Tab reaches it.

    Each stop is photographed with nothing focused, then focused from the keyboard (so
    ``:focus-visible`` applies); as WCAG 2.4.13 asks, the pixels that change with a 3:1
    contrast must cover at least a 2 px line around the control (a 1 px outline does not
    pass). If focusing scrolled the notebook, the unfocused picture is taken again.
    """
    stops = [c for c in _tab_stops(controls(page, explorer)) if c["tabIndex"] >= 0]
    problems = []
    for k, control in enumerate(stops):
        name = f"{control['kind']} {control['label']!r}"
        for _attempt in range(2):
            page.js("() => document.activeElement && document.activeElement.blur()")
            box = _settled_box(page, control)
            plain = _clip_pixels(page, box)
            focused, where = _keyboard_focus(page, stops, k)
            if page.js(_RING_BOX, control["id"]) == box:
                break
        if focused != control["id"]:
            problems.append(f"{name}: the keyboard did not reach it (focus on {where})")
            continue
        changed = contrast_changed_pixels(plain, _clip_pixels(page, box))
        perimeter = 2 * (box["width"] + box["height"])
        if changed < RING_MIN_PER_PERIMETER * perimeter:
            problems.append(
                f"{name}: focus is hard to see (on focus {changed} pixels change with a contrast "
                f"of {RING_MIN_CONTRAST:g}:1 or more around a {box['width']:.0f}x"
                f"{box['height']:.0f} control; a 2 px ring would change "
                f"{RING_MIN_PER_PERIMETER * perimeter:.0f})"
            )
    return problems


# --------------------------------------------------------------------------- help panels


def help_button_problems(page: lab.LessonPage, panel: int, key: str) -> list[str]:
    """Focus help panel ``panel``'s first button ("Next hint"), press ``key`` (Enter or Space):
    the panel must show new text within 10 s, and the notebook's active cell and mode must
    stay as they were (the key belongs to the button)."""
    root = page.page.locator(HELP_PANEL).nth(panel)
    button = root.locator("button").first
    button.scroll_into_view_if_needed()
    button.focus()
    label = button.inner_text().strip() or button.get_attribute("aria-label") or "button"
    before, cell_before = root.inner_text(), active_cell(page)
    page.page.keyboard.press(key)
    deadline = 10_000
    while root.inner_text() == before and deadline > 0:
        page.page.wait_for_timeout(100)
        deadline -= 100
    cell_after = active_cell(page)
    problems = []
    if root.inner_text() == before:
        problems.append(f"help panel {panel}: {key} on {label!r} showed nothing within 10 s")
    if cell_before and cell_after and cell_after != cell_before:
        problems.append(
            f"help panel {panel}: {key} on {label!r} moved the notebook from "
            f"{cell_before} to {cell_after}"
        )
    return problems
