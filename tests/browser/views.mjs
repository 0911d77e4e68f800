// Checks of the inspector's views for tests/browser/inspector.mjs: the entity list (filter,
// collapsible origins, selection), the plots, a 31-joint skeleton, 200 bodies and the WebXR
// mode (against a stub of navigator.xr). Each takes `check(cond, what, detail)`.

const rowNames = (page) => page.evaluate(() =>
  [...document.querySelectorAll('#entities tbody tr')].map((tr) =>
    tr.classList.contains('group') ? `[${tr.dataset.origin}]` : tr.dataset.name));

// Wait until the next table render (a state frame arrives ~30 times a second).
const nextFrame = (page) => page.evaluate(() => new Promise((resolve) => {
  const f = window.xrgateInspector.frames;
  const poll = () => (window.xrgateInspector.frames > f + 1 ? resolve() : setTimeout(poll, 5));
  poll();
}));

export async function tableChecks(page, check) {
  const out = {};
  await page.fill('#filter', 'hand');
  await nextFrame(page);
  out.filtered = await rowNames(page);
  check(JSON.stringify(out.filtered) === JSON.stringify(['[demo]', 'demo/left_hand', 'demo/right_hand']),
        'filter box: "hand" leaves the two hands', out.filtered);
  check(/\(2 of 7\)/.test(await page.textContent('#entity-count')), 'count says "2 of 7"');
  await page.fill('#filter', '');
  await nextFrame(page);
  await page.click('#entities tr.group[data-origin="slow"]');
  await nextFrame(page);
  out.collapsed = await rowNames(page);
  check(out.collapsed.includes('[slow]') && !out.collapsed.includes('slow/body0') &&
        out.collapsed.includes('demo/head'), 'an origin group collapses to its header',
        out.collapsed);
  check(/▸ slow · 1 entity\b/.test(await page.textContent('#entities tr.group[data-origin="slow"]')),
        'a collapsed group says so and counts its entities ("1 entity")');
  const peers = await page.$$eval('#adapters tbody tr', (rows) => rows.map((r) => r.textContent));
  check(peers.some((t) => t.includes('synthetic (1 entity)')) &&
        peers.some((t) => t.includes('synthetic (6 entities)')), 'adapter peers count in words', peers);
  await page.click('#entities tr.group[data-origin="slow"]');
  await nextFrame(page);
  out.expanded = await rowNames(page);
  check(out.expanded.includes('slow/body0'), 'and expands again', out.expanded);
  return out;
}

