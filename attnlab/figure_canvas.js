// The browser half of attnlab.figure_canvas.FigureCanvas: a <canvas> that paints the raw
// RGBA tiles the kernel sends. No PNG to decode, no blob URL to load: each tile goes
// straight into the canvas with putImageData and shows on the next frame.
//
// Messages from the kernel: {kind: "tiles", width, height, rects: [[x, y, w, h], ...]} with
// one buffer holding the tiles' RGBA rows back to back, in the order of `rects`.
// Message to the kernel: {kind: "frame-please"}, asking for the whole current frame (sent
// by every new view, so a view never shows a stale picture).

function bytesOf(buffer) {
  if (buffer instanceof ArrayBuffer) return new Uint8ClampedArray(buffer);
  return new Uint8ClampedArray(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function render({ model, el }) {
  const canvas = document.createElement("canvas");
  canvas.className = "attnlab-figure";
  canvas.setAttribute("role", "img");
  const ctx = canvas.getContext("2d");
  let painted = false;

  function resize(width, height) {
    if (canvas.width === width && canvas.height === height) return;
    canvas.width = width;
    canvas.height = height;
    canvas.style.width = `${width}px`;
    canvas.style.maxWidth = "100%";
  }

  function describe() {
    canvas.setAttribute("aria-label", model.get("alt") || "figure");
  }

  function paintTiles(msg, buffers) {
    if (!msg || msg.kind !== "tiles" || !buffers || !buffers.length) return;
    resize(msg.width, msg.height);
    const data = bytesOf(buffers[0]);
    let offset = 0;
    for (const [x, y, w, h] of msg.rects) {
      const n = 4 * w * h;
      ctx.putImageData(new ImageData(data.subarray(offset, offset + n), w, h), x, y);
      offset += n;
    }
    painted = true;
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

  resize(model.get("width"), model.get("height"));
  describe();
  el.appendChild(canvas);
  model.on("msg:custom", paintTiles);
  model.on("change:alt", describe);
  paintInitial().catch((err) => console.error("attnlab: initial frame", err));
  model.send({ kind: "frame-please" });
  return () => {
    model.off("msg:custom", paintTiles);
    model.off("change:alt", describe);
  };
}

export default { render };
