// The inspector's plots, drawn on <canvas> (no library): the selected entity's position,
// rotation and rate over the last seconds; every adapter's rate in/out over the last minute; a
// histogram of entity ages at the last frame. Angles are unwrapped (no ±180° jumps), rates never
// go below zero, the plots can be paused, and a pointer over a plot reads its values out.

const ENTITY_SECONDS = 10;
const ADAPTER_SECONDS = 60;
const AGE_BINS = [5, 10, 20, 50, 100, 200, 500, 1000, Infinity]; // upper bounds, ms
const AXIS_COLORS = ['#ff5a5a', '#6be06b', '#5a8cff'];

// yaw (about +Y), pitch (about +X), roll (about +Z) in degrees from a quaternion (x, y, z, w)
export function eulerDeg([x, y, z, w]) {
  const r = 180 / Math.PI;
  const pitch = Math.asin(Math.max(-1, Math.min(1, 2 * (w * x - y * z))));
  const yaw = Math.atan2(2 * (w * y + x * z), 1 - 2 * (x * x + y * y));
  const roll = Math.atan2(2 * (w * z + x * y), 1 - 2 * (x * x + z * z));
  return [yaw * r, pitch * r, roll * r];
}

/** Unwrap angles (degrees) against the previous sample's: each component moves by less than 180°
 *  from `prev` (a yaw going 179, -179 reads 179, 181). `prev` null: `cur` unchanged. */
export function unwrapDeg(prev, cur) {
  if (!prev) return cur;
  return cur.map((v, i) => v + 360 * Math.round((prev[i] - v) / 360));
}

/** Histogram of ages (ms) into AGE_BINS; returns [{label, count, stale}]. */
export function ageHistogram(entities) {
  const bins = AGE_BINS.map((hi, i) => ({
    label: hi === Infinity ? `>${AGE_BINS[i - 1]}` : `<${hi}`, count: 0, stale: 0 }));
  for (const e of entities) {
    const i = AGE_BINS.findIndex((hi) => e.age_ms < hi);
    bins[i].count++;
    if (e.quality === 'STALE') bins[i].stale++;
  }
  return bins;
}

