// The inspector's tables: adapters, and entities grouped by origin (collapsible), in natural
// order ("body2" before "body10") or by a column whose header was clicked, filtered by the search
// box (name, kind, origin, quality, "stale"/"live"). Rows are keyed and persist
// between frames; only changed cells are written.

export const PALETTE = ['#4fc3f7', '#ffb74d', '#81c784', '#f06292', '#ba68c8', '#fff176',
                        '#4db6ac', '#e57373', '#9575cd', '#aed581', '#ff8a65', '#90a4ae'];

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
/** Natural order of names: digit runs compare as numbers. */
export const naturalCompare = (a, b) => collator.compare(a, b);

const fmt = (v, d) => (Number.isFinite(v) ? v.toFixed(d) : '–');
// rates: one decimal below 10/s (a 0.5 Hz source is not 0)
export const fmtRate = (v) => fmt(v, Math.abs(v) < 10 && v !== 0 ? 1 : 0);

/** A byte count with its unit: 512 B, 12.3 kB, 4.56 MB, 1.20 GB (powers of 1000). */
export function fmtBytes(v) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (Math.abs(v) >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return `${i ? v.toPrecision(3) : v.toFixed(0)} ${units[i]}`;
}

export function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;',
                                           "'": '&#39;' }[c]));
}

// rows: [{key, cells: [{text, cls, title}], cls, data: {...}}] in display order
function syncRows(tbody, rows, onRow) {
  const byKey = new Map([...tbody.rows].map((r) => [r.dataset.key, r]));
  rows.forEach((row, i) => {
    let tr = byKey.get(row.key);
    if (!tr) {
      tr = document.createElement('tr');
      tr.dataset.key = row.key;
      if (onRow) onRow(tr, row);
    }
    byKey.delete(row.key);
    if (tbody.rows[i] !== tr) tbody.insertBefore(tr, tbody.rows[i] || null);
    if (tr.className !== (row.cls || '')) tr.className = row.cls || '';
    for (const [k, v] of Object.entries(row.data || {})) if (tr.dataset[k] !== v) tr.dataset[k] = v;
    while (tr.cells.length > row.cells.length) tr.deleteCell(-1);
    while (tr.cells.length < row.cells.length) tr.insertCell();
    row.cells.forEach((c, j) => {
      const td = tr.cells[j];
      const text = String(c.text ?? c);
      if (td.textContent !== text) td.textContent = text;
      const cls = c.cls || '';
      if (td.className !== cls) td.className = cls;
      const title = c.title || '';
      if (td.title !== title) td.title = title;
      const span = c.span || 1;
      if (td.colSpan !== span) td.colSpan = span;
      const style = c.style || '';
      if (td.getAttribute('style') !== style) td.setAttribute('style', style);
    });
  });
  for (const tr of byKey.values()) tr.remove();
}

// What a state is, at a glance: ok (green), waiting (neutral), bad (red).
const STATE_CLASS = { streaming: 'ok', listening: 'ok', running: 'ok', playing: 'ok',
                      recording: 'ok', connecting: 'wait', handshake: 'wait', idle: 'wait',
                      done: 'wait',
                      backoff: 'bad', error: 'bad', stopped: 'bad', unreachable: 'bad' };

// Sort keys per column (index of the header cell), per table: a value to compare.
const ADAPTER_KEYS = [(a) => a.name, (a) => a.type, (a) => a.state, (a) => a.peer || '',
                      (a) => a.samples_in_per_s, (a) => a.samples_out_per_s, (a) => a.drops,
                      (a) => a.samples_backwards, (a) => a.reconnects];
const ENTITY_KEYS = [(e) => e.name, (e) => e.kind, (e) => Math.hypot(...e.position),
                     (e) => (e.quality === 'STALE' ? -1 : e.rate_hz), (e) => e.age_ms,
                     (e) => e.quality];