export async function plotChecks(page, check, n) {
  // nothing selected yet: the entity plots say so instead of drawing a scale around nothing
  const before = await page.evaluate(() => ['plot-position', 'plot-rotation', 'plot-rate']
    .map((id) => document.getElementById(id).dataset.empty));
  check(before.every((e) => e === '1'), 'entity plots show "no data" before a selection', before);
  await page.click('#entities tr[data-name="demo/head"]');
  await page.waitForFunction(() => window.xrgateInspector.plots.entity.t.length > 20, null,
                             { timeout: 5000 });
  // two redraws after the data is there (plots.draws counts them), not a sleep
  const draws = await page.evaluate(() => window.xrgateInspector.plots.draws);
  await page.waitForFunction((d) => window.xrgateInspector.plots.draws >= d + 2, draws,
                             { timeout: 10000 });
  const p = await page.evaluate(() => {
    const ins = window.xrgateInspector;
    // non-background pixels of each plot canvas
    const ink = (id) => {
      const cv = document.getElementById(id);
      const px = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
      let k = 0;
      for (let i = 0; i < px.length; i += 4)
        if (Math.abs(px[i] - 0x12) + Math.abs(px[i + 1] - 0x15) + Math.abs(px[i + 2] - 0x1a) > 40) k++;
      return k;
    };
    const en = ins.plots.entity;
    const demo = ins.plots.adapters.get('demo');
    return {
      selected: ins.selected, title: document.getElementById('plot-entity-title').textContent,
      rowSelected: document.querySelector('#entities tr.selected')?.dataset.name,
      ring: ins.view.selected, points: en.t.length, span: en.t[en.t.length - 1] - en.t[0],
      moved: Math.hypot(...en.pos[en.pos.length - 1].map((v, i) => v - en.pos[0][i])),
      rates: en.rate.slice(-3),
      frameRate: ins.last.entities.find((e) => e.name === 'demo/head').rate_hz, adapterPoints: demo ? demo.t.length : 0,
      adapterIn: demo ? demo.in[demo.in.length - 1] : 0,
      age: ins.plots.age.reduce((s, b) => s + b.count, 0),
      empty: ['plot-position', 'plot-rotation', 'plot-rate']
        .map((id) => document.getElementById(id).dataset.empty),
      ink: Object.fromEntries(['plot-position', 'plot-rotation', 'plot-rate', 'plot-adapters',
                               'plot-age'].map((id) => [id, ink(id)])),
    };
  });
  check(p.selected === 'demo/head' && p.rowSelected === 'demo/head' && p.ring === 'demo/head' &&
        /demo\/head/.test(p.title), 'clicking a row selects the entity (row, 3D ring, plots)', p);
  check(p.points > 20 && p.span > 0.5 && p.moved > 0.001,
        'selected entity: position/rotation/rate history over the last seconds', p);
  check(p.rates[p.rates.length - 1] === p.frameRate && p.rates.every((r) => r > 0),
        'selected entity: the rate the stream reports is plotted', [p.rates, p.frameRate]);
  check(p.adapterPoints >= 2 && p.adapterIn > 0, 'per-adapter rate history', p);
  check(p.age === n, 'age histogram counts every entity', p.age);
  check(Object.values(p.ink).every((k) => k > 150), 'every plot draws', p.ink);
  check(p.empty.every((e) => e === '0'), 'the selected entity\'s plots have data', p.empty);
  return p;
}

async function openPage(ctx, url, consoleErrors, init) {
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  if (init) await page.addInitScript(init);
  await page.goto(url, { waitUntil: 'load' });
  return page;
}

const sceneState = (page) => page.evaluate(() => {
  const ins = window.xrgateInspector;
  const poses = ins.view.poses();
  return { n: ins.view.entities.size, bones: ins.view.bones, labels: ins.view.labelStats(),
           inView: ins.view.inView(), poses, frame: ins.last,
           pixels: ins.view.pixelStats() };
});

