// Calibration panel (docs/calibration.md, docs/inspector.md): polls GET /api/calibrations once a
// second (every 10 s while the configuration has none) and shows, per calibration, its state, the progress of the motion ("move the object:
// yaw ✓ pitch ✗ roll ✗"), the result (transform, object offset, time offset, residuals) and
// start / reset buttons (POST), and both spaces: a top view of the reference's and the target's
// paths over the last 10 s (from the inspector's state frames), apart before the calibration and
// on top of each other (up to the object offset X) after it. Hidden while the configuration has
// no calibrations.
const AXES = ['yaw', 'pitch', 'roll'];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// rotation angle (deg) and axis of a unit quaternion [x, y, z, w]
function axisAngle(q) {
  const w = Math.min(1, Math.abs(q[3]));
  const s = Math.sqrt(Math.max(0, 1 - w * w)) || 1;
  const sign = q[3] < 0 ? -1 : 1;
  return { deg: 2 * Math.acos(w) * 180 / Math.PI, axis: q.slice(0, 3).map((c) => sign * c / s) };
}

function xfText(x) {
  if (!x) return '—';
  const p = x.position.map((v) => v.toFixed(3)).join(', ');
  const r = axisAngle(x.orientation);
  return `[${p}] m, ${r.deg.toFixed(2)}° about [${r.axis.map((v) => v.toFixed(2)).join(', ')}]`;
}

const TRAIL_S = 10;

// top view (x right, z down the canvas) of the two paths, one scale for both
function drawTrails(canvas, trails) {
  const g = canvas.getContext('2d');
  const W = canvas.width, H = canvas.height;
  g.clearRect(0, 0, W, H);
  const pts = trails.flatMap((t) => t.points);
  if (!pts.length) {
    g.fillStyle = '#888';
    g.fillText('no poses of the two entities yet', 8, H / 2);
    return;
  }
  let x0 = Math.min(...pts.map((p) => p.x)), x1 = Math.max(...pts.map((p) => p.x));
  let z0 = Math.min(...pts.map((p) => p.z)), z1 = Math.max(...pts.map((p) => p.z));
  const span = Math.max(x1 - x0, z1 - z0, 0.2) * 1.15;
  const cx = (x0 + x1) / 2, cz = (z0 + z1) / 2, k = Math.min(W, H) / span;
  g.lineWidth = 2;
  for (const t of trails) {
    g.strokeStyle = t.color;
    g.beginPath();
    t.points.forEach((p, i) => {
      const u = W / 2 + (p.x - cx) * k, v = H / 2 + (p.z - cz) * k;
      if (i) g.lineTo(u, v); else g.moveTo(u, v);
    });
    g.stroke();
  }
  g.fillStyle = '#888';
  g.fillText(`top view, ${span.toFixed(2)} m across`, 4, H - 4);
}

