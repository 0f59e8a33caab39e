// The browser half of attnlab.controls: native form elements with labels, one per control.
//
// model "kind" picks what is drawn:
//   slider            <label for> + <input type=range min max step> + readout; sets "value"
//   selection-slider  the same over option positions 0..n-1; sets "index"
//   dropdown          <label for> + <select>; sets "index"
//   toggle-buttons    <fieldset><legend> + native radios drawn as buttons; sets "index"
//   checkbox          <input type=checkbox> + <label for>; sets "value"
//   button            <button>; sends {event: "click"}
//   readout           a polite live region (role=status) showing "value" as HTML
//
// Keys: a focused control keeps only the keys it uses (arrows, Home/End, PageUp/PageDown,
// Tab and Shift+Tab, Space, and Enter on a button); every other key goes to the notebook as it
// would from anywhere else in the cell: Ctrl/Cmd+S saves, Shift+Enter runs the cell and moves
// on, letters are command-mode shortcuts. Escape leaves the control for the notebook's command
// mode (the focus goes to the control's cell). How a key is kept from Lumino (the toolkit of
// JupyterLab and Notebook 7): a listener on the window, in the capture phase, runs before
// Lumino's own (JupyterLab listens on the document when the key bubbles back, Notebook 7 when
// it comes down) and puts data-lm-suppress-shortcuts on the focused control for the length of
// that one key press; Lumino ignores key presses on an element with that attribute. It must be
// on the focused element itself: Lumino matches shortcut selectors such as
// `.jp-Notebook.jp-mod-commandMode :focus` against the key's target before it looks at the
// target's ancestors. (It used to be there for good, which kept every key from the notebook.)
// A slider's value is rounded to its step here as in Python, so aria-valuetext reads "0.7".

// anywidget may evaluate this module once per widget, so a counter local to the module would
// restart at 0 for each and hand out the same ids (a <label for> then names the wrong control):
// the counter lives on the page instead.
const newId = (kind) => {
  globalThis.__attnlabControlSerial = (globalThis.__attnlabControlSerial || 0) + 1;
  return `attnlab-${kind}-${globalThis.__attnlabControlSerial}`;
};

function make(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
}

const SUPPRESS_ATTRIBUTE = "data-lm-suppress-shortcuts"; // Lumino ignores keys on it
const CONTROL_ATTRIBUTE = "data-attnlab-control"; // on every focusable element of a control
const NAVIGATION_KEYS = new Set([
  "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown",
]);

// Whether the focused control uses this key (so the notebook must not see it).
function keeps(target, event) {
  if (event.ctrlKey || event.metaKey) return false; // Ctrl/Cmd+S and friends: the notebook's
  const key = event.key;
  if (key === "Tab") return !event.altKey;
  if (event.altKey) return target.tagName === "SELECT" && (key === "ArrowDown" || key === "ArrowUp");
  if (NAVIGATION_KEYS.has(key)) return true;
  if (event.shiftKey) return false; // Shift+Enter runs the cell
  if (key === " ") return true;
  return key === "Enter" && target.tagName === "BUTTON";
}

// Escape: leave the control for the notebook's command mode, once the key has been handled
// (if the notebook did something with it, e.g. moved the focus, that stands).
function leaveToCommandMode(target) {
  setTimeout(() => {
    if (document.activeElement !== target) return;
    const cell = target.closest(".jp-Cell");
    const notebook = target.closest(".jp-Notebook");
    for (const node of [cell, notebook]) {
      if (!node) continue;
      if (!node.hasAttribute("tabindex")) node.setAttribute("tabindex", "-1");
      node.focus();
      if (document.activeElement === node) return;
    }
    target.blur();
  }, 0);
}

function onKeyDown(event) {
  const target = event.target;
  if (!(target instanceof Element) || !target.hasAttribute(CONTROL_ATTRIBUTE)) return;
  if (event.key === "Escape" && !event.ctrlKey && !event.metaKey && !event.altKey) {
    leaveToCommandMode(target);
    return;
  }
  if (!keeps(target, event)) return;
  target.setAttribute(SUPPRESS_ATTRIBUTE, "true");
  // Taken away once this key press is over (and before the next one).
  setTimeout(() => target.removeAttribute(SUPPRESS_ATTRIBUTE), 0);
}

