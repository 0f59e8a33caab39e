// Injected into every JupyterLab page before it loads (Playwright add_init_script).
//
// 1. Records every kernel websocket message (both directions) with the page time it was
//    sent or received, decoded from the v1 kernel protocol (or the legacy JSON text frames),
//    so Python can tell when run-all started and finished, which cells raised, and how long
//    the kernel spent on a slider step.
// 2. Counts the draws into every explorer figure canvas (`canvas.attnlab-figure`) by wrapping
//    CanvasRenderingContext2D's putImageData and drawImage, so a test can see new pixels land.
// 3. Offers small DOM helpers for the explorers (the `attnlab-explorer` contract): snapshots,
//    waiting for quiet, and timing one slider step from keydown to painted pixels.
//    An explorer's figure is a `canvas.attnlab-figure` (or an `ipywidgets.Image`, `.widget-image`);
//    its sliders are attnlab.controls sliders: `.attnlab-slider` holding a labelled
//    `input[type=range]` and a `.attnlab-control-readout`.
(() => {
  const MAX_MESSAGES = 20000;
  const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
  const CONTENT_TYPES = new Set([
    "comm_msg", "status", "error", "execute_request", "execute_reply",
    "display_data", "execute_result", "update_display_data", "stream",
  ]);
  const text = new TextDecoder();
  const messages = [];

  // Kernel header dates carry microseconds ("…:09.946123Z"); Date.parse keeps milliseconds.
  function epochMs(date) {
    const m = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(date || "");
    if (!m) return null;
    return Date.parse(m[1] + (m[3] || "Z")) + (m[2] ? parseFloat(m[2]) * 1000 : 0);
  }

  function parts(data) {
    if (typeof data === "string") {
      const msg = JSON.parse(data);
      return {
        channel: msg.channel, header: msg.header, parent: msg.parent_header,
        content: () => msg.content, nbuf: (msg.buffers || []).length, size: data.length,
      };
    }
    if (!(data instanceof ArrayBuffer)) return null;
    const view = new DataView(data);
    const count = Number(view.getBigUint64(0, true));
    const offsets = [];
    for (let i = 0; i < count; i++) offsets.push(Number(view.getBigUint64(8 * (i + 1), true)));
    const part = (i) => text.decode(new Uint8Array(data, offsets[i], offsets[i + 1] - offsets[i]));
    return {
      channel: part(0), header: JSON.parse(part(1)), parent: JSON.parse(part(2)),
      content: () => JSON.parse(part(4)), nbuf: count - 6, size: data.byteLength,
    };
  }

  function record(dir, data) {
    const t = performance.now();
    let p;
    try {
      p = parts(data);
    } catch (err) {
      return;
    }
    if (!p) return;
    const type = p.header.msg_type;
    const entry = {
      dir, t, channel: p.channel, type, id: p.header.msg_id,
      parent: (p.parent && p.parent.msg_id) || null, date: epochMs(p.header.date),
      nbuf: p.nbuf, size: p.size,
    };
    if (CONTENT_TYPES.has(type)) {
      const c = p.content();
      if (type === "comm_msg") {
        entry.method = c.data && c.data.method;
        entry.keys = c.data && c.data.state ? Object.keys(c.data.state) : [];
        entry.comm = c.comm_id;
        // What the page sends (a control's new value) is small: keep it, to see what arrived.
        if (dir === "out" && c.data && c.data.state) entry.sentState = c.data.state;
        // A frame names the Readout model its readout goes to (figure_canvas.js).
        const custom = c.data && c.data.content;
        if (custom && typeof custom.readout_model === "string") {
          entry.readoutModel = custom.readout_model;
        }
      } else if (type === "status") {
        entry.state = c.execution_state;
      } else if (type === "error") {
        entry.ename = c.ename;
        entry.evalue = c.evalue;
      } else if (type === "execute_request") {
        entry.code = c.code;
      } else if (type === "execute_reply") {
        entry.status = c.status;
      } else if (type === "stream") {
        entry.stream = c.name;
        if (c.name === "stderr") entry.text = String(c.text).slice(0, 2000);
      } else {
        entry.widgetView = Boolean(c.data && c.data[WIDGET_VIEW]);
      }
    }
    messages.push(entry);
    if (messages.length > MAX_MESSAGES) messages.splice(0, messages.length - MAX_MESSAGES);
  }

  const NativeWebSocket = window.WebSocket;
  class RecordingWebSocket extends NativeWebSocket {
    constructor(url, protocols) {
      super(url, protocols);
      this.attnlabKernel = String(url).includes("/api/kernels/");
      if (this.attnlabKernel) this.addEventListener("message", (e) => record("in", e.data));
    }
    send(data) {
      if (this.attnlabKernel) record("out", data);
      return super.send(data);
    }
  }
  window.WebSocket = RecordingWebSocket;

  const FIGURE_CANVAS = "attnlab-figure";
  const draws = new WeakMap();  // canvas -> number of draws into it
  const firstDraws = new WeakMap();  // canvas -> page time of its first draw
  const drawListeners = new Set();  // functions of (canvas, page time), called after each draw
  for (const method of ["putImageData", "drawImage"]) {
    const native = CanvasRenderingContext2D.prototype[method];
    CanvasRenderingContext2D.prototype[method] = function (...args) {
      const result = native.apply(this, args);
      const canvas = this.canvas;
      if (canvas && canvas.classList && canvas.classList.contains(FIGURE_CANVAS)) {
        const t = performance.now();
        draws.set(canvas, (draws.get(canvas) || 0) + 1);
        if (!firstDraws.has(canvas)) firstDraws.set(canvas, t);
        for (const listener of drawListeners) listener(canvas, t);
      }
      return result;
    };
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // The end of the next frame: a task posted from requestAnimationFrame runs once that frame's
  // style, layout and paint are done, i.e. when the new pixels have been painted.
  const afterNextPaint = () =>
    new Promise((r) => requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => r(performance.now());
      channel.port2.postMessage(null);
    }));
  const explorer = (i) => document.querySelectorAll(".attnlab-explorer")[i];
  const figure = (root) =>
    root.querySelector(`canvas.${FIGURE_CANVAS}`) || root.querySelector(".widget-image");
  const isCanvas = (el) => el instanceof HTMLCanvasElement;
  // Changes whenever the figure shows new pixels: the canvas draw count or the image src.
  const frameId = (el) =>
    !el ? null : isCanvas(el) ? `draw ${draws.get(el) || 0}` : el.getAttribute("src");
  const name = (root) => {
    const cls = [...root.classList].find((c) => c.startsWith("attnlab-explorer-"));
    return cls ? cls.slice("attnlab-explorer-".length) : "unnamed";
  };
  const kernelIdle = () => {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (m.type === "status" && m.dir === "in") return m.state === "idle";
    }
    return true;
  };

  const SLIDER = ".attnlab-slider";
  // A slider's label, visible readout and its one handle (the range input): position, bounds
  // and aria-valuetext. A selection slider's position is the option's index.
  function sliderInfo(slider) {
    const label = slider.querySelector(".attnlab-control-label");
    const readout = slider.querySelector(".attnlab-control-readout");
    return {
      label: label ? label.textContent.trim() : "",
      readout: readout && readout.offsetParent !== null ? readout.textContent.trim() : null,
      handles: [...slider.querySelectorAll("input[type=range]")].map((h) => ({
        now: parseFloat(h.value),
        min: parseFloat(h.min),
        max: parseFloat(h.max),
        step: parseFloat(h.step) || 1,
        text: h.getAttribute("aria-valuetext"),
      })),
    };
  }

  // When the kernel went idle after the first widget message sent since a keydown at `key`
  // (looking at messages recorded after the step was armed); if no widget message went out
  // within 3 s, the keydown time itself.
  function stepHandledAt(key) {
    if (key === null) return null;
    const recent = messages.slice(-200).filter((m) => m.t >= key);
    const sent = recent.find((m) => m.dir === "out" && m.type === "comm_msg");
    if (!sent) return performance.now() - key > 3000 ? key : null;
    const idle = recent.find(
      (m) => m.dir === "in" && m.type === "status" && m.state === "idle" && m.parent === sent.id);
    return idle ? idle.t : null;
  }

  let pending = null;

  // Watch explorer i from now on: every keydown, every `input` event of its sliders, and every
  // change in it (a draw into its figure, a DOM change) with the end of the frame that
  // painted it. Returns the record and a function that stops watching.
  function watchExplorer(i) {
    const root = explorer(i);
    const el = figure(root);
    const rec = { keys: [], inputs: [], changes: [], last: null, lastKind: null, paint: null };
    let seq = 0;
    const changed = (t, kind) => {
      if (!rec.keys.length) return;
      const mine = ++seq;
      rec.changes.push({ t, kind });
      rec.last = t;
      rec.lastKind = kind;
      rec.paint = null;
      afterNextPaint().then((p) => { if (mine === seq) rec.paint = p; });
    };
    const onKey = () => rec.keys.push(performance.now());
    const onInput = () => rec.inputs.push(performance.now());
    window.addEventListener("keydown", onKey, { capture: true });
    root.addEventListener("input", onInput, { capture: true });
    const kindOf = (node) => {
      const e = node && node.nodeType === 1 ? node : node && node.parentElement;
      if (!e) return "other";
      if (e.closest(".attnlab-readout")) return "readout";
      if (e.closest(SLIDER)) return "slider";
      return "other";
    };
    const domWatch = new MutationObserver((records) => {
      const t = performance.now();
      const kinds = records.filter((r) => r.target !== el).map((r) => kindOf(r.target));
      if (kinds.length) changed(t, kinds.includes("readout") ? "readout" : kinds[0]);
    });
    domWatch.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
    const onDraw = (canvas, t) => { if (canvas === el) changed(t, "figure"); };
    drawListeners.add(onDraw);
    const stop = () => {
      window.removeEventListener("keydown", onKey, { capture: true });
      root.removeEventListener("input", onInput, { capture: true });
      domWatch.disconnect();
      drawListeners.delete(onDraw);
    };
    return { rec, stop, changed };
  }

  let burst = null;

  window.__attnlab = {
    messages,

    clockOffset: () => Date.now() - (performance.timeOrigin + performance.now()),

    /**
     * Whether the kernel is connected (a kernel_info_reply came), idle, the toolbar's execution
     * indicator (if the lab shows one) says idle, and no kernel message has come or gone for
     * quietMs.
     */
    kernelReady: (quietMs) => {
      const indicator = document.querySelector(".jp-Notebook-ExecutionIndicator");
      const last = messages[messages.length - 1];
      return messages.some((m) => m.type === "kernel_info_reply") && kernelIdle()
        && (!indicator || indicator.dataset.status === "idle")
        && performance.now() - last.t >= quietMs;
    },

    /** Whether every execute_request since message `since` has its reply, kernel idle. */
    runFinished: (since) => {
      const ms = messages.slice(since);
      const asked = ms.filter((m) => m.type === "execute_request").map((m) => m.id);
      const answered = new Set(ms.filter((m) => m.type === "execute_reply").map((m) => m.parent));
      return asked.length > 0 && asked.every((id) => answered.has(id)) && kernelIdle();
    },

    /** Requests, errors (with the first line of the cell), aborted cells, widget views. */
    runSummary: (since) => {
      const ms = messages.slice(since);
      const requests = ms.filter((m) => m.type === "execute_request");
      const code = Object.fromEntries(requests.map((m) => [m.id, m.code || ""]));
      const firstLine = (id) => JSON.stringify((code[id] || "").split("\n")[0].slice(0, 80));
      return {
        requests: requests.length,
        errors: ms.filter((m) => m.type === "error")
          .map((m) => `${m.ename}: ${m.evalue} (cell starting ${firstLine(m.parent)})`),
        unexecuted: ms.filter((m) => m.type === "execute_reply" && m.status === "aborted").length,
        widgetViews: ms.filter((m) => m.widgetView).length,
      };
    },

    /** When each explorer's figure canvas got its first picture (page ms; null if none yet). */
    firstPictures: () =>
      [...document.querySelectorAll(".attnlab-explorer")].map((root) => {
        const el = root.querySelector(`canvas.${FIGURE_CANVAS}`);
        return { name: name(root), at: el && firstDraws.has(el) ? firstDraws.get(el) : null };
      }),

    /** All explorers on the page with their sliders, in document order. */
    explorers: () =>
      [...document.querySelectorAll(".attnlab-explorer")].map((root, index) => ({
        index, name: name(root),
        sliders: [...root.querySelectorAll(SLIDER)].map(sliderInfo),
        hasFigure: Boolean(figure(root)),
        readouts: root.querySelectorAll(".attnlab-readout").length,
      })),

    /** What a learner sees of explorer i right now. */
    snapshot: (i) => {
      const root = explorer(i);
      const err = root.querySelector(".attnlab-error");
      return {
        frame: frameId(figure(root)),
        readouts: [...root.querySelectorAll(".attnlab-readout")].map((r) => r.textContent.trim()),
        error: err ? err.textContent.trim() : "",
        sliders: [...root.querySelectorAll(SLIDER)].map(sliderInfo),
      };
    },

    /** SHA-256 of explorer i's pixels (canvas) or of the bytes behind its image's blob: URL. */
    imageDigest: async (i) => {
      const el = figure(explorer(i));
      let bytes;
      if (el && isCanvas(el)) {
        if (!el.width || !el.height) return null;
        bytes = el.getContext("2d").getImageData(0, 0, el.width, el.height).data;
      } else {
        if (!el || !el.src) return null;
        bytes = await (await fetch(el.src)).arrayBuffer();
      }
      const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
    },

    /** Resolve once explorer i has had no DOM change for quietMs and the kernel is idle. */
    quiet: (i, quietMs, timeoutMs) =>
      new Promise((resolve) => {
        const root = explorer(i);
        const start = performance.now();
        let last = start;
        const observer = new MutationObserver(() => { last = performance.now(); });
        observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
        const tick = () => {
          const now = performance.now();
          const done = now - last >= quietMs && kernelIdle();
          if (done || now - start > timeoutMs) {
            observer.disconnect();
            resolve(done);
          } else {
            setTimeout(tick, 20);
          }
        };
        tick();
      }),

    /**
     * Start timing one step of explorer i: the next keydown (capture phase, on window) to the
     * frame painted after the step's *last* visible change in the explorer. Marks: `drawn`,
     * the first draw into its figure canvas (or the image's new src; for an image also `load`
     * and `decoded`); `last`, the last change of the step (a draw, or a DOM change anywhere
     * in the explorer: readout, error, the slider's own readout) with `lastKind` ("figure",
     * "readout", "slider", "other"); `paint`, the end of the frame that painted `last`.
     */
    arm: (i) => {
      const watch = watchExplorer(i);
      const el = figure(explorer(i));
      const before = frameId(el);
      const image = { drawn: null, load: null, decoded: null };  // an <img> figure's marks
      let stopImage = () => {};
      if (el && !isCanvas(el)) {
        const observer = new MutationObserver(() => {
          if (image.drawn !== null || el.getAttribute("src") === before) return;
          image.drawn = performance.now();
          observer.disconnect();
          el.addEventListener("load", () => { image.load = performance.now(); }, { once: true });
          el.decode()
            .catch(() => null)
            .then(() => {
              image.decoded = performance.now();
              watch.changed(image.decoded, "figure");
            });
        });
        observer.observe(el, { attributes: true, attributeFilter: ["src"] });
        stopImage = () => observer.disconnect();
      }
      // The marks as they stand: a canvas's first draw is its drawn, load and decoded.
      const marks = () => {
        const { rec } = watch;
        const draw = rec.changes.find((c) => c.kind === "figure");
        const first = el && isCanvas(el) ? (draw ? draw.t : null) : image.drawn;
        return {
          key: rec.keys.length ? rec.keys[0] : null,
          drawn: first,
          load: el && isCanvas(el) ? first : image.load,
          decoded: el && isCanvas(el) ? first : image.decoded,
          last: rec.last, lastKind: rec.lastKind, paint: rec.paint, changes: rec.changes.length,
        };
      };
      pending = { marks, cleanup: () => { watch.stop(); stopImage(); } };
    },

    /** Start watching explorer i for a burst of key presses on slider `slider`. */
    armBurst: (i, slider) => {
      const input = explorer(i).querySelectorAll(SLIDER)[slider].querySelector("input[type=range]");
      burst = { ...watchExplorer(i), input };
    },

    /**
     * Wait until the burst is over: the last value the page sent the kernel for the slider is
     * the value the slider shows (nothing left buffered by ipywidgets' throttle), the kernel
     * reported idle for that message, nothing in the explorer changed for settleMs, and the
     * frame showing the last change has been painted. Returns the key, input and change times,
     * the messages sent for the slider and whether the final value's message drew pixels.
     */
    collectBurst: async (timeoutMs, settleMs) => {
      const { rec, stop, input } = burst;
      burst = null;
      const start = performance.now();
      let outcome = null;
      let sent = [];
      let final = null;
      while (outcome === null) {
        const now = performance.now();
        const first = messages.find(
          (m) => m.dir === "out" && m.type === "comm_msg" && m.sentState && m.t >= rec.keys[0]);
        sent = first ? messages.filter((m) => m.dir === "out" && m.comm === first.comm
          && m.t >= rec.keys[0] && m.sentState) : [];
        const lastSent = sent[sent.length - 1];
        const value = lastSent ? Object.values(lastSent.sentState)[0] : null;
        const idle = lastSent && messages.find((m) => m.dir === "in" && m.type === "status"
          && m.state === "idle" && m.parent === lastSent.id);
        if (idle && Math.abs(Number(input.value) - value) < 1e-9
            && now - Math.max(idle.t, rec.last || 0) > settleMs && rec.paint !== null) {
          final = { sentAt: lastSent.t, idleAt: idle.t, value };
          outcome = "settled";
        } else if (now - start > timeoutMs) {
          outcome = "timeout";
        } else {
          await sleep(20);
        }
      }
      stop();
      const drewFinal = final !== null
        && rec.changes.some((c) => c.kind === "figure" && c.t > final.sentAt);
      return {
        outcome, keys: rec.keys, inputs: rec.inputs, last: rec.last, lastKind: rec.lastKind,
        paint: rec.paint, sent: sent.length, final, drewFinal, value: Number(input.value),
      };
    },

    /**
     * Wait for the armed step; returns its marks (page ms) and an outcome: "changed" (new
     * pixels painted), "unchanged" (the kernel finished handling the key, or nothing was sent,
     * and graceMs passed without a new image) or "timeout" (timeoutMs passed). A step with new
     * pixels is over once the kernel has handled it, nothing in the explorer has changed for
     * SETTLE_MS, and the frame showing the last change has been painted.
     */
    collect: async (timeoutMs, graceMs) => {
      const { cleanup } = pending;
      const current = pending.marks;
      pending = null;
      const SETTLE_MS = 150;
      let outcome = null;
      let marks = current();
      const start = performance.now();
      while (outcome === null) {
        const now = performance.now();
        marks = current();
        const handled = stepHandledAt(marks.key);
        const settled = handled !== null && now - Math.max(handled, marks.last || 0) > SETTLE_MS;
        if (marks.drawn !== null && settled && marks.paint !== null) outcome = "changed";
        else if (now - start > timeoutMs) outcome = "timeout";
        else if (marks.drawn === null && handled !== null && now - handled > graceMs) {
          outcome = "unchanged";
        } else await sleep(20);
      }
      cleanup();
      return { ...marks, outcome };
    },
  };
})();
