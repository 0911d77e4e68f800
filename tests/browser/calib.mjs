// Browser check of the inspector's calibration panel (gateway/web/calib.js), driven by
// tests/integration/test_calibration.py while its sender turns the object about yaw only:
//
//   node calib.mjs --url http://127.0.0.1:PORT/ --node-modules <build>/web/node_modules
//                  --screenshot <build>/test-output/inspector-calibration.png
//
// The panel must list calibration "head" as collecting, say "move the object:" with yaw ✓ and
// pitch ✗ roll ✗, show the unobservable message from /api/calibrations, and its start button must
// POST /api/calibrations/head/start (answered 200). Debian's Chromium through playwright-core
// (harness.mjs).
// Prints "RESULT {...}" and exits 0 when every check passed.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { harness } from './harness.mjs';

const { args, check, launch, close, report } = harness('calib');
const ctx = await launch({ viewport: { width: 1280, height: 900 } });
const result = {};
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(args.url);
  // the panel shows the yaw-only state once the gateway has tried a solve
  await page.waitForFunction(() => {
    const m = document.querySelector('.calib-card[data-name="head"]');
    return m && /unobservable/.test(m.textContent);
  }, null, { timeout: 60000 });
  const card = await page.$eval('.calib-card[data-name="head"]', (c) => ({
    state: c.dataset.state,
    text: c.textContent,
    axes: [...c.querySelectorAll('.calib-axis')].map((a) => [a.textContent, a.className]),
    hidden: document.getElementById('calibrations').hidden,
  }));
  result.card = card;
  check(!card.hidden && card.state === 'collecting', 'the panel shows "head" collecting', card);
  check(card.text.includes('move the object:'), 'it asks to move the object', card.text);
  const ax = Object.fromEntries(card.axes.map(([t, c]) => [t.split(' ')[0], [t, c]]));
  check(ax.yaw && ax.yaw[0].includes('✓') && ax.yaw[1].includes('ok'), 'yaw ✓', ax);
  check(ax.pitch && ax.pitch[0].includes('✗') && ax.roll[0].includes('✗'), 'pitch ✗ roll ✗', ax);
  check(card.text.includes('unobservable: yaw (about y); turn the object about pitch (about x)'), 'the message', card.text);
  // both spaces: the two paths drawn (pixels in both colours on the top view)
  await page.waitForFunction(() => window.xrgateInspector.calib.trails.size >= 2 &&
    [...window.xrgateInspector.calib.trails.values()].every((t) => t.length > 30), null,
  { timeout: 20000 });
  // a poll re-renders the card: the top view keeps its canvas (a new one would be blank until
  // the next trail tick, and the view would flash empty once a second)
  const sameCanvas = await page.evaluate(async () => {
    const panel = window.xrgateInspector.calib;
    const sel = '.calib-card[data-name="head"] canvas';
    const before = document.querySelector(sel), polls = panel.polls;
    while (panel.polls < polls + 2) await new Promise((r) => setTimeout(r, 20));
    return document.querySelector(sel) === before;
  });
  check(sameCanvas, 'the top view keeps its canvas across polls', sameCanvas);
  const colours = await page.$eval('.calib-card[data-name="head"] canvas', (cv) => {
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    let ref = 0, tgt = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 128) continue;
      if (d[i + 1] > d[i] + 40 && d[i + 1] > 100) ref++;       // #2a7: green
      else if (d[i] > 180 && d[i + 1] > 80 && d[i + 2] < 60) tgt++; // #d70: orange
    }
    return { ref, tgt };
  });
  check(colours.ref > 20 && colours.tgt > 20, 'both paths are drawn in the top view', colours);
  mkdirSync(dirname(args.screenshot), { recursive: true });
  await page.locator('#calibrations').screenshot({ path: args.screenshot });

  const [resp] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/calibrations/head/start')),
    page.click('.calib-card[data-name="head"] button:text("start")'),
  ]);
  check(resp.status() === 200 && resp.request().method() === 'POST', 'start POSTs (200)',
        resp.status());
  check(errors.length === 0, 'no page errors', errors);
} catch (e) {
  check(false, 'ran', String(e));
} finally {
  await close(ctx);
}
report(result);