// Once per page (anywidget may evaluate this module once per widget).
if (!globalThis.__attnlabControlKeys) {
  globalThis.__attnlabControlKeys = true;
  window.addEventListener("keydown", onKeyDown, true);
}

// A focusable element of a control: its keys are sorted out by onKeyDown.
const focusable = (tag, attributes = {}, text = null) =>
  make(tag, { ...attributes, [CONTROL_ATTRIBUTE]: "" }, text);

function controlRoot(el, kind, tag = "div") {
  const root = make(tag, { class: `attnlab-control attnlab-${kind}` });
  el.appendChild(root);
  return root;
}

// Keep model events wired for as long as the view lives; returns the cleanup function.
function listen(model, names, handler) {
  for (const name of names) model.on(`change:${name}`, handler);
  return () => {
    for (const name of names) model.off(`change:${name}`, handler);
  };
}

function commonState(model, root, label) {
  const description = model.get("description");
  if (label && label.textContent !== description) label.textContent = description;
  const width = model.get("label_width");
  if (width) root.style.setProperty("--attnlab-label-width", width);
  else root.style.removeProperty("--attnlab-label-width");
  root.classList.toggle("attnlab-disabled", Boolean(model.get("disabled")));
}

// A slider value as attnlab.controls._text_of writes it: fixed decimals, the true minus sign
// (U+2212, as the explorers' readouts and matplotlib's tick labels), never "-0.0".
function numberText(value, decimals) {
  let t = Number(value).toFixed(decimals);
  if (t.startsWith("-") && Number(t) === 0) t = t.slice(1);
  return t.replace("-", "\u2212");
}

// value rounded to min + k * step, as attnlab.controls.snap does
function snap(value, min, max, step, decimals) {
  const k = Math.round((value - min) / step);
  const snapped = Number((min + k * step).toFixed(decimals));
  return Math.min(Math.max(snapped, min), max) + 0;
}

function renderSlider(model, el) {
  const choice = model.get("kind") === "selection-slider";
  const key = choice ? "index" : "value";
  const root = controlRoot(el, "slider");
  const id = newId("slider");
  const label = make("label", { for: id, class: "attnlab-control-label" });
  const input = focusable("input", { type: "range", id, class: "attnlab-range" });
  const readout = make("span", { class: "attnlab-control-readout", "aria-hidden": "true" });
  root.append(label, input, readout);

  const text = (v) => (choice ? model.get("labels")[v] : numberText(v, model.get("decimals")));
  let shownText = null;
  function show(v) {
    const t = text(v);
    if (t === shownText) return;
    shownText = t;
    input.setAttribute("aria-valuetext", t);
    readout.textContent = t;
  }
  // Bounds, labels, description: rare changes.
  function syncSetup() {
    commonState(model, root, label);
    if (choice) {
      const labels = model.get("labels");
      input.min = "0";
      input.max = String(labels.length - 1);
      input.step = "1";
      readout.style.minWidth = `${Math.max(...labels.map((l) => l.length))}ch`;
    } else {
      input.min = String(model.get("min"));
      input.max = String(model.get("max"));
      input.step = String(model.get("step"));
      const widest = [model.get("min"), model.get("max")].map((v) => text(v).length);
      readout.style.minWidth = `${Math.max(...widest)}ch`;
    }
    input.disabled = Boolean(model.get("disabled"));
    shownText = null;
    syncValue();
  }
  // The value set by the kernel (code, another view, or a correction of this view's move).
  let moving = false;
  function syncValue() {
    if (moving) return;
    const v = model.get(key);
    if (Number(input.value) !== v) input.value = String(v);
    show(v);
  }
  // A move in this view: send it first (the kernel starts drawing), then update the readout.
  function moved() {
    let v = Number(input.value);
    if (!choice) {
      v = snap(v, model.get("min"), model.get("max"), model.get("step"), model.get("decimals"));
    }
    if (v !== model.get(key)) {
      moving = true;
      try {
        model.set(key, v);
        model.save_changes();
      } finally {
        moving = false;
      }
    }
    show(v);
  }
  input.addEventListener("input", moved);
  syncSetup();
  const stopSetup = listen(model, ["description", "disabled", "label_width", "min", "max",
    "step", "decimals", "labels"], syncSetup);
  const stopValue = listen(model, [key], syncValue);
  return () => {
    stopSetup();
    stopValue();
  };
}

