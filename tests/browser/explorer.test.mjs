// SPDX-License-Identifier: MIT
// Drives the explorer page in headless Chromium and checks what it shows
// against dch-analysis on the same scenario.
//
// Usage: node explorer.test.mjs --site DIR --analysis DCH_ANALYSIS
//            --chromium PATH --out DIR
//
// The page is served from DIR by a server in this process on 127.0.0.1 (an
// ephemeral port), and every request to another host is refused and counted
// as a failure. Scenario: four joins and a fifth (the moved share shown must
// be dch-analysis's figure for N = 5, and 1/5 to the slot for DCH), a
// removal, a weight change, undo and a random history; no console error,
// page error or failed request. Screenshots go to the --out DIR
// (explorer-readme.png is the README's picture). A watchdog ends everything
// after 150 s, so ctest never waits on a hung browser.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import puppeteer from 'puppeteer-core';

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const a of ['site', 'analysis', 'chromium', 'out']) {
  if (!args[a]) {
    console.error(`explorer test: --${a} is required`);
    process.exit(2);
  }
}
const site = resolve(args.site);
const scratch = mkdtempSync(join(tmpdir(), 'dch-explorer-test-'));
mkdirSync(args.out, { recursive: true });

let passed = 0;
let failed = 0;
function check(ok, what, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok   ${what}`);
  } else {
    failed++;
    console.log(`FAIL ${what}${detail ? ': ' + detail : ''}`);
  }
}
const close = (a, b, tol = 1e-9) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

// ---- A static server on loopback --------------------------------------------------

const TYPES = { '.html': 'text/html', '.css': 'text/css', '.js': 'text/javascript',
  '.wasm': 'application/wasm', '.png': 'image/png' };
const server = createServer((req, res) => {
  const path = normalize(join(site, decodeURIComponent(new URL(req.url, 'http://x').pathname)));
  const file = path.endsWith(sep) ? join(path, 'index.html') : path;
  if (!file.startsWith(site + sep) || !existsSync(file)) {
    res.writeHead(404).end('not found');
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

// ---- The browser ------------------------------------------------------------------------

const profile = mkdtempSync(join(tmpdir(), 'dch-explorer-chromium-'));
const browser = await puppeteer.launch({
  executablePath: args.chromium,
  headless: true,
  userDataDir: profile,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  timeout: 60000,
  protocolTimeout: 60000,
});
function cleanup() {
  try { browser.process()?.kill('SIGKILL'); } catch { /* already gone */ }
  server.close();
  rmSync(profile, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
const watchdog = setTimeout(() => {
  console.log('FAIL the test did not finish within 150 s');
  cleanup();
  process.exit(1);
}, 150000);

const problems = [];
let growth, karger, history, LABELS, SCENARIO;
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1240, height: 900, deviceScaleFactor: 1 });
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (new URL(r.url()).hostname === '127.0.0.1') r.continue();
    else {
      problems.push(`request off loopback: ${r.url()}`);
      r.abort();
    }
  });
  await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });

  const changes = () => page.$eval('body', (b) => Number(b.dataset.changes));
  async function click(sel) {
    const before = await changes();
    await page.click(sel);
    await page.waitForFunction((n) => Number(document.body.dataset.changes) !== n,
      { timeout: 20000 }, before);
  }
  const value = (sel) => page.$eval(sel, (e) => JSON.parse(e.dataset.value || 'null'));
  const text = (sel) => page.$eval(sel, (e) => e.textContent);
  const state = () => page.evaluate(() => window.dchExplorerState());

  const cfg = (await state()).config;
  SCENARIO = { nodes: 5, units: cfg.units, slots: cfg.slots, points: cfg.points, views: cfg.views };
  check(cfg.seed === 1, 'the page uses the hash key of dch-analysis\'s default seed');
  // dch-analysis on the page's own setup, grown to five nodes.
  execFileSync(args.analysis, [
    '--nodes', String(SCENARIO.nodes), '--units', String(SCENARIO.units),
    '--slots', String(SCENARIO.slots), '--points', String(SCENARIO.points),
    '--views', String(SCENARIO.views), '--keys', '2000', '--balance-max', '5',
    '--seed', '1', '--out', join(scratch, 'report'), '--no-charts'],
  { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60000 });
  function csv(name) {
    const [head, ...rows] = readFileSync(join(scratch, 'report', name), 'utf8').trim().split('\n');
    const cols = head.split(',');
    return rows.map((r) => Object.fromEntries(r.split(',').map((v, i) => [cols[i], v])));
  }
  growth = csv('growth.csv');
  karger = csv('karger.csv');
  history = csv('history.csv');
  LABELS = ['dch', `ring-${SCENARIO.points}`, 'ring-1'];

  // Four joins, then a fifth.
  for (let i = 0; i < 4; i++) await click('#add');
  await click('#add');
  const s5 = await state();
  check(s5.members.length === 5 && s5.last.name === 'node-05', 'five members after five joins');
  const P = s5.config.slotCount;
  const movedDch = await value('#fig-moved-0');
  check(Math.abs(movedDch - 1 / 5) <= 1 / P, 'DCH moved 1/5 to the slot',
    `${movedDch} vs 0.2 (one slot is ${1 / P})`);
  check((await text('#moved-0')).includes(((100 * movedDch).toFixed(1)) + '%'),
    'the moved share is shown in words under the DCH ring');
  for (let s = 0; s < 3; s++) {
    const row = growth.find((r) => r.scheme === LABELS[s] && r.n === '5');
    const moved = await value(`#fig-moved-${s}`);
    const donors = await value(`#fig-donors-${s}`);
    const peak = await value(`#fig-balance-${s}`);
    check(row && close(moved, Number(row.moved)), `${LABELS[s]}: moved equals dch-analysis`,
      `${moved} vs ${row && row.moved}`);
    check(row && donors.parties === Number(row.donors) &&
      close(donors.worst, Number(row.max_donation_over_ideal)),
    `${LABELS[s]}: donors and largest donation/ideal equal dch-analysis`,
    `${JSON.stringify(donors)} vs ${row && row.donors}, ${row && row.max_donation_over_ideal}`);
    check(row && close(peak, Number(row.peak_to_avg)), `${LABELS[s]}: peak/avg equals dch-analysis`,
      `${peak} vs ${row && row.peak_to_avg}`);
    check((await value(`#fig-mono-${s}`)) === 0, `${LABELS[s]}: nothing moved between old members`);
    const krow = karger.find((r) => r.scheme === (s === 0 ? 'dch (a map per view)' : LABELS[s]));
    const sp = (await value(`#fig-spread-${s}`)).spread;
    check(krow && close(sp.max, Number(krow.spread_max)) && close(sp.mean, Number(krow.spread_mean)) &&
      close(sp.load, Number(krow.load_max)), `${LABELS[s]}: spread and load equal dch-analysis`,
    `${JSON.stringify(sp)} vs ${krow && [krow.spread_max, krow.spread_mean, krow.load_max]}`);
    const hrow = history.find((r) => r.scheme === LABELS[s]);
    check(hrow && close(s5.schemes[s].disagree, Number(hrow.disagree_reverse_order)),
      `${LABELS[s]}: reverse-order disagreement equals dch-analysis`,
      `${s5.schemes[s].disagree} vs ${hrow && hrow.disagree_reverse_order}`);
  }
  const shared = (await value('#fig-spread-0')).shared;
  const srow = karger.find((r) => r.scheme.includes('shared'));
  check(close(shared.max, Number(srow.spread_max)) && close(shared.load, Number(srow.load_max)),
    'DCH with one shared map: spread and load equal dch-analysis');
  check(s5.schemes[1].disagree === 0 && s5.schemes[2].disagree === 0 && s5.schemes[0].disagree > 0,
    'rings agree whatever the order, DCH maps do not');
  // Pointing at the top of the one-point ring names the owner of hash 0.
  const box = await (await page.$('#ring-2')).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.16);
  const tip = await page.$eval('#tip', (e) => (e.hidden ? '' : e.textContent));
  check(tip.includes(': ' + s5.members.find((m) => m.who === s5.schemes[2].ranges[0][1]).name),
    'pointing at a ring names the owner there', tip);
  const rings = await (await page.$('#rings')).boundingBox();
  await page.screenshot({ path: join(args.out, 'explorer-hover.png'),
    clip: { x: 0, y: rings.y, width: 1240, height: rings.height } });
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(args.out, 'explorer-join.png'), fullPage: true });
  await page.screenshot({ path: join(args.out, 'explorer-top.png') });
  // The README's picture: from the title to the end of the four properties.
  const bottom = await page.$eval('#properties', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await page.screenshot({ path: join(args.out, 'explorer-readme.png'),
    clip: { x: 0, y: 0, width: 1240, height: Math.ceil(bottom) + 8 } });

  // Remove node-02: every scheme moves exactly what it held, to the others only.
  await page.select('#member', '1');
  const held = s5.members.find((m) => m.name === 'node-02').share;
  await click('#remove');
  const sr = await state();
  check(sr.last.kind === 'remove' && sr.members.length === 4, 'node-02 removed');
  for (let s = 0; s < 3; s++) {
    check(close(await value(`#fig-moved-${s}`), held[s]), `${LABELS[s]}: a removal moves what the leaver held`);
    check((await value(`#fig-mono-${s}`)) === 0, `${LABELS[s]}: nothing moved between the others`);
  }
  const recv = await value('#fig-donors-0');
  check(recv.parties === 4 && recv.eligible === 4, 'DCH spreads the leaver over all four others');
  await page.screenshot({ path: join(args.out, 'explorer-remove.png'), fullPage: true });

  // Weight 4 for node-03.
  await page.select('#member', '2');
  await page.$eval('#weight', (e) => { e.value = '4'; });
  await click('#set-weight');
  const sw = await state();
  const n3 = sw.members.find((m) => m.name === 'node-03');
  check(sw.last.kind === 'weight' && n3.weight === 4, 'node-03 has weight 4');
  check((await text('#members')).includes('node-03'), 'the members table lists node-03');
  for (let s = 0; s < 3; s++) {
    check((await value(`#fig-mono-${s}`)) === 0, `${LABELS[s]}: a weight change moves keys only to node-03`);
  }
  check(Math.abs((await value('#fig-moved-0')) - sw.schemes[0].change.optimum) <= 4 / P,
    'DCH moves its optimum to within a few slots');
  check(Math.abs(n3.share[0] - 4 / 7) <= 4 / P, 'node-03 holds 4/7 of the DCH map to within a few slots',
    String(n3.share[0]));
  await page.screenshot({ path: join(args.out, 'explorer-weight.png'), fullPage: true });

  // A weight the page does not allow is refused in words, and nothing changes.
  const nBefore = await changes();
  await page.$eval('#add-weight', (e) => { e.value = '99'; });
  await page.click('#add');
  await page.waitForSelector('#error:not([hidden])', { timeout: 10000 });
  check(/0 to 16/.test(await text('#error')) && (await changes()) === nBefore &&
    (await state()).members.length === sw.members.length, 'weight 99 is refused in words and changes nothing');
  await page.$eval('#add-weight', (e) => { e.value = '1'; });

  // Undo gives back the removal's state and figures.
  await click('#undo');
  check(close(await value('#fig-moved-0'), held[0]) && (await state()).last.kind === 'remove',
    'undo shows the removal again');

  // A random history runs to its end.
  await page.$eval('#random-seed', (e) => { e.value = '7'; });
  await click('#random');
  check((await changes()) === 20, 'a random history of 20 changes', String(await changes()));
  check(!(await page.$eval('#error', (e) => !e.hidden)), 'no change was refused');
  await page.screenshot({ path: join(args.out, 'explorer-random.png'), fullPage: true });
} catch (e) {
  check(false, 'the scenario ran to its end', e.stack || String(e));
} finally {
  check(problems.length === 0, 'no console error, page error or failed request', problems.join('; '));
  clearTimeout(watchdog);
  await browser.close().catch(() => {});
  cleanup();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