export function createPlots(doc) {
  const c = (id) => doc.getElementById(id);
  const plots = {
    entity: { name: null, t: [], pos: [], rot: [], rate: [] },
    adapters: new Map(), // name -> {t: [], in: [], out: [], color}
    age: [],
    draws: 0,
    paused: null, // page time (s) the plots were paused at, or null
    cursor: null, // {id, fx}: the pointer over a plot, fx 0..1 across its width
  };
  const canvases = { position: c('plot-position'), rotation: c('plot-rotation'),
                     rate: c('plot-rate'), adapters: c('plot-adapters'), age: c('plot-age') };
  const title = c('plot-entity-title');

  function trim(s, seconds, now) {
    let k = 0;
    while (k < s.t.length && now - s.t[k] > seconds) k++;
    if (k) for (const key of Object.keys(s)) if (Array.isArray(s[key])) s[key].splice(0, k);
  }

  /** Record a state frame (t: seconds, page clock). */
  plots.add = (st, t, colors, selected) => {
    if (plots.paused !== null) return; // paused: the plots keep what they show
    const en = plots.entity;
    if (en.name !== selected) Object.assign(en, { name: selected, t: [], pos: [], rot: [], rate: [] });
    const e = selected && st.entities.find((x) => x.name === selected);
    if (e) {
      en.t.push(t);
      en.pos.push(e.position.slice());
      // unwrapped against the previous sample: a turn through ±180° is a line, not a jump
      const prev = en.rot.length ? en.rot[en.rot.length - 1] : null;
      en.rot.push(unwrapDeg(prev, eulerDeg(e.orientation)));
      en.rate.push(e.quality === 'STALE' ? 0 : e.rate_hz);
    }
    trim(en, ENTITY_SECONDS, t);
    for (const a of st.adapters) {
      let s = plots.adapters.get(a.name);
      if (!s) plots.adapters.set(a.name, (s = { t: [], in: [], out: [] }));
      s.color = colors.get(a.name);
      // one point per half second is enough for a minute
      if (!s.t.length || t - s.t[s.t.length - 1] >= 0.5) {
        s.t.push(t);
        s.in.push(a.samples_in_per_s);
        s.out.push(a.samples_out_per_s);
      }
      trim(s, ADAPTER_SECONDS, t);
    }
    for (const name of plots.adapters.keys())
      if (!st.adapters.some((a) => a.name === name)) plots.adapters.delete(name);
    plots.age = ageHistogram(st.entities);
  };

  function frame(cv) {
    const g = cv.getContext('2d');
    g.clearRect(0, 0, cv.width, cv.height);
    g.fillStyle = '#12151a';
    g.fillRect(0, 0, cv.width, cv.height);
    g.font = '10px ui-monospace, monospace';
    return g;
  }

  // lines: [{t: [], v: [], color, dash, name}] over [t0, t1]; a label per axis end. nonNegative:
  // the axis starts at 0 (rates). The pointer over the plot: a vertical line and the values of
  // the sample nearest to it (also in cv.dataset.cursor, for tests).
  function lines(cv, series, t0, t1, unit, label, nonNegative = false) {
    const g = frame(cv);
    const vals = series.flatMap((s) => s.v).filter(Number.isFinite);
    cv.dataset.empty = vals.length ? '0' : '1';
    if (!vals.length) { // nothing selected yet, or no sample in the window: no scale to show
      g.fillStyle = '#8a93a2';
      g.fillText(label, 48, 10);
      g.fillText('no data', cv.width / 2 - 20, cv.height / 2 + 3);
      return;
    }
    let lo = Math.min(0, ...vals), hi = Math.max(...vals, lo + 1e-3);
    const pad = (hi - lo) * 0.08;
    lo = nonNegative ? Math.max(0, lo - pad) : lo - pad;
    hi += pad;
    cv.dataset.lo = String(lo);
    const L = 44, R = cv.width - 4, T = 12, B = cv.height - 12;
    const x = (t) => L + (R - L) * (t - t0) / (t1 - t0);
    const y = (v) => B - (B - T) * (v - lo) / (hi - lo);
    g.strokeStyle = '#2a2f38';
    g.beginPath(); g.moveTo(L, y(0)); g.lineTo(R, y(0)); g.stroke();
    g.fillStyle = '#8a93a2';
    const num = (v) => v.toFixed(hi - lo < 5 ? 2 : 0).replace(/^-(0(\.0+)?)$/, '$1'); // no "-0.00"
    g.fillText(`${num(hi)} ${unit}`, 2, T + 3);
    g.fillText(num(lo), 2, B);
    g.fillText(label, L + 4, T - 2);
    g.fillText(`-${Math.round(t1 - t0)} s`, L, cv.height - 1);
    g.fillText('now', R - 20, cv.height - 1);
    for (const s of series) {
      g.strokeStyle = s.color;
      g.setLineDash(s.dash ? [4, 3] : []);
      g.lineWidth = 1.5;
      g.beginPath();
      s.t.forEach((t, i) => (i ? g.lineTo(x(t), y(s.v[i])) : g.moveTo(x(t), y(s.v[i]))));
      g.stroke();
    }
    g.setLineDash([]);
    const cur = plots.cursor && plots.cursor.id === cv.id ? plots.cursor : null;
    cv.dataset.cursor = '';
    if (cur) {
      const cx = L + Math.max(0, Math.min(1, (cur.fx * cv.width - L) / (R - L))) * (R - L);
      const tc = t0 + (cx - L) / (R - L) * (t1 - t0);
      g.strokeStyle = '#d8dde5';
      g.beginPath(); g.moveTo(cx, T); g.lineTo(cx, B); g.stroke();
      const parts = [];
      for (const s of series) {
        if (!s.t.length || s.dash) continue;
        let k = 0;
        for (let i = 1; i < s.t.length; i++) if (Math.abs(s.t[i] - tc) < Math.abs(s.t[k] - tc)) k = i;
        parts.push((s.name ? s.name + ' ' : '') + num(s.v[k]));
      }
      const text = `${(tc - t1).toFixed(1)} s: ${parts.join(' ')} ${unit}`;
      cv.dataset.cursor = text;
      const w = g.measureText(text).width;
      g.fillStyle = 'rgba(18, 21, 26, 0.9)';
      g.fillRect(R - w - 6, T - 1, w + 4, 12);
      g.fillStyle = '#d8dde5';
      g.fillText(text, R - w - 4, T + 8);
    }
  }

  /** Draw everything (t: seconds, page clock). */
  plots.draw = (t) => {
    if (plots.paused !== null) t = plots.paused;
    const en = plots.entity;
    title.textContent = en.name ? `selected entity: ${en.name}` :
      'selected entity: click a row or an entity';
    const t0 = t - ENTITY_SECONDS;
    const xyz = (arr, k) => arr.map((p) => p[k]);
    lines(canvases.position, [0, 1, 2].map((k) => ({ t: en.t, v: xyz(en.pos, k),
                                                     color: AXIS_COLORS[k], name: 'xyz'[k] })),
          t0, t, 'm', 'position x y z');
    lines(canvases.rotation, [0, 1, 2].map((k) => ({ t: en.t, v: xyz(en.rot, k),
                                                     color: AXIS_COLORS[(k + 1) % 3],
                                                     name: ['yaw', 'pitch', 'roll'][k] })),
          t0, t, '°', 'rotation yaw pitch roll (unwrapped)');
    lines(canvases.rate, [{ t: en.t, v: en.rate, color: '#d8dde5' }], t0, t, 'Hz', 'rate', true);
    const series = [];
    for (const [name, s] of plots.adapters) {
      series.push({ t: s.t, v: s.in, color: s.color, name: name + ' in' });
      series.push({ t: s.t, v: s.out, color: s.color, dash: true });
    }
    lines(canvases.adapters, series, t - ADAPTER_SECONDS, t, '/s', 'samples per second', true);
    // age histogram: bars, the stale part in red
    const cv = canvases.age;
    const g = frame(cv);
    const max = Math.max(1, ...plots.age.map((b) => b.count));
    const w = (cv.width - 8) / Math.max(1, plots.age.length);
    plots.age.forEach((b, i) => {
      const h = (cv.height - 26) * b.count / max;
      const hs = (cv.height - 26) * b.stale / max;
      g.fillStyle = '#4f8fbf';
      g.fillRect(4 + i * w + 2, cv.height - 14 - h, w - 4, h - hs);
      g.fillStyle = '#d05050';
      g.fillRect(4 + i * w + 2, cv.height - 14 - hs, w - 4, hs);
      g.fillStyle = '#8a93a2';
      g.fillText(b.label, 4 + i * w + 2, cv.height - 3);
      if (b.count) g.fillText(String(b.count), 4 + i * w + 2, cv.height - 16 - h);
    });
    plots.draws++;
  };
  // the pointer over a plot: a read-out of the values under it
  for (const cv of Object.values(canvases)) {
    if (!cv || cv === canvases.age) continue;
    cv.addEventListener('pointermove', (ev) => {
      const r = cv.getBoundingClientRect();
      plots.cursor = { id: cv.id, fx: (ev.clientX - r.left) / r.width };
      plots.draw(performance.now() / 1000);
    });
    cv.addEventListener('pointerleave', () => { plots.cursor = null; });
  }
  /** Pause (true) or resume (false) the plots: paused, they keep what they show. */
  plots.pause = (on) => {
    plots.paused = on ? performance.now() / 1000 : null;
  };
  return plots;
}
