// xrgate web inspector: live tables from GET /events (Server-Sent Events) and, when three.js is
// available, a 3D view (view3d.js). Plain ES module, no bundler; served by the gateway itself.
//
// The stream (README "Web inspector"): `event: hello` once per connection, then `event: state`
// ~30 times a second: {seq, time_ns, entities: [{id, name, kind, origin, position, orientation,
// quality, active, age_ms, rate_hz}], adapters: [{index, name, type, state, peer, sink,
// samples_in, samples_out, samples_in_per_s, samples_out_per_s, drops, errors, reconnects}]}.

// A token given to the page (/?token=...) is passed on to /events: EventSource cannot set headers.
const token = new URLSearchParams(location.search).get('token');
const eventsUrl = '/events' + (token ? '?token=' + encodeURIComponent(token) : '');

// Origin colours, by adapter index (the same in the tables and the 3D view).
export const PALETTE = ['#4fc3f7', '#ffb74d', '#81c784', '#f06292', '#ba68c8', '#fff176',
                        '#4db6ac', '#e57373', '#9575cd', '#aed581', '#ff8a65', '#90a4ae'];

const $ = (id) => document.getElementById(id);

const ui = {
  conn: $('conn'), summary: $('summary'), gateway: $('gateway-id'),
  adapters: $('adapters').tBodies[0], entities: $('entities').tBodies[0],
  adapterCount: $('adapter-count'), entityCount: $('entity-count'),
  legend: $('legend'), viewMsg: $('view-msg'),
};

// State shared with view3d.js and exposed for tests (window.xrgateInspector).
const inspector = {
  hello: null,
  last: null,           // last `state` frame
  frames: 0,            // state frames received since the page loaded
  connects: 0,          // EventSource connections opened
  colors: new Map(),    // adapter name -> CSS colour
  view: null,           // the 3D view, once loaded
  viewError: null,      // why there is no 3D view
  connection: 'connecting',
};
window.xrgateInspector = inspector;

function colorOf(origin) {
  return inspector.colors.get(origin) || '#cccccc';
}

function setConn(state, text) {
  inspector.connection = state;
  ui.conn.dataset.state = state;
  ui.conn.className = 'conn conn-' + state;
  ui.conn.textContent = text || state;
}

const fmt = (v, d) => (Number.isFinite(v) ? v.toFixed(d) : '–');
// rates: one decimal below 10/s (a 0.5 Hz source is not 0)
const fmtRate = (v) => fmt(v, Math.abs(v) < 10 && v !== 0 ? 1 : 0);

// Keyed row updates: rows persist between frames; only changed cells are written.
function syncRows(tbody, items, key, cells, decorate) {
  const seen = new Set();
  let i = 0;
  for (const item of items) {
    const k = key(item);
    seen.add(k);
    let tr = tbody.rows[i];
    if (!tr || tr.dataset.key !== k) {
      tr = [...tbody.rows].find((r) => r.dataset.key === k) || document.createElement('tr');
      tr.dataset.key = k;
      tbody.insertBefore(tr, tbody.rows[i] || null);
    }
    const values = cells(item);
    while (tr.cells.length < values.length) tr.insertCell();
    values.forEach((v, j) => {
      const td = tr.cells[j];
      const text = String(v.text ?? v);
      if (td.textContent !== text) td.textContent = text;
      const cls = v.cls || '';
      if (td.className !== cls) td.className = cls;
    });
    if (decorate) decorate(tr, item);
    i++;
  }
  for (const tr of [...tbody.rows]) if (!seen.has(tr.dataset.key)) tr.remove();
}

