// The headset as a source, tested as a user would: Meta's IWER (an emulated Quest 3 with
// controllers and hand tracking, npm `iwer`) is injected into headless Chromium before the
// inspector page loads; the page's "Enter VR" session streams to the gateway's webxr adapter.
// Driven by tests/integration/test_webxr_browser.py:
//
//   node webxr.mjs --url http://127.0.0.1:PORT/ --node-modules <build>/web/node_modules
//                  --adapter xr --bound SECONDS --screenshot FILE
//
// Prints "RESULT {...}" (checks and figures); exit code 0 when every check passed.
import { join } from 'node:path';
import { harness } from './harness.mjs';

const { args, log, check, launch, close, report } = harness('webxr');
const IWER_JS = join(args['node-modules'], 'iwer', 'build', 'iwer.min.js');
const URL_ = args.url;
const A = args.adapter;
// An http:// origin that is not secure, whatever this machine is called: 192.0.2.1
// (TEST-NET-1, RFC 5737: never a real host) is mapped to loopback inside Chromium
// (--host-resolver-rules), so the page comes from the test's gateway while its origin is not
// loopback (Chromium's secure contexts: https, localhost, 127/8, ::1). An address rather than a
// name like insecure.test: without a token the admin server answers only a Host that is an IP
// literal, localhost or its own name (its DNS-rebinding check, docs/admin-api.md).
const INSECURE = '192.0.2.1';
const BOUND_MS = Number(args.bound) * 1000;

async function api(path) {
  const r = await fetch(new URL(path, URL_));
  return r.json();
}
async function entities() {
  return (await api('/api/entities')).entities;
}

