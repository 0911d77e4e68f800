// Browser checks of the inspector's phone layout and camera (issue 34), called from
// inspector.mjs against the CMU walk gateway (31 joints, one with a long name):
//   phoneChecks: at 390x844 (and 360x740) no horizontal scroll, every entity's name readable,
//     the follow/fit/focus controls on screen, the plots in the page (not in a scroll panel);
//   cameraChecks: follow keeps a user's wheel zoom, "focus" frames the selected entity, fit
//     frames every joint again.
// Conditions are waited for (frames counted), never slept on.

async function openPage(ctx, url, consoleErrors, viewport) {
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  if (viewport) await page.setViewportSize(viewport);
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => {
    const ins = window.xrgateInspector;
    return ins && ins.view && ins.view.entities.size >= 31 && ins.view.frames > 10 &&
      document.querySelectorAll('#entities tbody tr[data-name]').length >= 31;
  }, null, { timeout: 15000 });
  return page;
}

// what a narrow page shows: widths, every name cell, where the controls and plots are
const layout = (page) => page.evaluate(() => {
  const inside = (id) => {
    if (!document.getElementById(id)) return false;
    const r = document.getElementById(id).getBoundingClientRect();
    return r.width > 0 && r.left >= 0 && r.right <= innerWidth + 0.5;
  };
  const names = [...document.querySelectorAll('#entities tr[data-name]')].map((tr) => {
    const c = tr.cells[0];
    // what the cell shows: its text, cut with an ellipsis where it does not fit
    return { name: tr.dataset.name, text: c.textContent, width: c.clientWidth,
             fits: c.scrollWidth <= c.clientWidth };
  });
  const side = document.getElementById('side');
  const plot = document.getElementById('plot-age').getBoundingClientRect();
  return {
    innerWidth, scrollWidth: document.scrollingElement.scrollWidth,
    names, controls: { follow: inside('opt-follow'), fit: inside('fit'), focus: inside('focus'),
                       filter: inside('filter') },
    // the plots are part of the page (reached by scrolling it), not of an inner scroll panel
    sideScrolls: side.scrollHeight > side.clientHeight + 1,
    plotInPage: plot.right <= innerWidth + 0.5 && plot.width > 200 &&
      plot.bottom + scrollY <= document.scrollingElement.scrollHeight + 0.5,
  };
});

export async function phoneChecks(ctx, url, check, shot, consoleErrors) {
  const page = await openPage(ctx, url, consoleErrors, { width: 390, height: 844 });
  try {
    const out = {};
    for (const [w, h] of [[390, 844], [360, 740], [430, 932]]) {
      await page.setViewportSize({ width: w, height: h });
      // a frame drawn at the new size
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
      const l = await layout(page);
      out[w] = { scrollWidth: l.scrollWidth, innerWidth: l.innerWidth,
                 narrowest: Math.min(...l.names.map((n) => n.width)) };
      check(l.scrollWidth <= l.innerWidth, `phone ${w}x${h}: no horizontal scroll`,
            [l.scrollWidth, l.innerWidth]);
      // every name readable: a short name whole, a long one cut after a useful part
      const bad = l.names.filter((n) => n.width < 90 || (n.text.length <= 14 && !n.fits));
      check(l.names.length >= 31 && bad.length === 0,
            `phone ${w}x${h}: every entity's name readable in its row`, bad.slice(0, 5));
      check(Object.values(l.controls).every(Boolean),
            `phone ${w}x${h}: follow, fit view, focus and the filter on screen`, l.controls);
      check(!l.sideScrolls && l.plotInPage, `phone ${w}x${h}: the plots are in the page, full width`,
            { sideScrolls: l.sideScrolls, plotInPage: l.plotInPage });
      if (w === 390) await page.screenshot({ path: shot, fullPage: true });
    }
    return out;
  } finally {
    await page.close();
  }
}