function renderAdapters(adapters) {
  inspector.colors.clear();
  for (const a of adapters) inspector.colors.set(a.name, PALETTE[a.index % PALETTE.length]);
  ui.adapterCount.textContent = `(${adapters.length})`;
  syncRows(ui.adapters, adapters, (a) => a.name, (a) => [
    { text: a.name, cls: 'name' },
    a.type,
    { text: a.state, cls: 'state state-' + a.state },
    { text: a.peer || '–', cls: 'peer' },
    { text: fmtRate(a.samples_in_per_s), cls: 'num rate-in' },
    { text: fmtRate(a.samples_out_per_s), cls: 'num rate-out' },
    { text: a.drops, cls: a.drops ? 'num warn' : 'num' },
    { text: a.reconnects, cls: a.reconnects ? 'num warn' : 'num' },
  ], (tr, a) => {
    tr.dataset.name = a.name;
    tr.cells[0].style.borderLeft = `4px solid ${colorOf(a.name)}`;
  });
  const legend = adapters.map((a) =>
    `<span><i style="background:${colorOf(a.name)}"></i>${escapeHtml(a.name)}</span>`).join('');
  if (ui.legend.innerHTML !== legend) ui.legend.innerHTML = legend;
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;',
                                           "'": '&#39;' }[c]));
}

function renderEntities(st) {
  const ents = [...st.entities].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  ui.entityCount.textContent = `(${ents.length})`;
  $('entities').dataset.timeNs = String(st.time_ns);
  syncRows(ui.entities, ents, (e) => e.name, (e) => [
    { text: e.name, cls: 'name' },
    e.kind,
    e.origin,
    { text: e.position.map((v) => fmt(v, 3)).join(', '), cls: 'num pos' },
    { text: fmtRate(e.rate_hz), cls: 'num' },
    { text: fmt(e.age_ms, 1), cls: e.quality === 'STALE' ? 'num warn' : 'num' },
    { text: e.quality, cls: 'q q-' + e.quality },
  ], (tr, e) => {
    tr.dataset.name = e.name;
    tr.classList.toggle('stale', e.quality === 'STALE');
    tr.cells[0].style.borderLeft = `4px solid ${colorOf(e.origin)}`;
  });
}

function onState(st) {
  inspector.last = st;
  inspector.frames++;
  renderAdapters(st.adapters);
  renderEntities(st);
  const stale = st.entities.filter((e) => e.quality === 'STALE').length;
  ui.summary.textContent = `${st.entities.length} entities` + (stale ? `, ${stale} stale` : '') +
    ` · ${st.adapters.length} adapters`;
  if (inspector.view) inspector.view.update(st);
}

// EventSource reconnects by itself after a network loss (the server's `retry:` is 1 s), but
// gives up on an HTTP error (401, 503): then reconnect here. A watchdog also restarts a stream
// that stays silent.
let es = null;
let lastMessage = 0;
function connect() {
  if (es) es.close();
  setConn('connecting', 'connecting…');
  es = new EventSource(eventsUrl);
  es.onopen = () => { inspector.connects++; setConn('live', 'live'); };
  es.addEventListener('hello', (ev) => {
    inspector.hello = JSON.parse(ev.data);
    ui.gateway.textContent = 'gateway ' + inspector.hello.gateway;
    document.title = `xrgate ${inspector.hello.gateway} · inspector`;
  });
  es.addEventListener('state', (ev) => {
    lastMessage = performance.now();
    if (inspector.connection !== 'live') setConn('live', 'live');
    onState(JSON.parse(ev.data));
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      setConn('lost', token === null ? 'disconnected — retrying (if a token is set, open /?token=…)'
                                     : 'disconnected — retrying');
      setTimeout(connect, 2000);
    } else {
      setConn('lost', 'connection lost — reconnecting…');
    }
  };
}
setInterval(() => {
  if (es && inspector.connection === 'live' && performance.now() - lastMessage > 3000) connect();
}, 1000);
connect();

// The 3D view is optional: without three.js (built with -DXRGATE_WEB_INSPECTOR=OFF, or no
// WebGL) the tables still work.
import('./view3d.js')
  .then((m) => {
    inspector.view = m.createView($('view'), inspector);
    if (inspector.last) inspector.view.update(inspector.last);
    $('fit').onclick = () => inspector.view.fit();
    $('opt-trails').onchange = (ev) => inspector.view.setTrails(ev.target.checked);
    $('opt-labels').onchange = (ev) => inspector.view.setLabels(ev.target.checked);
  })
  .catch((err) => {
    inspector.viewError = String(err && err.message ? err.message : err);
    ui.viewMsg.hidden = false;
    ui.viewMsg.textContent = '3D view unavailable: ' + inspector.viewError +
      ' (three.js is embedded when xrgate is built with npm; see README "Web inspector")';
  });
