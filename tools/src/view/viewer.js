// Supple's run viewer: raw WebGL2, no dependencies. Data: the JSON in #supple-data
// ({positions: [base64 per frame], frames: [{index, time, stats, lo, hi}], meta: {...}}), written
// by tools/src/view.rs. Z is up, units are metres. Little-endian typed arrays (every browser).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const stateEl = $("state");
  function setState(o) {
    for (const k in o) stateEl.dataset[k] = String(o[k]);
  }
  function fail(msg) {
    $("message").textContent = msg;
    setState({ error: msg });
  }
  window.addEventListener("error", (e) => fail("script error: " + e.message));

  const D = JSON.parse($("supple-data").textContent);
  const M = D.meta;
  const F = D.frames;

  // ---------------------------------------------------------------- decoding
  function bytes(s) {
    const bin = atob(s);
    const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u;
  }
  function u32s(s) {
    const b = bytes(s);
    return new Uint32Array(b.buffer, 0, b.length >> 2);
  }
  function positions(i) {
    const b = bytes(D.positions[i]);
    if (!M.quantized) return new Float32Array(b.buffer, 0, b.length >> 2);
    const q = new Uint16Array(b.buffer, 0, b.length >> 1);
    const lo = F[i].lo, hi = F[i].hi;
    const s = [0, 1, 2].map((k) => (hi[k] - lo[k]) / 65535);
    const x = new Float32Array(q.length);
    for (let j = 0; j < q.length; j += 3)
      for (let k = 0; k < 3; k++) x[j + k] = lo[k] + q[j + k] * s[k];
    return x;
  }
  const triangles = u32s(M.triangles);
  const curveLengths = u32s(M.curve_lengths);
  const curveVertices = u32s(M.curve_vertices);
  const vertexBody = u32s(M.vertex_body);
  const segments = [];
  for (let c = 0, o = 0; c < curveLengths.length; o += curveLengths[c], c++)
    for (let k = 1; k < curveLengths[c]; k++) segments.push(curveVertices[o + k - 1], curveVertices[o + k]);

  // ---------------------------------------------------------------- colours and text
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#edc948", "#17becf",
    "#ff9da7", "#9c755f", "#76b7b2"];
  const NO_BODY = "#9a9a9a";
  const rgb = (h) => [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16) / 255);
  const bodyColor = (b) => (b < M.bodies.length ? PALETTE[b % PALETTE.length] : NO_BODY);
  function fmt(v) {
    if (typeof v !== "number") return v === null ? "–" : String(v);
    if (Number.isInteger(v)) return String(v);
    const a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : v.toPrecision(4);
  }
  function flatten(o, prefix, out) {
    for (const k in o) {
      const v = o[k];
      if (v && typeof v === "object" && !Array.isArray(v)) flatten(v, prefix + k + ".", out);
      else out.push([prefix + k, v]);
    }
    return out;
  }
  function fillTable(el, rows) {
    el.textContent = "";
    for (const [k, v] of rows) {
      const tr = el.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = Array.isArray(v) ? v.map(fmt).join(", ") : fmt(v);
    }
  }
  function shapeText(c) {
    const s = c.shape, v3 = (a) => "(" + a.map(fmt).join(", ") + ")";
    let t = s.plane ? "plane n " + v3(s.plane.normal) + ", offset " + fmt(s.plane.offset) + " m"
      : s.sphere ? "sphere at " + v3(s.sphere.center) + ", r " + fmt(s.sphere.radius) + " m"
      : s.box ? "box " + v3(s.box.min) + "–" + v3(s.box.max) : "unknown shape";
    if (c.velocity && c.velocity.some((x) => x !== 0)) t += ", moving " + v3(c.velocity) + " m/s";
    if (c.angular_velocity && c.angular_velocity.some((x) => x !== 0)) t += ", spin " + v3(c.angular_velocity) + " rad/s";
    return t + ", friction " + fmt(c.friction || 0);
  }

  // ---------------------------------------------------------------- panel
  $("title").textContent = M.title;
  for (const n of M.notes) {
    const d = document.createElement("div");
    d.className = "note";
    d.textContent = n;
    $("notes").appendChild(d);
  }
  M.bodies.forEach((b, i) => {
    const d = document.createElement("div");
    d.innerHTML = '<span class="swatch"></span>';
    d.firstChild.style.background = bodyColor(i);
    d.appendChild(document.createTextNode(b.name + (b.model ? " (" + b.model + ")" : "")));
    $("bodies").appendChild(d);
  });
  if (M.colliders.length === 0) $("colliders").textContent = "none";
  M.colliders.forEach((c) => {
    const d = document.createElement("div");
    d.textContent = shapeText(c);
    $("colliders").appendChild(d);
  });
  fillTable($("summary"), flatten(M.summary, "", []).concat([
    ["frames shown", F.length], ["positions", M.quantized ? "16-bit (per-frame box)" : "32-bit float"]]));

  // ---------------------------------------------------------------- matrices (column-major)
  const V = {
    sub: (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]],
    add: (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
    mul: (a, s) => [a[0] * s, a[1] * s, a[2] * s],
    dot: (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
    cross: (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
    norm: (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; },
  };
  function mat(a, b) {
    const o = new Float32Array(16);
    for (let c = 0; c < 4; c++)
      for (let r = 0; r < 4; r++) {
        let s = 0;
        for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
        o[c * 4 + r] = s;
      }
    return o;
  }
  const identity = () => new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  function translateScale(t, s) {
    return new Float32Array([s[0], 0, 0, 0, 0, s[1], 0, 0, 0, 0, s[2], 0, t[0], t[1], t[2], 1]);
  }
  function rotation(axis, angle) {
    const [x, y, z] = V.norm(axis), c = Math.cos(angle), s = Math.sin(angle), t = 1 - c;
    return new Float32Array([t * x * x + c, t * x * y + s * z, t * x * z - s * y, 0,
      t * x * y - s * z, t * y * y + c, t * y * z + s * x, 0,
      t * x * z + s * y, t * y * z - s * x, t * z * z + c, 0, 0, 0, 0, 1]);
  }
  function lookAt(eye, target, up) {
    const f = V.norm(V.sub(target, eye)), s = V.norm(V.cross(f, up)), u = V.cross(s, f);
    return new Float32Array([s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0,
      -V.dot(s, eye), -V.dot(u, eye), V.dot(f, eye), 1]);
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0]);
  }

  // ---------------------------------------------------------------- frame selection
  let current = 0;
  function frameFromUrl() {
    const m = /(?:^|[#?&])frame=(last|\d+)/.exec(location.hash + "&" + location.search);
    if (!m) return 0;
    if (m[1] === "last") return F.length - 1;
    const want = Number(m[1]);
    let best = 0; // the last shown frame at or before the requested file frame
    F.forEach((f, i) => { if (f.index <= want) best = i; });
    return best;
  }
  const slider = $("slider");
  slider.max = String(F.length - 1);
  const timeText = (t) => (t === null || t === undefined ? "" : "t = " + t.toFixed(3) + " s");
  function showFrame(i) {
    current = Math.max(0, Math.min(F.length - 1, i));
    const f = F[current];
    slider.value = String(current);
    const label = "frame " + f.index + (f.time !== null ? " · " + timeText(f.time) : "");
    $("overlay").textContent = label;
    $("frameLabel").textContent = (current + 1) + " / " + F.length;
    const rows = f.stats && typeof f.stats === "object"
      ? flatten(f.stats, "", []).filter(([k]) => k !== "frame" && k !== "time") : [];
    fillTable($("stats"), [["frame", f.index], ["time (s)", f.time]].concat(rows));
    document.title = M.title + " · " + label + " (" + (current + 1) + "/" + F.length + ") · supple view";
    setState({ frame: current, frameIndex: f.index, frames: F.length, time: f.time === null ? "" : f.time });
    if (R) R.draw(current);
  }

  // ---------------------------------------------------------------- WebGL2 renderer
  let R = null;
  function makeRenderer(canvas) {
    const gl = canvas.getContext("webgl2", { antialias: true, preserveDrawingBuffer: true });
    if (!gl) return null;
    const VS = `#version 300 es
      in vec3 aPos; in vec3 aColor;
      uniform mat4 uModel, uView, uProj;
      out vec3 vView; out vec3 vColor;
      void main() { vec4 v = uView * (uModel * vec4(aPos, 1.0)); vView = v.xyz; vColor = aColor;
        gl_Position = uProj * v; }`;
    const FS = `#version 300 es
      precision highp float;
      in vec3 vView; in vec3 vColor; uniform float uLit; uniform float uAlpha; uniform float uTint;
      out vec4 outColor;
      void main() {
        vec3 c = vColor * uTint;
        if (uLit > 0.5) {
          vec3 n = normalize(cross(dFdx(vView), dFdy(vView)));
          if (n.z < 0.0) n = -n;  // two-sided: the side facing the camera
          float key = max(dot(n, normalize(vec3(0.35, 0.75, 0.55))), 0.0);
          c *= 0.45 + 0.35 * key + 0.3 * n.z;
        }
        outColor = vec4(c, uAlpha);
      }`;
    function shader(type, src) {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    }
    const prog = gl.createProgram();
    gl.attachShader(prog, shader(gl.VERTEX_SHADER, VS));
    gl.attachShader(prog, shader(gl.FRAGMENT_SHADER, FS));
    gl.bindAttribLocation(prog, 0, "aPos");
    gl.bindAttribLocation(prog, 1, "aColor");
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
    const U = {};
    for (const n of ["uModel", "uView", "uProj", "uLit", "uAlpha", "uTint"]) U[n] = gl.getUniformLocation(prog, n);

    // A mesh: positions, colours, triangle and line indices in one VAO.
    function mesh(pos, col, tris, lines, dynamic) {
      const vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      const pb = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, pb);
      gl.bufferData(gl.ARRAY_BUFFER, pos, dynamic ? gl.DYNAMIC_DRAW : gl.STATIC_DRAW);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
      const cb = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, cb);
      gl.bufferData(gl.ARRAY_BUFFER, col, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 0, 0);
      gl.bindVertexArray(null);
      const ib = (a) => {
        if (!a || a.length === 0) return null;
        const b = gl.createBuffer();
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, b);
        gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, a, gl.STATIC_DRAW);
        return { b, n: a.length };
      };
      return { vao, pb, tris: ib(tris), lines: ib(lines) };
    }
    function drawMesh(m, model, opts) {
      gl.bindVertexArray(m.vao);
      gl.uniformMatrix4fv(U.uModel, false, model);
      gl.uniform1f(U.uAlpha, opts.alpha === undefined ? 1 : opts.alpha);
      if (m.tris && opts.faces !== false) {
        gl.uniform1f(U.uLit, opts.lit === false ? 0 : 1);
        gl.uniform1f(U.uTint, 1);
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.tris.b);
        gl.drawElements(gl.TRIANGLES, m.tris.n, gl.UNSIGNED_INT, 0);
      }
      if (m.lines && opts.lines !== false) {
        gl.uniform1f(U.uLit, 0);
        gl.uniform1f(U.uTint, opts.lineTint === undefined ? 0.55 : opts.lineTint);
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.lines.b);
        gl.drawElements(gl.LINES, m.lines.n, gl.UNSIGNED_INT, 0);
      }
    }

    // Bodies: per-vertex body colours; positions replaced per frame.
    const nv = M.vertices;
    const bodyCol = new Float32Array(3 * nv);
    const cache = new Map();
    for (let v = 0; v < nv; v++) bodyCol.set(rgb(bodyColor(vertexBody[v])), 3 * v);
    const bodies = mesh(positions(0), bodyCol, triangles, new Uint32Array(segments), true);

    // Scene extent: the bodies' bounding box over all frames.
    const lo = M.lo, hi = M.hi;
    const center = V.mul(V.add(lo, hi), 0.5);
    const radius = Math.max(0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]), 1e-3);

    // Colliders in local coordinates; their model matrices follow the frame's time.
    const colliders = M.colliders.map((c) => {
      const s = c.shape;
      if (s.sphere) return { c, m: sphereMesh() };
      if (s.box) return { c, m: boxMesh() };
      if (s.plane) return { c, m: planeMesh(s.plane), plane: true };
      return null;
    }).filter((x) => x);
    function sphereMesh() {
      const P = [], C = [], T = [], L = [], nu = 32, nvv = 16;
      const a = rgb("#c9c2b4"), b = rgb("#9a9284");
      for (let j = 0; j <= nvv; j++)
        for (let i = 0; i <= nu; i++) {
          const th = (j / nvv) * Math.PI, ph = (i / nu) * 2 * Math.PI;
          P.push(Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th));
          C.push(...((Math.floor(i / 4) % 2) ? a : b)); // stripes show the spin
        }
      for (let j = 0; j < nvv; j++)
        for (let i = 0; i < nu; i++) {
          const k = j * (nu + 1) + i;
          T.push(k, k + nu + 1, k + 1, k + 1, k + nu + 1, k + nu + 2);
        }
      return mesh(new Float32Array(P), new Float32Array(C), new Uint32Array(T), new Uint32Array(L), false);
    }
    function boxMesh() {
      const P = [], C = [], T = [], L = [];
      for (let k = 0; k < 8; k++) { P.push(k & 1, (k >> 1) & 1, (k >> 2) & 1); C.push(...rgb("#bdb6a8")); }
      const faces = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
      for (const f of faces) T.push(f[0], f[1], f[2], f[0], f[2], f[3]);
      for (let k = 0; k < 8; k++) for (const bit of [1, 2, 4]) if (!(k & bit)) L.push(k, k | bit);
      return mesh(new Float32Array(P), new Float32Array(C), new Uint32Array(T), new Uint32Array(L), false);
    }
    function planeMesh(p) {
      // A square of the plane around the bodies, with a grid of round spacing.
      const n = V.norm(p.normal);
      const u = V.norm(Math.abs(n[2]) < 0.9 ? V.cross(n, [0, 0, 1]) : V.cross(n, [1, 0, 0])), w = V.cross(n, u);
      const o = V.add(V.sub(center, V.mul(n, V.dot(n, center))), V.mul(n, p.offset));
      const half = Math.max(3 * radius, 0.5);
      const step0 = half / 8, e = Math.pow(10, Math.floor(Math.log10(step0)));
      const step = [1, 2, 5, 10].map((m) => m * e).find((x) => x >= step0);
      const P = [], C = [], T = [0, 1, 2, 0, 2, 3], L = [];
      const at = (a, b) => V.add(o, V.add(V.mul(u, a), V.mul(w, b)));
      for (const [a, b] of [[-half, -half], [half, -half], [half, half], [-half, half]]) { P.push(...at(a, b)); C.push(...rgb("#d7dbe1")); }
      const g = Math.floor(half / step);
      for (let k = -g; k <= g; k++) {
        for (const [a0, b0, a1, b1] of [[k * step, -half, k * step, half], [-half, k * step, half, k * step]]) {
          L.push(P.length / 3, P.length / 3 + 1);
          P.push(...at(a0, b0), ...at(a1, b1));
          C.push(...rgb("#9aa3ae"), ...rgb("#9aa3ae"));
        }
      }
      return mesh(new Float32Array(P), new Float32Array(C), new Uint32Array(T), new Uint32Array(L), false);
    }
    function colliderModel(k, t) {
      const c = k.c, s = c.shape, d = V.mul(c.velocity || [0, 0, 0], t || 0);
      if (s.sphere) {
        const r = s.sphere.radius, w = c.angular_velocity || [0, 0, 0], rate = Math.hypot(w[0], w[1], w[2]);
        const m = translateScale(V.add(s.sphere.center, d), [r, r, r]);
        return rate > 0 ? mat(m, rotation(w, rate * (t || 0))) : m;
      }
      if (s.box) return translateScale(V.add(s.box.min, d), V.sub(s.box.max, s.box.min));
      return translateScale(d, [1, 1, 1]);
    }

    // Orbit camera around the bodies' centre, z up.
    const cam = {};
    function resetCamera() {
      cam.target = center.slice();
      cam.yaw = Math.atan2(-1.0, 0.55);
      cam.pitch = 0.42;
      cam.dist = radius / Math.sin(0.5 * 0.7) * 0.95;
    }
    resetCamera();
    function draw(i) {
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
      if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
      gl.viewport(0, 0, w, h);
      gl.clearColor(0.965, 0.969, 0.976, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      gl.useProgram(prog);
      const cp = Math.cos(cam.pitch);
      const eye = V.add(cam.target, V.mul([cp * Math.cos(cam.yaw), cp * Math.sin(cam.yaw), Math.sin(cam.pitch)], cam.dist));
      gl.uniformMatrix4fv(U.uView, false, lookAt(eye, cam.target, [0, 0, 1]));
      gl.uniformMatrix4fv(U.uProj, false, perspective(0.7, w / h, cam.dist * 0.01, cam.dist * 4 + 8 * radius));
      let x = cache.get(i);
      if (!x) { x = positions(i); cache.clear(); cache.set(i, x); }
      gl.bindBuffer(gl.ARRAY_BUFFER, bodies.pb);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, x);
      gl.disable(gl.BLEND);
      gl.depthMask(true);
      drawMesh(bodies, identity(), {});
      const t = F[i].time;
      for (const k of colliders) if (!k.plane) drawMesh(k.m, colliderModel(k, t), { lineTint: 0.7 });
      // Planes last, translucent over what lies behind them.
      gl.enable(gl.BLEND);
      gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
      gl.depthMask(false);
      for (const k of colliders) if (k.plane) {
        drawMesh(k.m, colliderModel(k, t), { lit: false, alpha: 0.6, lines: false });
        drawMesh(k.m, colliderModel(k, t), { faces: false, alpha: 0.8, lineTint: 1 });
      }
      gl.depthMask(true);
      gl.disable(gl.BLEND);
    }
    // Mouse: drag orbits, shift- or right-drag pans, wheel zooms, double-click resets.
    let drag = null;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointerup", () => { drag = null; });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) {
        const s = cam.dist * 0.0015, cy = Math.cos(cam.yaw), sy = Math.sin(cam.yaw);
        const right = [-sy, cy, 0], up = [-Math.sin(cam.pitch) * cy, -Math.sin(cam.pitch) * sy, Math.cos(cam.pitch)];
        cam.target = V.add(cam.target, V.add(V.mul(right, -dx * s), V.mul(up, dy * s)));
      } else {
        cam.yaw -= dx * 0.008;
        cam.pitch = Math.max(-1.55, Math.min(1.55, cam.pitch + dy * 0.008));
      }
      draw(current);
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      cam.dist *= Math.pow(1.0015, e.deltaY);
      draw(current);
    }, { passive: false });
    canvas.addEventListener("dblclick", () => { resetCamera(); draw(current); });
    window.addEventListener("resize", () => draw(current));
    return { draw, gl };
  }

  // ---------------------------------------------------------------- playback
  let playing = false, last = 0, acc = 0;
  function gap(i) {
    const a = F[i], b = F[i + 1];
    if (a.time !== null && b.time !== null && b.time > a.time) return b.time - a.time;
    return (M.frame_dt || 1 / 30) * Math.max(1, b.index - a.index);
  }
  function tick(now) {
    if (!playing) return;
    acc += ((now - last) / 1000) * Number($("speed").value);
    last = now;
    let i = current;
    while (acc > 0 && F.length > 1) {
      if (i >= F.length - 1) { i = 0; acc = 0; break; }
      const g = gap(i);
      if (acc < g) break;
      acc -= g;
      i++;
    }
    if (i !== current) showFrame(i);
    requestAnimationFrame(tick);
  }
  function setPlaying(p) {
    playing = p && F.length > 1;
    $("play").innerHTML = playing ? "&#10074;&#10074; pause" : "&#9654; play";
    setState({ playing: playing ? 1 : 0 });
    if (playing) { last = performance.now(); acc = 0; requestAnimationFrame(tick); }
  }
  $("play").addEventListener("click", () => setPlaying(!playing));
  slider.addEventListener("input", () => showFrame(Number(slider.value)));
  window.addEventListener("hashchange", () => showFrame(frameFromUrl()));
  window.addEventListener("keydown", (e) => {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") showFrame(current + 1);
    else if (e.key === "ArrowLeft") showFrame(current - 1);
    else if (e.key === " ") { e.preventDefault(); setPlaying(!playing); }
  });

  // ---------------------------------------------------------------- start
  try {
    R = makeRenderer($("gl"));
    if (!R) fail("WebGL2 is not available in this browser: the frames and statistics still work, the 3-D view does not.");
  } catch (e) {
    R = null;
    fail("WebGL2 setup failed: " + e.message);
  }
  setState({
    webgl2: R ? 1 : 0,
    triangles: triangles.length / 3,
    segments: segments.length / 2,
    vertices: M.vertices,
    bodies: M.bodies.length,
    colliders: M.colliders.length,
  });
  showFrame(frameFromUrl());
  setState({ ready: 1 });
})();