export async function mocapChecks(ctx, url, check, shot, consoleErrors) {
  const page = await openPage(ctx, url, consoleErrors);
  try {
    await page.waitForFunction(() => {
      const ins = window.xrgateInspector;
      return ins && ins.view && ins.view.entities.size === 31 && ins.view.bones === 30 &&
             ins.view.frames > 10;
    }, null, { timeout: 15000 });
    const out = {};
    const s = await sceneState(page);
    const byName = Object.fromEntries(s.frame.entities.map((e) => [e.name, e]));
    const parents = Object.entries(s.poses).filter(([, p]) => p.parent);
    check(s.bones === 30 && parents.length === 30 &&
          parents.every(([n, p]) => byName[n].parent === p.parent && s.poses[p.parent]),
          '31 joints: 30 bones, each to the parent the stream names', { bones: s.bones });
    check(s.labels.overlaps === 0 && s.labels.visible >= 5 && s.labels.visible < 31,
          '31 joints: some labels, none overlapping (no label wall)', s.labels);
    check(s.pixels.origin > 500, '31 joints: the skeleton is drawn in its origin colour', s.pixels);
    // the long name: the name cell is cut, the quality column is not
    const q = await page.evaluate(() => {
      const tr = [...document.querySelectorAll('#entities tr[data-name]')]
        .find((r) => r.dataset.name.length > 50);
      const side = document.getElementById('side').getBoundingClientRect();
      const cell = tr.cells[5].getBoundingClientRect();
      return { name: tr.dataset.name, quality: tr.cells[5].textContent,
               full: tr.cells[5].scrollWidth <= tr.cells[5].clientWidth,
               inside: cell.right <= side.right + 0.5 && cell.width > 40,
               title: tr.cells[0].title };
    });
    check(q.full && q.inside && q.quality.length > 3 && q.title.startsWith(q.name),
          'a long entity name does not cut the quality column', q);
    // follow (on by default): the walk stays in view in every frame drawn -- once the camera
    // has caught up (on a loaded machine it starts behind), sampled every 12 SSE frames (~0.4 s
    // of the stream) right after a frame was drawn (drawnInView: the fraction that frame shows;
    // the live inView() also counts SSE poses that arrived after it, not drawn yet)
    await page.waitForFunction(() => window.xrgateInspector.view.drawnInView === 1, null,
                               { timeout: 10000 }).catch(() => {});
    const seen = [];
    for (let i = 0; i < 6; i++) {
      const f0 = await page.evaluate(() => window.xrgateInspector.frames);
      await page.waitForFunction((f) => window.xrgateInspector.frames >= f + 12, f0,
                                 { timeout: 10000 }).catch(() => {});
      seen.push(await page.evaluate(() => new Promise((done) => requestAnimationFrame(
        () => setTimeout(() => done(window.xrgateInspector.view.drawnInView), 0)))));
    }
    check(seen.every((f) => f === 1), 'follow: every joint stays in view while the take walks', seen);
    // fit from an odd angle: entities at the edge stay in view
    await page.uncheck('#opt-follow');
    out.fit = await page.evaluate(() => {
      const v = window.xrgateInspector.view;
      v.camera.position.set(v.controls.target.x + 9, v.controls.target.y + 0.5,
                            v.controls.target.z + 0.3);
      v.controls.update();
      const before = v.inView();
      v.fit();
      return { before, after: v.inView() };
    });
    check(out.fit.after === 1, 'fit view frames every joint, including the outermost', out.fit);
    await page.check('#opt-follow');
    // axes toggle, label modes
    await page.uncheck('#opt-axes');
    const axesOff = await page.evaluate(() => Object.values(window.xrgateInspector.view.poses())
      .every((p) => !p.axes));
    await page.check('#opt-axes');
    const axesOn = await page.evaluate(() => Object.values(window.xrgateInspector.view.poses())
      .every((p) => p.axes));
    check(axesOff && axesOn, 'axes toggle hides and shows every triad');
    await page.selectOption('#opt-labels', 'off');
    const off = await page.evaluate(() => window.xrgateInspector.view.labelStats());
    await page.selectOption('#opt-labels', 'all');
    const all = await page.evaluate(() => window.xrgateInspector.view.labelStats());
    await page.selectOption('#opt-labels', 'auto');
    check(off.visible === 0 && all.visible === 31, 'labels: off shows none, all shows 31',
          { off, all });
    // the RTP sender aimed at nobody: ICMP port unreachable shows in its row
    out.rtp = await page.waitForFunction(() => {
      const tr = document.querySelector('#adapters tr[data-name="nowhere"]');
      return tr && /no listener/.test(tr.cells[2].textContent) &&
             tr.cells[2].className.includes('state-bad') && tr.cells[2].title;
    }, null, { timeout: 10000 }).then((h) => h.jsonValue()).catch(() => null);
    check(out.rtp && /port unreachable/.test(out.rtp),
          'RTP sender with no listener: "no listener" in red, explained', out.rtp);
    // the labels laid out again over a few rendered frames (a count, not a sleep)
    await page.waitForFunction((f) => window.xrgateInspector.view.frames >= f + 5,
                               await page.evaluate(() => window.xrgateInspector.view.frames),
                               { timeout: 10000 });
    out.labels = (await sceneState(page)).labels;
    check(out.labels.overlaps === 0, '31 joints at the screenshot: no overlapping labels', out.labels);
    await page.screenshot({ path: shot });
    out.screenshot = shot;
    return out;
  } finally {
    await page.close();
  }
}

