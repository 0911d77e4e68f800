// Browser test of the web inspector, driven by tests/integration/test_inspector_browser.py
// (which starts xrgate, and restarts it on request to test reconnection).
//
//   node inspector.mjs --url http://127.0.0.1:PORT/ --node-modules <build>/web/node_modules
//                      --screenshot <build>/test-output/inspector.png --entities 7
//                      --mocap-url http://127.0.0.1:PORT2/ --crowd-url http://127.0.0.1:PORT3/
// (--url: synth sources, restarted on request; --mocap-url: the CMU walk, 31 joints, one with a
// long name, and an RTP sender aimed at a port nobody listens on; --crowd-url: 200 bodies).
// The checks of the later views are in views.mjs, the phone layout and the camera in layout.mjs.
//
// Debian's Chromium through playwright-core (harness.mjs). Protocol with the Python driver on stdout/stdin, one line each:
//   -> "STOP"         (stdout) please stop the gateway
//   <- "STOPPED"      (stdin)  done
//   -> "START"        (stdout) please start it again on the same port
//   <- "RESTARTED"    (stdin)  done
//   -> "RELOAD"       (stdout) please add an adapter "extra" to the file and POST /api/reload
//   <- "RELOADED"     (stdin)  done
//   -> "RESULT {...}" (stdout) the measurements; exit code 0 when every check passed.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { harness } from './harness.mjs';
import { crowdChecks, mocapChecks, plotChecks, tableChecks, xrChecks } from './views.mjs';
import { cameraChecks, filterSortChecks, phoneChecks, plotExtraChecks } from './layout.mjs';

const { args, log, check, launch, close, report } = harness('browser');
const URL_ = args.url;
const API = new URL('/api/entities', URL_).href;
const N = Number(args.entities);

const stdinLines = createInterface({ input: process.stdin });
const waitLine = (want) => new Promise((resolve) => {
  stdinLines.on('line', (l) => { if (l.trim() === want) resolve(); });
});

// what the page shows, read in one task so the table and the scene belong to the same frame;
// with minTimeNs, first wait for a frame built at or after that gateway time
// with staleName, wait for a frame in which that entity is STALE
async function snapshot(page, minTimeNs = 0, staleName = null) {
  return page.evaluate(async ([minT, staleName]) => {
    const ins = window.xrgateInspector;
    const stale = () => !staleName ||
      ins.last.entities.some((e) => e.name === staleName && e.quality === 'STALE');
    await new Promise((resolve) => {
      const poll = () => (ins.last && ins.last.time_ns >= minT && stale() ? resolve()
                                                                          : setTimeout(poll, 1));
      poll();
    });
    // entity rows follow their origin's group row (name, kind, position, Hz, age, quality)
    const rows = {};
    let origin = null;
    for (const tr of document.querySelectorAll('#entities tbody tr')) {
      const c = tr.cells;
      if (tr.classList.contains('group')) {
        origin = tr.dataset.origin;
        continue;
      }
      if (!tr.dataset.name) continue; // "no entity matches"
      rows[tr.dataset.name] = { kind: c[1].textContent, origin, shown: c[0].textContent,
                                position: c[2].textContent.split(',').map(Number),
                                rate: c[3].textContent, age: Number(c[4].textContent),
                                quality: c[5].textContent,
                                qualityColor: getComputedStyle(c[5]).color };
    }
    const adapters = {};
    for (const tr of document.querySelectorAll('#adapters tbody tr')) {
      const c = tr.cells;
      adapters[tr.dataset.name] = { type: c[1].textContent, state: c[2].textContent,
                                    in_per_s: Number(c[4].textContent),
                                    backwards: c[7].textContent,
                                    backwardsTitle: c[7].title };
    }
    const frame = {};
    for (const e of ins.last.entities) frame[e.name] = e;
    return { time_ns: Number(document.getElementById('entities').dataset.timeNs),
             frame_time_ns: ins.last ? ins.last.time_ns : null, frame,
             frames: ins.frames, connects: ins.connects, connection: ins.connection,
             rows, adapters, poses: ins.view ? ins.view.poses() : null,
             viewError: ins.viewError,
             staleRow: !!staleName && document.querySelector(`#entities tr[data-name="${staleName}"]`)
               .classList.contains('stale') };
  }, [minTimeNs, staleName]);
}

