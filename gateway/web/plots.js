// The inspector's plots, drawn on <canvas> (no library): the selected entity's position,
// rotation and rate over the last seconds; every adapter's rate in/out over the last minute; a
// histogram of entity ages at the last frame.

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
    const en = plots.entity;
    if (en.name !== selected) Object.assign(en, { name: selected, t: [], pos: [], rot: [], rate: [] });
    const e = selected && st.entities.find((x) => x.name === selected);
    if (e) {
      en.t.push(t);
      en.pos.push(e.position.slice());
      en.rot.push(eulerDeg(e.orientation));
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

  // lines: [{t: [], v: [], color, dash}] over [t0, t1]; a label per axis end
  function lines(cv, series, t0, t1, unit, label) {
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
    lo -= pad; hi += pad;
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
  }

  /** Draw everything (t: seconds, page clock). */
  plots.draw = (t) => {
    const en = plots.entity;
    title.textContent = en.name ? `selected entity: ${en.name}` :
      'selected entity: click a row or an entity';
    const t0 = t - ENTITY_SECONDS;
    const xyz = (arr, k) => arr.map((p) => p[k]);
    lines(canvases.position, [0, 1, 2].map((k) => ({ t: en.t, v: xyz(en.pos, k),
                                                     color: AXIS_COLORS[k] })),
          t0, t, 'm', 'position x y z');
    lines(canvases.rotation, [0, 1, 2].map((k) => ({ t: en.t, v: xyz(en.rot, k),
                                                     color: AXIS_COLORS[(k + 1) % 3] })),
          t0, t, '°', 'rotation yaw pitch roll');
    lines(canvases.rate, [{ t: en.t, v: en.rate, color: '#d8dde5' }], t0, t, 'Hz', 'rate');
    const series = [];
    for (const s of plots.adapters.values()) {
      series.push({ t: s.t, v: s.in, color: s.color });
      series.push({ t: s.t, v: s.out, color: s.color, dash: true });
    }
    lines(canvases.adapters, series, t - ADAPTER_SECONDS, t, '/s', 'samples per second');
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
  return plots;
}