export async function crowdChecks(ctx, url, check, shot, consoleErrors) {
  const page = await openPage(ctx, url, consoleErrors);
  try {
    await page.waitForFunction(() => {
      const ins = window.xrgateInspector;
      return ins && ins.view && ins.view.entities.size === 200 && ins.view.frames > 10;
    }, null, { timeout: 20000 });
    await page.waitForFunction((f) => window.xrgateInspector.view.frames >= f + 5,
                               await page.evaluate(() => window.xrgateInspector.view.frames),
                               { timeout: 10000 });
    const s = await sceneState(page);
    const names = (await rowNames(page)).filter((n) => !n.startsWith('['));
    const i2 = names.indexOf('crowd/body2'), i10 = names.indexOf('crowd/body10');
    check(i2 >= 0 && i10 > i2 && names[0] === 'crowd/body0' && names[199] === 'crowd/body199',
          '200 bodies: natural order (body2 before body10)', names.slice(0, 12));
    check(s.labels.overlaps === 0 && s.labels.visible >= 5 && s.labels.visible <= 80,
          '200 bodies: a readable number of labels, none overlapping', s.labels);
    const opts = await page.evaluate(() => ({
      trails: document.getElementById('opt-trails').checked,
      axes: document.getElementById('opt-axes').checked,
      shown: Object.values(window.xrgateInspector.view.poses()).filter((p) => p.axes).length }));
    check(!opts.trails && !opts.axes && opts.shown === 0,
          '200 bodies: trails and axes start off (clutter)', opts);
    check(s.inView === 1, '200 bodies: all in view', s.inView);
    check(s.pixels.origin > 500, '200 bodies: drawn', s.pixels);
    await page.screenshot({ path: shot });
    return { labels: s.labels, screenshot: shot };
  } finally {
    await page.close();
  }
}

// A minimal WebXR device: navigator.xr with one immersive-vr session whose frames carry one view
// from a viewer 1.6 m above the floor origin; XRWebGLLayer renders to the page's canvas.
function xrStub() {
  const calls = (window.__xrCalls = []);
  const f = 1 / Math.tan(Math.PI / 4), near = 0.05, far = 100;
  const projectionMatrix = new Float32Array([f, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) / (near - far),
                                             -1, 0, 0, 2 * far * near / (near - far), 0]);
  const matrix = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1.6, 3, 1]);
  const transform = { matrix, position: { x: 0, y: 1.6, z: 3, w: 1 },
                      orientation: { x: 0, y: 0, z: 0, w: 1 } };
  const view = { eye: 'none', projectionMatrix, transform };
  class Session extends EventTarget {
    constructor() {
      super();
      this.renderState = { baseLayer: null, depthNear: 0.1, depthFar: 1000 };
      this.enabledFeatures = ['local-floor'];
      this.inputSources = [];
      this.frames = 0;
      this.ended = false;
    }
    updateRenderState(s) { calls.push('updateRenderState'); Object.assign(this.renderState, s); }
    async requestReferenceSpace(type) {
      calls.push('requestReferenceSpace:' + type);
      return { type, getOffsetReferenceSpace() { return this; },
               addEventListener() {}, removeEventListener() {} };
    }
    requestAnimationFrame(cb) {
      if (this.ended) return 0;
      const frame = { session: this, getViewerPose: () => ({ views: [view], transform }),
                      getPose: () => null };
      return setTimeout(() => { this.frames++; cb(performance.now(), frame); }, 16);
    }
    cancelAnimationFrame(h) { clearTimeout(h); }
    async end() { this.ended = true; calls.push('end'); this.dispatchEvent(new Event('end')); }
  }
  let session = null;
  Object.defineProperty(navigator, 'xr', { configurable: true, value: {
    isSessionSupported: async (mode) => { calls.push('isSessionSupported:' + mode); return mode === 'immersive-vr'; },
    requestSession: async (mode) => { calls.push('requestSession:' + mode); return (session = new Session()); },
    addEventListener() {}, removeEventListener() {},
  } });
  window.__xrSession = () => session;
  window.XRWebGLBinding = undefined; // no layers API: three.js takes the XRWebGLLayer path
  window.XRWebGLLayer = class {
    constructor(s, gl) {
      calls.push('XRWebGLLayer');
      this.framebuffer = null; // the page's canvas
      this.framebufferWidth = gl.drawingBufferWidth;
      this.framebufferHeight = gl.drawingBufferHeight;
      this.antialias = true;
      this.ignoreDepthValues = false;
    }
    getViewport() { return { x: 0, y: 0, width: this.framebufferWidth, height: this.framebufferHeight }; }
  };
  for (const C of [window.WebGLRenderingContext, window.WebGL2RenderingContext])
    if (C) C.prototype.makeXRCompatible = async function () { calls.push('makeXRCompatible'); };
}

