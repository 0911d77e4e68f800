// xrgate web inspector: live tables from GET /events (Server-Sent Events) and, when three.js is
// available, a 3D view (view3d.js), plots (plots.js) and a WebXR mode (xr.js). Plain ES modules,
// no bundler; served by the gateway itself.
//
// The stream (docs/inspector.md): `event: hello` once per connection, then `event: state`
// ~30 times a second: {seq, time_ns, entities: [{id, name, kind, origin, parent?, position,
// orientation, quality, active, age_ms, rate_hz}], adapters: [{index, name, type, state, peer,
// sink, samples_in, samples_out, samples_in_per_s, samples_out_per_s, drops, samples_backwards,
// errors, reconnects, unreachable}]}. After a configuration reload: `event: hello` again, then
// `event: reload` {ok, added, removed, restarted, updated, unchanged, needs_restart, errors,
// adapters: [{index, name, type}]} and a `state` frame with the new adapter set.
import { markSort, naturalCompare, renderAdapters, renderEntities } from './tables.js';
import { createPlots } from './plots.js';
import { createCalibPanel } from './calib.js';

// A token given to the page (/?token=...) is passed on to /events: EventSource cannot set headers.
const token = new URLSearchParams(location.search).get('token');
const eventsUrl = '/events' + (token ? '?token=' + encodeURIComponent(token) : '');

const $ = (id) => document.getElementById(id);

const ui = {
  conn: $('conn'), summary: $('summary'), gateway: $('gateway-id'),
  adapters: $('adapters').tBodies[0], entities: $('entities').tBodies[0],
  entitiesTable: $('entities'), filter: $('filter'), side: $('side'),
  adapterCount: $('adapter-count'), entityCount: $('entity-count'),
  legend: $('legend'), viewMsg: $('view-msg'), banner: $('stale-banner'),
  reloadNote: $('reload-note'), view: $('view'), dead: $('view-dead'), focus: $('focus'),
};

// State shared with the modules and exposed for tests (window.xrgateInspector).
const inspector = {
  hello: null,
  last: null,           // last `state` frame
  lastAt: 0,            // performance.now() when it arrived
  frames: 0,            // state frames received since the page loaded
  connects: 0,          // EventSource connections opened
  reloads: [],          // `reload` events received (their data), oldest first
  colors: new Map(),    // adapter name -> CSS colour
  collapsed: new Set(), // origins whose group is collapsed in the entity table
  selected: null,       // entity name whose plots are shown
  view: null,           // the 3D view, once loaded
  viewError: null,      // why there is no 3D view
  xr: null,             // WebXR state (xr.js)
  connection: 'connecting',
  sort: { entities: null, adapters: null }, // {col, dir}: a clicked column header
  matched: null,        // entity names the filter matches (null: no filter)
  compare: naturalCompare,
  plots: createPlots(document),
};
window.xrgateInspector = inspector;
inspector.calib = createCalibPanel(document, token, inspector); // GET /api/calibrations, 1 Hz

function setConn(state, text) {
  inspector.connection = state;
  ui.conn.dataset.state = state;
  ui.conn.className = 'conn conn-' + state;
  ui.conn.textContent = text || state;
  render();
}

// Everything on screen from the last frame; when the stream is down the tables say so: states
// become "unknown", ages keep growing from the last frame, the side panel is greyed out.
function render() {
  const st = inspector.last;
  const live = inspector.connection === 'live';
  ui.side.classList.toggle('disconnected', !live && !!st);
  // the 3D view too: greyed under a note saying since when (it shows the last frame's poses)
  ui.view.classList.toggle('dead', !live && !!st);
  ui.dead.hidden = live || !st;
  if (!live && st) {
    const since = new Date(Date.now() - (performance.now() - inspector.lastAt));
    const ago = `${since.toLocaleTimeString()} (${((performance.now() - inspector.lastAt) / 1000)
      .toFixed(0)} s ago)`;
    ui.banner.hidden = false;
    ui.banner.textContent = `gateway unreachable: the values below are from the last frame, ` +
      `received ${ago}`;
    ui.dead.textContent = `gateway unreachable since ${ago}: the last frame received, not live`;
  } else {
    ui.banner.hidden = true;
  }
  ui.focus.disabled = !inspector.selected || !inspector.view;
  if (!st) return;
  renderAdapters(ui, inspector, st.adapters, live);
  renderEntities(ui, inspector, st, live, performance.now() - inspector.lastAt);
  const stale = st.entities.filter((e) => e.quality === 'STALE').length;
  const counts = `${st.entities.length} ${st.entities.length === 1 ? 'entity' : 'entities'}` +
    (stale ? `, ${stale} stale` : '') +
    ` · ${st.adapters.length} ${st.adapters.length === 1 ? 'adapter' : 'adapters'}`;
  // unreachable: the counts are the last frame's, not live ones
  ui.summary.textContent = live ? counts : `last frame: ${counts}`;
  ui.summary.classList.toggle('dead', !live);
}

