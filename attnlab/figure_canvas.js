// The browser half of attnlab.figure_canvas.FigureCanvas: a <canvas> that paints the raw
// RGBA tiles the kernel sends. No PNG to decode, no blob URL to load: each tile goes
// straight into the canvas with putImageData and shows on the next frame.
//
// Messages from the kernel: {kind: "tiles", width, height, rects: [[x, y, w, h], ...]} with
// one buffer holding the tiles' RGBA rows back to back, in the order of `rects`; when the
// page draws the moving artists (attnlab/page_layer.py), also `shapes`: the tiles are then
// the figure without them, kept in a background canvas, and each frame is that background
// with every shape drawn over it ([svgPathData, style, [dx, dy]?], see drawShapes); and the
// explorer's readout HTML when it goes with the frame ({..., readout, readout_model}): it is
// set, in the same task, on that Readout's model (or, until the model is found, handed to the
// readout view of the explorer around this view as a READOUT_EVENT), so figure and numbers
// change in one painted frame (controls.js shows it).
// Messages to the kernel: {kind: "frame-please"}, asking for the whole current frame (sent
// by every new view, so a view never shows a stale picture); {kind: "theme", dark} with the
// page's JupyterLab theme, when the view appears and whenever the theme changes;
// {kind: "screen", ratio} with the screen's devicePixelRatio, when the view appears and
// whenever it changes (browser zoom, a window moved to another screen); {kind:
// "readout-handoff", model} once this view sets that Readout's model from the frames.
//
// HiDPI: the kernel draws the figure at its dpi times that ratio and says so in the model's
// "scale" (and in each tiles message): the canvas then holds width x height device pixels
// shown in width/scale x height/scale CSS pixels, so the figure keeps its size on the page
// and its text is as sharp as the HTML beside it (drawn at 1x and stretched, it was soft).
//
// When the kernel behind the figure is gone (restarted, stopped, or the notebook was
// reopened from a file with saved widget state) the figure can no longer change: the view
// dims it and lays a banner over it saying to run the cell again, and marks the explorer
// around it with the class "attnlab-disconnected".

// The advice works in one step: the cell alone would stop at a name its lesson's earlier
// cells define (the restarted kernel has none of them).
const BANNER_TEXT =
  "This explorer lost its kernel (restarted or stopped). " +
  "To bring it back, use Run \u25b8 Run All Cells: this cell needs the lesson's cells above it.";
const DISCONNECTED = "jupyter-widgets-disconnected"; // set by ipywidgets when comm_live is false
const DEAD_STATUSES = new Set(["restarting", "autorestarting", "dead", "terminating"]);
const KEEP_PICTURE_MS = 1500; // quiet time before the picture is kept for a saved notebook
const READOUT_EVENT = "attnlab-readout"; // controls.js listens for it