export async function xrChecks(ctx, url, check, shot, consoleErrors) {
  const page = await openPage(ctx, url, consoleErrors, xrStub);
  try {
    await page.waitForFunction(() => {
      const ins = window.xrgateInspector;
      return ins && ins.xr && ins.view && ins.view.entities.size === 31;
    }, null, { timeout: 15000 });
    const button = await page.evaluate(() => ({
      hidden: document.getElementById('enter-vr').hidden,
      text: document.getElementById('enter-vr').textContent }));
    check(!button.hidden && button.text === 'Enter VR', 'navigator.xr present: "Enter VR" shown', button);
    await page.click('#enter-vr');
    await page.waitForFunction(() => window.xrgateInspector.xr.presenting &&
                                     window.xrgateInspector.view.xrFrames > 10, null,
                               { timeout: 10000 });
    const framesBefore = await page.evaluate(() => window.xrgateInspector.frames);
    await page.waitForFunction((f) => window.xrgateInspector.frames > f, framesBefore,
                               { timeout: 10000 });
    const s = await page.evaluate(() => {
      const ins = window.xrgateInspector;
      const cam = ins.view.renderer.xr.getCamera().position;
      const hips = ins.last.entities.find((e) => e.name === 'take/Hips');
      return { calls: window.__xrCalls, xr: ins.xr, frames: ins.frames,
               button: document.getElementById('enter-vr').textContent,
               camera: [cam.x, cam.y, cam.z], hipsScene: ins.view.poses()['take/Hips'].position,
               hipsFrame: hips.position, sessionFrames: window.__xrSession().frames,
               xrFrames: ins.view.xrFrames };
    });
    check(s.calls.includes('requestSession:immersive-vr') &&
          s.calls.includes('requestReferenceSpace:local-floor') && s.calls.includes('XRWebGLLayer'),
          'Enter VR: an immersive-vr session on local-floor with a WebGL layer', s.calls);
    check(s.xr.presenting && s.button === 'Exit VR' && s.xrFrames > 10,
          'the scene renders in the session\'s frames', s);
    check(Math.abs(s.camera[1] - 1.6) < 1e-6, 'the headset pose drives the camera', s.camera);
    check(s.frames > framesBefore &&
          Math.hypot(...s.hipsScene.map((v, i) => v - s.hipsFrame[i])) < 1e-6,
          'same stream in VR: entities at their internal-frame positions', s);
    await page.screenshot({ path: shot });
    await page.click('#enter-vr');
    await page.waitForFunction(() => !window.xrgateInspector.xr.presenting, null, { timeout: 5000 });
    const f0 = await page.evaluate(() => window.xrgateInspector.view.frames);
    const resumed = await page.waitForFunction((f) => window.xrgateInspector.view.frames > f, f0,
                                               { timeout: 10000 }).then(() => true, () => false);
    const after = await page.evaluate((r) => ({
      text: document.getElementById('enter-vr').textContent, resumed: r,
      calls: window.__xrCalls }), resumed);
    check(after.text === 'Enter VR' && after.resumed && after.calls.includes('end'),
          'Exit VR ends the session and the page view resumes', after);
    return { calls: s.calls, xrFrames: s.xrFrames };
  } finally {
    await page.close();
  }
}