const norm = (v) => Math.hypot(...v);
const sub = (a, b) => a.map((x, i) => x - b[i]);
function qmul([ax, ay, az, aw], [bx, by, bz, bw]) {
  return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
          aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz];
}
function rotateBy(q, w, dt) { // world-frame angular velocity w (rad/s) for dt s
  const ang = norm(w) * dt;
  if (Math.abs(ang) < 1e-12) return q;
  const s = Math.sin(ang / 2);
  return qmul([w[0] * dt / ang * s, w[1] * dt / ang * s, w[2] * dt / ang * s, Math.cos(ang / 2)], q);
}
const angleDeg = (a, b) =>
  2 * Math.acos(Math.min(1, Math.abs(a.reduce((s, x, i) => s + x * b[i], 0)))) * 180 / Math.PI;

// compare a snapshot with /api/entities extrapolated to the snapshot's frame time, and the
// scene with the frame it shows
function comparePoses(snap, api, label) {
  const dt = (snap.frame_time_ns - api.time_ns) * 1e-9;
  check(snap.time_ns === snap.frame_time_ns, `${label}: the table shows the last frame`);
  check(dt >= 0 && dt < 1, `${label}: page frame within 1 s after /api/entities`, dt);
  let worstTable = 0, worstScene = 0, worstAngle = 0, worstFrame = 0, h2 = 0;
  for (const e of api.entities) {
    if (e.origin !== 'demo') continue; // the slow source is held/stale: nothing to extrapolate
    const want = e.position.map((p, i) => p + e.velocity[i] * dt);
    const row = snap.rows[e.name];
    const pose = snap.poses && snap.poses[e.name];
    check(row, `${label}: ${e.name} listed`);
    check(pose, `${label}: ${e.name} in the 3D scene`);
    if (!row || !pose) continue;
    check(row.kind === e.kind && row.origin === e.origin, `${label}: ${e.name} kind/origin`, row);
    worstTable = Math.max(worstTable, norm(sub(row.position, want)));
    worstScene = Math.max(worstScene, norm(sub(pose.position, want)));
    worstAngle = Math.max(worstAngle,
                          angleDeg(pose.orientation, rotateBy(e.orientation, e.angular_velocity, dt)));
    const f = snap.frame[e.name];
    // how far each side extrapolates from a real sample (s): the API from its sample across
    // its age and then dt, the frame from its own sample across its age; on a loaded machine the
    // synth ticks and the SSE frames run late, so these are measured, not assumed
    h2 = Math.max(h2, (e.age_ms * 1e-3 + dt) ** 2 + (f.age_ms * 1e-3) ** 2);
    worstFrame = Math.max(worstFrame, norm(sub(pose.position, f.position)),
                          norm(sub(pose.orientation, f.orientation)));
  }
  // the scene is the frame, exactly; against the API: the table rounds to 1 mm, and constant-
  // velocity extrapolation over a horizon h errs by up to accel/2 * h^2 (synth: accel < 4 m/s^2,
  // angular < 200 deg/s^2) on each side, h measured above (~30 ms, more on a loaded machine)
  check(worstFrame < 1e-6, `${label}: scene poses are the SSE frame's`, worstFrame);
  const tol = 0.006 + 2 * h2;
  const angTol = 0.5 + 100 * h2;
  check(worstTable < tol, `${label}: table positions match /api/entities (m)`, { worstTable, dt, h2 });
  check(worstScene < tol, `${label}: scene positions match /api/entities (m)`, { worstScene, dt, h2 });
  check(worstAngle < angTol, `${label}: scene orientations match /api/entities (deg)`,
        { worstAngle, dt });
  return { dt, h2, worstTable, worstScene, worstAngle };
}