// ---- small rigid-transform math (column-major 4x4, as gl-matrix) ----
function mat(p, q) {
  const [x, y, z, w] = q;
  return [1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), 0,
          2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), 0,
          2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), 0,
          p[0], p[1], p[2], 1];
}
function mul(a, b) {
  const o = new Array(16).fill(0);
  for (let c = 0; c < 4; c++)
    for (let r = 0; r < 4; r++)
      for (let k = 0; k < 4; k++) o[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
  return o;
}
function quatOf(m) {
  const [m00, m10, m20, , m01, m11, m21, , m02, m12, m22] = m;
  const t = m00 + m11 + m22;
  let q;
  if (t > 0) {
    const s = Math.sqrt(t + 1) * 2;
    q = [(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4];
  } else if (m00 > m11 && m00 > m22) {
    const s = Math.sqrt(1 + m00 - m11 - m22) * 2;
    q = [s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s];
  } else if (m11 > m22) {
    const s = Math.sqrt(1 + m11 - m00 - m22) * 2;
    q = [(m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s];
  } else {
    const s = Math.sqrt(1 + m22 - m00 - m11) * 2;
    q = [(m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s];
  }
  return q;
}
function angleDeg(a, b) {
  const d = Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  return 2 * Math.acos(Math.min(1, d)) * 180 / Math.PI;
}
function quatAxis(axis, deg) {
  const h = deg * Math.PI / 360, n = Math.hypot(...axis);
  return [axis[0] / n * Math.sin(h), axis[1] / n * Math.sin(h), axis[2] / n * Math.sin(h), Math.cos(h)];
}

// Wait until every target's table sample matches its expected pose; returns ms taken. The
// targets come from one XR frame, so they share a capture time: the newest sample of the first
// one (sample_ns) is asked for with ?t_ns= and every target answers EXACT at it.
async function waitPoses(targets, t0, limitMs) {
  let worst = null, polls = 0;
  const names = Object.keys(targets);
  while (Date.now() - t0 < limitMs) {
    polls++;
    worst = { pos: 0, deg: 0, missing: [], polls };
    const live = (await entities()).find((x) => x.name === names[0]);
    if (!live) continue;
    const at = (await api(`/api/entities?t_ns=${live.sample_ns}`)).entities;
    for (const name of names) {
      const s = at.find((x) => x.name === name);
      if (!s || s.quality !== 'EXACT') {
        worst.missing.push(name);
        continue;
      }
      const want = targets[name];
      worst.pos = Math.max(worst.pos, Math.hypot(...s.position.map((v, i) => v - want.p[i])));
      worst.deg = Math.max(worst.deg, angleDeg(s.orientation, want.q));
    }
    if (!worst.missing.length && worst.pos <= 0.001 && worst.deg <= 0.1)
      return { ms: Date.now() - t0, worst };
  }
  return { ms: null, worst };
}

// The page says why XR is unavailable, in the page (#xr-status), for each cause.
async function whyUnavailable(ctx) {
  const port = new URL(URL_).port;
  const cases = [
    ['not a secure origin', `http://${INSECURE}:${port}/`, null,
     `WebXR needs a secure origin: http://${INSECURE}:${port} is not one`],
    ['no WebXR', URL_, () => {
      Object.defineProperty(Navigator.prototype, 'xr', { get: () => undefined });
    }, 'this browser has no WebXR (navigator.xr is missing)'],
    ['no device', URL_, () => {
      const xr = { isSessionSupported: async () => false };
      Object.defineProperty(Navigator.prototype, 'xr', { get: () => xr });
    }, 'no XR device: isSessionSupported is false for immersive-vr and immersive-ar'],
    ['session refused', URL_, () => {
      const xr = { isSessionSupported: async () => true,
                   requestSession: async () => { throw new DOMException('denied by the test', 'NotAllowedError'); } };
      Object.defineProperty(Navigator.prototype, 'xr', { get: () => xr });
    }, 'the browser refused the immersive-vr session: denied by the test'],
  ];
  const out = {};
  for (const [what, url, init, want] of cases) {
    const page = await ctx.newPage();
    try {
      log('unavailable case:', what);
      if (init) await page.addInitScript(init);
      await page.goto(url, { waitUntil: 'load' });
      await page.waitForFunction(() => window.xrgateInspector && window.xrgateInspector.xr,
                                 null, { timeout: 20000 });
      if (what === 'session refused') {
        await page.click('#enter-vr');
        await page.waitForFunction(() => window.xrgateInspector.xr.error, null, { timeout: 10000 });
      }
      const shown = await page.evaluate(() => {
        const el = document.getElementById('xr-status');
        return { text: el.textContent, visible: !el.hidden && el.offsetWidth > 0,
                 vr: document.getElementById('enter-vr').textContent };
      });
      out[what] = shown;
      check(shown.visible && shown.text.includes(want), `XR unavailable, said in the page: ${what}`,
            { shown, want });
    } finally {
      await page.close();
    }
  }
  return out;
}

async function main() {
  const result = {};
  const ctx = await launch({ viewport: { width: 480, height: 320 },
                             args: [`--host-resolver-rules=MAP ${INSECURE} 127.0.0.1`,
                                    '--no-proxy-server'] });
  try {
    const page = ctx.pages()[0] || await ctx.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // IWER before the page's own scripts: navigator.xr is the emulated Quest 3
    await page.addInitScript({ path: IWER_JS });
    await page.addInitScript(() => {
      const d = new IWER.XRDevice(IWER.metaQuest3);
      d.installRuntime({ forceInstall: true });
      d.stereoEnabled = false;
      window.__xrDevice = d;
    });
    await page.goto(URL_, { waitUntil: 'load' });
    await page.waitForFunction(() => window.xrgateInspector && window.xrgateInspector.xr,
                               null, { timeout: 20000 });
    const ui = await page.evaluate(() => ({
      vr: !document.getElementById('enter-vr').hidden,
      ar: !document.getElementById('enter-ar').hidden,
      xr: window.xrgateInspector.xr }));
    check(ui.vr && ui.ar && ui.xr.available, 'IWER Quest 3: "Enter VR" and "Enter AR" shown', ui);

    // ---- controllers: enter VR, move head and controllers ----
    await page.click('#enter-vr');
    await page.waitForFunction(() => {
      const s = window.xrgateInspector.xr.stream;
      return s && s.session && s.sent > 5;
    }, null, { timeout: 20000 });
    const st = await page.evaluate(() => ({ xr: window.xrgateInspector.xr,
      status: document.getElementById('xr-status').textContent }));
    const S = `${A}/${st.xr.stream.session}`;
    check(st.xr.presenting && st.xr.referenceSpace === 'local-floor' &&
          st.status.includes(`${S}/`) && st.xr.panel.includes(`${S}/`),
          'the session streams: the page and the headset panel say where to', st);

    await page.waitForFunction((s) => {
      const v = window.xrgateInspector.view;
      return v.entities.has(`${s}/head`) && v.entities.has('demo/head');
    }, S, { timeout: 20000 });
    const drawn = await page.evaluate((s) => {
      const v = window.xrgateInspector.view;
      return { own: v.entities.get(`${s}/head`).body.visible,
               other: v.entities.get('demo/head').body.visible };
    }, S);
    check(!drawn.own && drawn.other, 'in the headset: its own head is not drawn, the other ' +
          'entities are', drawn);
    const grip = await page.evaluate(() => ({
      left: IWER.metaQuest3.controllerConfig.layout.left.gripOffsetMatrix,
      right: IWER.metaQuest3.controllerConfig.layout.right.gripOffsetMatrix }));
    const head = { p: [0.25, 1.55, -0.4], q: quatAxis([0.2, 1, 0.1], 35) };
    const left = { p: [-0.3, 1.1, -0.5], q: quatAxis([1, 0.3, 0], -40) };
    const right = { p: [0.35, 1.2, -0.45], q: quatAxis([0, 0.4, 1], 60) };
    const want = (c, g) => {
      const m = mul(mat(c.p, c.q), g || mat([0, 0, 0], [0, 0, 0, 1]));
      return { p: [m[12], m[13], m[14]], q: quatOf(m) };
    };
    const targets = {
      [`${S}/head`]: head,
      [`${S}/left_controller`]: want(left, grip.left),
      [`${S}/right_controller`]: want(right, grip.right),
    };
    // a first move, untimed: the session's first frames (shaders compiled, controller models
    // set up by the software renderer) are slow in headless Chromium
    const warm = { p: [0, 1.6, 0], q: [0, 0, 0, 1] };
    const tw = await page.evaluate((h) => {
      window.__xrDevice.position.set(...h.p);
      window.__xrDevice.quaternion.set(...h.q);
      return Date.now();
    }, warm);
    result.warmup_ms = (await waitPoses({ [`${S}/head`]: warm }, tw, 20000)).ms;
    // the time is taken in the page when the emulated device moves (the same wall clock as here)
    const t0 = await page.evaluate(([h, l, r]) => {
      const d = window.__xrDevice;
      d.position.set(...h.p);
      d.quaternion.set(...h.q);
      d.controllers.left.position.set(...l.p);
      d.controllers.left.quaternion.set(...l.q);
      d.controllers.right.position.set(...r.p);
      d.controllers.right.quaternion.set(...r.q);
      d.controllers.right.updateButtonValue('trigger', 1);
      d.controllers.right.updateAxes('thumbstick', 0.5, -0.25);
      return Date.now();
    }, [head, left, right]);
    const moved = await waitPoses(targets, t0, BOUND_MS);
    result.move_ms = moved.ms;
    check(moved.ms !== null, `head and controllers in /api/entities within ${BOUND_MS} ms ` +
          '(<= 1 mm, <= 0.1 deg)', moved);
    // a second move, to see it is not the first pose only
    head.p = [-0.1, 1.7, 0.2];
    head.q = quatAxis([0, 1, 0], -70);
    const t1 = await page.evaluate((h) => {
      window.__xrDevice.position.set(...h.p);
      window.__xrDevice.quaternion.set(...h.q);
      return Date.now();
    }, head);
    const moved2 = await waitPoses({ [`${S}/head`]: head }, t1, BOUND_MS);
    result.move2_ms = moved2.ms;
    check(moved2.ms !== null, `the head moved again: in /api/entities within ${BOUND_MS} ms`, moved2);
    const rc = (await entities()).find((e) => e.name === `${S}/right_controller`);
    const ex = (rc && rc.extra) || {};
    result.right_extra = ex;
    // xr-standard mapping: button 0 the trigger, axes 2 and 3 the thumbstick (analogs 32 + j)
    check(rc && rc.kind === 'controller' && ex.buttons && ex.buttons[0] === 1 &&
          ex.analogs && ex.analogs[0] === 1 && ex.analogs[34] === 0.5 && ex.analogs[35] === -0.25,
          'right controller: trigger pressed (button 0, analog 0 = 1), thumbstick (0.5, -0.25) ' +
          'as analogs 34 and 35', rc);
    const ad = (await api('/api/adapters')).adapters.find((a) => a.name === A);
    result.adapter = ad;
    check(ad && ad.counters.sessions >= 1 && ad.counters.bad_messages === 0,
          'adapter counters: a session, no bad message', ad && ad.counters);
    await page.screenshot({ path: args.screenshot });

    // ---- hands: the emulated device switches to hand tracking ----
    await page.evaluate(() => { window.__xrDevice.primaryInputMode = 'hand'; });
    let hands = null;
    const th = Date.now();
    while (Date.now() - th < 10000) {
      const all = await entities();
      hands = ['left', 'right'].map((h) => all.filter((e) => e.name.startsWith(`${S}/${h}_hand/`)));
      if (hands.every((l) => l.length === 25)) break;
    }
    const parentsOk = hands.every((l, i) => {
      const side = i ? 'right' : 'left';
      const by = Object.fromEntries(l.map((e) => [e.name.split('/').pop(), e]));
      return by.wrist && !by.wrist.parent && by.wrist.kind === `${side}_hand` &&
        by['thumb-metacarpal'].parent === `${S}/${side}_hand/wrist` &&
        by['index-finger-tip'].parent === `${S}/${side}_hand/index-finger-phalanx-distal` &&
        l.filter((e) => e.parent).length === 24;
    });
    result.joints = hands.map((l) => l.length);
    check(hands.every((l) => l.length === 25) && parentsOk,
          'hand tracking: 25 joints per hand with WebXR names and parents', result.joints);

    // ---- the session ends: STALE, then expired ----
    const names = [`${S}/head`, `${S}/left_hand/wrist`];
    // the user leaves the session from the headset (IWER's canvas covers the page's button)
    await page.evaluate(() => window.__xrDevice.activeSession.end());
    await page.waitForFunction(() => !window.xrgateInspector.xr.presenting, null,
                               { timeout: 10000 });
    let stale = false, gone = false;
    const te = Date.now();
    while (Date.now() - te < 20000 && !gone) {
      const all = await entities();
      const es = names.map((n) => all.find((e) => e.name === n));
      if (es.every((e) => e && e.quality === 'STALE')) stale = true;
      if (es.every((e) => !e)) gone = true;
    }
    check(stale && gone, 'session closed: its entities go STALE, then expire', { stale, gone });
    const after = await api('/api/adapters');
    const a2 = after.adapters.find((a) => a.name === A);
    check(a2.counters.clients === 0, 'the socket is closed with the session', a2.counters);

    // ---- immersive-ar: the same stream, the state in the DOM overlay ----
    await page.evaluate(() => { window.__xrDevice.primaryInputMode = 'controller'; });
    await page.click('#enter-ar');
    await page.waitForFunction(() => {
      const x = window.xrgateInspector.xr;
      return x.presenting && x.mode === 'immersive-ar' && x.stream && x.stream.sent > 5;
    }, null, { timeout: 20000 });
    const ar = await page.evaluate(() => {
      const o = document.getElementById('xr-overlay');
      return { overlay: o.textContent, shown: !o.hidden, session: window.xrgateInspector.xr.stream.session };
    });
    const arHead = `${A}/${ar.session}/head`;
    let arSeen = null;
    const ta = Date.now();
    while (Date.now() - ta < 10000 && !arSeen) {
      arSeen = (await entities()).find((e) => e.name === arHead && e.quality !== 'STALE');
    }
    check(ar.shown && ar.overlay.includes(`${A}/${ar.session}/`) && arSeen,
          'Enter AR: an immersive-ar session streams too; the DOM overlay says where to', ar);
    await page.evaluate(() => window.__xrDevice.activeSession.end());
    await page.waitForFunction(() => !window.xrgateInspector.xr.presenting, null,
                               { timeout: 10000 });
    check(errors.length === 0, 'no page errors', errors);
    await page.close();
    result.unavailable = await whyUnavailable(ctx);
  } catch (err) {
    result.error = String(err && err.stack ? err.stack : err);
  } finally {
    await close(ctx);
  }
  report(result);
}

main();