function bytesOf(buffer) {
  if (buffer instanceof ArrayBuffer) return new Uint8ClampedArray(buffer);
  return new Uint8ClampedArray(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

// Draw the page layer's shapes: SVG path data in device pixels, filled and stroked as the
// style says (attnlab.page_layer.ShapeRecorder.style); a text's outlines may come with how
// far to move them from where they were first laid out.
function drawShapes(ctx, shapes) {
  for (const [data, style, at] of shapes) {
    ctx.save();
    if (style.clip) {
      ctx.beginPath();
      ctx.rect(style.clip[0], style.clip[1], style.clip[2], style.clip[3]);
      ctx.clip();
    }
    if (style.clipPath) ctx.clip(new Path2D(style.clipPath));
    if (at) ctx.translate(at[0], at[1]);
    const path = new Path2D(data);
    if (style.fill) {
      ctx.fillStyle = style.fill;
      ctx.fill(path);
    }
    if (style.stroke) {
      ctx.strokeStyle = style.stroke;
      ctx.lineWidth = style.width;
      ctx.lineCap = style.cap;
      ctx.lineJoin = style.join;
      ctx.setLineDash(style.dash || []);
      ctx.lineDashOffset = style.offset || 0;
      ctx.stroke(path);
    }
    ctx.restore();
  }
}

function pageIsDark() {
  return document.body.dataset.jpThemeLight === "false";
}

function makeBanner() {
  const banner = document.createElement("div");
  banner.className = "attnlab-kernel-lost";
  banner.setAttribute("role", "alert");
  banner.textContent = BANNER_TEXT;
  Object.assign(banner.style, {
    position: "absolute",
    left: "0",
    right: "0",
    top: "0",
    padding: "8px 12px",
    background: "#fff4ce",
    color: "#3d2e00",
    borderBottom: "3px solid #c99400",
    font: "600 14px/1.4 var(--jp-ui-font-family, sans-serif)",
    display: "none",
  });
  return banner;
}

function render({ model, el }) {
  const frame = document.createElement("div");
  frame.className = "attnlab-figure-frame";
  Object.assign(frame.style, { position: "relative", display: "inline-block", maxWidth: "100%" });
  const canvas = document.createElement("canvas");
  canvas.className = "attnlab-figure";
  canvas.setAttribute("role", "img");
  canvas.style.display = "block";
  // Its own compositor layer: new pixels then repaint only the canvas, not the notebook
  // around it (interleaved A/B, benchmarks/latency.py: "paint" 10.1 -> 7.4 ms median).
  canvas.style.willChange = "transform";
  const banner = makeBanner();
  frame.append(canvas, banner);
  const ctx = canvas.getContext("2d");
  const background = document.createElement("canvas"); // the figure without its shapes
  const backgroundCtx = background.getContext("2d");
  let painted = false;
  let lost = false;
  let keepTimer = null;

  let shownScale = null;
  function resize(width, height, scale = model.get("scale") || 1) {
    if (canvas.width === width && canvas.height === height && shownScale === scale) return;
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = background.width = width;
      canvas.height = background.height = height;
    }
    shownScale = scale;
    canvas.style.width = `${width / scale}px`; // the height follows the canvas' aspect ratio
    canvas.style.maxWidth = "100%";
  }

  function describe() {
    canvas.setAttribute("aria-label", model.get("alt") || "figure");
  }

  // The picture as it is now goes into this view's copy of the widget state (never sent to
  // the kernel), so a notebook saved with widget state reopens showing it.
  function keepPictureSoon() {
    clearTimeout(keepTimer);
    keepTimer = setTimeout(() => {
      canvas.toBlob(async (blob) => {
        if (!blob || lost) return;
        model.set("initial_png", new DataView(await blob.arrayBuffer()));
      }, "image/png");
    }, KEEP_PICTURE_MS);
  }

  function paintTiles(msg, buffers) {
    if (!msg || msg.kind !== "tiles" || !buffers || !buffers.length) return;
    resize(msg.width, msg.height, msg.scale || model.get("scale") || 1);
    const data = bytesOf(buffers[0]);
    const shapes = Array.isArray(msg.shapes) ? msg.shapes : null;
    const target = shapes ? backgroundCtx : ctx;
    let offset = 0;
    for (const [x, y, w, h] of msg.rects) {
      const n = 4 * w * h;
      target.putImageData(new ImageData(data.subarray(offset, offset + n), w, h), x, y);
      offset += n;
    }
    if (shapes) {
      ctx.clearRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(background, 0, 0);
      drawShapes(ctx, shapes);
    }
    painted = true;
    // The readout's HTML: set on its model by initialize() below once that model is found;
    // until then (or where it cannot be looked up) handed to this explorer's readout view.
    if (typeof msg.readout === "string" && !READOUT_MODELS.get(msg.readout_model)) {
      const explorer = el.closest(".attnlab-explorer");
      const detail = msg.readout;
      explorer?.dispatchEvent(new CustomEvent(READOUT_EVENT, { detail, bubbles: true }));
    }
    keepPictureSoon();
  }

  // The frame as it was when the widget was displayed, so the figure appears at once even
  // while the kernel is still busy with later cells; replaced as soon as tiles arrive.
  async function paintInitial() {
    const png = model.get("initial_png");
    if (!png || !png.byteLength) return;
    const bitmap = await createImageBitmap(new Blob([png], { type: "image/png" }));
    if (!painted) {
      resize(bitmap.width, bitmap.height);
      ctx.drawImage(bitmap, 0, 0);
    }
    bitmap.close();
  }

  // ---- the kernel is gone: say so where the explorer is
  function showLost() {
    if (lost) return;
    lost = true;
    clearTimeout(keepTimer);
    banner.style.display = "block";
    canvas.style.opacity = "0.45";
    el.classList.add("attnlab-disconnected");
    markExplorer(50);
  }

  // The explorer around this view (for its controls); a view restored from a saved notebook
  // is rendered before its parent puts it in place, so look again for a while.
  function markExplorer(tries) {
    const root = el.closest(".attnlab-explorer");
    if (root) root.classList.add("attnlab-disconnected");
    else if (tries > 0) setTimeout(() => markExplorer(tries - 1), 200);
  }

  function checkLive() {
    if (el.classList.contains(DISCONNECTED)) showLost();
  }

  // ipywidgets sets DISCONNECTED on this view's node when the model's comm goes dead (kernel
  // restart) and from the start for models restored from a saved notebook; anywidget's
  // model proxy does not expose comm_live itself, so the class is the signal.
  const classWatch = new MutationObserver(checkLive);
  classWatch.observe(el, { attributes: true, attributeFilter: ["class"] });
  model.on("comm_live_update", checkLive);

  // A kernel shut down or dead (not only restarted) never closes the comms: watch it too.
  const kernel = model.widget_manager?.kernel;
  function onStatus(_, status) {
    if (DEAD_STATUSES.has(status)) showLost();
  }
  function onDisposed() {
    showLost();
  }
  kernel?.statusChanged?.connect(onStatus);
  kernel?.disposed?.connect(onDisposed);

  // ---- the page's theme, for the kernel to restyle the figure
  let sentDark = null;
  function sendTheme() {
    const dark = pageIsDark();
    if (dark === sentDark || lost) return;
    sentDark = dark;
    model.send({ kind: "theme", dark });
  }
  const themeWatch = new MutationObserver(sendTheme);
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });

  // ---- the screen's pixels per CSS pixel, for the kernel to draw at
  let sentRatio = null;
  let ratioQuery = null;
  function sendRatio() {
    const ratio = window.devicePixelRatio || 1;
    ratioQuery?.removeEventListener("change", sendRatio);
    ratioQuery = window.matchMedia(`(resolution: ${ratio}dppx)`);
    ratioQuery.addEventListener("change", sendRatio);
    if (ratio === sentRatio || lost) return;
    sentRatio = ratio;
    model.send({ kind: "screen", ratio });
  }

  resize(model.get("width"), model.get("height"));
  describe();
  el.appendChild(frame);
  model.on("msg:custom", paintTiles);
  model.on("change:alt", describe);
  paintInitial().catch((err) => console.error("attnlab: initial frame", err));
  checkLive();
  if (!lost) {
    sendTheme();
    sendRatio();
    model.send({ kind: "frame-please" });
  }
  return () => {
    clearTimeout(keepTimer);
    classWatch.disconnect();
    themeWatch.disconnect();
    ratioQuery?.removeEventListener("change", sendRatio);
    kernel?.statusChanged?.disconnect(onStatus);
    kernel?.disposed?.disconnect(onDisposed);
    model.off("msg:custom", paintTiles);
    model.off("change:alt", describe);
    model.off("comm_live_update", checkLive);
  };
}

