// hotstart web page: runs an exported model in the browser with onnxruntime-web (WebAssembly).
// No framework and no build step. `preprocess` is the part that must equal Python: see its comment.
// In Node (the tests), this file is imported as a module for `preprocess` alone; the page code
// below runs only where there is a document.

/**
 * One image -> the model's input tensor data, a Float32Array of 1 x C x H x W.
 *
 * Mirrors `encode_image` in hotstart/contract/image_input.py (the model contract: the encoding every
 * runtime and training's inference encoding use: Image.to_pil, ProjectiveTransforms, ImagePreprocessing).
 * The browser test holds the two together.
 *  1. `rgba` is the decoded image drawn over white (alpha flattened onto white, as Image.to_pil);
 *  2. task.image_mode "L": Pillow's integer luminance (R*19595 + G*38470 + B*7471 + 0x8000) >> 16;
 *     "RGB": the three channels; "auto": L when the image is grey (R = G = B), else RGB;
 *  3. each channel resized to task.size (H, W) with `resizeUint8` (torchvision's antialiased
 *     bilinear on uint8, as the contract's resize_uint8);
 *  4. / 255, grey repeated to 3 channels or RGB reduced to luminance 0.299 R + 0.587 G + 0.114 B
 *     to match task.channels, then (x - mean) / std.
 *
 * @param {Uint8ClampedArray|Uint8Array} rgba  width * height * 4 bytes, row-major RGBA
 * @param {number} width
 * @param {number} height
 * @param {{size: number[], channels: number, image_mode: string, mean: number[], std: number[]}} task
 * @returns {Float32Array}
 */
export function preprocess(rgba, width, height, task) {
  const [outH, outW] = task.size;
  const n = width * height;
  let mode = task.image_mode || "auto";
  if (mode === "auto") {
    mode = "L";
    for (let j = 0; j < rgba.length; j += 4) {
      if (rgba[j] !== rgba[j + 1] || rgba[j] !== rgba[j + 2]) { mode = "RGB"; break; }
    }
  }
  let planes;
  if (mode === "L") {
    const l = new Uint8Array(n);
    for (let i = 0, j = 0; i < n; i++, j += 4) {
      l[i] = (rgba[j] * 19595 + rgba[j + 1] * 38470 + rgba[j + 2] * 7471 + 0x8000) >>> 16;
    }
    planes = [l];
  } else {
    planes = [0, 1, 2].map((c) => {
      const p = new Uint8Array(n);
      for (let i = 0, j = c; i < n; i++, j += 4) p[i] = rgba[j];
      return p;
    });
  }
  const hw = outH * outW;
  let x = planes.map((p) => {
    const r = resizeUint8(p, width, height, outW, outH);
    const f = new Float32Array(hw);
    for (let i = 0; i < hw; i++) f[i] = r[i] / 255;
    return f;
  });
  if (x.length !== task.channels) {
    if (task.channels === 3) {
      x = [x[0], x[0], x[0]];
    } else {
      const l = new Float32Array(hw);
      for (let i = 0; i < hw; i++) l[i] = x[0][i] * 0.299 + x[1][i] * 0.587 + x[2][i] * 0.114;
      x = [l];
    }
  }
  const out = new Float32Array(task.channels * hw);
  x.forEach((plane, c) => {
    const mean = task.mean[c], std = task.std[c];
    for (let i = 0; i < hw; i++) out[c * hw + i] = (plane[i] - mean) / std;
  });
  return out;
}

/** One 8-bit channel, width x height -> outW x outH: the horizontal pass first, then the vertical,
 * each rounded to 8 bits; a pass whose size does not change is skipped (as the contract's resize_uint8). */