// the camera's distance to its target, once a frame more has been drawn
const camDist = (page) => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => {
  const v = window.xrgateInspector.view;
  done(v.camera.position.distanceTo(v.controls.target));
})));
const waitFrames = (page, sse, drawn) => page.evaluate(([sse, drawn]) => new Promise((done) => {
  const ins = window.xrgateInspector;
  const f0 = ins.frames, d0 = ins.view.frames;
  const poll = () => (ins.frames >= f0 + sse && ins.view.frames >= d0 + drawn ? done()
                                                                               : setTimeout(poll, 5));
  poll();
}), [sse, drawn]);

export async function cameraChecks(ctx, url, check, consoleErrors) {
  const page = await openPage(ctx, url, consoleErrors);
  try {
    const out = {};
    // follow (on by default) has framed the walk
    await page.waitForFunction(() => window.xrgateInspector.view.drawnInView === 1, null,
                               { timeout: 10000 }).catch(() => {});
    out.before = await camDist(page);
    // six wheel notches towards the skeleton, over the 3D view
    const box = await page.locator('#view').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 6; i++) {
      await page.mouse.wheel(0, -100);
      await waitFrames(page, 0, 1);
    }
    await waitFrames(page, 0, 3);
    out.zoomed = await camDist(page);
    // a second of the stream later (30 SSE frames, 20 frames drawn) follow has kept it
    await waitFrames(page, 30, 20);
    out.after = await camDist(page);
    out.follow = await page.evaluate(() => ({ checked: document.getElementById('opt-follow').checked,
                                              userZoom: window.xrgateInspector.view.framing.userZoom }));
    check(out.zoomed < out.before * 0.95, 'follow: the wheel zooms in', out);
    check(Math.abs(out.after - out.zoomed) < 0.01 * out.zoomed && out.follow.checked,
          'follow keeps the user\'s zoom (the distance stays where the wheel left it)', out);
    // focus on the selected entity: up close, and it stays framed as it walks
    await page.evaluate(() => window.xrgateInspector.select('take/Head'));
    const hasFocus = await page.locator('#focus').count();
    if (hasFocus) await page.click('#focus');
    await waitFrames(page, 30, 20);
    // the target's distance to the head over 20 frames drawn, judged by the median: the take
    // loops, and the frames just after its jump back to the start have the camera gliding after
    // it (a camera that does not follow is far from the walking head in most of them)
    out.focus = await page.evaluate(() => new Promise((done) => {
      const v = window.xrgateInspector.view;
      const offsets = [];
      let dist = 0;
      const frame = () => {
        const head = v.entities.get('take/Head').body.position;
        offsets.push(v.controls.target.distanceTo(head));
        dist = Math.max(dist, v.camera.position.distanceTo(v.controls.target));
        if (offsets.length < 20) { requestAnimationFrame(frame); return; }
        const sorted = [...offsets].sort((a, b) => a - b);
        done({ dist, offset: sorted[10], offsetMax: sorted[19], focus: v.framing.focus ?? null });
      };
      requestAnimationFrame(frame);
    }));
    check(hasFocus && out.focus.focus === 'take/Head' && out.focus.dist < 2 && out.focus.offset < 0.5,
          'focus: the selected entity framed up close and followed (median over 20 frames)',
          out.focus);
    // fit view: every joint framed again, the focus and the user's zoom forgotten
    await page.click('#fit');
    await waitFrames(page, 10, 5);
    out.fit = await page.evaluate(() => ({ inView: window.xrgateInspector.view.inView(),
                                           focus: window.xrgateInspector.view.framing.focus ?? null }));
    check(out.fit.inView === 1 && out.fit.focus === null, 'fit view after focus frames every joint',
          out.fit);
    return out;
  } finally {
    await page.close();
  }
}