function renderDropdown(model, el) {
  const root = controlRoot(el, "dropdown");
  const id = newId("dropdown");
  const label = make("label", { for: id, class: "attnlab-control-label" });
  const select = focusable("select", { id, class: "attnlab-select" });
  root.append(label, select);
  function sync() {
    commonState(model, root, label);
    const labels = model.get("labels");
    const current = [...select.options].map((o) => o.textContent);
    if (current.join("\u0000") !== labels.join("\u0000")) {
      select.replaceChildren(...labels.map((l, i) => make("option", { value: String(i) }, l)));
    }
    select.selectedIndex = model.get("index");
    select.disabled = Boolean(model.get("disabled"));
  }
  select.addEventListener("change", () => {
    model.set("index", select.selectedIndex);
    model.save_changes();
  });
  sync();
  return listen(model, ["description", "disabled", "label_width", "labels", "index"], sync);
}

function renderToggleButtons(model, el) {
  const root = controlRoot(el, "toggle", "fieldset");
  const name = newId("toggle");
  const legend = make("legend", { class: "attnlab-control-label" });
  const options = make("span", { class: "attnlab-toggle-options" });
  root.append(legend, options);
  let radios = [];
  function build(labels) {
    radios = labels.map((text, i) => {
      const radio = focusable("input", { type: "radio", name, value: String(i) });
      radio.addEventListener("change", () => {
        if (!radio.checked) return;
        model.set("index", i);
        model.save_changes();
      });
      const option = make("label", { class: "attnlab-toggle-option" });
      option.append(radio, make("span", {}, text));
      return option;
    });
    options.replaceChildren(...radios);
  }
  function sync() {
    commonState(model, root, legend);
    const labels = model.get("labels");
    const shown = radios.map((r) => r.textContent);
    if (shown.join("\u0000") !== labels.join("\u0000")) build(labels);
    const index = model.get("index");
    radios.forEach((option, i) => {
      const radio = option.querySelector("input");
      radio.checked = i === index;
      radio.disabled = Boolean(model.get("disabled"));
    });
  }
  sync();
  return listen(model, ["description", "disabled", "label_width", "labels", "index"], sync);
}

function renderCheckbox(model, el) {
  const root = controlRoot(el, "checkbox");
  const id = newId("checkbox");
  const box = focusable("input", { type: "checkbox", id });
  const label = make("label", { for: id, class: "attnlab-control-label" });
  root.append(box, label);
  function sync() {
    commonState(model, root, label);
    box.checked = Boolean(model.get("value"));
    box.disabled = Boolean(model.get("disabled"));
  }
  box.addEventListener("change", () => {
    model.set("value", box.checked);
    model.save_changes();
  });
  sync();
  return listen(model, ["description", "disabled", "label_width", "value"], sync);
}

function renderButton(model, el) {
  const root = controlRoot(el, "button-box");
  const button = focusable("button", { type: "button", class: "attnlab-button" });
  root.append(button);
  function sync() {
    commonState(model, root, null);
    button.textContent = model.get("description");
    button.disabled = Boolean(model.get("disabled"));
  }
  button.addEventListener("click", () => model.send({ event: "click" }));
  sync();
  return listen(model, ["description", "disabled"], sync);
}