export function resizeUint8(src, width, height, outW, outH) {
  let cur = src;
  if (outW !== width) {
    const { starts, fixed, taps, bits } = weights(width, outW);
    const next = new Uint8Array(outW * height);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < outW; x++) {
        let acc = 2 ** (bits - 1);
        for (let k = 0; k < taps; k++) {
          acc += cur[y * width + Math.min(starts[x] + k, width - 1)] * fixed[x * taps + k];
        }
        next[y * outW + x] = clip8(acc, bits);
      }
    }
    cur = next;
  }
  if (outH !== height) {
    const { starts, fixed, taps, bits } = weights(height, outH);
    const next = new Uint8Array(outW * outH);
    for (let y = 0; y < outH; y++) {
      for (let x = 0; x < outW; x++) {
        let acc = 2 ** (bits - 1);
        for (let k = 0; k < taps; k++) {
          acc += cur[Math.min(starts[y] + k, height - 1) * outW + x] * fixed[y * taps + k];
        }
        next[y * outW + x] = clip8(acc, bits);
      }
    }
    cur = next;
  }
  return cur;
}

/** Triangle-filter weights in fixed point, as the contract's resize.py (torch's uint8 kernel):
 * Pillow's float weights, scaled by the largest power of two that keeps them within int16. */
function weights(inSize, outSize) {
  const scale = inSize / outSize;
  const support = scale >= 1 ? scale : 1;
  const invscale = scale >= 1 ? 1 / scale : 1;
  const taps = Math.ceil(support) * 2 + 1;
  const starts = new Int32Array(outSize);
  const w = new Float64Array(outSize * taps);
  let wmax = 0;
  for (let i = 0; i < outSize; i++) {
    const center = scale * (i + 0.5);
    const lo = Math.max(Math.trunc(center - support + 0.5), 0);
    const hi = Math.min(Math.trunc(center + support + 0.5), inSize);
    let total = 0;
    for (let j = lo; j < hi; j++) {
      const v = Math.max(1 - Math.abs((j - center + 0.5) * invscale), 0);
      w[i * taps + j - lo] = v;
      total += v;
    }
    for (let j = lo; j < hi; j++) {
      if (total !== 0) w[i * taps + j - lo] /= total;
      wmax = Math.max(wmax, w[i * taps + j - lo]);
    }
    starts[i] = lo;
  }
  let bits = 0;
  while (bits < 22 && Math.trunc(0.5 + wmax * 2 ** (bits + 1)) < 2 ** 15) bits++;
  const fixed = new Float64Array(w.length);
  for (let k = 0; k < w.length; k++) {
    const s = w[k] * 2 ** bits;
    fixed[k] = s < 0 ? Math.trunc(s - 0.5) : Math.trunc(s + 0.5);
  }
  return { starts, fixed, taps, bits };
}

function clip8(acc, bits) {
  const v = Math.floor(acc / 2 ** bits); // an arithmetic shift right, as in the contract's resize.py
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/** Model outputs -> probabilities, with the activation the task names (as the contract's outputs.py does). */
export function activate(logits, activation) {
  const x = Array.from(logits);
  if (activation === "sigmoid") return x.map((v) => 1 / (1 + Math.exp(-v)));
  if (activation === "softmax") {
    const m = Math.max(...x);
    const e = x.map((v) => Math.exp(v - m));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / s);
  }
  return x;
}

// --- the page ------------------------------------------------------------------------------

if (typeof document !== "undefined") {
  main();
}