function compareBy(keys, sort) {
  const key = keys[sort.col];
  return (a, b) => {
    const x = key(a), y = key(b);
    const c = typeof x === 'number' && typeof y === 'number' ? x - y
      : naturalCompare(String(x), String(y));
    return sort.dir * c || naturalCompare(a.name, b.name);
  };
}

/** Mark the sorted column's header (aria-sort and an arrow). sort: {col, dir} or null. */
export function markSort(table, sort) {
  [...table.tHead.rows[0].cells].forEach((th, i) => {
    const want = sort && sort.col === i ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none';
    if (th.getAttribute('aria-sort') !== want) th.setAttribute('aria-sort', want);
  });
}

/** The adapters table. `live` false: the gateway is unreachable, so the states are unknown. */
export function renderAdapters(ui, inspector, adapters, live) {
  inspector.colors.clear();
  for (const a of adapters) inspector.colors.set(a.name, PALETTE[a.index % PALETTE.length]);
  ui.adapterCount.textContent = `(${adapters.length})`;
  const sort = inspector.sort && inspector.sort.adapters;
  if (sort) adapters = adapters.slice().sort(compareBy(ADAPTER_KEYS, sort));
  syncRows(ui.adapters, adapters.map((a) => {
    const state = live ? a.state : 'unknown';
    // an RTP destination answering ICMP port unreachable right now (the counter only grows)
    const rtpNoListener = a.state === 'unreachable';
    return {
      key: a.name,
      data: { name: a.name },
      cells: [
        { text: a.name, cls: 'name', style: `border-left:4px solid ${inspector.colors.get(a.name)}` },
        a.type,
        { text: rtpNoListener && live ? `${state}, no listener` : state,
          cls: 'state state-' + (rtpNoListener && live ? 'bad' : STATE_CLASS[state] || 'wait'),
          title: rtpNoListener ? `${a.unreachable} packets answered "port unreachable" ` +
            '(ICMP) so far: nothing listens at a destination' : '' },
        // a recorder's file (mcap-record): its size beside the name; the rate is `out`
        { text: (a.peer || '–') + (a.file_bytes ? ` (${fmtBytes(a.file_bytes)})` : ''),
          cls: 'peer', title: a.peer || '' },
        { text: live ? fmtRate(a.samples_in_per_s) : '–', cls: 'num rate-in' },
        { text: live ? fmtRate(a.samples_out_per_s) : '–', cls: 'num rate-out' },
        { text: a.drops, cls: a.drops ? 'num warn' : 'num',
          title: 'samples or packets dropped, and samples with invalid values' },
        { text: a.samples_backwards, cls: 'num info',
          title: 'samples not applied because their capture time did not advance past the ' +
            "entity's newest: a repeated full state, a duplicated or reordered packet. Not an " +
            'error: the table already holds a newer pose.' },
        { text: a.reconnects, cls: a.reconnects ? 'num warn' : 'num' },
      ],
    };
  }));
  const legend = adapters.map((a) =>
    `<span><i style="background:${inspector.colors.get(a.name)}"></i>${escapeHtml(a.name)}</span>`)
    .join('');
  if (ui.legend.innerHTML !== legend) ui.legend.innerHTML = legend;
}

/** True if entity e matches the filter text: every word in its name, kind, origin or quality,
 *  or "stale" / "live" (STALE or not). */
