// SPDX-License-Identifier: MIT
// The explorer page: buttons call the engine (engine.c and report.c, with
// libdch, compiled to WebAssembly) and everything it reports is drawn here.
// Nothing below decides who owns a key or computes a figure: it formats the
// engine's numbers and draws its ranges.
'use strict';

(function () {
  const SCHEME_COLOUR = ['#d62728', '#1f77b4', '#2ca02c'];
  const SCHEME_NAME = ['DCH map', 'ring-160', 'ring-1'];
  // Member colours by name number: distinct hues first, then lighter ones.
  const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#b07aa1',
    '#edc948', '#76b7b2', '#ff9da7', '#9c755f', '#8cd17d', '#499894',
    '#d37295', '#86bcb6', '#f1ce63', '#a0cbe8', '#ffbe7d', '#bab0ac',
    '#79706e', '#d4a6c8', '#b6992d'];
  const DEFAULTS = { units: 8, slots: 8, points: 160, seed: 1, views: 8 };
  const RANDOM_STEPS = 20;
  const UINT32_MAX = 4294967295;

  const $ = (id) => document.getElementById(id);

  // One figure per scheme, all of one layout: the caption (its title and a
  // line filled in by render), the ring, what moved and who gave it to whom.
  const SCHEME_TITLE = ['DCH map', 'Ring, 160 points per node', 'Ring, 1 point per node'];
  $('schemes').innerHTML = SCHEME_TITLE.map((title, s) =>
    `<figure class="scheme" data-scheme="${s}">
      <figcaption><h2 id="title-${s}">${title}</h2>
        <p class="sub" id="sub-${s}"></p></figcaption>
      <canvas width="300" height="300" id="ring-${s}"></canvas>
      <p class="moved" id="moved-${s}"></p>
      <ul class="flows" id="flows-${s}"></ul>
    </figure>`).join('\n');
  let api = null;
  let state = null;
  let chosen = null; // name number of the chosen member
  let notice = ''; // says why nothing changed, until the next change

  function colour(who) {
    return who < 0 ? '#e3e6eb' : PALETTE[who % PALETTE.length];
  }

  function pct(v) {
    if (v === null || v === undefined) return '–';
    if (v === 0) return '0%';
    const p = 100 * v;
    return (p < 0.1 ? p.toPrecision(2) : p.toFixed(1)) + '%';
  }

  function fixed(v, digits) {
    return v === null || v === undefined ? '–' : v.toFixed(digits);
  }

  function chip(who) {
    return '<span class="chip" style="background:' + colour(who) + '"></span>';
  }

  function nameOf(who) {
    return who < 0 ? 'nobody' : 'node-' + String(who + 1).padStart(2, '0');
  }

  // ---- Reading the fields -----------------------------------------------------

  // Reads a count strictly, with the rules and words of dchctl: once the
  // surrounding whitespace (space, tab, newline, CR, VT, FF) is trimmed, the
  // whole text must be decimal digits, so no sign, fraction, exponent or
  // empty text, and the value must lie in [min, max].
  function parseWhole(text, name, min, max) {
    const digits = text.replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, '');
    const v = /^[0-9]+$/.test(digits) ? Number(digits) : NaN;
    if (v >= min && v <= max) return { value: v };
    return { error: name + ' must be a whole number from ' + min + ' to ' + max +
      ', not "' + text + '"' };
  }

  // Every numeric field: its name in messages and its bounds, the engine's
  // (it reports them as state.limits); a select's are its first and last.
  const FIELDS = {
    'add-weight': (lim) => ['weight', 0, lim.weight],
    weight: (lim) => ['weight', 0, lim.weight],
    'random-seed': () => ['seed', 0, UINT32_MAX],
    points: (lim) => ['ring points per node', 1, lim.points],
    views: (lim) => ['client views', 1, lim.views],
    units: () => ['DCH units', ...selectBounds('units')],
    slots: () => ['slots per unit', ...selectBounds('slots')],
  };

  function selectBounds(id) {
    const o = $(id).options;
    return [Number(o[0].value), Number(o[o.length - 1].value)];
  }

  // The value of field `id`, or null once the error line says why not.
  function field(id) {
    const [name, min, max] = FIELDS[id](state.limits);
    const r = parseWhole($(id).value, name, min, max);
    if (r.error) {
      $(id).setAttribute('aria-invalid', 'true');
      showError(r.error);
      return null;
    }
    $(id).removeAttribute('aria-invalid');
    return r.value;
  }

  // ---- Calling the engine ---------------------------------------------------

  function showError(text) {
    const e = $('error');
    e.textContent = text;
    e.hidden = !text;
  }

  function act(call) {
    const moves = state && state.hot ? state.hot.inForce : 0;
    const rc = call();
    if (rc < 0) {
      showError(api.message());
      return false;
    }
    showError('');
    notice = '';
    refresh();
    // A change of the cluster starts from the count-balanced map.
    if (moves && state.hot && state.hot.inForce === 0 && !state.hot.balance) {
      notice = statusText() + ' The ' + moves + ' load move' + (moves === 1 ? ' was' : 's were') +
        ' dropped first: press Balance again.';
      $('status').textContent = notice;
    }
    return true;
  }

  // Nothing to do: the status line says so, and the history is untouched.
  function nothingChanged(text) {
    showError('');
    notice = text + ': nothing changed.';
    $('status').textContent = notice;
  }

  let generation = 0;
  let renders = 0; // full renders, for a test driving the page

  function load(full) {
    const ptr = api.state(full ? 1 : 0);
    if (!ptr) {
      showError(api.message());
      return false;
    }
    state = JSON.parse(api.UTF8ToString(ptr));
    return true;
  }

  // Draws the change at once, then (after the browser has painted it) asks
  // the engine for the costly figures, which build a map or ring per client
  // view; a newer change makes the pending request moot.
  function refresh() {
    const gen = ++generation;
    if (!load(false)) return;
    render();
    requestAnimationFrame(() => setTimeout(() => {
      if (gen === generation && load(true)) render();
    }, 0));
  }

  // The setup fields show the setup in force (after a refusal too; the
  // error line quotes what was refused).
  function showSetup() {
    const c = state.config;
    ['units', 'slots', 'points', 'views'].forEach((id) => {
      $(id).value = String(c[id]);
      $(id).removeAttribute('aria-invalid');
    });
  }

  // A new setup keeps the history: the engine replays every change on it.
  function changeSetup() {
    const units = field('units');
    const slots = units === null ? null : field('slots');
    const points = slots === null ? null : field('points');
    const c = state.config;
    if (points === null) {
      showSetup();
    } else if (units === c.units && slots === c.slots && points === c.points) {
      showSetup();
      nothingChanged('The setup is already ' + units + ' × ' + slots + ' slots and ' +
        points + ' ring points per node');
    } else if (!act(() => api.setup(units, slots, points))) {
      showSetup();
    } else {
      const n = state.history.length;
      notice = 'New setup: ' + units + ' × ' + slots + ' slots, ' + points +
        ' ring points per node. ' + (n === 0 ? 'There was no change to replay.'
        : n === 1 ? 'The one change of the history was replayed on it.'
          : 'The ' + n + ' changes of the history were replayed on it; undo walks back through them.');
      $('status').textContent = notice;
    }
  }

  function changeViews() {
    const views = field('views');
    if (views === null) showSetup();
    else if (views === state.config.views) {
      showSetup();
      nothingChanged('There are already ' + views + ' client views');
    } else act(() => api.views(views));
  }

  function restart() {
    const c = state.config;
    return act(() => api.reset(c.units, c.slots, c.points, c.seed));
  }

  function setWeight() {
    const m = state.members.find((x) => x.who === chosen);
    if (!m) return;
    const w = field('weight');
    if (w === null) return;
    if (w === m.weight) nothingChanged(m.name + ' already has weight ' + w);
    else act(() => api.setWeight(m.who, w));
  }

  // ---- Drawing a ring ---------------------------------------------------------

  function angle(f) {
    return f * 2 * Math.PI - Math.PI / 2;
  }

  // Draws ranges [[lo, owner], ...] (fractions of the hash space) as a ring,
  // DCH's unit boundaries when `units` is given, and `changes`
  // [[lo, hi, from, to], ...] as an outer band in the giver's colour.
  function drawRing(cv, ranges, changes, units, label) {
    const size = Number(cv.getAttribute('width'));
    const dpr = window.devicePixelRatio || 1;
    if (!cv.dataset.css) {
      cv.dataset.css = String(size);
      cv.width = size * dpr;
      cv.height = size * dpr;
    }
    const css = Number(cv.dataset.css);
    const ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, css, css);
    const c = css / 2, R = css * 0.34, W = css * 0.1;
    cv.ring = { ranges, changes, c, R, W };

    const byOwner = new Map();
    for (let i = 0; i < ranges.length; i++) {
      const f0 = ranges[i][0];
      const f1 = i + 1 < ranges.length ? ranges[i + 1][0] : 1;
      const o = ranges[i][1];
      if (!byOwner.has(o)) byOwner.set(o, []);
      byOwner.get(o).push([f0, f1]);
    }
    ctx.lineCap = 'butt';
    ctx.lineWidth = W;
    for (const [o, arcs] of byOwner) {
      ctx.beginPath();
      for (const [f0, f1] of arcs) {
        ctx.moveTo(c + R * Math.cos(angle(f0)), c + R * Math.sin(angle(f0)));
        ctx.arc(c, c, R, angle(f0), angle(f1));
      }
      ctx.strokeStyle = colour(o);
      ctx.stroke();
    }

    // DCH's unit boundaries: a dark line across the ring at every k/units.
    if (units && units <= 128) {
      ctx.lineWidth = units <= 32 ? 1.5 : 1;
      ctx.strokeStyle = 'rgba(20,25,35,0.85)';
      ctx.beginPath();
      for (let k = 0; k < units; k++) {
        const a = angle(k / units);
        ctx.moveTo(c + (R - W / 2 - 7) * Math.cos(a), c + (R - W / 2 - 7) * Math.sin(a));
        ctx.lineTo(c + (R + W / 2) * Math.cos(a), c + (R + W / 2) * Math.sin(a));
      }
      ctx.stroke();
    }

    if (changes && changes.length) {
      const B = R + W / 2 + 10;
      ctx.lineWidth = 11;
      ctx.strokeStyle = '#1d2430';
      ctx.beginPath();
      for (const ch of changes) {
        ctx.moveTo(c + B * Math.cos(angle(ch[0])), c + B * Math.sin(angle(ch[0])));
        ctx.arc(c, c, B, angle(ch[0]), angle(Math.max(ch[1], ch[0] + 0.0015)));
      }
      ctx.stroke();
      ctx.lineWidth = 7;
      for (const ch of changes) {
        ctx.beginPath();
        ctx.arc(c, c, B, angle(ch[0]), angle(Math.max(ch[1], ch[0] + 0.0015)));
        ctx.strokeStyle = colour(ch[2]);
        ctx.stroke();
      }
    }

    // Hash 0, where the space begins and ends.
    ctx.fillStyle = '#1d2430';
    ctx.beginPath();
    ctx.moveTo(c, c - R + W / 2 + 2);
    ctx.lineTo(c - 5, c - R + W / 2 + 11);
    ctx.lineTo(c + 5, c - R + W / 2 + 11);
    ctx.fill();
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.fillText('hash 0', c, c - R + W / 2 + 24);
    ctx.font = '600 15px system-ui, sans-serif';
    ctx.fillText(label, c, c + 5);
  }

  // The owner (and the last move) under the pointer, read from the ranges the
  // ring was drawn from.
  function hover(e) {
    const cv = e.currentTarget;
    const tip = $('tip');
    const g = cv.ring;
    if (!g) return;
    const box = cv.getBoundingClientRect();
    const x = e.clientX - box.left - g.c, y = e.clientY - box.top - g.c;
    const r = Math.hypot(x, y);
    if (!g.ranges.length || r < g.R - g.W / 2 || r > g.R + g.W / 2 + 16) {
      tip.hidden = true;
      return;
    }
    const f = ((Math.atan2(y, x) + Math.PI / 2) / (2 * Math.PI) + 1) % 1;
    let lo = 0, hi = g.ranges.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (g.ranges[mid][0] <= f) lo = mid; else hi = mid - 1;
    }
    const dch = cv.id === 'ring-0' || cv.id === 'hot-ring' || cv.id.startsWith('order-');
    let text = 'at ' + (100 * f).toFixed(1) + (dch ? '% of the map: ' : '% round the ring: ') +
      nameOf(g.ranges[lo][1]);
    const ch = (g.changes || []).find((m) => m[0] <= f && f < m[1]);
    if (ch) {
      text += cv.id === 'order-rev' ? ' (as you built it: ' + nameOf(ch[2]) + ')'
        : ' (moved here from ' + nameOf(ch[2]) + ')';
    }
    tip.textContent = text;
    tip.style.left = (e.pageX + 14) + 'px';
    tip.style.top = (e.pageY + 14) + 'px';
    tip.hidden = false;
  }

  // ---- Rendering the state -------------------------------------------------------

  function statusText() {
    const last = state.last;
    const n = state.members.length;
    if (!last) {
      return n === 0
        ? 'The cluster is empty. Press “Add a node” a few times to begin.'
        : n + ' nodes.';
    }
    const ch = state.schemes[0].change;
    const opt = ch ? pct(ch.optimum) : '–';
    if (last.kind === 'add') {
      if (n === 1) return last.name + ' joined an empty cluster: it owns every key. Add another.';
      return last.name + ' joined with weight ' + last.weight + '. Its fair share, ' + opt +
        ' of the keys, is what must move to give it that share (DCH moves whole slots, so it may move less by a fraction of one slot).';
    }
    if (last.kind === 'remove') {
      return last.name + ' left. Every key it held must move to the others, and nothing else should.';
    }
    if (last.kind === 'drain') {
      return last.name + ' was drained for maintenance: DCH keeps it in its base table and ' +
        'serves its keys from the others, as its removal would (the rings, which have no ' +
        'drain, remove it). Undrain it to give it back exactly what it held.';
    }
    if (last.kind === 'undrain') {
      return last.name + ' came back from its drain and took back exactly the ' + opt +
        ' of the keys it held: nothing else moved, and the data it kept is its own again.';
    }
    return last.name + '’s weight went from ' + last.prev + ' to ' + last.weight +
      '. Its fair share changed by ' + opt + ' of the keys: that much must move, up to the fraction of a slot by which DCH, moving whole slots, may differ.';
  }

  function renderControls() {
    const members = state.members;
    const sel = $('member');
    if (!members.some((m) => m.who === chosen)) {
      chosen = members.length ? members[members.length - 1].who : null;
    }
    sel.innerHTML = members.map((m) =>
      '<option value="' + m.who + '"' + (m.who === chosen ? ' selected' : '') + '>' +
      m.name + ' (weight ' + m.weight + (m.drained ? ', drained' : '') + ')</option>').join('');
    const m = members.find((x) => x.who === chosen);
    $('remove').disabled = !m || m.drained;
    $('set-weight').disabled = !m || m.drained;
    $('drain').disabled = !m || m.drained;
    $('undrain').disabled = !m || !m.drained;
    $('undo').disabled = state.history.length === 0;
  }

  function renderMembers() {
    const total = state.members.reduce((s, m) => s + m.weight, 0);
    $('members-ring').textContent = 'ring-' + state.config.points;
    $('members').querySelector('tbody').innerHTML = state.members.map((m) =>
      '<tr data-who="' + m.who + '"' + (m.who === chosen ? ' class="chosen"' : '') + '><td>' +
      chip(m.who) + m.name + (m.drained ? ' <i>(drained)</i>' : '') + '</td><td>' +
      m.weight + '</td><td>' +
      (total ? pct(m.weight / total) : '–') + '</td>' +
      m.share.map((s) => '<td>' + pct(s) + '</td>').join('') + '</tr>').join('') ||
      '<tr><td colspan="6">no members yet</td></tr>';
  }

  // DCH's drained nodes: their arcs in the base table and who serves them now.
  function renderDrains() {
    const drains = state.drains || [];
    $('drains').hidden = drains.length === 0;
    $('drains').querySelector('tbody').innerHTML = drains.map((d) => {
      const who = state.members.find((m) => m.name === d.name);
      return '<tr><td>' + (who ? chip(who.who) : '') + d.name + '</td><td>' + pct(d.base) +
        '</td><td>' + d.servedBy.map((x) => chip(x.who) + x.name + ' ' + pct(x.share))
          .join(', ') + '</td></tr>';
    }).join('');
  }

  function renderRings() {
    const cfg = state.config;
    $('sub-0').textContent = cfg.units + ' units of ' + cfg.slots + ' slots; dark lines: unit boundaries';
    $('title-1').textContent = 'Ring, ' + cfg.points + ' points per node';
    $('sub-1').textContent = 'ketama-style: ' + cfg.points + ' hashed points per unit of weight';
    $('sub-2').textContent = 'the textbook ring: one hashed point per node';
    SCHEME_NAME[1] = 'ring-' + cfg.points;
    const n = state.members.length;
    state.schemes.forEach((sc, s) => {
      const ch = sc.change;
      drawRing($('ring-' + s), sc.ranges, ch ? ch.changes : null,
        s === 0 ? cfg.units : 0, n + (n === 1 ? ' node' : ' nodes'));
      const moved = $('moved-' + s);
      moved.innerHTML = ch
        ? 'Last change moved <b>' + pct(ch.moved) + '</b> of the keys (optimum ' + pct(ch.optimum) + ')'
        : '';
      moved.dataset.value = ch ? String(ch.moved) : '';
      const flows = ch ? ch.flows : [];
      const shown = flows.slice(0, 5).map((f) =>
        '<li>' + chip(f[0]) + nameOf(f[0]) + ' → ' + chip(f[1]) + nameOf(f[1]) +
        ': ' + pct(f[2]) + '</li>');
      if (flows.length > 5) shown.push('<li>… and ' + (flows.length - 5) + ' more pairs</li>');
      $('flows-' + s).innerHTML = shown.join('');
    });
  }

  function cell(id, html, value) {
    const td = $(id);
    td.innerHTML = html;
    td.dataset.value = value === undefined ? '' : JSON.stringify(value);
  }

  function renderFigures() {
    const cfg = state.config;
    const last = state.last;
    $('fig-ring-title').textContent = 'ring-' + cfg.points;
    $('views-sentence').textContent = 'Over ' + cfg.views + ' clients that each know ' +
      'only about half of the nodes (drawn from a fixed seed) and build their own map or ' +
      'ring: spread is how many different nodes one key can be sent to, load the most ' +
      'keys one node is asked for (1.00 is a fair 1/N).';
    const others = last && (last.kind === 'remove' || last.kind === 'drain' ||
      (last.kind === 'weight' && last.weight < last.prev)) ? 'receivers' : 'donors';
    state.schemes.forEach((sc, s) => {
      const b = sc.balance;
      cell('fig-balance-' + s, b.members
        ? '<span class="big">' + fixed(b.peak, 3) + '</span> peak/avg' +
          '<span class="note">CV ' + fixed(b.cv, 3) + ' · lowest ' + fixed(b.min, 3) + '</span>'
        : '–', b.members ? b.peak : undefined);
      const ch = sc.change;
      if (!ch) {
        ['mono', 'moved', 'donors'].forEach((k) => cell('fig-' + k + '-' + s, '–'));
      } else {
        cell('fig-mono-' + s, ch.movedOther === 0
          ? '<span class="big ok">0</span> moved between other nodes' +
            '<span class="note ok">holds: keys moved only to or from ' + last.name + '</span>'
          : '<span class="big warn">' + pct(ch.movedOther) + '</span> moved between other nodes' +
            '<span class="note warn">broken: keys changed hands between nodes that did not change</span>',
        ch.movedOther);
        const ratio = ch.optimum > 0 ? ch.moved / ch.optimum : null;
        cell('fig-moved-' + s, '<span class="big">' + pct(ch.moved) + '</span> moved, optimum ' +
          pct(ch.optimum) + (ratio !== null
            ? '<span class="note">' + fixed(ratio, 3) + '× the optimum</span>' : ''),
        ch.moved);
        cell('fig-donors-' + s, ch.eligible
          ? '<span class="big">' + ch.parties + ' of ' + ch.eligible + '</span> ' + others +
            (ch.parties ? '<span class="note">the largest ' + (others === 'donors' ? 'gave ' : 'got ') +
              fixed(ch.worst, 2) + '× its ideal share</span>' : '')
          : '–', { parties: ch.parties, eligible: ch.eligible, worst: ch.worst });
      }
      const sp = sc.spread;
      let html = state.full ? '–' : '<span class="note">computing…</span>';
      if (sp) {
        html = '<span class="big">' + fixed(sp.max, 0) + '</span> nodes at most per key' +
          ' (mean ' + fixed(sp.mean, 2) + '), load <b>' + fixed(sp.load, 2) + '</b>';
        if (s === 0) {
          html = '<span class="note">each client builds its own map:</span>' + html +
            '<span class="note">clients share one map: spread ' + fixed(state.shared.max, 0) +
            ', load ' + fixed(state.shared.load, 2) + '</span>';
        }
      }
      cell('fig-spread-' + s, html, sp ? { spread: sp, shared: s === 0 ? state.shared : null } : undefined);
    });
  }

  function renderOrder() {
    const n = state.members.length;
    if (!state.full) {
      $('order-figures').innerHTML = '<li>computing…</li>';
      return;
    }
    drawRing($('order-live'), state.schemes[0].ranges, null, state.config.units,
      'as built');
    drawRing($('order-rev'), state.reverse.ranges, state.reverse.changes,
      state.config.units, 'reversed');
    const items = state.schemes.map((sc, s) =>
      '<li data-value="' + sc.disagree + '"><b style="color:' + SCHEME_COLOUR[s] + '">' +
      SCHEME_NAME[s] + '</b>: ' + (sc.disagree > 0
        ? pct(sc.disagree) + ' of the keys would go to a different node'
        : 'identical, every key goes to the same node') + '</li>');
    $('order-figures').innerHTML = n < 2
      ? '<li>Add at least two nodes to compare.</li>' : items.join('');
  }

  // Labels under the chart's x axis: the joiner's name over the members
  // after the join. One takes LABEL_W of the 900-wide view box; closer
  // neighbours take turns over two rows, and closer still only every k-th
  // join is labelled (every point's tooltip names its join).
  const LABEL_W = 56;

  function xLabels(joins, x, top) {
    const gap = joins.length > 1 ? x(1) - x(0) : LABEL_W;
    const rows = gap >= LABEL_W ? 1 : 2;
    const every = Math.max(1, Math.ceil(LABEL_W / (rows * gap)));
    let out = '';
    joins.forEach((h, i) => {
      if (i % every !== 0) return;
      const y = top + 20 + ((i / every) % rows) * 30;
      out += '<text class="xlabel" x="' + x(i) + '" y="' + y + '" text-anchor="middle">' +
        '<title>join ' + (i + 1) + ': ' + h.op.name + ' joined, ' + h.members +
        ' nodes after it</title><tspan class="name">' + h.op.name + '</tspan>' +
        '<tspan class="count" x="' + x(i) +
        '" dy="13">' + h.members + ' nodes</tspan></text>';
    });
    return { svg: out, height: rows * 30 };
  }

  function renderChart() {
    const svg = $('chart');
    const joins = state.history.filter((h) => h.op.kind === 'add' && h.optimum < 1 && h.members > 1);
    const Wd = 900, L = 56, Rm = 150, T = 30, ph = 208;
    const pw = Wd - L - Rm;
    let out = '<text class="title" x="' + L + '" y="18">Share of all keys moved by each join</text>';
    if (joins.length === 0) {
      svg.setAttribute('viewBox', '0 0 ' + Wd + ' 280');
      out += '<text x="' + (L + pw / 2) + '" y="' + (T + ph / 2) + '" text-anchor="middle">' +
        'Add two or more nodes: each join adds a point here.</text>';
      svg.innerHTML = out;
      return;
    }
    let ymax = 0.5;
    joins.forEach((h) => h.moved.concat([h.optimum]).forEach((v) => { ymax = Math.max(ymax, v); }));
    ymax = Math.ceil(ymax * 10) / 10;
    const x = (i) => L + (joins.length === 1 ? pw / 2 : (i * pw) / (joins.length - 1));
    const y = (v) => T + ph - (v / ymax) * ph;
    for (let k = 0; k <= ymax * 10 + 1e-9; k++) {
      const v = k / 10;
      out += '<line x1="' + L + '" x2="' + (L + pw) + '" y1="' + y(v) + '" y2="' + y(v) +
        '" stroke="#e8ebf0"/><text x="' + (L - 6) + '" y="' + (y(v) + 4) +
        '" text-anchor="end">' + Math.round(v * 100) + '%</text>';
    }
    const labels = xLabels(joins, x, T + ph);
    out += labels.svg;
    const Ht = T + ph + labels.height + 36;
    svg.setAttribute('viewBox', '0 0 ' + Wd + ' ' + Ht);
    out += '<text x="' + (L + pw / 2) + '" y="' + (Ht - 8) +
      '" text-anchor="middle">who joined, in order, and the nodes after the join</text>';
    const line = (vals, colour, dash) => '<polyline fill="none" stroke="' + colour +
      '" stroke-width="2"' + (dash ? ' stroke-dasharray="6 4"' : '') + ' points="' +
      vals.map((v, i) => x(i) + ',' + y(v)).join(' ') + '"/>';
    out += line(joins.map((h) => h.optimum), '#1d2430', true);
    [2, 1, 0].forEach((s) => {
      out += line(joins.map((h) => h.moved[s]), SCHEME_COLOUR[s], false);
      joins.forEach((h, i) => {
        out += '<circle cx="' + x(i) + '" cy="' + y(h.moved[s]) + '" r="3.5" fill="' +
          SCHEME_COLOUR[s] + '"><title>' + SCHEME_NAME[s] + ', join ' + (i + 1) + ' (' +
          h.op.name + ', ' + h.members + ' nodes after it): ' + pct(h.moved[s]) +
          '</title></circle>';
      });
    });
    const legend = [['DCH map', SCHEME_COLOUR[0], false], [SCHEME_NAME[1], SCHEME_COLOUR[1], false],
      ['ring-1', SCHEME_COLOUR[2], false], ['optimum', '#1d2430', true]];
    legend.forEach(([label, col, dash], i) => {
      const ly = T + 10 + i * 22, lx = L + pw + 18;
      out += '<line x1="' + lx + '" x2="' + (lx + 24) + '" y1="' + ly + '" y2="' + ly +
        '" stroke="' + col + '" stroke-width="2"' + (dash ? ' stroke-dasharray="6 4"' : '') +
        '/><text x="' + (lx + 30) + '" y="' + (ly + 4) + '">' + label + '</text>';
    });
    svg.innerHTML = out;
  }

  // ---- The hot spot ----------------------------------------------------------------

  function hotShare(v) {
    return pct(v / state.hot.total);
  }

  // One bar per balancing node: its load now (solid, its colour), before the
  // last balancing (pale), its target (dark line) and its bound (red tick),
  // on one scale for all rows.
  function hotRow(m, top) {
    const at = (v) => (100 * v / top).toFixed(2) + '%';
    const was = m.before !== null
      ? '<div class="bar before" style="width:' + at(m.before) + '"></div>' : '';
    return '<tr data-who="' + m.who + '"><td>' + chip(m.who) + m.name + '</td>' +
      '<td class="bar-cell"><div class="track" title="' + m.name + ': load ' + hotShare(m.load) +
      ', target ' + hotShare(m.target) + ', bound ' + hotShare(m.bound) + '">' + was +
      '<div class="bar now" style="width:' + at(m.load) + ';background:' + colour(m.who) + '"></div>' +
      '<div class="tick target" style="left:' + at(m.target) + '"></div>' +
      '<div class="tick bound" style="left:' + at(m.bound) + '"></div></div></td>' +
      '<td data-value="' + m.ratio + '">' + fixed(m.ratio, 3) +
      (m.ratioBefore !== null && m.before !== m.load
        ? ' <span class="was">(was ' + fixed(m.ratioBefore, 3) + ')</span>' : '') +
      '</td><td data-value="' + (m.bound / m.target) + '">' + fixed(m.bound / m.target, 3) + '</td></tr>';
  }

  function hotFigures(h) {
    const b = h.balance;
    const items = [];
    items.push('<li id="hot-max" data-value="' + h.maxRatio + '">Busiest node over its target (max/mean): <b>' +
      fixed(h.maxRatio, 3) + '</b>' + (b ? ' (before balancing ' + fixed(b.maxBefore, 3) + ', after ' +
        fixed(b.maxAfter, 3) + ')' : '') + '</li>');
    items.push('<li id="hot-floor" data-value="' + h.floor + '">No placement can do better than <b>' +
      fixed(h.floor, 3) + '</b>: max(1, heaviest slot / largest target). The heaviest slot, ' +
      h.heaviestSlot + ', carries ' + hotShare(h.heaviest) + ' of the load, the next ' +
      hotShare(h.second) + '.</li>');
    if (b) {
      items.push('<li id="hot-report">Balancing: <b>' + b.moves + '</b> ' + (b.moves === 1 ? 'move' : 'moves') +
        ', ' + b.promotions + ' promotions (one copy a slot here: no co-replica to promote), moved load <b>' +
        hotShare(b.movedLoad) + '</b> against a floor of ' + hotShare(b.movedLoadFloor) +
        ' (no balancing that brings every node within its bound moves less); nodes above their bounds: ' +
        b.aboveBefore + ' before, ' + b.aboveAfter + ' after' +
        (b.tooHeavy ? '; ' + b.tooHeavy + ' slot' + (b.tooHeavy === 1 ? ' is' : 's are') +
          ' heavier than any target (only spreading its reads could help)' : '') + '.</li>');
      b.left.forEach((l) => items.push('<li class="warn">' + l.name + ' is left above its bound (' +
        l.why + ')</li>'));
    }
    items.push('<li id="hot-in-force" data-value="' + h.inForce + '">Load moves in force: ' + h.inForce + '</li>');
    return items.join('');
  }

  function hotMoves(h) {
    const b = h.balance;
    let caption = 'Press Balance to see which slots move.';
    if (b && b.movedCount === 0) {
      caption = h.inForce
        ? 'Balancing again with the same load moved nothing: the map is a fixed point.'
        : 'Balancing moved nothing: every node was within its bound.';
    } else if (b) {
      caption = 'The ' + b.movedCount + ' slot' + (b.movedCount === 1 ? '' : 's') +
        ' balancing moved' + (b.moved.length < b.movedCount ? ' (the first ' + b.moved.length + ')' : '');
    }
    $('hot-moves-caption').textContent = caption;
    $('hot-moves-box').hidden = !(b && b.moved.length);
    $('hot-moves').querySelector('tbody').innerHTML = b ? b.moved.map(([slot, from, to, load]) =>
      '<tr><td>' + slot + '</td><td>' + hotShare(load) + '</td><td>' + chip(from) + nameOf(from) +
      '</td><td>' + chip(to) + nameOf(to) + '</td></tr>').join('') : '';
  }

  function renderHot() {
    const h = state.hot;
    $('hot-on').setAttribute('aria-pressed', h ? 'true' : 'false');
    $('hot-on').textContent = h ? 'Take the hot spot off' : 'Hot spot';
    $('balance').disabled = !h || h.members.length === 0;
    $('balance-clear').disabled = !h || h.inForce === 0;
    $('hot-body').hidden = !h;
    if (!h) return;
    $('hot-zipf').value = String(h.zipf);
    let top = 0;
    h.members.forEach((m) => { top = Math.max(top, m.load, m.bound, m.before || 0); });
    $('hot-loads').querySelector('tbody').innerHTML = h.members.map((m) => hotRow(m, top * 1.04)).join('') ||
      '<tr><td colspan="4">no node of positive weight to carry the load</td></tr>';
    $('hot-figures').innerHTML = hotFigures(h);
    hotMoves(h);
    const P = state.config.slotCount;
    const moved = h.balance ? h.balance.moved.map(([slot, from, to]) => [slot / P, (slot + 1) / P, from, to]) : null;
    drawRing($('hot-ring'), state.schemes[0].ranges, moved, state.config.units,
      h.inForce ? 'balanced' : 'by count');
  }

  // What a hot-spot action did, in the status line (the engine's figures).
  function hotNotice(what) {
    const h = state.hot;
    if (!h) return 'The hot spot is off: every key is as popular as the next.';
    const busiest = h.members.reduce((a, m) => (!a || m.ratio > a.ratio ? m : a), null);
    const now = busiest ? busiest.name + ' is the busiest node, at ' + fixed(busiest.ratio, 3) +
      '× its target; no placement can do better than ' + fixed(h.floor, 3) + '×.' : '';
    const b = h.balance;
    if (what === 'on') {
      return 'The hot spot is on (' + (h.zipf ? 'Zipf, s = ' + (h.zipf / 10).toFixed(1)
        : 'every key alike') + ', and slot ' + h.hotSlot + ' hot). ' + now + ' Press Balance.';
    }
    if (what === 'clear') return 'The load moves were dropped: the count-balanced map is back. ' + now;
    if (!b || b.movedCount === 0) return 'Balancing moved nothing. ' + now;
    return 'Balancing moved ' + b.movedCount + ' slot' + (b.movedCount === 1 ? '' : 's') + ' (' +
      hotShare(b.movedLoad) + ' of the load): max/mean went from ' + fixed(b.maxBefore, 3) + ' to ' +
      fixed(b.maxAfter, 3) + '. ' + now;
  }

  function hotAction(call, what) {
    if (act(call)) {
      notice = hotNotice(what);
      $('status').textContent = notice;
    }
  }

  function render() {
    renderControls();
    $('status').textContent = notice || statusText();
    renderMembers();
    renderDrains();
    renderRings();
    renderFigures();
    renderHot();
    renderOrder();
    renderChart();
    // For a test driving the page: set once every figure of a change is in.
    if (state.full) {
      document.body.dataset.renders = String(++renders);
      document.body.dataset.changes = String(state.history.length);
      document.body.dataset.ready = 'true';
    }
  }

  // ---- Wiring -------------------------------------------------------------------------

  function fillSelect(sel, values, value) {
    sel.innerHTML = values.map((v) => '<option' + (v === value ? ' selected' : '') + '>' +
      v + '</option>').join('');
  }

  function wire() {
    fillSelect($('units'), [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], DEFAULTS.units);
    fillSelect($('slots'), [1, 2, 4, 8, 16, 32, 64], DEFAULTS.slots);
    $('add').addEventListener('click', () => {
      const w = field('add-weight');
      if (w !== null) act(() => api.add(w));
    });
    $('remove').addEventListener('click', () => {
      if (chosen !== null) act(() => api.remove(chosen));
    });
    $('set-weight').addEventListener('click', setWeight);
    $('drain').addEventListener('click', () => {
      if (chosen !== null) act(() => api.drain(chosen));
    });
    $('undrain').addEventListener('click', () => {
      if (chosen !== null) act(() => api.undrain(chosen));
    });
    $('member').addEventListener('change', (e) => {
      chosen = Number(e.target.value);
      render();
    });
    $('members').addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-who]');
      if (!tr) return;
      chosen = Number(tr.dataset.who);
      render();
    });
    ['ring-0', 'ring-1', 'ring-2', 'order-live', 'order-rev', 'hot-ring'].forEach((id) => {
      $(id).addEventListener('mousemove', hover);
      $(id).addEventListener('mouseleave', () => { $('tip').hidden = true; });
    });
    $('undo').addEventListener('click', () => act(() => api.undo()));
    $('hot-on').addEventListener('click', () => {
      const on = !state.hot;
      hotAction(() => api.hot(on ? 1 : 0, Number($('hot-zipf').value)), on ? 'on' : 'off');
    });
    $('hot-zipf').addEventListener('change', () => {
      if (state.hot) hotAction(() => api.hot(1, Number($('hot-zipf').value)), 'on');
    });
    $('balance').addEventListener('click', () => hotAction(() => api.balance(), 'balance'));
    $('balance-clear').addEventListener('click', () => hotAction(() => api.balanceClear(), 'clear'));
    $('reset').addEventListener('click', restart);
    $('random').addEventListener('click', () => {
      const seed = field('random-seed');
      if (seed !== null) act(() => api.random(seed, RANDOM_STEPS));
    });
    ['units', 'slots', 'points'].forEach((id) => $(id).addEventListener('change', changeSetup));
    $('views').addEventListener('change', changeViews);
    // Enter in a field presses its button; editing a refused field clears its mark.
    [['add-weight', 'add'], ['weight', 'set-weight'], ['random-seed', 'random']].forEach(([id, button]) => {
      $(id).addEventListener('keydown', (e) => {
        if (e.key === 'Enter') $(button).click();
      });
    });
    ['add-weight', 'weight', 'random-seed'].forEach((id) =>
      $(id).addEventListener('input', () => $(id).removeAttribute('aria-invalid')));
  }

  // The engine's last report, for a test driving the page (read only).
  window.dchExplorerState = () => JSON.parse(JSON.stringify(state));

  createDchExplorer().then((M) => {
    api = {
      reset: M.cwrap('ex_reset', 'number', ['number', 'number', 'number', 'number']),
      setup: M.cwrap('ex_setup', 'number', ['number', 'number', 'number']),
      add: M.cwrap('ex_add', 'number', ['number']),
      remove: M.cwrap('ex_remove', 'number', ['number']),
      setWeight: M.cwrap('ex_set_weight', 'number', ['number', 'number']),
      drain: M.cwrap('ex_drain', 'number', ['number']),
      undrain: M.cwrap('ex_undrain', 'number', ['number']),
      undo: M.cwrap('ex_undo', 'number', []),
      random: M.cwrap('ex_random_history', 'number', ['number', 'number']),
      views: M.cwrap('ex_set_views', 'number', ['number']),
      hot: M.cwrap('ex_hot', 'number', ['number', 'number']),
      balance: M.cwrap('ex_balance', 'number', []),
      balanceClear: M.cwrap('ex_balance_clear', 'number', []),
      state: M.cwrap('ex_state', 'number', ['number']),
      message: M.cwrap('ex_message', 'string', []),
      version: M.cwrap('dch_version', 'string', []),
      UTF8ToString: M.UTF8ToString,
    };
    $('version').textContent = 'version ' + api.version();
    wire();
    api.views(DEFAULTS.views);
    act(() => api.reset(DEFAULTS.units, DEFAULTS.slots, DEFAULTS.points, DEFAULTS.seed));
    showSetup();
  }, (err) => {
    $('status').textContent = 'The library could not be loaded: ' + err +
      '. Serve this folder over HTTP (for example with bash explorer/run).';
  });
})();
