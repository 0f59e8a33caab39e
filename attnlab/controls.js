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
// Every control's root and every focusable element in it carry data-lm-suppress-shortcuts:
// Lumino (JupyterLab, Notebook 7) then ignores key presses there, so arrow keys move the
// slider instead of the cell. Lumino walks up from the key's target and stops at the first
// element with the attribute, but tests each element on the way against its shortcuts'
// selectors first, and selectors such as `.jp-Notebook.jp-mod-commandMode :focus` match the
// focused input itself: so the attribute must be on the input, not only on an ancestor.
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

const SUPPRESS = { "data-lm-suppress-shortcuts": "true" };

// A focusable element whose keys Lumino leaves alone.
const focusable = (tag, attributes = {}, text = null) => make(tag, { ...attributes, ...SUPPRESS }, text);

function controlRoot(el, kind, tag = "div") {
  const root = make(tag, { class: `attnlab-control attnlab-${kind}`, ...SUPPRESS });
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

  const text = (v) => (choice ? model.get("labels")[v] : Number(v).toFixed(model.get("decimals")));
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

function render({ model, el }) {
  const kind = model.get("kind");
  const renderer = RENDERERS[kind];
  if (!renderer) {
    el.textContent = `attnlab: unknown control kind ${JSON.stringify(kind)}`;
    return undefined;
  }
  return renderer(model, el);
}

export default { render };