export function createCalibPanel(doc, token, inspector) {
  const box = doc.getElementById('calibrations');
  const head = doc.getElementById('calib-head');
  const panel = { list: null, error: null, polls: 0, trails: new Map(), canvases: new Map() };

  // the two entities' positions from the newest state frame, ten times a second
  setInterval(() => {
    const st = inspector && inspector.last;
    if (!st || !panel.list) return;
    const now = performance.now() / 1000;
    for (const c of panel.list) {
      for (const name of [c.reference, c.target]) {
        const e = st.entities.find((x) => x.name === name);
        const t = panel.trails.get(name) || [];
        if (e) t.push({ t: now, x: e.position[0], z: e.position[2] });
        while (t.length && t[0].t < now - TRAIL_S) t.shift();
        panel.trails.set(name, t);
      }
      const cv = panel.canvases.get(c.name);
      if (cv) drawTrails(cv, [{ color: '#2a7', points: panel.trails.get(c.reference) },
                              { color: '#d70', points: panel.trails.get(c.target) }]);
    }
  }, 100);
  const headers = token ? { Authorization: 'Bearer ' + token } : {};

  function row(label, value) {
    const r = el('div', 'calib-row');
    r.append(el('span', 'calib-label', label), el('span', 'calib-value', value));
    return r;
  }

  async function post(name, verb) {
    try {
      await fetch(`/api/calibrations/${encodeURIComponent(name)}/${verb}`,
        { method: 'POST', headers });
    } catch (e) { panel.error = String(e); }
    poll();
  }

  function render() {
    const list = panel.list || [];
    box.hidden = head.hidden = list.length === 0;
    box.replaceChildren();
    for (const name of panel.canvases.keys())
      if (!list.some((c) => c.name === name)) panel.canvases.delete(name);
    for (const c of list) {
      const card = el('div', 'calib-card');
      card.dataset.name = c.name;
      card.dataset.state = c.state;
      const title = el('div', 'calib-title');
      title.append(el('b', '', c.name), el('span', 'calib-state calib-' + c.state, c.state),
        el('span', 'calib-ents', `${c.reference} ↔ ${c.target} (moves ${c.apply_to}, ${c.mode})`));
      card.append(title);
      const obs = c.observability;
      const prog = el('div', 'calib-progress');
      prog.append(el('span', '', c.collecting ? 'move the object:' : 'motion seen:'));
      for (const a of AXES) {
        const ax = obs.axes[a];
        const s = el('span', 'calib-axis ' + (ax.ok ? 'ok' : 'missing'),
          `${a} ${ax.ok ? '✓' : '✗'}`);
        s.title = `${ax.spread_deg.toFixed(1)}° of ${obs.needed_spread_deg}° RMS rotation about ${a}`;
        const bar = el('span', 'calib-bar');
        bar.style.setProperty('--p', String(ax.progress));
        s.append(bar);
        prog.append(s);
      }
      card.append(prog);
      if (c.collecting) {
        const k = c.collected;
        card.append(row('collected', `${k.reference_s.toFixed(1)} s / ${k.target_s.toFixed(1)} s ` +
          `of ${k.needed_s} s (reference / target)`));
      }
      if (c.message) card.append(row('last attempt', c.message));
      if (c.transform) {
        card.append(row('transform Y', xfText(c.transform)));
        card.append(row('object offset X', xfText(c.object_offset)));
        card.append(row('time offset', `${c.time_offset_ms.toFixed(1)} ms`));
        card.append(row('residual', `${c.residual_mm.toFixed(2)} mm, ${c.residual_deg.toFixed(3)}° ` +
          `(${c.pairs} pairs)`));
      }
      if (c.drift) {
        card.append(row('drift check', `${c.drift.residual_mm.toFixed(2)} mm, ` +
          `${c.drift.residual_deg.toFixed(3)}° (limits ${c.drift.limit_mm} mm, ` +
          `${c.drift.limit_deg}°; ${c.drift.detected} drifts)`));
      }
      const fig = el('figure', 'calib-spaces');
      // the same canvas across renders: a new one would stay blank until the next trail tick
      let cv = panel.canvases.get(c.name);
      if (!cv) {
        cv = el('canvas');
        cv.width = 300;
        cv.height = 130;
        panel.canvases.set(c.name, cv);
        drawTrails(cv, [{ color: '#2a7', points: panel.trails.get(c.reference) || [] },
                        { color: '#d70', points: panel.trails.get(c.target) || [] }]);
      }
      const cap = el('figcaption');
      cap.append(el('span', 'calib-ref', c.reference), ' and ', el('span', 'calib-tgt', c.target),
        `, last ${TRAIL_S} s: ` + (c.applied ? 'after (target moved into the reference space)'
                                             : 'before (each in its own space)'));
      fig.append(cap, cv);
      card.append(fig);
      const buttons = el('div', 'calib-buttons');
      const start = el('button', '', 'start');
      start.title = 'Collect and solve again (the result in force stays applied until then)';
      start.onclick = () => post(c.name, 'start');
      const reset = el('button', '', 'reset');
      reset.title = 'Forget the result: nothing applied, collect again';
      reset.onclick = () => post(c.name, 'reset');
      buttons.append(start, reset);
      card.append(buttons);
      box.append(card);
    }
  }

  async function poll() {
    try {
      const r = await fetch('/api/calibrations', { headers, cache: 'no-store' });
      if (!r.ok) throw new Error(`GET /api/calibrations: ${r.status}`);
      panel.list = (await r.json()).calibrations;
      panel.error = null;
    } catch (e) {
      panel.error = String(e && e.message ? e.message : e);
    }
    panel.polls++;
    render();
    // once a second while there are calibrations; every 10 s while there are none (a reload
    // may add some)
    setTimeout(poll, panel.list && panel.list.length ? 1000 : 10000);
  }
  poll();
  return panel;
}