async function main() {
  const result = {};
  const ctx = await launch({ viewport: { width: 1280, height: 760 } });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    const external = [];
    page.on('request', (r) => { if (!r.url().startsWith(new URL(URL_).origin)) external.push(r.url()); });

    const t0 = Date.now();
    await page.goto(URL_, { waitUntil: 'load' });
    result.load_ms = Date.now() - t0;
    await page.waitForFunction((n) => {
      const ins = window.xrgateInspector;
      return ins && (ins.viewError || (ins.view && ins.view.entities.size === n &&
              document.querySelectorAll('#entities tbody tr[data-name]').length === n &&
              ins.view.frames > 2 && ins.xr));
    }, N, { timeout: 15000 });
    result.first_frame_ms = Date.now() - t0;

    const apiA = await (await fetch(API)).json();
    const a = await snapshot(page, apiA.time_ns);
    check(!a.viewError, '3D view loaded (three.js embedded, WebGL available)', a.viewError);
    check(Object.keys(a.rows).length === N, `${N} entities listed`, Object.keys(a.rows));
    check(a.connection === 'live', 'connection live', a.connection);
    result.a = comparePoses(a, apiA, 'first look');

    // 500 ms of gateway time later (and >= 3 more SSE frames), however long that takes here
    const later = await page.waitForFunction(([f, t]) => {
      const ins = window.xrgateInspector;
      return ins.frames >= f + 3 && ins.last && ins.last.time_ns >= t;
    }, [a.frames, a.frame_time_ns + 500e6], { timeout: 15000 }).then(() => true, () => false);
    check(later, 'SSE frames keep arriving (>= 3 over 500 ms of gateway time)');
    const apiB = await (await fetch(API)).json();
    const b = await snapshot(page, apiB.time_ns);
    result.b = comparePoses(b, apiB, '500 ms later');
    for (const name of Object.keys(a.rows).filter((n) => n.startsWith('demo/'))) {
      const dTable = norm(sub(b.rows[name].position, a.rows[name].position));
      const dScene = norm(sub(b.poses[name].position, a.poses[name].position));
      check(dTable > 0.001 && dScene > 0.001, `${name} moves over 500 ms`, { dTable, dScene });
    }
    const demo = b.adapters.demo;
    check(demo && demo.type === 'synth' && demo.state === 'running', 'adapter demo listed', demo);
    check(demo && demo.in_per_s > 0, 'adapter row shows a non-zero input rate', demo);
    const kinds = Object.fromEntries(Object.entries(b.poses).map(([k, v]) => [k, v.kind]));
    check(kinds['demo/head'] === 'head' && kinds['demo/left_hand'] === 'left_hand',
          'glyph kinds', kinds);
    const demoPoses = Object.entries(b.poses).filter(([n]) => n.startsWith('demo/'));
    check(demoPoses.every(([, p]) => p.trail > 3), 'trails drawn', demoPoses.map(([, p]) => p.trail));
    // honest colours: PREDICTED is the normal state of a live source, not a warning
    check(demoPoses.some(([, p]) => p.quality === 'PREDICTED') &&
          demoPoses.every(([, p]) => p.quality !== 'PREDICTED' || p.badge === ''),
          'PREDICTED poses carry no badge', demoPoses.map(([n, p]) => [n, p.quality, p.badge]));
    const pred = Object.values(b.rows).filter((r) => r.quality === 'PREDICTED');
    check(pred.length && pred.every((r) => r.qualityColor === 'rgb(138, 147, 162)'),
          'PREDICTED in the table in the plain dim colour, not amber', pred.map((r) => r.qualityColor));
    check(b.rows['demo/head'].shown === 'head', 'rows show names without the group\'s origin',
          b.rows['demo/head']);
    check(!demo || (demo.backwards === '0' && /not an error/i.test(demo.backwardsTitle)),
          '"not newer" samples are a column of their own, explained', demo);
    check(await page.evaluate(() => document.getElementById('enter-vr').hidden &&
                              window.xrgateInspector.xr && !window.xrgateInspector.xr.available),
          'no "Enter VR" without an immersive-vr device');
    // coloured by origin: one colour per adapter, different adapters differ
    const colorsOf = (o) => new Set(Object.entries(b.poses).filter(([n]) => n.startsWith(o + '/'))
      .map(([, p]) => p.color));
    const cDemo = colorsOf('demo'), cSlow = colorsOf('slow');
    check(cDemo.size === 1 && cSlow.size === 1 && [...cDemo][0] !== [...cSlow][0],
          'entities coloured by origin adapter', { demo: [...cDemo], slow: [...cSlow] });
    check(b.adapters.slow && b.adapters.slow.type === 'synth', 'adapter slow listed', b.adapters);
    // STALE: the slow body (0.5 Hz, stale after 200 ms) is marked in the scene and the table
    const s = await snapshot(page, 0, 'slow/body0');
    const sp = s.poses['slow/body0'];
    check(sp.quality === 'STALE' && sp.staleMarked && sp.badge === 'STALE',
          'STALE entity marked in the 3D view (grey, halo, badge)', sp);
    check(s.rows['slow/body0'].quality === 'STALE' &&
          s.rows['slow/body0'].qualityColor === 'rgb(255, 107, 107)', 'STALE entity red in the table',
          s.rows['slow/body0']);
    check(s.rows['slow/body0'].rate === '–', 'a STALE entity shows no rate', s.rows['slow/body0']);
    // follow frames the live entities: not the STALE one (read with the qualities, one task)
    const fol = await page.evaluate(() => {
      const v = window.xrgateInspector.view;
      const p = v.poses();
      return { followed: v.followedNames().sort(),
               live: Object.keys(p).filter((n) => p[n].quality !== 'STALE').sort(),
               stale: Object.keys(p).filter((n) => p[n].quality === 'STALE') };
    });
    check(fol.stale.length > 0 && JSON.stringify(fol.followed) === JSON.stringify(fol.live),
          'follow frames the live entities only (not the STALE one)', fol);
    // the halo is sized to what it marks (the 7 cm body cube), not one 0.3 m sphere for all
    check(sp.halo > 0.03 && sp.halo < 0.1 && s.poses['demo/head'].halo > sp.halo &&
          s.poses['demo/head'].halo < 0.2, 'STALE halo sized to the entity',
          { body: sp.halo, head: s.poses['demo/head'].halo });
    check(s.staleRow, 'STALE table row styled');

    // the WebGL canvas actually shows something: pixels differing from the background
    result.pixels = await page.evaluate(() => window.xrgateInspector.view.pixelStats());
    check(result.pixels.drawn > 0.002 * result.pixels.total, 'the 3D view draws (non-background pixels)',
          result.pixels);
    check(result.pixels.origin > 50, 'entities drawn in their origin colour', result.pixels);

    mkdirSync(dirname(args.screenshot), { recursive: true });
    await page.screenshot({ path: args.screenshot });
    result.screenshot = args.screenshot;

    // the entity list: filter, collapsible origins, selection and its plots
    log('phase: await tableChecks');
    result.tables = await tableChecks(page, check);
    result.filterSort = await filterSortChecks(page, check);
    result.plots = await plotChecks(page, check, N);
    result.plotsExtra = await plotExtraChecks(page, check);

    // reconnect: the gateway goes away and comes back on the same port
    log('phase: console.log');
    console.log('STOP');
    await waitLine('STOPPED');
    // the 3D view greys under a note saying since when, by the page's own liveness logic (no
    // frame for 800 ms, or the stream's error), and the header stops claiming live counts
    const stopAt = Date.now();
    await page.waitForFunction(() => {
      const v = document.getElementById('view');
      const note = document.getElementById('view-dead');
      return v.classList.contains('dead') && !note.hidden && / since /.test(note.textContent);
    }, null, { timeout: 10000 }).catch(() => {});
    result.greyed_ms = Date.now() - stopAt;
    const dead3d = await page.evaluate(() => {
      const canvas = document.querySelector('#view canvas');
      return { dead: document.getElementById('view').classList.contains('dead'),
               filter: getComputedStyle(canvas).filter,
               note: (document.getElementById('view-dead') || { hidden: true }).hidden ? null
                 : document.getElementById('view-dead').textContent,
               summary: document.getElementById('summary').textContent };
    });
    check(dead3d.dead && /grayscale/.test(dead3d.filter) && / since \d/.test(dead3d.note || ''),
          'disconnected: the 3D view greyed under "gateway unreachable since <time>"', dead3d);
    check(/^last frame: /.test(dead3d.summary), 'disconnected: the header counts are the last frame\'s',
          dead3d.summary);
    await page.waitForFunction(() => window.xrgateInspector.connection !== 'live', null,
                               { timeout: 10000 });
    const lost = await page.evaluate(() => document.getElementById('conn').textContent);
    check(/lost|disconnected|connecting/.test(lost), 'connection loss shown', lost);
    // the tables say so too: greyed out, a banner, states unknown, ages growing (past 1 s: wait
    // for it, bounded, rather than for a fixed time)
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('#entities tbody tr')]
        .filter((tr) => !tr.classList.contains('group'));
      return rows.length && rows.every((tr) => Number(tr.cells[4].textContent) > 1000);
    }, null, { timeout: 15000 }).catch(() => {});
    const gone = await snapshot(page);
    const dead = await page.evaluate(() => ({
      greyed: document.getElementById('side').classList.contains('disconnected'),
      banner: document.getElementById('stale-banner').hidden ? null
        : document.getElementById('stale-banner').textContent }));
    check(dead.greyed && /gateway unreachable/.test(dead.banner || ''),
          'disconnected: tables greyed out under a banner', dead);
    check(Object.values(gone.adapters).every((a) => a.state === 'unknown' && Number.isNaN(a.in_per_s)),
          'disconnected: adapter states "unknown", no rates', gone.adapters);
    check(Object.values(gone.rows).every((r) => r.quality === 'unknown' && r.rate === '–' &&
                                              r.age > 1000),
          'disconnected: entity quality "unknown", no rate, ages growing past 1 s',
          Object.values(gone.rows).map((r) => [r.quality, r.rate, r.age]));
    await page.screenshot({ path: args.screenshot.replace(/\.png$/, '-disconnected.png') });
    console.log('START');
    await waitLine('RESTARTED');
    // connections counted while the gateway was down (the page may reconnect to the restarted
    // one before we could read the count after RESTARTED: then a later count would never grow)
    const before = gone.connects;
    await page.waitForFunction((c) => window.xrgateInspector.connects > c &&
                                      window.xrgateInspector.connection === 'live', before,
                               { timeout: 15000 });
    await page.waitForFunction((n) => window.xrgateInspector.last.entities.length === n, N,
                               { timeout: 15000 });
    const c = await snapshot(page);
    await page.waitForFunction((f) => window.xrgateInspector.frames > f, c.frames,
                               { timeout: 15000 }).catch(() => {});
    const d = await snapshot(page);
    check(d.frames > c.frames && Object.keys(d.rows).length === N, 'reconnected and streaming',
          { frames: [c.frames, d.frames], rows: Object.keys(d.rows).length });
    check(d.adapters.demo.state === 'running' && d.rows['demo/head'].quality !== 'unknown' &&
          await page.evaluate(() => !document.getElementById('side').classList.contains('disconnected') &&
                              !document.getElementById('view').classList.contains('dead')),
          'reconnected: live states again, not greyed out', d.adapters.demo);

    // a configuration reload that adds an adapter: the page shows it without being reloaded
    log('phase: reload');
    const connects = await page.evaluate(() => window.xrgateInspector.connects);
    console.log('RELOAD');
    await waitLine('RELOADED');
    await page.waitForFunction(() => window.xrgateInspector.reloads.length > 0 &&
      window.xrgateInspector.last.adapters.some((a) => a.name === 'extra'), null,
                               { timeout: 15000 }).catch(() => {});
    const r = await page.evaluate(() => ({
      reload: window.xrgateInspector.reloads[0] || null,
      connects: window.xrgateInspector.connects,
      rows: [...document.querySelectorAll('#adapters tbody tr')].map((tr) => tr.textContent),
      note: document.getElementById('reload-note').hidden ? null
        : document.getElementById('reload-note').textContent }));
    check(r.reload && r.reload.ok && r.reload.added.includes('extra') &&
          r.reload.adapters.some((a) => a.name === 'extra'),
          'reload: event: reload announces the added adapter', r.reload);
    check(r.rows.some((t) => t.includes('extra')) && r.connects === connects,
          'reload: the adapter table shows it, on the same stream (no page reload, no reconnect)',
          { rows: r.rows, connects: [connects, r.connects] });
    check(/configuration reloaded: \+extra/.test(r.note || ''), 'reload: a notice says what changed',
          r.note);

    // a 31-joint skeleton (the CMU walk), 200 bodies, and the WebXR mode against a stub
    const shot = (name) => args.screenshot.replace(/\.png$/, `-${name}.png`);
    log('phase: await mocapChecks');
    result.mocap = await mocapChecks(ctx, args['mocap-url'], check, shot('mocap'), consoleErrors);
    log('phase: await phoneChecks');
    result.phone = await phoneChecks(ctx, args['mocap-url'], check, shot('phone'), consoleErrors);
    result.camera = await cameraChecks(ctx, args['mocap-url'], check, consoleErrors);
    log('phase: await crowdChecks');
    result.crowd = await crowdChecks(ctx, args['crowd-url'], check, shot('crowd'), consoleErrors);
    log('phase: await xrChecks');
    result.xr = await xrChecks(ctx, args['mocap-url'], check, shot('xr'), consoleErrors);

    check(external.length === 0, 'no request leaves the gateway (works offline)', external);
    check(consoleErrors.filter((m) => !/EventSource|ERR_CONNECTION_REFUSED|Failed to load resource/.test(m))
      .length === 0, 'no console errors', consoleErrors);
    result.console = consoleErrors;
  } finally {
    await close(ctx);
  }
  report(result);
}

main().catch((e) => {
  log('error:', e && e.stack ? e.stack : e);
  report({ error: String(e) });
});