// Trails and axis triads help with a few entities and clutter many (a skeleton's joints, a
// crowd): trails start off above 20 entities, triads above 40 (until the user ticks them).
const CROWD = { 'opt-trails': 20, 'opt-axes': 40 };
let declutterDone = false;
for (const id of ['opt-trails', 'opt-axes'])
  $(id).addEventListener('change', () => { declutterDone = true; });
function declutterOptions(st) {
  if (declutterDone || !inspector.view || !st.entities.length) return;
  declutterDone = true;
  for (const [id, set] of [['opt-trails', 'setTrails'], ['opt-axes', 'setAxes']]) {
    if (st.entities.length <= CROWD[id]) continue;
    $(id).checked = false;
    inspector.view[set](false);
  }
}

function onState(st) {
  declutterOptions(st);
  inspector.last = st;
  inspector.lastAt = performance.now();
  inspector.frames++;
  render();
  inspector.plots.add(st, inspector.lastAt / 1000, inspector.colors, inspector.selected);
  if (inspector.view) inspector.view.update(st);
}

function select(name) {
  inspector.selected = name;
  if (inspector.view) inspector.view.selected = name;
  render();
}
inspector.select = select;

ui.entities.addEventListener('click', (ev) => {
  const tr = ev.target.closest('tr');
  if (!tr) return;
  if (tr.classList.contains('group')) {
    const o = tr.dataset.origin;
    if (inspector.collapsed.has(o)) inspector.collapsed.delete(o);
    else inspector.collapsed.add(o);
    render();
  } else if (tr.dataset.name) {
    select(tr.dataset.name);
  }
});
// the filter: the table and the 3D view (matches highlighted, the rest faint) follow at once
ui.filter.addEventListener('input', () => {
  render();
  if (inspector.view && inspector.last) inspector.view.update(inspector.last);
});

// column headers sort: ascending, descending, then back to natural order (entities stay grouped
// by origin; the sort applies within each group)
for (const [table, key] of [[$('entities'), 'entities'], [$('adapters'), 'adapters']]) {
  table.tHead.addEventListener('click', (ev) => {
    const th = ev.target.closest('th');
    if (!th) return;
    const cur = inspector.sort[key];
    inspector.sort[key] = !cur || cur.col !== th.cellIndex ? { col: th.cellIndex, dir: 1 }
      : cur.dir > 0 ? { col: th.cellIndex, dir: -1 } : null;
    markSort(table, inspector.sort[key]);
    render();
  });
  markSort(table, null);
}

$('plot-pause').addEventListener('click', (ev) => {
  const on = inspector.plots.paused === null;
  inspector.plots.pause(on);
  ev.target.textContent = on ? 'resume' : 'pause';
  ev.target.classList.toggle('on', on);
});
// plots: redrawn 4 times a second (and while disconnected, so the time axis moves on)
setInterval(() => inspector.plots.draw(performance.now() / 1000), 250);
// while disconnected: ages and the banner keep counting
setInterval(() => { if (inspector.connection !== 'live') render(); }, 1000);

// EventSource reconnects by itself after a network loss (the server's `retry:` is 1 s), but
// gives up on an HTTP error (401, 503): then reconnect here. A watchdog also restarts a stream
// that stays silent.
let es = null;
let lastMessage = 0;