export function matches(e, filter) {
  if (!filter) return true;
  const hay = `${e.name} ${e.kind} ${e.origin} ${e.quality} ${e.quality === 'STALE' ? '' : 'live'}`
    .toLowerCase();
  return filter.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

/** The entities table: a group row per origin, then its entities unless collapsed.
 *  `ageExtraMs`: time since the frame arrived (ages keep growing when the stream stops). */
export function renderEntities(ui, inspector, st, live, ageExtraMs) {
  const filter = ui.filter.value.trim();
  const sort = inspector.sort && inspector.sort.entities;
  const within = sort ? compareBy(ENTITY_KEYS, sort) : (a, b) => naturalCompare(a.name, b.name);
  const ents = st.entities.filter((e) => matches(e, filter))
    .sort((a, b) => naturalCompare(a.origin, b.origin) || within(a, b));
  // what the 3D view highlights: the matches (null: no filter, nothing dimmed)
  inspector.matched = filter ? new Set(ents.map((e) => e.name)) : null;
  ui.entityCount.textContent = ents.length === st.entities.length ? `(${ents.length})`
    : `(${ents.length} of ${st.entities.length})`;
  ui.entitiesTable.dataset.timeNs = String(st.time_ns);
  const rows = [];
  let i = 0;
  while (i < ents.length) {
    const origin = ents[i].origin;
    let j = i;
    while (j < ents.length && ents[j].origin === origin) j++;
    const collapsed = inspector.collapsed.has(origin);
    const stale = ents.slice(i, j).filter((e) => e.quality === 'STALE').length;
    rows.push({
      key: '\u0000group:' + origin, cls: 'group' + (collapsed ? ' collapsed' : ''),
      data: { origin },
      cells: [{ text: `${collapsed ? '▸' : '▾'} ${origin} · ${j - i} ${j - i === 1 ? 'entity' : 'entities'}` +
                      (stale ? ` · ${stale} stale` : ''), span: 6,
                style: `border-left:4px solid ${inspector.colors.get(origin) || '#ccc'}` }],
    });
    if (!collapsed) {
      for (const e of ents.slice(i, j)) {
        const q = live ? e.quality : 'unknown';
        const stale = q === 'STALE' || !live;
        rows.push({
          key: e.name,
          cls: (stale ? 'stale' : '') + (inspector.selected === e.name ? ' selected' : ''),
          data: { name: e.name },
          cells: [
            // the group row names the origin: "<origin>/" is not repeated on every row
            { text: e.name.startsWith(e.origin + '/') ? e.name.slice(e.origin.length + 1) : e.name,
              cls: 'name', title: e.name + (e.parent ? ` (parent ${e.parent})` : ''),
              style: `border-left:4px solid ${inspector.colors.get(e.origin) || '#ccc'}` },
            e.kind,
            { text: e.position.map((v) => fmt(v, 3)).join(', '), cls: 'num pos' },
            // a STALE entity has no rate: its source stopped
            { text: stale ? '–' : fmtRate(e.rate_hz), cls: 'num' },
            { text: fmt(e.age_ms + (live ? 0 : ageExtraMs), 1),
              cls: q === 'STALE' || !live ? 'num warn' : 'num' },
            { text: q, cls: 'q q-' + q, title: QUALITY_TITLE[q] || '' },
          ],
        });
      }
    }
    i = j;
  }
  if (!ents.length && filter) {
    rows.push({ key: '\u0000empty', cls: 'empty',
                cells: [{ text: `no entity matches "${filter}" (name, kind, origin, quality, ` +
                                `"stale" or "live")`, span: 6 }] });
  } else if (!st.entities.length) {
    rows.push({ key: '\u0000empty', cls: 'empty',
                cells: [{ text: 'no entities yet: no adapter has delivered a sample', span: 6 }] });
  }
  syncRows(ui.entities, rows);
}

export const QUALITY_TITLE = {
  EXACT: 'a sample captured at the frame time',
  INTERPOLATED: 'between two samples',
  PREDICTED: 'extrapolated from the newest sample to the frame time (normal for live sources)',
  DAMPED: 'extrapolated, the rotation less far: the source\'s turn rate was unstable',
  MATCHED: 'extrapolated, the turn rate blended with what the skeleton did the last time it was in this pose',
  HELD: 'newest sample older than the prediction horizon: the pose is held, not extrapolated',
  STALE: 'no sample for longer than entity.stale_ms: the source stopped',
  unknown: 'the gateway is unreachable: these values are from the last frame received',
};
