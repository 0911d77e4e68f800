// The shared set-up of the browser drivers (inspector.mjs, webxr.mjs, calib.mjs): their
// command line, the checks they collect, Debian's Chromium (/usr/bin/chromium or $XG_CHROMIUM)
// through playwright-core from <build>/web/node_modules (no browser is ever downloaded), and the
// "RESULT {...}" line the Python side (tests/integration/browserlib.py) reads.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Chromium's flags for every driver: headless, no sandbox (root in CI), nothing fetched from
// the network, WebGL without a GPU through SwiftShader (software; only allowed on request)
const CHROMIUM_ARGS = ['--no-sandbox', '--headless', '--disable-gpu', '--disable-quic',
  '--no-first-run', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

/** The driver's set-up, named `tag` in its log lines (stderr, with seconds since start):
 *  - args: `--name value` pairs of the command line as { name: value }
 *  - require: Node's require from args['node-modules'] (playwright-core, iwer...)
 *  - log(...), check(ok, what, detail): a check of the RESULT (a failed one is logged), checks
 *  - launch({ viewport, args }): a persistent Chromium context on a fresh profile, with the
 *    common flags and `args` added; close(ctx) closes it and removes the profile
 *  - report(result): adds checks and failed to `result`, prints "RESULT {...}" and exits 0 when
 *    every check passed and result.error is unset, else 1. */
export function harness(tag) {
  const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
    if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
    return acc;
  }, []));
  const require = createRequire(join(args['node-modules'], 'x.js'));
  const { chromium } = require('playwright-core');
  const T0 = Date.now();
  const log = (...m) => console.error(`[${tag} ${((Date.now() - T0) / 1000).toFixed(1)} s]`, ...m);
  const checks = [];
  function check(cond, what, detail) {
    checks.push({ ok: !!cond, what, detail });
    if (!cond) log('FAIL', what, detail === undefined ? '' : JSON.stringify(detail));
  }
  const profiles = new Map();
  async function launch({ viewport, args: extra = [] }) {
    const profile = mkdtempSync(join(tmpdir(), 'xrgate-chromium-'));
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.XG_CHROMIUM || '/usr/bin/chromium',
      headless: true,
      viewport,
      args: [...CHROMIUM_ARGS, ...extra],
    });
    profiles.set(ctx, profile);
    return ctx;
  }
  async function close(ctx) {
    await ctx.close();
    rmSync(profiles.get(ctx), { recursive: true, force: true });
    profiles.delete(ctx);
  }
  function report(result) {
    result.checks = checks;
    result.failed = checks.filter((c) => !c.ok).length;
    console.log('RESULT ' + JSON.stringify(result));
    process.exit(result.error || result.failed ? 1 : 0);
  }
  return { args, require, log, check, checks, launch, close, report };
}