async function main() {
  const status = document.getElementById("status");
  const input = document.getElementById("files");
  const drop = document.getElementById("drop");
  const results = document.getElementById("results");
  const say = (text, isError = false) => {
    status.textContent = text;
    status.className = isError ? "error" : "";
  };

  if (typeof WebAssembly !== "object") {
    say("This browser has no WebAssembly, which the model needs. Try a current Chrome, Edge, Firefox or Safari.", true);
    input.disabled = true;
    return;
  }
  if (typeof ort === "undefined") {
    say("Could not load onnxruntime-web (the script that runs the model). Check the connection, or export with --vendor to serve it from this folder.", true);
    input.disabled = true;
    return;
  }
  const meta = document.querySelector('meta[name="hotstart-wasm-paths"]');
  if (meta && meta.content) ort.env.wasm.wasmPaths = meta.content;
  // Threads need cross-origin isolation (COOP/COEP headers), which static hosts rarely send.
  ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;

  let task, session;
  try {
    const response = await fetch("task.json");
    if (!response.ok) throw new Error(`task.json: HTTP ${response.status}`);
    task = await response.json();
    session = await ort.InferenceSession.create("model.onnx", { executionProviders: ["wasm"] });
  } catch (e) {
    say(`The model failed to load: ${e.message || e}`, true);
    input.disabled = true;
    document.body.dataset.state = "error";
    return;
  }
  say(`Ready: ${task.classes.length} classes, input ${task.size[0]}x${task.size[1]}. Pick or drop images.`);
  document.body.dataset.state = "ready";

  let queue = Promise.resolve();
  const handle = (files) => {
    queue = queue.then(async () => {
      for (const file of files) {
        await predictFile(file, task, session, results);
      }
      say(`Done: ${files.length} image${files.length === 1 ? "" : "s"}. Pick or drop more.`);
      document.body.dataset.done = String(Number(document.body.dataset.done || 0) + files.length);
    });
  };
  input.addEventListener("change", () => {
    const files = Array.from(input.files || []);
    input.value = ""; // picking the same file again fires another change
    if (files.length) handle(files);
  });
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const files = Array.from(e.dataTransfer.files || []);
    if (files.length) handle(files);
  });
}

async function predictFile(file, task, session, results) {
  const item = document.createElement("li");
  item.className = "result";
  item.dataset.file = file.name;
  results.prepend(item);
  try {
    const bitmap = await createImageBitmap(file, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
    const canvas = document.createElement("canvas");
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    ctx.fillStyle = "#fff"; // transparent pixels become white, as in hotstart's Image.to_pil
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(bitmap, 0, 0);
    const rgba = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const data = preprocess(rgba, canvas.width, canvas.height, task);
    const tensor = new ort.Tensor("float32", data, [1, task.channels, task.size[0], task.size[1]]);
    const t0 = performance.now();
    const output = await session.run({ [session.inputNames[0]]: tensor });
    const ms = performance.now() - t0;
    const probs = activate(output[session.outputNames[0]].data, task.activation);
    const top = probs.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    item.dataset.label = String(task.classes[top[0][1]]);
    item.dataset.prob = String(top[0][0]);
    item.dataset.ms = ms.toFixed(3);
    item.innerHTML = "";
    const img = document.createElement("img");
    img.src = canvas.toDataURL();
    img.alt = `${file.name}, predicted ${task.classes[top[0][1]]}`;
    const body = document.createElement("div");
    body.className = "body";
    const name = document.createElement("div");
    name.className = "name";
    name.textContent = file.name;
    body.append(name);
    for (const [p, i] of top) {
      const row = document.createElement("div");
      row.className = "bar";
      row.innerHTML = '<span class="label"></span><span class="track"><span class="fill"></span></span><span class="pct"></span>';
      row.querySelector(".label").textContent = String(task.classes[i]);
      row.querySelector(".fill").style.width = `${(100 * p).toFixed(1)}%`;
      row.querySelector(".pct").textContent = `${(100 * p).toFixed(1)}%`;
      row.setAttribute("role", "img");
      row.setAttribute("aria-label", `${task.classes[i]}: ${(100 * p).toFixed(1)} percent`);
      body.append(row);
    }
    const time = document.createElement("div");
    time.className = "time";
    time.textContent = `model: ${ms.toFixed(1)} ms`;
    body.append(time);
    item.append(img, body);
  } catch (e) {
    item.classList.add("error");
    item.dataset.error = "1";
    item.textContent = `${file.name}: could not be read as an image (${e.message || e}). Other images still work.`;
  }
}