// A configuration reload: say what changed for a few seconds. The tables, plots and colours
// follow the adapter set of the `state` frames by themselves.
let reloadNoteTimer = null;
function onReload(r) {
  inspector.reloads.push(r);
  const parts = [];
  const list = (sign, names) => { if (names && names.length) parts.push(sign + names.join(', ')); };
  list('+', r.added);
  list('−', r.removed);
  list('↻', r.restarted);
  list('~', r.updated);
  if (r.needs_restart && r.needs_restart.length)
    parts.push('needs a restart: ' + r.needs_restart.join(', '));
  const text = r.ok ? 'configuration reloaded' + (parts.length ? ': ' + parts.join(' ') : '')
                    : 'configuration reload failed: ' + (r.errors || []).join('; ');
  ui.reloadNote.textContent = text;
  ui.reloadNote.title = text;
  ui.reloadNote.classList.toggle('failed', !r.ok);
  ui.reloadNote.hidden = false;
  clearTimeout(reloadNoteTimer);
  reloadNoteTimer = setTimeout(() => { ui.reloadNote.hidden = true; }, r.ok ? 8000 : 20000);
}
function connect() {
  if (es) es.close();
  setConn('connecting', 'connecting…');
  es = new EventSource(eventsUrl);
  es.onopen = () => { inspector.connects++; lastMessage = performance.now(); setConn('live', 'live'); };
  es.addEventListener('hello', (ev) => {
    inspector.hello = JSON.parse(ev.data);
    ui.gateway.textContent = 'gateway ' + inspector.hello.gateway;
    document.title = `xrgate ${inspector.hello.gateway} · inspector`;
  });
  es.addEventListener('reload', (ev) => onReload(JSON.parse(ev.data)));
  es.addEventListener('state', (ev) => {
    lastMessage = performance.now();
    const st = JSON.parse(ev.data);
    if (inspector.connection !== 'live') {
      inspector.last = st;
      inspector.lastAt = lastMessage;
      setConn('live', 'live');
    }
    onState(st);
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
// Liveness: frames come ~30 times a second, so 800 ms without one means the gateway is gone or
// stuck (a killed process without a FIN, a network loss): say so at once (the 3D view greys
// within 1 s); after 3 s restart the stream.
const SILENT_MS = 800;
setInterval(() => {
  if (!es) return;
  const silent = performance.now() - lastMessage;
  if (inspector.connection === 'live' && silent > SILENT_MS && lastMessage)
    setConn('lost', 'no data — reconnecting…');
  if ((inspector.connection === 'live' || inspector.connection === 'lost') && silent > 3000 &&
      es.readyState === EventSource.OPEN) connect();
}, 200);
connect();

// The 3D view is optional: without three.js (built with -DXRGATE_WEB_INSPECTOR=OFF, or no
// WebGL) the tables and plots still work.
import('./view3d.js')
  .then(async (m) => {
    const view = m.createView($('view'), inspector);
    inspector.view = view;
    view.onSelect = select;
    view.selected = inspector.selected;
    if (inspector.last) view.update(inspector.last);
    $('fit').onclick = () => view.fit();
    // focus: frame the selected entity up close and keep following it
    ui.focus.onclick = () => {
      if (!view.focusSelected()) return;
      $('opt-follow').checked = true;
      view.framing.follow = true;
    };
    $('opt-trails').onchange = (ev) => view.setTrails(ev.target.checked);
    $('opt-axes').onchange = (ev) => view.setAxes(ev.target.checked);
    $('opt-labels').onchange = (ev) => view.setLabels(ev.target.value);
    view.setFollow($('opt-follow').checked);
    $('opt-follow').onchange = (ev) => view.setFollow(ev.target.checked);
    const xr = await import('./xr.js');
    inspector.xr = await xr.setupXR({ vr: $('enter-vr'), ar: $('enter-ar') }, view,
                                     $('xr-status'), token);
  })
  .catch((err) => {
    inspector.viewError = String(err && err.message ? err.message : err);
    ui.viewMsg.hidden = false;
    ui.viewMsg.textContent = '3D view unavailable: ' + inspector.viewError +
      ' (three.js is embedded when xrgate is built with npm; see docs/inspector.md)';
  });
