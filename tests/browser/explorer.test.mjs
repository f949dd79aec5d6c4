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
// removal, a weight change, refused and no-op inputs (the message shown, and
// nothing changed: state, table, rings, history), a new ring-points setup
// that keeps the history, undo and a random history (the join chart's labels
// distinct and apart), the hot spot (each node's load against its target and
// bound; balancing by load: the report's figures, the moved slots against
// the ranges drawn, a fixed point, another popularity, Clear, and a change
// and undo while balanced); no console error, page error or failed request; at
// 1240 and 800 px wide nothing overflows its container and every canvas and
// the chart have drawn content. Screenshots go to the --out DIR
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
    // data: URLs are the test's own (it rasterises the chart), not network.
    const u = new URL(r.url());
    if (u.hostname === '127.0.0.1' || u.protocol === 'data:') r.continue();
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
  const settled = () => page.waitForFunction(() => window.dchExplorerState().full, { timeout: 20000 });
  // What the page shows of the cluster: the engine's report, the members
  // table, the three rings' pixels and the undo button.
  const snapshot = () => page.evaluate(() => JSON.stringify({
    state: window.dchExplorerState(),
    table: document.querySelector('#members tbody').innerHTML,
    rings: ['ring-0', 'ring-1', 'ring-2'].map((id) => document.getElementById(id).toDataURL()),
    undo: document.getElementById('undo').disabled,
  }));
  async function typeInto(sel, text) {
    await page.$eval(sel, (e) => { e.value = ''; });
    if (text) await page.type(sel, text);
  }
  const refusal = (name, min, max, input) =>
    `${name} must be a whole number from ${min} to ${max}, not "${input}"`;

  // Nothing sticks out of its box: the page, every table's container and
  // every panel have no more content than width (1 px for rounding).
  async function layout(tag) {
    const over = await page.evaluate(() => {
      const boxes = new Set([document.documentElement, document.body]);
      document.querySelectorAll('table').forEach((t) => boxes.add(t.parentElement));
      document.querySelectorAll('section, .group, .row, .scheme, .order-body, figure, #status, #error, #chart')
        .forEach((e) => boxes.add(e));
      const name = (e) => e.id ? '#' + e.id : e.tagName.toLowerCase() + (e.className ? '.' + e.className : '');
      return [...boxes].filter((e) => e.scrollWidth > e.clientWidth + 1)
        .map((e) => `${name(e)} ${e.scrollWidth} > ${e.clientWidth}`);
    });
    check(over.length === 0, `${tag}: nothing overflows its container`, over.join('; '));
  }

  // Every canvas, img and the chart have drawn something: more than one
  // colour, with ink on at least 1% of a canvas.
  async function drawn(tag) {
    const blank = await page.evaluate(async () => {
      function ink(cv) {
        const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        const colours = new Set();
        let inked = 0;
        for (let i = 0; i < d.length; i += 4) {
          colours.add(((d[i] << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3]) >>> 0);
          if (d[i + 3] !== 0 && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250)) inked++;
        }
        return colours.size > 1 && inked >= 0.01 * (d.length / 4);
      }
      // Canvases shown (a hidden panel's are not drawn until it is shown).
      const bad = [...document.querySelectorAll('canvas')].filter((cv) => cv.getClientRects().length > 0)
        .filter((cv) => !ink(cv)).map((cv) => '#' + cv.id);
      document.querySelectorAll('img').forEach((im) => { if (!(im.naturalWidth > 0)) bad.push(im.src); });
      // The chart, drawn from its own markup (its lines carry their colours).
      const svg = document.getElementById('chart');
      const vb = svg.viewBox.baseVal;
      const img = new Image();
      img.src = 'data:image/svg+xml;charset=utf-8,' +
        encodeURIComponent(new XMLSerializer().serializeToString(svg));
      await img.decode();
      const cv = document.createElement('canvas');
      cv.width = vb.width;
      cv.height = vb.height;
      cv.getContext('2d').drawImage(img, 0, 0);
      if (!ink(cv) || svg.querySelectorAll('polyline').length < 4) bad.push('#chart');
      return bad;
    });
    check(blank.length === 0, `${tag}: every ring and the chart have drawn content`, blank.join(', '));
  }

  // The join chart's x labels: one per join shown, each naming a different
  // joiner; no two texts of the chart (labels, axes, legend) overlap.
  async function joinLabels(tag) {
    const { labels, texts, joins } = await page.evaluate(() => ({
      labels: [...document.querySelectorAll('#chart .xlabel .name')].map((t) => t.textContent),
      texts: [...document.querySelectorAll('#chart > text')].map((t) => {
        const r = t.getBoundingClientRect();
        const name = t.querySelector('.name');
        return { name: (name || t).textContent, l: r.left, r: r.right, t: r.top, b: r.bottom };
      }),
      joins: window.dchExplorerState().history
        .filter((h) => h.op.kind === 'add' && h.optimum < 1 && h.members > 1).map((h) => h.op.name),
    }));
    check(labels.length > 1 && new Set(labels).size === labels.length && labels.every((n) => joins.includes(n)),
      `${tag}: the join chart's x labels are distinct joiners`, labels.join(','));
    const clash = [];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i], b = texts[j];
        if (a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5) clash.push(a.name + ' / ' + b.name);
      }
    }
    check(texts.length > labels.length && clash.length === 0, `${tag}: no two texts of the join chart overlap`,
      clash.join('; '));
    return { names: labels, joins };
  }

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
  await layout('after five joins');
  await drawn('after five joins');
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
  check(/^at \d+\.\d% round the ring: node-\d\d( \(.*\))?$/.test(tip), 'a ring\'s position is "% round the ring"', tip);
  const box0 = await (await page.$('#ring-0')).boundingBox();
  await page.mouse.move(box0.x + box0.width / 2, box0.y + box0.height * 0.16);
  const tip0 = await page.$eval('#tip', (e) => (e.hidden ? '' : e.textContent));
  const at0 = Number((tip0.match(/^at ([\d.]+)%/) || [])[1]) / 100;
  const owner0 = s5.schemes[0].ranges.filter((r) => r[0] <= at0).at(-1);
  check(/^at \d+\.\d% of the map: node-\d\d( \(.*\))?$/.test(tip0) && owner0 &&
    tip0.includes(': ' + s5.members.find((m) => m.who === owner0[1]).name),
  'the DCH map\'s position is "% of the map", with its owner', tip0);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height * 0.16);
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

  // Drain node-01: DCH serves its arcs from the others, as its removal would,
  // and the drains table says who; its undrain gives every scheme back
  // exactly what it had. Two undos then return to the removal's state.
  await page.select('#member', '0');
  const n1 = sr.members.find((m) => m.name === 'node-01').share;
  check(!(await page.$eval('#drain', (e) => e.disabled)) && (await page.$eval('#undrain', (e) => e.disabled)),
    'a node that is not drained can be drained, not undrained');
  await click('#drain');
  const sd = await state();
  check(sd.last.kind === 'drain' && sd.members.find((m) => m.name === 'node-01').drained,
    'node-01 drained');
  check(close(await value('#fig-moved-0'), n1[0]) && (await value('#fig-mono-0')) === 0,
    'DCH: a drain moves what the node held, to the others only');
  check(await page.$eval('#remove', (e) => e.disabled) && await page.$eval('#set-weight', (e) => e.disabled),
    'a drained node is neither removed nor reweighted');
  const drains = await text('#drains');
  const d1 = sd.drains[0];
  check(!(await page.$eval('#drains', (e) => e.hidden)) && drains.includes('node-01') &&
    sd.drains.length === 1 && close(d1.base, n1[0]) &&
    close(d1.servedBy.reduce((t, x) => t + x.share, 0), d1.base) &&
    d1.servedBy.every((x) => x.name !== 'node-01'),
  'the drains table: node-01\'s base arcs, all served by the others', drains);
  await layout('drained, 1240 px');
  await page.screenshot({ path: join(args.out, 'explorer-drain.png'), fullPage: true });
  await click('#undrain');
  const su = await state();
  check(su.last.kind === 'undrain' && (await page.$eval('#drains', (e) => e.hidden)),
    'node-01 undrained: no drains table');
  for (let s = 0; s < 3; s++) {
    check(JSON.stringify(su.schemes[s].ranges) === JSON.stringify(sr.schemes[s].ranges),
      `${LABELS[s]}: the undrain gives back exactly the ownership before the drain`);
  }
  await click('#undo');
  await click('#undo');
  const plan = (st) => JSON.stringify(st.schemes.map((x) => [x.ranges, x.change]));
  check(plan(await state()) === plan(sr), 'two undos: the removal again');

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

  // Refused weights: the message says what is allowed, and nothing changes.
  const lim = (await state()).limits;
  check(lim.weight === 16 && lim.points === 1000 && lim.views === 16,
    'the engine reports its bounds', JSON.stringify(lim));
  const wmax = lim.weight;
  for (const bad of ['', 'abc', '0.5', '-1', '1e9', '4294967296', '+3', '0x10', '1 2', String(wmax + 1)]) {
    for (const [input, button] of [['#weight', '#set-weight'], ['#add-weight', '#add']]) {
      const before = await snapshot();
      await typeInto(input, bad);
      await page.click(button);
      const want = refusal('weight', 0, wmax, bad);
      const shown = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
      check(shown === want, `${button}: weight ${JSON.stringify(bad)} is refused in words`, shown);
      check((await snapshot()) === before && (await changes()) === sw.history.length,
        `${button}: weight ${JSON.stringify(bad)} changes nothing`);
      check(await page.$eval(input, (e) => e.getAttribute('aria-invalid') === 'true'),
        `${button}: the refused field ${JSON.stringify(bad)} is marked`);
    }
  }
  await typeInto('#add-weight', '1'); // typing clears the field's mark
  check(await page.$eval('#add-weight', (e) => !e.hasAttribute('aria-invalid')), 'editing a refused field clears its mark');
  await typeInto('#weight', '0.5');
  await page.click('#set-weight');
  await page.screenshot({ path: join(args.out, 'explorer-invalid.png'),
    clip: { x: 0, y: 0, width: 1240, height: Math.ceil((await (await page.$('#rings')).boundingBox()).y) + 40 } });
  await layout('with an error shown');

  // Other counts: the seed, the ring points and the client views.
  for (const [input, name, max, bad] of [['#random-seed', 'seed', 4294967295, '4294967296'],
    ['#random-seed', 'seed', 4294967295, '-7'], ['#points', 'ring points per node', lim.points, '0'],
    ['#points', 'ring points per node', lim.points, '2.5'], ['#views', 'client views', lim.views, '17'],
    ['#views', 'client views', lim.views, 'eight']]) {
    const before = await snapshot();
    await typeInto(input, bad);
    if (input === '#random-seed') await page.click('#random');
    else await page.keyboard.press('Tab'); // commits the field (its change event)
    const shown = await page.$eval('#error', (e) => (e.hidden ? '' : e.textContent));
    const min = input === '#random-seed' ? 0 : 1;
    check(shown === refusal(name, min, max, bad), `${name} ${JSON.stringify(bad)} is refused in words`, shown);
    check((await snapshot()) === before, `${name} ${JSON.stringify(bad)} changes nothing`);
  }
  check(await page.evaluate(() => ['points', 'views'].every((id) => {
    const e = document.getElementById(id);
    return e.value === String(window.dchExplorerState().config[id]) && !e.hasAttribute('aria-invalid');
  })), 'a refused setup field shows the setup in force again');
  await page.$eval('#random-seed', (e) => { e.value = '1'; });

  // " 12 " is 12 once trimmed: a change of its own.
  await typeInto('#weight', ' 12 ');
  await click('#set-weight');
  const s12 = await state();
  check(s12.members.find((m) => m.name === 'node-03').weight === 12 && s12.history.length === sw.history.length + 1 &&
    !(await page.$eval('#error', (e) => !e.hidden)), 'weight " 12 " is read as 12');
  // Setting the weight a member has is no change: the status says so, the
  // history stays as it was.
  const beforeNoop = await snapshot();
  await typeInto('#weight', '12');
  await page.click('#set-weight');
  check((await text('#status')) === 'node-03 already has weight 12: nothing changed.',
    'a weight set to its current value is reported as no change', await text('#status'));
  check((await snapshot()) === beforeNoop, 'a weight set to its current value leaves the history as it was');
  await click('#undo');
  check((await state()).members.find((m) => m.name === 'node-03').weight === 4 &&
    (await changes()) === sw.history.length, 'undo takes back weight 12, not the no-op');

  // Another number of ring points keeps the history: every change is
  // replayed on the new ring; the DCH map and the one-point ring stay as
  // they were; undo still walks back; the old number gives back every figure.
  const beforePoints = await state();
  await typeInto('#points', '40');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => { const s = window.dchExplorerState(); return s.config.points === 40 && s.full; },
    { timeout: 20000 });
  const s40 = await state();
  check(JSON.stringify(s40.history.map((h) => h.op)) === JSON.stringify(beforePoints.history.map((h) => h.op)),
    'ring points 40: the history is kept', `${s40.history.length} vs ${beforePoints.history.length}`);
  check(JSON.stringify(s40.schemes[0].ranges) === JSON.stringify(beforePoints.schemes[0].ranges) &&
    JSON.stringify(s40.schemes[2].ranges) === JSON.stringify(beforePoints.schemes[2].ranges) &&
    JSON.stringify(s40.schemes[1].ranges) !== JSON.stringify(beforePoints.schemes[1].ranges),
  'ring points 40: only the ring with many points changed');
  check(s40.history.every((h, i) => h.moved[0] === beforePoints.history[i].moved[0]) &&
    s40.history.some((h, i) => h.moved[1] !== beforePoints.history[i].moved[1]),
  'ring points 40: every change is measured again on the new ring');
  check((await text('#title-1')) === 'Ring, 40 points per node' && (await text('#status')).includes('replayed'),
    'ring points 40: the page says the history was replayed', await text('#status'));
  await click('#undo');
  check((await changes()) === beforePoints.history.length - 1, 'ring points 40: undo walks back the kept history');
  await typeInto('#points', '160');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => { const s = window.dchExplorerState(); return s.config.points === 160 && s.full; },
    { timeout: 20000 });
  await typeInto('#weight', '4');
  await click('#set-weight');
  check(JSON.stringify(await state()) === JSON.stringify(beforePoints),
    'back to 160 points: the same state and figures as before');
  // So does another number of DCH units.
  await page.select('#units', '16');
  await page.waitForFunction(() => { const s = window.dchExplorerState(); return s.config.units === 16 && s.full; },
    { timeout: 20000 });
  const s16 = await state();
  check(s16.history.length === beforePoints.history.length &&
    JSON.stringify(s16.schemes[0].ranges) !== JSON.stringify(beforePoints.schemes[0].ranges) &&
    JSON.stringify(s16.schemes[1].ranges) === JSON.stringify(beforePoints.schemes[1].ranges),
  '16 DCH units: the history is kept and replayed on the new map');
  await page.select('#units', '8');
  await page.waitForFunction(() => { const s = window.dchExplorerState(); return s.config.units === 8 && s.full; },
    { timeout: 20000 });
  check(JSON.stringify(await state()) === JSON.stringify(beforePoints), 'back to 8 units: the same state as before');
  await typeInto('#points', ' 160');
  await page.keyboard.press('Tab');
  check((await text('#status')).endsWith('nothing changed.') && (await changes()) === beforePoints.history.length,
    'the same ring points again is reported as no change', await text('#status'));

  // Undo gives back the removal's state and figures.
  await click('#undo');
  check(close(await value('#fig-moved-0'), held[0]) && (await state()).last.kind === 'remove',
    'undo shows the removal again');

  // A random history runs to its end.
  await page.$eval('#random-seed', (e) => { e.value = '7'; });
  await click('#random');
  check((await changes()) === 20, 'a random history of 20 changes', String(await changes()));
  check(!(await page.$eval('#error', (e) => !e.hidden)), 'no change was refused');
  await settled();
  await page.screenshot({ path: join(args.out, 'explorer-random.png'), fullPage: true });
  const chart = await page.$('#chart');
  await chart.screenshot({ path: join(args.out, 'explorer-chart.png') });
  const { joins } = await joinLabels('random history');
  check(new Set(joins).size === joins.length && (await page.$$('#chart .xlabel')).length === joins.length,
    'random history: every join has its own label', joins.join(','));
  await layout('random history, 1240 px');
  await drawn('random history, 1240 px');
  await page.setViewport({ width: 800, height: 900, deviceScaleFactor: 1 });
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
  await layout('random history, 800 px');
  await drawn('random history, 800 px');
  await joinLabels('random history, 800 px');
  await page.screenshot({ path: join(args.out, 'explorer-narrow.png'), fullPage: true });
  await chart.screenshot({ path: join(args.out, 'explorer-chart-narrow.png') });
  await page.setViewport({ width: 1240, height: 900, deviceScaleFactor: 1 });

  // Many joins: the labels take turns over two rows, then thin out, and
  // still never overlap.
  await click('#reset');
  for (let i = 0; i < 30; i++) await click('#add');
  await settled();
  await joinLabels('30 joins');
  await chart.screenshot({ path: join(args.out, 'explorer-chart-30.png') });

  // The hot spot: a skewed load on the DCH map, each node's load against
  // its target and bound, and balancing by load, checked against the
  // library's report and the ranges the page draws.
  await click('#reset');
  for (let i = 0; i < 5; i++) await click('#add');
  await settled();
  const renders = () => page.$eval('body', (b) => Number(b.dataset.renders));
  async function rendered(act) {
    const before = await renders();
    await act();
    await page.waitForFunction((n) => Number(document.body.dataset.renders) > n &&
      window.dchExplorerState().full, { timeout: 20000 }, before);
  }
  const press = (sel) => rendered(() => page.click(sel));
  // The owner of every slot, read from the DCH ranges the page draws.
  const owners = (st) => {
    const P = st.config.slotCount, rs = st.schemes[0].ranges;
    return Array.from({ length: P }, (_, slot) => rs.filter((r) => r[0] <= (slot + 0.5) / P).at(-1)[1]);
  };
  const dchRanges = (st) => JSON.stringify(st.schemes[0].ranges);
  const countBalanced = await state();
  check(countBalanced.hot === null && await page.$eval('#hot-body', (e) => e.hidden) &&
    await page.$eval('#balance', (e) => e.disabled), 'no hot spot at first: nothing to balance');
  await press('#hot-on');
  const h0 = (await state()).hot;
  check(h0 && h0.members.length === 5 && h0.balance === null && h0.inForce === 0 && h0.zipf === 10,
    'Hot spot: a load on the five nodes, Zipf s = 1.0, nothing balanced yet');
  check(h0.members.reduce((t, m) => t + m.load, 0) === h0.total,
    'Hot spot: the nodes\' loads add up to the total load');
  check(close(h0.members.reduce((t, m) => t + m.target, 0), h0.total, 1e-12) &&
    h0.members.every((m) => m.bound >= m.target),
  'Hot spot: the targets add up to the total, every bound is at least its target');
  check(close(h0.maxRatio, Math.max(...h0.members.map((m) => m.ratio))) && h0.maxRatio >= h0.floor - 1e-12 &&
    close(h0.floor, Math.max(1, h0.heaviest / Math.max(...h0.members.map((m) => m.target)))),
  'Hot spot: max/mean is the busiest node\'s, and at least the floor max(1, Lmax / max T)');
  check((await page.$$('#hot-loads tbody tr .track')).length === 5, 'Hot spot: a bar per node');

  // Balances the map under the load in force and checks what the page
  // shows against the state before; returns the state after.
  async function balanceChecked(tag) {
    const before = await state();
    await press('#balance');
    const after = await state();
    const h = after.hot, b = h.balance;
    check(b !== null && b.promotions === 0, `${tag}: a report, no promotions (one copy a slot)`);
    check(close(b.maxBefore, before.hot.maxRatio) && close(b.maxAfter, h.maxRatio),
      `${tag}: the report's max/mean before and after are the page's`,
      `${b.maxBefore} vs ${before.hot.maxRatio}, ${b.maxAfter} vs ${h.maxRatio}`);
    check(b.maxAfter <= b.maxBefore + 1e-12 && b.maxAfter >= h.floor - 1e-12,
      `${tag}: max/mean after (${b.maxAfter.toFixed(3)}) <= before (${b.maxBefore.toFixed(3)}), ` +
      `>= the floor (${h.floor.toFixed(3)})`);
    check(b.aboveAfter === 0 && h.members.every((m) => m.load <= m.bound * (1 + 1e-12)),
      `${tag}: every node within its bound after`,
      h.members.filter((m) => m.load > m.bound).map((m) => m.name).join(','));
    check(b.movedLoad + b.promotedLoad >= b.movedLoadFloor,
      `${tag}: the moved load is at least the report's floor`);
    check(h.members.every((m) => m.before === before.hot.members.find((x) => x.who === m.who).load),
      `${tag}: each node's load before is the one shown before`);
    check(h.members.reduce((t, m) => t + m.load, 0) === h.total, `${tag}: the loads still add up to the total`);
    // The slots listed are exactly those whose owner changed in the ranges drawn.
    const o0 = owners(before), o1 = owners(after);
    const changed = o1.map((o, slot) => (o !== o0[slot] ? slot : -1)).filter((slot) => slot >= 0);
    check(b.movedCount === changed.length && b.moved.every(([slot, from, to]) => o0[slot] === from &&
      o1[slot] === to && from !== to), `${tag}: the moved slots are those whose owner changed (from -> to)`,
    `${b.movedCount} listed, ${changed.length} changed`);
    check(b.movedCount <= b.moves && b.moved.reduce((t, mv) => t + mv[3], 0) <= b.movedLoad &&
      (b.moves === 0) === (b.movedCount === 0),
    `${tag}: the moved slots agree with the report's moves and moved load`);
    check((await page.$$('#hot-moves tbody tr')).length === b.moved.length, `${tag}: a row per moved slot`);
    check(h.inForce === b.inForce && (b.moves === 0 || h.inForce > 0), `${tag}: the load moves in force are counted`);
    const shown = await text('#hot-figures');
    check(shown.includes(b.maxBefore.toFixed(3)) && shown.includes(b.maxAfter.toFixed(3)) &&
      shown.includes(h.floor.toFixed(3)) && (await text('#hot-report')).includes(b.moves + ' move'),
    `${tag}: max/mean before and after, the floor and the moves are shown`, shown);
    // Each bar ends within its bound's tick, and every mark within its track.
    const bars = await page.$$eval('#hot-loads tbody tr', (rows) => rows.map((r) => {
      const box = (sel) => {
        const { left, right } = r.querySelector(sel).getBoundingClientRect();
        return { left, right };
      };
      return { track: box('.track'), now: box('.bar.now'), bound: box('.tick.bound') };
    }));
    check(bars.length === h.members.length && bars.every((x) => x.now.right <= x.bound.right + 1 &&
      x.bound.right <= x.track.right + 1 && x.now.left >= x.track.left - 1),
    `${tag}: every bar ends within its bound and its track`, JSON.stringify(bars));
    return after;
  }
  const b1 = await balanceChecked('Balance (s = 1.0)');
  await layout('hot spot balanced, 1240 px');
  await drawn('hot spot balanced, 1240 px');
  const hotShot = async (name) => (await page.$('#hot')).screenshot({ path: join(args.out, name) });
  await hotShot('explorer-hot.png');
  // The same load again: nothing moves (a fixed point).
  await press('#balance');
  const b2 = await state();
  check(b2.hot.balance.moves === 0 && b2.hot.balance.movedCount === 0 && dchRanges(b2) === dchRanges(b1),
    'Balance again with the same load: nothing moves');
  // Every key alike and one hot slot: its node is far above what its bound
  // allows, and balancing moves slots off it.
  await rendered(() => page.select('#hot-zipf', '0'));
  const s0 = await state();
  check(s0.hot.zipf === 0 && s0.hot.inForce === 0 && s0.hot.balance === null &&
    dchRanges(s0) === dchRanges(countBalanced), 'another popularity: a new load on the count-balanced map');
  const b3 = await balanceChecked('Balance (every key alike, one hot slot)');
  check(b3.hot.balance.moves > 0 && b3.hot.balance.maxAfter < b3.hot.balance.maxBefore,
    'one hot slot: balancing moves slots and lowers max/mean',
    `${b3.hot.balance.moves} moves, ${b3.hot.balance.maxBefore} -> ${b3.hot.balance.maxAfter}`);
  await layout('hot spot balanced (s = 0), 1240 px');
  await hotShot('explorer-hot-uniform.png');
  await page.setViewport({ width: 800, height: 900, deviceScaleFactor: 1 });
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
  await layout('hot spot balanced (s = 0), 800 px');
  await drawn('hot spot balanced (s = 0), 800 px');
  await hotShot('explorer-hot-narrow.png');
  await page.setViewport({ width: 1240, height: 900, deviceScaleFactor: 1 });
  // A change of the cluster starts from the count-balanced map; undo gives
  // back the count-balanced map of five nodes.
  await click('#add');
  await settled();
  const sa = await state();
  check(sa.hot.inForce === 0 && sa.hot.balance === null && (await text('#status')).includes('dropped'),
    'a join while balanced: the load moves are dropped first, and the page says so', await text('#status'));
  check(sa.schemes[0].change.movedOther === 0, 'a join while balanced moves keys only to the joiner');
  await click('#undo');
  await settled();
  check(dchRanges(await state()) === dchRanges(countBalanced), 'undo: the count-balanced map of five nodes');
  // Clear gives back the count-balanced map.
  await press('#balance');
  check((await state()).hot.inForce > 0 && !(await page.$eval('#balance-clear', (e) => e.disabled)),
    'balanced again: Clear is offered');
  await press('#balance-clear');
  const sc = await state();
  check(sc.hot.inForce === 0 && sc.hot.balance === null && dchRanges(sc) === dchRanges(countBalanced) &&
    await page.$eval('#balance-clear', (e) => e.disabled), 'Clear: the count-balanced map is back');
  await press('#hot-on');
  const soff = await state();
  check(soff.hot === null && await page.$eval('#hot-body', (e) => e.hidden) &&
    dchRanges(soff) === dchRanges(countBalanced), 'the hot spot off: no load, the count-balanced map');
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