// figure_canvas.js sends it on the explorer around both views, with the readout's new HTML,
// in the task that paints the frame it goes with (the model's own "value" follows).
const READOUT_EVENT = "attnlab-readout";

function renderReadout(model, el) {
  // One stable live region; only its content changes, so each change is announced once.
  const region = make("div", { role: "status", "aria-live": "polite", class: "attnlab-live" });
  el.appendChild(region);
  let shown = null; // the HTML last put in the region, as given (innerHTML reads back changed)
  function showHtml(html) {
    if (html === shown) return;
    region.innerHTML = html;
    shown = html;
  }
  function sync() {
    showHtml(model.get("value"));
  }
  // The frame's copy of the readout, from this view's own explorer only (a lesson may show
  // several explorers, or one explorer twice).
  function fromFrame(event) {
    if (event.target instanceof Element && event.target.contains(el)) showHtml(event.detail);
  }
  document.addEventListener(READOUT_EVENT, fromFrame);
  sync();
  const stopListening = listen(model, ["value"], sync);
  return () => {
    document.removeEventListener(READOUT_EVENT, fromFrame);
    stopListening?.();
  };
}

const RENDERERS = {
  slider: renderSlider,
  "selection-slider": renderSlider,
  dropdown: renderDropdown,
  "toggle-buttons": renderToggleButtons,
  checkbox: renderCheckbox,
  button: renderButton,
  readout: renderReadout,
};

// ---- the kernel is gone (restarted, stopped, or a lesson reopened from its file): the control
// can no longer change anything, so it is disabled, greyed as a disabled control is, and says
// why in its tooltip, until its cell runs again (which makes a new control). Before, a slider
// still moved after a restart while the figure and readout stayed as they were. The signals
// are figure_canvas.js's: the class ipywidgets puts on a view whose model's comm is dead (a
// restart, and from the start for a model restored from a saved notebook), and the kernel's
// own status for a kernel shut down or dead.
const DISCONNECTED = "jupyter-widgets-disconnected";
const DEAD_STATUSES = new Set(["restarting", "autorestarting", "dead", "terminating"]);
const NOT_LIVE = "attnlab-not-live";
const NOT_LIVE_TEXT =
  "Not live: the kernel restarted or stopped. Use Run \u25b8 Run All Cells to bring it back.";

function watchKernel(model, el) {
  let lost = false;
  function showLost() {
    if (lost) return;
    lost = true;
    for (const node of el.querySelectorAll(`[${CONTROL_ATTRIBUTE}]`)) {
      if (node === document.activeElement) node.blur();
      node.disabled = true;
      node.title = NOT_LIVE_TEXT; // its accessible description too (its name is its label)
    }
    const root = el.querySelector(".attnlab-control");
    root?.classList.add("attnlab-disabled", NOT_LIVE);
    root?.setAttribute("title", NOT_LIVE_TEXT);
  }
  function checkLive() {
    if (el.classList.contains(DISCONNECTED)) showLost();
  }
  const classWatch = new MutationObserver(checkLive);
  classWatch.observe(el, { attributes: true, attributeFilter: ["class"] });
  model.on("comm_live_update", checkLive);
  const kernel = model.widget_manager?.kernel;
  function onStatus(_, status) {
    if (DEAD_STATUSES.has(status)) showLost();
  }
  kernel?.statusChanged?.connect(onStatus);
  kernel?.disposed?.connect(showLost);
  checkLive();
  return () => {
    classWatch.disconnect();
    model.off("comm_live_update", checkLive);
    kernel?.statusChanged?.disconnect(onStatus);
    kernel?.disposed?.disconnect(showLost);
  };
}

function render({ model, el }) {
  const kind = model.get("kind");
  const renderer = RENDERERS[kind];
  if (!renderer) {
    el.textContent = `attnlab: unknown control kind ${JSON.stringify(kind)}`;
    return undefined;
  }
  const stop = renderer(model, el);
  if (kind === "readout") return stop;
  const stopWatching = watchKernel(model, el);
  return () => {
    stopWatching();
    stop?.();
  };
}

export default { render };
