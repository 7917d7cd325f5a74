// report/timeline_view.js: the interactive step timeline of `reverie report`.
// Reads the JSON document of report/timeline_view.h from #tl-data and draws
// one step on a canvas inside #tl: the baseline's lanes above the selected
// prediction's, zoom (wheel, buttons), pan (drag), a tooltip per task, the
// critical path and, on demand, launch arrows. Embedded into the page at
// build time (report/embed_asset.cmake): no library, no URL, nothing fetched.
//
// A frame stays bounded at any zoom: each lane draws the coarsest
// decimation level whose resolution is under a pixel, and consecutive boxes
// of one colour less than a pixel apart, one of them narrower than a pixel,
// become one rectangle. window.reverieTimeline is the hook the browser test
// and the benchmark drive.
(function () {
  'use strict';
  const root = document.getElementById('tl'), src = document.getElementById('tl-data');
  if (!root || !src) return;
  const D = JSON.parse(src.textContent);

  const LABEL_W = 180, AXIS_H = 24, HEAD_H = 22, LANE_H = 14, ROW_H = 18;
  // By phase (unknown, forward, backward, update, data loading, other); the
  // light shade marks merged boxes less than half busy.
  const SOLID = ['#8c8c8c', '#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2'];
  const LIGHT = ['#cfcfcf', '#b3c6dc', '#f9cda3', '#b5d6b0', '#dcc6d8', '#c4e1de'];
  const PATH = '#d62728', ARROW = 'rgba(60,60,60,0.55)';

  const S = {
    step: D.open_step, pred: D.runs.length > 1 ? D.runs.length - 1 : -1,
    t0: 0, nsPerPx: 1, path: true, arrows: false, decimate: true,
  };
  let groups = [], stats = {}, cssW = 0, cssH = 0, plotW = 1, drag = null, pending = false;

  // ---- formatting ----
  function fmtTime(ns) {
    const a = Math.abs(ns);
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns.toFixed(0) + ' ns';
  }
  function fmtUs(ns) { return (ns / 1e3).toFixed(3) + ' us'; }

  // ---- data ----
  function prefix(deltas) {
    const a = new Float64Array(deltas.length);
    let acc = 0;
    for (let i = 0; i < deltas.length; i++) { acc += deltas[i]; a[i] = acc; }
    return a;
  }
  function runningEnd(starts, widths) {
    const e = new Float64Array(starts.length);
    let m = -Infinity;
    for (let i = 0; i < starts.length; i++) { m = Math.max(m, starts[i] + widths[i]); e[i] = m; }
    return e;
  }
  // First index whose running end is >= t: every earlier box ends before t.
  function firstEnding(E, t) {
    let lo = 0, hi = E.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (E[mid] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function decode(V) {
    if (V.ready) return V;
    for (const L of V.lanes) {
      L.S = prefix(L.s); L.W = Float64Array.from(L.d); L.E = runningEnd(L.S, L.W);
      L.crit = new Uint8Array(L.S.length);
      for (const lv of L.levels) { lv.S = prefix(lv.s); lv.W = Float64Array.from(lv.w); lv.E = runningEnd(lv.S, lv.W); }
    }
    for (let i = 0; i < V.path.length; i += 2) V.lanes[V.path[i]].crit[V.path[i + 1]] = 1;
    V.ready = true;
    return V;
  }
  function viewOf(run) {
    const v = run >= 0 ? D.steps[S.step].views[run] : -1;
    return v >= 0 ? decode(D.views[v]) : null;
  }

  // ---- page ----
  root.textContent = '';
  const bar = el('div', 'tl-bar'), canvas = el('canvas'), tip = el('div');
  tip.id = 'tl-tip';
  const ctx = canvas.getContext('2d');
  const stepSel = el('select'), predSel = el('select');
  D.steps.forEach((st, i) => {
    const o = el('option');
    o.value = i;
    o.textContent = st.label + ' · ' + fmtTime(D.runs[0].step_ns[i]) + (st.counted ? '' : ' (not counted)') +
        (st.views[0] < 0 ? ' (not embedded: --timeline-step ' + i + ')' : '');
    o.disabled = st.views[0] < 0;
    stepSel.appendChild(o);
  });
  stepSel.value = S.step;
  stepSel.title = 'step';
  for (let r = 1; r < D.runs.length; r++) {
    const o = el('option');
    o.value = r; o.textContent = D.runs[r].label;
    predSel.appendChild(o);
  }
  predSel.value = S.pred;
  predSel.title = 'predicted run';
  stepSel.onchange = () => { S.step = +stepSel.value; layout(); fit(); };
  predSel.onchange = () => { S.pred = +predSel.value; layout(); fit(); };
  bar.append(label('step ', stepSel));
  if (D.runs.length > 1) bar.append(label('prediction ', predSel));
  bar.append(button('+', 'zoom in', () => zoomAt(plotW / 2, 2)),
             button('\u2212', 'zoom out', () => zoomAt(plotW / 2, 0.5)),
             button('fit step', 'show the whole step', fit),
             check('critical path', 'path', true), check('launch arrows', 'arrows', false),
             check('merge sub-pixel tasks', 'decimate', true));
  const legend = el('span', 'tl-legend');
  D.phases.forEach((p, i) => { const sw = el('i'); sw.style.background = SOLID[i]; legend.append(sw, p); });
  const sw = el('i'); sw.style.border = '2px solid ' + PATH; legend.append(sw, 'critical path');
  const status = el('span', 'tl-status');
  bar.append(legend, status);
  root.append(bar, canvas, tip);

  function el(tag, cls) { const e = document.createElement(tag); if (cls) e.className = cls; return e; }
  function label(text, child) { const l = el('label'); l.append(text, child); return l; }
  function button(text, title, fn) { const b = el('button'); b.textContent = text; b.title = title; b.onclick = fn; return b; }
  function check(text, key, on) {
    const c = el('input');
    c.type = 'checkbox'; c.checked = on; c.dataset.key = key;
    c.onchange = () => { S[key] = c.checked; request(); };
    return label(text + ' ', c);
  }

  // ---- layout and view range ----
  function layout() {
    groups = [];
    let y = AXIS_H;
    const runs = [0].concat(S.pred > 0 ? [S.pred] : []);
    for (const run of runs) {
      const V = viewOf(run);
      const g = { run: run, V: V, y: y, lanes: [] };
      y += HEAD_H;
      if (V) for (const L of V.lanes) { g.lanes.push({ L: L, y: y }); y += ROW_H; }
      groups.push(g);
    }
    cssW = Math.max(400, root.clientWidth);
    cssH = y + 6;
    plotW = cssW - LABEL_W;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(cssW * dpr); canvas.height = Math.round(cssH * dpr);
    canvas.style.width = cssW + 'px'; canvas.style.height = cssH + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  function span() {
    let m = 0;
    for (const g of groups) if (g.V) m = Math.max(m, g.V.span);
    return m > 0 ? m : 1000;
  }
  function fit() {
    const s = span();
    S.nsPerPx = 1.04 * s / plotW; S.t0 = -0.02 * s;
    request();
  }
  function zoomAt(x, factor) {
    const t = S.t0 + x * S.nsPerPx;
    S.nsPerPx = Math.min(Math.max(S.nsPerPx / factor, 0.01), 8 * span() / plotW);
    S.t0 = t - x * S.nsPerPx;
    request();
  }
  function request() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  // ---- drawing ----
  function draw() {
    const t = performance.now();
    stats = { rects: 0, boxes: 0, path: 0, arrows: 0 };
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, 0, plotW, cssH); ctx.clip();
    drawAxis();
    for (const g of groups) {
      for (const R of g.lanes) drawLane(R.L, R.y + 2);
      if (g.V) drawStepEnd(g);
      if (g.V && S.path) drawPath(g);
      if (g.V && S.arrows) drawArrows(g);
    }
    ctx.restore();
    drawLabels();
    stats.frameMs = performance.now() - t;
    status.textContent = stats.rects + ' rectangles for ' + stats.boxes + ' boxes, ' + stats.frameMs.toFixed(1) + ' ms';
  }
  const X = (t) => LABEL_W + (t - S.t0) / S.nsPerPx;
  const clampX = (x) => Math.min(Math.max(x, LABEL_W - 2), cssW + 2);

  function drawAxis() {
    const raw = 90 * S.nsPerPx, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = raw / p < 2 ? 2 * p : raw / p < 5 ? 5 * p : 10 * p;
    ctx.fillStyle = '#444'; ctx.font = '11px sans-serif'; ctx.strokeStyle = '#e4e4e4'; ctx.lineWidth = 1;
    ctx.beginPath();
    for (let t = Math.ceil(S.t0 / step) * step; X(t) < cssW; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.moveTo(x, AXIS_H - 6); ctx.lineTo(x, cssH);
      const text = fmtTime(t);
      if (x + 3 + ctx.measureText(text).width <= cssW) ctx.fillText(text, x + 3, 12);
    }
    ctx.stroke();
  }
  function drawLane(L, y) {
    let lv = null;
    if (S.decimate) for (const v of L.levels) if (v.r <= S.nsPerPx) lv = v;
    const Sa = lv ? lv.S : L.S, Wa = lv ? lv.W : L.W, n = Sa.length;
    const inv = 1 / S.nsPerPx, t1 = S.t0 + plotW * S.nsPerPx;
    let pc = '', px0 = 0, px1 = 0, pNarrow = false;
    const flush = () => {
      if (!pc) return;
      ctx.fillStyle = pc;
      const a = clampX(px0), b = clampX(px1);
      ctx.fillRect(a, y, b - a, LANE_H);
      stats.rects++;
    };
    for (let i = firstEnding(lv ? lv.E : L.E, S.t0); i < n && Sa[i] <= t1; i++) {
      stats.boxes++;
      const ph = (lv ? lv.k[i] : L.k[i]) & 7;
      const col = lv && 2 * lv.b[i] < Wa[i] ? LIGHT[ph] : SOLID[ph];
      const w = Wa[i] * inv, a = X(Sa[i]), narrow = w < 1, b = a + (narrow ? 1 : w);
      if (S.decimate && col === pc && a - px1 < 1 && (narrow || pNarrow)) {
        if (b > px1) px1 = b;
        pNarrow = px1 - px0 < 1;
        continue;
      }
      flush();
      pc = col; px0 = a; px1 = b; pNarrow = narrow;
    }
    flush();
  }
  function drawStepEnd(g) {
    const x = Math.round(X(g.V.span)) + 0.5, y1 = g.lanes.length ? g.lanes[g.lanes.length - 1].y + ROW_H : g.y + HEAD_H;
    ctx.strokeStyle = '#333'; ctx.setLineDash([4, 3]);
    ctx.beginPath(); ctx.moveTo(x, g.y); ctx.lineTo(x, y1); ctx.moveTo(X(0), g.y); ctx.lineTo(X(0), y1); ctx.stroke();
    ctx.setLineDash([]);
  }
  // Clips a segment to the plot into c (the canvas rasterises a line a
  // million pixels long slowly even where it is invisible); false when it
  // misses the plot.
  function clip(c, x0, y0, x1, y1) {
    const lo = LABEL_W - 4, hi = cssW + 4;
    if (Math.max(x0, x1) < lo || Math.min(x0, x1) > hi) return false;
    const at = (x) => y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    if (x0 < lo) { y0 = at(lo); x0 = lo; } else if (x0 > hi) { y0 = at(hi); x0 = hi; }
    if (x1 < lo) { y1 = at(lo); x1 = lo; } else if (x1 > hi) { y1 = at(hi); x1 = hi; }
    c[0] = x0; c[1] = y0; c[2] = x1; c[3] = y1;
    return true;
  }
  // Adds clipped segments to the path, skipping, when decimating, one that
  // covers the same pixels as the last one added between the same two
  // lanes: zoomed out, thousands of arrows or path links collapse onto a
  // few hundred.
  function segmenter(lanes) {
    const last = new Float64Array(lanes * lanes * 4).fill(-1), c = new Float64Array(4);
    return (la, lb, x0, y0, x1, y1) => {
      if (!clip(c, x0, y0, x1, y1)) return false;
      if (S.decimate) {
        const k = 4 * (la * lanes + lb);
        let same = true;
        for (let j = 0; j < 4; j++) {
          const r = Math.round(c[j]);
          if (last[k + j] !== r) { same = false; last[k + j] = r; }
        }
        if (same) return false;
      }
      ctx.moveTo(c[0], c[1]); ctx.lineTo(c[2], c[3]);
      return true;
    };
  }
  function drawPath(g) {
    const P = g.V.path, inv = 1 / S.nsPerPx, line = segmenter(g.lanes.length);
    const boxes = [], open = [];  // by lane: its last box, still growing
    let prev = null;
    ctx.strokeStyle = PATH; ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < P.length; i += 2) {
      const R = g.lanes[P[i]], L = R.L, k = P[i + 1];
      const a = X(L.S[k]), b = a + Math.max(L.W[k] * inv, 2), y = R.y + 2;
      // Links show where the path changes lanes; along a lane the outlines do.
      if (prev && prev.lane !== P[i]) line(prev.lane, P[i], prev.b, prev.y + LANE_H / 2, a, y + LANE_H / 2);
      prev = { lane: P[i], b: b, y: y };
      const box = open[P[i]];
      // Path tasks of one lane less than 2 px apart share one outline.
      if (S.decimate && box && a - box.b < 2) { box.b = Math.max(box.b, b); continue; }
      const nb = { a: a, b: b, y: y };
      boxes.push(nb); open[P[i]] = nb;
    }
    for (const bx of boxes) {
      if (bx.b < LABEL_W || bx.a > cssW) continue;
      const a = clampX(bx.a), b = clampX(bx.b);
      ctx.rect(a, bx.y - 1, b - a, LANE_H + 2);
      stats.path++;
    }
    ctx.stroke();
  }
  function drawArrows(g) {
    const A = g.V.launch, line = segmenter(g.lanes.length);
    ctx.strokeStyle = ARROW; ctx.fillStyle = ARROW; ctx.lineWidth = 1;
    const heads = [];
    ctx.beginPath();
    for (let i = 0; i < A.length; i += 4) {
      const c = g.lanes[A[i]], k = g.lanes[A[i + 2]];
      const x0 = X(c.L.S[A[i + 1]]), x1 = X(k.L.S[A[i + 3]]);
      // An arrow is drawn when its call or its task is in view; one whose
      // other end is out of view is a stub at most 40 px wide towards it.
      const in0 = x0 >= LABEL_W && x0 <= cssW, in1 = x1 >= LABEL_W && x1 <= cssW;
      if (!(in0 || in1)) continue;
      const dx = Math.min(Math.max(x1 - x0, -40), 40), y0 = c.y + 2 + LANE_H, y1 = k.y + 2;
      if (!line(A[i], A[i + 2], in0 ? x0 : x1 - dx, y0, in1 ? x1 : x0 + dx, y1)) continue;
      if (in1) heads.push(x1, y1, y1 > y0 ? -1 : 1);
      stats.arrows++;
    }
    ctx.stroke();
    if (heads.length > 6000) return;
    ctx.beginPath();
    for (let i = 0; i < heads.length; i += 3) {
      const x = heads[i], y = heads[i + 1], d = heads[i + 2];
      ctx.moveTo(x, y); ctx.lineTo(x - 3, y + 5 * d); ctx.lineTo(x + 3, y + 5 * d); ctx.closePath();
    }
    ctx.fill();
  }
  function drawLabels() {
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, LABEL_W, cssH);
    ctx.font = '11px sans-serif';
    for (const g of groups) {
      ctx.fillStyle = '#f3f3f3'; ctx.fillRect(0, g.y, cssW, HEAD_H - 2);
      ctx.fillStyle = '#222'; ctx.font = 'bold 12px sans-serif';
      const ns = D.runs[g.run].step_ns[S.step];
      const head = (g.run === 0 ? '' : 'predicted: ') + D.runs[g.run].label + ' · ' +
          D.steps[S.step].label + (ns === undefined ? '' : ' · ' + fmtTime(ns)) +
          (g.V ? '' : ' (not embedded)');
      ctx.fillText(head, 6, g.y + 15);
      ctx.font = '11px sans-serif'; ctx.fillStyle = '#333';
      for (const R of g.lanes) ctx.fillText(fitText(R.L.name, LABEL_W - 10), 6, R.y + 13);
    }
  }
  function fitText(s, w) {
    if (ctx.measureText(s).width <= w) return s;
    while (s.length > 1 && ctx.measureText(s + '\u2026').width > w) s = s.slice(0, -1);
    return s + '\u2026';
  }

  // ---- hover ----
  function hit(x, y) {
    if (x < LABEL_W) return null;
    for (let gi = 0; gi < groups.length; gi++) {
      for (let li = 0; li < groups[gi].lanes.length; li++) {
        const R = groups[gi].lanes[li];
        if (y < R.y || y >= R.y + ROW_H) continue;
        const L = R.L, t = S.t0 + (x - LABEL_W) * S.nsPerPx, tol = 3 * S.nsPerPx;
        let best = -1, bestD = Infinity, under = 0;
        for (let i = firstEnding(L.E, t - tol), seen = 0; i < L.S.length && L.S[i] <= t + tol && seen < 20000; i++, seen++) {
          const s = L.S[i], e = s + L.W[i];
          const d = t < s ? s - t : t > e ? t - e : 0;
          if (d <= 0.5 * S.nsPerPx) under++;
          if (d < bestD) { bestD = d; best = i; }
        }
        return best < 0 ? null : { g: gi, lane: li, i: best, more: Math.max(0, under - 1) };
      }
    }
    return null;
  }
  function tipText(h) {
    const g = groups[h.g], L = g.lanes[h.lane].L, i = h.i, k = L.k[i];
    const lines = [D.names[L.n[i]],
      'layer: ' + (L.l[i] ? D.layers[L.l[i]] : '(none)'),
      'phase: ' + D.phases[k & 7] + ' · kind: ' + D.kinds[k >> 3],
      'duration: ' + fmtUs(L.W[i]) + ' · start: ' + fmtUs(L.S[i]) + ' into the step',
      (g.run === 0 ? 'baseline' : 'predicted: ' + D.runs[g.run].label) + ' · ' + L.name];
    if (L.crit[i]) lines.push('on the critical path');
    if (h.more) lines.push(h.more + ' more task' + (h.more > 1 ? 's' : '') + ' under the cursor: zoom in');
    return lines.join('\n');
  }
  function hover(cx, cy) {
    const r = canvas.getBoundingClientRect(), h = hit(cx - r.left, cy - r.top);
    if (!h) { tip.style.display = 'none'; return null; }
    tip.textContent = tipText(h);
    tip.style.display = 'block';
    const w = tip.offsetWidth, hh = tip.offsetHeight;
    tip.style.left = Math.max(0, Math.min(cx + 14, window.innerWidth - w - 4)) + 'px';
    tip.style.top = (cy + 14 + hh > window.innerHeight ? cy - hh - 8 : cy + 14) + 'px';
    return h;
  }

  // ---- input ----
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    const x = e.clientX - canvas.getBoundingClientRect().left - LABEL_W;
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      S.t0 += (e.deltaX || e.deltaY) * unit * S.nsPerPx; request();
    } else {
      zoomAt(Math.max(0, x), Math.exp(-e.deltaY * unit * 0.002));
    }
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, t0: S.t0 };
    canvas.classList.add('tl-grab'); tip.style.display = 'none';
    e.preventDefault();
  });
  window.addEventListener('mousemove', (e) => {
    if (drag) { S.t0 = drag.t0 - (e.clientX - drag.x) * S.nsPerPx; request(); return; }
    if (e.target === canvas) hover(e.clientX, e.clientY); else tip.style.display = 'none';
  });
  window.addEventListener('mouseup', () => { drag = null; canvas.classList.remove('tl-grab'); });
  canvas.addEventListener('mouseleave', () => { if (!drag) tip.style.display = 'none'; });
  window.addEventListener('resize', () => { const c = S.t0 + plotW * S.nsPerPx / 2; layout(); S.t0 = c - plotW * S.nsPerPx / 2; request(); });

  layout();
  fit();
  const loadMs = performance.now();

  // ---- test and benchmark hook ----
  window.reverieTimeline = {
    state() {
      const r = canvas.getBoundingClientRect();
      return { loadMs: loadMs, step: S.step, pred: S.pred, t0: S.t0, t1: S.t0 + plotW * S.nsPerPx, nsPerPx: S.nsPerPx,
               plotLeft: r.left + LABEL_W, plotRight: r.left + cssW, top: r.top,
               lanes: groups.map((g) => g.lanes.length), stats: stats };
    },
    // Client coordinates of task `index` of lane `lane` in group `group`
    // (0 = baseline), after scrolling its row into the window.
    locate(group, lane, index) {
      const R = groups[group].lanes[lane];
      const r0 = canvas.getBoundingClientRect();
      window.scrollBy(0, r0.top + R.y - window.innerHeight / 2);
      const r = canvas.getBoundingClientRect(), L = R.L;
      return { x: r.left + X(L.S[index] + L.W[index] / 2), y: r.top + R.y + 2 + LANE_H / 2,
               width: L.W[index] / S.nsPerPx };
    },
    zoomTo(t0, t1) { S.t0 = t0; S.nsPerPx = (t1 - t0) / plotW; draw(); },
    draw() { draw(); return stats; },
    // Mean time of up to o.frames frames (at least 2, at most a second's
    // worth; rasterisation included: each reads a pixel back) at o.zoom
    // times the whole-step view, centred, with the overlays and decimation
    // o asks for; the settings are restored after.
    bench(o) {
      const keep = Object.assign({}, S);
      fit(); zoomAt(plotW / 2, o.zoom);
      S.decimate = o.decimate; S.path = o.path; S.arrows = o.arrows;
      draw(); ctx.getImageData(LABEL_W, AXIS_H, 1, 1);
      const t = performance.now();
      let n = 0;
      while (n < o.frames && (n < 2 || performance.now() - t < 1000)) {
        draw(); ctx.getImageData(LABEL_W + n % 7, AXIS_H, 1, 1); n++;
      }
      const out = Object.assign({ msPerFrame: (performance.now() - t) / n, frames: n }, stats);
      Object.assign(S, keep);
      draw();
      return out;
    },
  };
})();