// ---- the readout that goes with a frame, for the model (not a view): every frame's
// readout is set on the explorer's Readout model, so its views change in the task that paints
// the frame, whichever cell or window shows them, and a view that appears later, or a saved
// notebook, has it. Once that model is found the kernel is told, and stops sending the same
// HTML again as the Readout's state (one message fewer per slider step: FigureCanvas.show).
// Until then, and in front ends that cannot look a model up, render() hands it to the
// readout view by a DOM event and the kernel keeps sending the state. Listening on the model
// means this works with no view of the canvas at all (an output cleared, shown again later).
const READOUT_MODELS = new Map(); // Readout model id -> its WidgetModel, or null while looked up

function initialize({ model }) {
  const newest = new Map(); // Readout model id -> the newest HTML that came for it
  function onFrame(msg) {
    if (!msg || msg.kind !== "tiles" || typeof msg.readout !== "string") return;
    const id = msg.readout_model;
    if (typeof id !== "string") return;
    const readout = READOUT_MODELS.get(id);
    if (readout) {
      readout.set_state({ value: msg.readout }); // as a state update from the kernel would
      return;
    }
    newest.set(id, msg.readout);
    const manager = model.widget_manager;
    if (READOUT_MODELS.has(id) || typeof manager?.get_model !== "function") return;
    READOUT_MODELS.set(id, null);
    manager.get_model(id).then(
      (found) => {
        if (!found || typeof found.set_state !== "function") return;
        READOUT_MODELS.set(id, found);
        found.set_state({ value: newest.get(id) });
        found.once("destroy", () => READOUT_MODELS.delete(id));
        model.send({ kind: "readout-handoff", model: id });
      },
      (err) => console.warn("attnlab: no readout model; the kernel keeps sending it", err),
    );
  }
  model.on("msg:custom", onFrame);
  return () => model.off("msg:custom", onFrame);
}

export default { initialize, render };