// The plots of the selected entity (demo/head, selected by plotChecks): angles unwrapped, rate
// axes from 0, pause, the pointer's read-out.
export async function plotExtraChecks(page, check) {
  const out = {};
  out.unwrap = await page.evaluate(async () => {
    const m = await import('/inspector/plots.js');
    if (!m.unwrapDeg) return null;
    return m.unwrapDeg([170, 10, -179], [-175, 12, 179]);
  });
  check(JSON.stringify(out.unwrap) === JSON.stringify([185, 12, -181]),
        'plots: yaw/pitch/roll unwrapped across ±180°', out.unwrap);
  out.series = await page.evaluate(() => {
    const rot = window.xrgateInspector.plots.entity.rot;
    let jump = 0;
    for (let i = 1; i < rot.length; i++)
      for (let k = 0; k < 3; k++) jump = Math.max(jump, Math.abs(rot[i][k] - rot[i - 1][k]));
    return { n: rot.length, jump,
             lo: ['plot-rate', 'plot-adapters'].map((id) => document.getElementById(id).dataset.lo) };
  });
  check(out.series.n > 10 && out.series.jump <= 180, 'plots: no ±180° jump in the rotation series',
        out.series);
  check(out.series.lo.every((v) => v !== undefined && Number(v) >= 0),
        'plots: rate axes never below 0', out.series.lo);
  // pause: the plots keep what they show while frames arrive; resume: they move on
  const series = () => page.evaluate(() => {
    const en = window.xrgateInspector.plots.entity;
    return { n: en.t.length, last: en.t[en.t.length - 1] };
  });
  const hasPause = await page.locator('#plot-pause').count();
  if (hasPause) await page.click('#plot-pause');
  const p0 = await series();
  const f0 = await page.evaluate(() => window.xrgateInspector.frames);
  await page.waitForFunction((f) => window.xrgateInspector.frames >= f + 10, f0, { timeout: 10000 });
  const p1 = await series();
  if (hasPause) await page.click('#plot-pause');
  const f1 = await page.evaluate(() => window.xrgateInspector.frames);
  await page.waitForFunction((f) => window.xrgateInspector.frames >= f + 10, f1, { timeout: 10000 });
  const p2 = await series();
  out.pause = { p0, p1, p2 };
  check(hasPause && p1.last === p0.last && p2.last > p1.last,
        'plots: pause keeps them, resume moves on', out.pause);
  // the pointer over the position plot: a read-out of x, y, z at that time
  const box = await page.locator('#plot-position').boundingBox();
  await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2);
  out.cursor = await page.waitForFunction(() => document.getElementById('plot-position').dataset.cursor,
                                          null, { timeout: 3000 })
    .then((h) => h.jsonValue(), () => null);
  check(/^-?\d+\.\d s: x -?\d.* y -?\d.* z -?\d.* m$/.test(out.cursor || ''),
        'plots: the pointer reads out the values under it', out.cursor);
  await page.mouse.move(0, 0);
  return out;
}

