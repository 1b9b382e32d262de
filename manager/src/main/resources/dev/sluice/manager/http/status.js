// The Sluice status page: polls /api/status every second and redraws. Self-contained: no
// libraries, no network but this manager. What was drawn is written back into the DOM
// (data-points on each chart, data-* counts on each queue row) so that a headless browser test
// can read it from a DOM dump.
'use strict';

const COLORS = ['#2f6fde', '#e0662f', '#1a9e6a', '#a03fd0', '#c8a100', '#d0365f', '#2aa5b8', '#6b7385'];
const WINDOW_MS = 120_000;
const colorOf = new Map();

function color(key) {
  if (!colorOf.has(key)) colorOf.set(key, COLORS[colorOf.size % COLORS.length]);
  return colorOf.get(key);
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.setAttribute(k, String(v));
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function num(n) {
  return Number(n || 0).toLocaleString('en-US', { maximumFractionDigits: 1 });
}

function age(ms) {
  if (!ms) return '–';
  if (ms < 1000) return ms + ' ms';
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' m ' + Math.floor(s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' m';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

// A wait (ms) to the tenth of a ms below a second; '–' when nothing waited.
function wait(ms) {
  if (ms == null || ms <= 0) return '–';
  if (ms < 1000) return ms.toFixed(1) + ' ms';
  return age(Math.round(ms));
}

function fill(tableId, rows, columns, emptyText) {
  const body = document.querySelector('#' + tableId + ' tbody');
  body.replaceChildren();
  if (rows.length === 0) {
    body.append(el('tr', { class: 'empty' }, el('td', { colSpan: columns }, emptyText)));
  }
  for (const r of rows) body.append(r);
}

function renderQueues(s) {
  const rows = s.queues.map(q => {
    const status = q.paused ? el('span', { class: 'badge warn' }, 'paused')
                            : el('span', { class: 'badge ok' }, 'serving');
    const cell = (v, cls) => el('td', { class: 'n ' + (cls || ''), 'data-v': v }, num(v));
    return el('tr', {
        'data-queue': q.queue, 'data-shard': q.shard, 'data-paused': q.paused,
        'data-pending': q.pending, 'data-fired': q.fired, 'data-acked': q.acked,
        'data-dead': q.dead, 'data-cancelled': q.cancelled, 'data-in-flight': q.in_flight },
      el('td', {}, q.shard),
      el('td', {}, el('a', { href: '#queue=' + encodeURIComponent(q.queue) + '&shard='
        + encodeURIComponent(q.shard), 'data-open': q.queue }, el('b', {}, q.queue))),
      el('td', {}, status),
      cell(q.pending), cell(q.fired), cell(q.acked), cell(q.dead, 'dead'), cell(q.cancelled),
      el('td', { class: 'n' }, age(q.oldest_due_age_ms)),
      cell(q.window), cell(q.in_flight), cell(q.receivers), cell(q.dispatched_total));
  });
  fill('queues', rows, 13, 'no queue served yet: create one with sluice queue create, then sluice migrate');
  const counted = s.queues.filter(q => q.counted_at_ms).map(q => q.counted_at_ms);
  document.getElementById('sampled').textContent = counted.length
    ? 'rows by state counted ' + age(s.time_ms - Math.min(...counted)) + ' ago (every '
      + s.sample_every_ms / 1000 + ' s, a large table less often: counting reads every row);'
      + ' oldest due age every ' + s.sample_every_ms / 1000 + ' s'
    : '';
  const dis = document.getElementById('disabled');
  dis.hidden = s.disabled.length === 0;
  fill('disabled', s.disabled.map(d => el('tr', { 'data-queue': d.queue },
    el('td', {}, d.shard), el('td', {}, d.queue), el('td', {}, d.problem))), 3, '');
}

function renderSides(s) {
  fill('receivers', s.receivers.map(r => el('tr', { 'data-receiver': r.receiver_id },
    el('td', {}, r.queue), el('td', {}, r.receiver_id), el('td', { class: 'n' }, r.stream),
    el('td', { class: 'n' }, num(r.in_flight)), el('td', { class: 'n' }, num(r.max_in_flight)),
    el('td', {}, r.draining ? el('span', { class: 'badge warn' }, 'draining') : ''))),
    6, 'no receiver connected');
  const channels = s.channels || [];
  document.getElementById('channels-card').hidden = channels.length === 0;
  fill('channels', channels.map(c => el('tr', { 'data-channel': c.channel, 'data-queue': c.queue, 'data-up': c.up },
    el('td', {}, c.queue), el('td', {}, c.shard), el('td', {}, c.destination),
    el('td', {}, el('span', { class: 'badge ' + (c.up ? 'ok' : 'bad') }, c.up ? 'up' : 'broker down: waiting')),
    el('td', { class: 'n' }, num(c.published)), el('td', { class: 'n' }, num(c.failures)),
    el('td', {}, c.last_error))), 7, '');
  fill('tenants', s.tenants.map(t => el('tr', { 'data-tenant': t.tenant, 'data-rate-limited': !!t.rate_limited },
    el('td', {}, t.queue),
    el('td', {}, t.tenant === '' ? '(default)' : t.tenant,
      t.rate_limited ? el('span', { class: 'badge warn', title: 'passed over for its rate (tenant_max_rate / max_rate): its events wait aside' }, ' rate-limited') : ''),
    el('td', { class: 'n' }, num(t.queued)), el('td', { class: 'n' }, num(t.in_flight)),
    el('td', { class: 'n' }, num(t.dispatched)),
    el('td', { class: 'n' }, wait(t.mean_wait_ms)),
    el('td', { class: 'n' }, wait(t.max_wait_ms)))), 7, 'no tenant active');
  fill('shards', s.shards.map(sh => el('tr', { 'data-shard': sh.name, 'data-binlog': sh.binlog.following },
    el('td', {}, sh.name),
    el('td', {}, el('span', { class: 'badge ' + (sh.lease_held ? 'ok' : 'bad') }, sh.lease_held ? 'held' : 'not held')),
    el('td', { class: 'n' }, sh.queues), el('td', { class: 'n' }, sh.disabled),
    el('td', { title: sh.binlog.detail }, sh.binlog.following
      ? el('span', { class: 'badge ok' }, 'binlog')
      : (sh.lease_held ? el('span', { class: 'badge' + (sh.binlog.mode === 'off' ? '' : ' warn') }, 'polling') : ''),
      sh.binlog.following || !sh.lease_held ? '' : ' ' + sh.binlog.detail))), 5, 'no shard');
}

// Per shard with open event groups: its count on the first row, then its oldest groups.
function renderGroups(s) {
  const withGroups = s.shards.filter(sh => sh.groups && sh.groups.open > 0);
  document.getElementById('groups-card').hidden = withGroups.length === 0;
  const rows = [];
  for (const sh of withGroups) {
    sh.groups.oldest.forEach((g, i) => rows.push(el('tr', {
        'data-shard': sh.name, 'data-group': g.key, 'data-open': sh.groups.open,
        'data-completion-queue': g.completion_queue, 'data-completion-id': g.completion_id,
        'data-age-ms': g.age_ms },
      el('td', {}, i === 0 ? sh.name : ''),
      el('td', { class: 'n' }, i === 0 ? num(sh.groups.open) : ''),
      el('td', {}, g.key),
      el('td', {}, g.completion_queue + ' #' + g.completion_id),
      el('td', { class: 'n' }, age(g.age_ms)))));
  }
  fill('groups', rows, 5, '');
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  // Multiples whose quarters are round too: the y axis has four intervals.
  for (const m of [1, 2, 4, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// lines: [{key, color, dashed, points: [[t, y], ...]}]; y null = gap.
function drawChart(canvas, lines, now, unit) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 600, h = canvas.clientHeight || 220;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const g = canvas.getContext('2d');
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  let max = 0;
  for (const l of lines) for (const [, y] of l.points) if (y != null && y > max) max = y;
  const ymax = niceMax(max);
  const tick = v => v.toLocaleString('en-US', { maximumFractionDigits: ymax < 10 ? 2 : 0 });
  g.font = '11px system-ui, sans-serif';
  const left = Math.max(40, g.measureText(tick(ymax) + ' ' + unit).width + 12);
  const right = 10, top = 10, bottom = 24;
  const pw = w - left - right, ph = h - top - bottom;
  const x = t => left + pw * (1 - (now - t) / WINDOW_MS);
  const y = v => top + ph * (1 - v / ymax);

  g.fillStyle = '#6b7385';
  g.strokeStyle = '#e3e6ec';
  g.lineWidth = 1;
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (let i = 0; i <= 4; i++) {
    const v = ymax * i / 4;
    g.beginPath(); g.moveTo(left, y(v)); g.lineTo(left + pw, y(v)); g.stroke();
    g.fillText(tick(v) + (i === 4 ? ' ' + unit : ''), left - 6, y(v));
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const s of [120, 90, 60, 30, 0]) {
    g.fillText(s === 0 ? 'now' : '-' + s + ' s', x(now - s * 1000), top + ph + 6);
  }

  let drawn = 0;
  g.save();
  g.beginPath(); g.rect(left, top, pw, ph); g.clip();
  for (const l of lines) {
    g.strokeStyle = l.color;
    g.lineWidth = 2;
    g.setLineDash(l.dashed ? [5, 4] : []);
    g.beginPath();
    let pen = false;
    for (const [t, v] of l.points) {
      if (v == null) { pen = false; continue; }
      if (pen) g.lineTo(x(t), y(v)); else g.moveTo(x(t), y(v));
      pen = true;
      drawn++;
    }
    g.stroke();
  }
  g.restore();
  canvas.dataset.points = drawn;
  canvas.dataset.series = lines.length;
  canvas.dataset.max = max;
  return drawn;
}

function legend(id, lines) {
  document.getElementById(id).replaceChildren(...lines.filter(l => !l.dashed).map(l => {
    const swatch = el('i');
    swatch.style.background = l.color;
    return el('span', {}, swatch, l.key);
  }));
}

function renderCharts(s) {
  const rate = [], latency = [];
  for (const [key, pts] of Object.entries(s.series)) {
    rate.push({ key, color: color(key), points: pts.map(p => [p[0], p[1]]) });
    latency.push({ key, color: color(key), points: pts.map(p => [p[0], p[2]]) });
    latency.push({ key: key + ' p99', color: color(key), dashed: true, points: pts.map(p => [p[0], p[3]]) });
  }
  drawChart(document.getElementById('rate-chart'), rate, s.time_ms, '/s');
  drawChart(document.getElementById('latency-chart'), latency, s.time_ms, 'ms');
  legend('rate-legend', rate);
  legend('latency-legend', latency);
}

function render(s) {
  document.getElementById('manager').textContent = 'manager ' + s.manager;
  const ready = document.getElementById('ready');
  ready.textContent = s.ready ? 'ready' : s.state;
  ready.className = 'badge ' + (s.ready ? 'ok' : 'warn');
  document.getElementById('updated').textContent = 'updated ' + new Date(s.time_ms).toLocaleTimeString();
  const warnings = document.getElementById('warnings');
  warnings.textContent = (s.warnings || []).join(' · ');
  warnings.hidden = !(s.warnings || []).length;
  renderQueues(s);
  renderSides(s);
  renderGroups(s);
  renderCharts(s);
  document.dispatchEvent(new CustomEvent('sluice-status', { detail: s })); // actions.js
  document.body.dataset.updates = Number(document.body.dataset.updates || 0) + 1;
}

async function refresh() {
  const error = document.getElementById('error');
  try {
    // From the origin, not the page's URL: a URL with user:token@ (basic auth) cannot be fetched;
    // the browser sends the credentials it authenticated the page with.
    const r = await fetch(new URL('/api/status', location.origin), { cache: 'no-store' });
    if (!r.ok) throw new Error('/api/status answered ' + r.status);
    render(await r.json());
    error.hidden = true;
  } catch (e) {
    error.textContent = 'Cannot reach the manager: ' + e.message + ' (retrying every second)';
    error.hidden = false;
  }
}

refresh();
setInterval(refresh, 1000);