// The entity filter and the column headers (the first gateway: demo, 6 entities, and slow/body0,
// STALE most of the time): "stale" and quality words match, the 3D view highlights the matches,
// an empty result says so; a header click sorts, twice reverses, three times restores.
export async function filterSortChecks(page, check) {
  const out = {};
  const shown = () => page.evaluate(() => {
    const v = window.xrgateInspector.view;
    const poses = v ? v.poses() : {};
    const rows = [...document.querySelectorAll('#entities tbody tr[data-name]')];
    return { rows: rows.map((tr) => tr.dataset.name),
             qualities: rows.map((tr) => tr.cells[5].textContent),
             dimmed: Object.keys(poses).filter((n) => poses[n].dimmed).sort(),
             empty: document.querySelector('#entities tr.empty')?.textContent || null };
  });
  // "stale": the STALE body only, the others faint in 3D (waited for: the body is fresh for
  // 200 ms of each 2 s, and may not be in the 3D scene yet: a predicate that threw on its missing
  // pose ended the wait at once)
  await page.fill('#filter', 'stale');
  // the predicate returns what it saw (a later read could catch the body's next fresh sample)
  out.stale = await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('#entities tbody tr[data-name]')];
    const p = window.xrgateInspector.view.poses();
    const ok = rows.length === 1 && rows[0].dataset.name === 'slow/body0' && !!p['slow/body0'] &&
      !p['slow/body0'].dimmed &&
      Object.keys(p).filter((n) => n !== 'slow/body0').every((n) => p[n].dimmed);
    return ok && { rows: rows.map((tr) => tr.dataset.name),
                   qualities: rows.map((tr) => tr.cells[5].textContent),
                   dimmed: Object.keys(p).filter((n) => p[n].dimmed).sort(),
                   empty: document.querySelector('#entities tr.empty')?.textContent || null };
  }, null, { timeout: 10000 }).then((h) => h.jsonValue(), () => shown());
  check(JSON.stringify(out.stale.rows) === '["slow/body0"]' && out.stale.dimmed.length === 6 &&
        !out.stale.dimmed.includes('slow/body0'),
        'filter "stale": the STALE entity, highlighted in 3D (the rest faint)', out.stale);
  await page.fill('#filter', 'predicted');
  out.predicted = await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('#entities tbody tr[data-name]')];
    return rows.length > 0 && rows.every((tr) => tr.cells[5].textContent === 'PREDICTED');
  }, null, { timeout: 10000 }).then(() => shown(), () => shown());
  check(out.predicted.rows.length > 0 && out.predicted.qualities.every((q) => q === 'PREDICTED'),
        'filter "predicted": matches the quality', out.predicted);
  await page.fill('#filter', 'no-such-thing');
  out.none = await page.waitForFunction(() => document.querySelector('#entities tr.empty'), null,
                                        { timeout: 5000 }).then(() => shown(), () => shown());
  check(out.none.rows.length === 0 && /no entity matches "no-such-thing"/.test(out.none.empty || ''),
        'a filter matching nothing says so', out.none);
  await page.fill('#filter', '');
  out.cleared = await page.waitForFunction(() =>
    Object.values(window.xrgateInspector.view.poses()).every((p) => !p.dimmed) &&
    !document.querySelector('#entities tr.empty'), null, { timeout: 5000 })
    .then(() => shown(), () => shown());
  check(out.cleared.dimmed.length === 0 && out.cleared.rows.length === 7,
        'an empty filter: every entity listed, none faint', out.cleared);
  // sorting: by name descending within each origin, then natural order again
  const demoRows = async () => (await shown()).rows.filter((n) => n.startsWith('demo/'));
  const natural = await demoRows();
  const sortState = () => page.$eval('#entities thead th', (th) => th.getAttribute('aria-sort'));
  const click = async (sel) => {
    await page.click(sel);
    const f = await page.evaluate(() => window.xrgateInspector.frames);
    await page.waitForFunction((f) => window.xrgateInspector.frames > f + 1, f, { timeout: 5000 });
  };
  await click('#entities thead th:nth-child(1)');
  out.asc = { rows: await demoRows(), aria: await sortState() };
  await click('#entities thead th:nth-child(1)');
  out.desc = { rows: await demoRows(), aria: await sortState() };
  await click('#entities thead th:nth-child(1)');
  out.back = { rows: await demoRows(), aria: await sortState() };
  check(out.asc.aria === 'ascending' && JSON.stringify(out.asc.rows) === JSON.stringify(natural) &&
        out.desc.aria === 'descending' &&
        JSON.stringify(out.desc.rows) === JSON.stringify(natural.slice().reverse()) &&
        out.back.aria === 'none' && JSON.stringify(out.back.rows) === JSON.stringify(natural),
        'a column header sorts (ascending, descending, natural order again)', { natural, ...out });
  await click('#adapters thead th:nth-child(1)');
  await click('#adapters thead th:nth-child(1)');
  out.adapters = await page.$$eval('#adapters tbody tr', (rows) => rows.map((r) => r.dataset.name));
  check(JSON.stringify(out.adapters) === '["slow","demo"]', 'the adapter table sorts too',
        out.adapters);
  await click('#adapters thead th:nth-child(1)');
  return out;
}
