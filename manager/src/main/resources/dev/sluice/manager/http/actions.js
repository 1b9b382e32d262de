// The status page's queue view (#queue=NAME&shard=SHARD): the queue's dead letters with filters,
// an ordered queue's halted keys (ordering_on_dead=halt) with Skip and Replay,
// one event's columns, and the operator's buttons (pause, resume, cancel, replay, purge), each
// behind a confirmation that says how many events it touches. The buttons are shown only for what
// the server says this principal may do (the "may" of each answer); the server checks again.
// Actions are POSTs with a JSON body and the X-Sluice-Action header, which a cross-site form
// cannot send (the server refuses a POST without them, or from another origin, with 403).
// Uses el() and age() from status.js.
'use strict';

const view = {
  queue: null, shard: null, may: {}, events: [], next: '', status: null, selected: new Set(),
  halted: [],
  counted: 0, // when the shown counts were sampled: a new sample re-reads the shown event
};

function api(path) {
  return new URL(path, location.origin);
}

function queuePath(action) {
  return '/api/queues/' + encodeURIComponent(view.queue) + '/' + action;
}

async function getJson(url) {
  const r = await fetch(url, { cache: 'no-store' });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || (url.pathname + ' answered ' + r.status));
  return body;
}

function showResult(text, ok) {
  const box = document.getElementById('qv-result');
  box.textContent = text;
  box.className = 'result ' + (ok ? 'ok' : 'bad');
  box.hidden = false;
}

function filters() {
  const f = new URLSearchParams();
  f.set('shard', view.shard || '');
  for (const name of ['reason', 'tenant']) {
    const v = document.getElementById('f-' + name).value.trim();
    if (v) f.set(name, v);
  }
  for (const name of ['from', 'before']) {
    const v = document.getElementById('f-' + name).value;
    if (v) f.set(name + '_ms', String(new Date(v).getTime()));
  }
  return f;
}

function time(ns) {
  return ns ? new Date(ns / 1e6).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–';
}

async function loadDead(more) {
  const f = filters();
  if (more && view.next) f.set('page_token', view.next);
  const url = api(queuePath('dead') + '?' + f);
  try {
    const page = await getJson(url);
    view.may = page.may || {};
    view.events = more ? view.events.concat(page.events) : page.events;
    view.next = page.next_page_token || '';
    if (!more) view.selected.clear();
    renderDead();
    renderButtons();
  } catch (e) {
    showResult('Cannot list the dead letters: ' + e.message, false);
  }
}

function renderDead() {
  const body = document.querySelector('#dead tbody');
  body.replaceChildren();
  if (view.events.length === 0) {
    body.append(el('tr', { class: 'empty' }, el('td', { colSpan: 6 }, 'no dead event matches')));
  }
  for (const e of view.events) {
    const box = el('input', { type: 'checkbox', checked: view.selected.has(e.id) });
    box.addEventListener('change', () => {
      if (box.checked) view.selected.add(e.id); else view.selected.delete(e.id);
      renderSelected();
    });
    const row = el('tr', { class: 'clickable', 'data-dead-id': e.id, 'data-reason': e.reason },
      el('td', {}, box), el('td', { class: 'n' }, e.id),
      el('td', {}, e.tenant === '' ? '(default)' : e.tenant),
      el('td', { class: 'reason' }, e.reason), el('td', { class: 'n' }, e.attempts),
      el('td', {}, time(e.time_created_ns)));
    row.addEventListener('click', ev => { if (ev.target !== box) showEvent(e.id); });
    body.append(row);
  }
  document.getElementById('dead').dataset.rows = view.events.length;
  document.getElementById('dead-more').hidden = !view.next;
  document.getElementById('dead-all').checked = false;
  renderSelected();
}

// An ordered queue's keys halted at a dead event; the list shows only for a queue that halts.
async function loadHalted() {
  const url = api(queuePath('halted') + '?shard=' + encodeURIComponent(view.shard || ''));
  try {
    const h = await getJson(url);
    view.halted = h.keys || [];
    renderHalted(h.halting, h.may || {});
  } catch (e) {
    showResult('Cannot list the halted keys: ' + e.message, false);
  }
}

function renderHalted(halting, may) {
  const box = document.getElementById('halted-view');
  box.hidden = !halting;
  const body = document.querySelector('#halted tbody');
  body.replaceChildren();
  if (view.halted.length === 0) {
    body.append(el('tr', { class: 'empty' }, el('td', { colSpan: 4 }, 'no key is halted')));
  }
  for (const k of view.halted) {
    const buttons = el('td', {});
    if (may.replay) {
      for (const [action, label] of [['skip', 'Skip'], ['replay', 'Replay']]) {
        const b = el('button', { type: 'button', 'data-halted-action': action,
          class: action === 'skip' ? 'danger' : '' }, label);
        b.addEventListener('click', () => act(action, haltedPlan(action, k)));
        buttons.append(b);
      }
    }
    const row = el('tr', { 'data-halted-key': k.key, 'data-dead-id': k.dead_id },
      el('td', {}, k.key === '' ? '(the queue)' : k.key),
      el('td', { class: 'n' }, el('a', { href: '#', 'data-show': k.dead_id }, String(k.dead_id))),
      el('td', { class: 'n' }, num(k.waiting)), buttons);
    row.querySelector('a').addEventListener('click', ev => { ev.preventDefault(); showEvent(k.dead_id); });
    body.append(row);
  }
  document.getElementById('halted').dataset.rows = view.halted.length;
}

function haltedPlan(action, k) {
  const where = view.queue + (view.shard ? ' on shard ' + view.shard : '');
  const key = k.key === '' ? 'the queue' : 'key ' + k.key;
  const text = action === 'skip'
    ? 'Skip dead event ' + k.dead_id + ' of ' + key + ' in ' + where + ' (it becomes cancelled); '
      + num(k.waiting) + ' waiting event(s) go on?'
    : 'Replay dead event ' + k.dead_id + ' of ' + key + ' in ' + where + ' (pending, due now); '
      + 'the ' + num(k.waiting) + ' waiting event(s) follow it once it is acked?';
  return { count: 1, text, body: { shard: view.shard, ids: [k.dead_id] } };
}

function renderSelected() {
  document.getElementById('qv-selected').textContent = view.selected.size + ' selected';
}

function renderButtons() {
  const may = view.may;
  const any = Object.values(may).some(Boolean);
  document.getElementById('qv-actions').hidden = !(may.pause || may.cancel);
  document.getElementById('qv-dead-actions').hidden = !(may.replay || may.purge);
  for (const [id, grant] of [['qv-pause', 'pause'], ['qv-resume', 'pause'], ['qv-cancel', 'cancel'],
    ['qv-replay', 'replay'], ['qv-purge', 'purge']]) {
    document.getElementById(id).hidden = !may[grant];
  }
  document.querySelector('#qv-cancel-ids').parentElement.hidden = !may.cancel;
  document.getElementById('qv-readonly').hidden = any;
  document.getElementById('queue-view').dataset.readonly = !any;
}

async function showEvent(id) {
  const url = api(queuePath('events/' + encodeURIComponent(id)) + '?shard=' + encodeURIComponent(view.shard || ''));
  try {
    const e = await getJson(url);
    document.getElementById('ev-id').textContent = e.id;
    document.getElementById('ev-state').textContent = e.state + ', attempts (epoch) ' + e.epoch;
    const rows = [['state', e.state], ['attempts (epoch)', e.epoch], ['reason', e.reason || '–'],
      ['tenant', e.tenant === '' ? '(default)' : e.tenant], ['priority', e.priority],
      ['created', time(e.time_created_ns)]];
    if (e.state === 'fired') {
      rows.push(['ack deadline (receivers\' extensions move it)', time(e.time_deadline_ns)]);
    } else if (e.state === 'pending') {
      rows.push(['due', time(e.time_next_ns)]);
    }
    for (const [k, v] of Object.entries(e.columns || {})) rows.push([k, v == null ? 'NULL' : v]);
    document.querySelector('#ev-fields tbody').replaceChildren(...rows.map(([k, v]) =>
      el('tr', { 'data-field': k }, el('th', {}, k), el('td', { class: 'value' }, String(v)))));
    const box = document.getElementById('event');
    box.dataset.id = e.id;
    box.dataset.state = e.state;
    box.hidden = false;
  } catch (err) {
    showResult('Cannot show event ' + id + ': ' + err.message, false);
  }
}

// What a button would do, in words, and the request; null when it has nothing to act on.
function plan(action) {
  const where = view.queue + (view.shard ? ' on shard ' + view.shard : '');
  if (action === 'replay' || action === 'purge') {
    const ids = [...view.selected];
    if (ids.length === 0) return null;
    const verb = action === 'replay' ? 'Replay (make pending, due now)' : 'Purge (delete for good)';
    return { count: ids.length, text: verb + ' ' + ids.length + ' dead event(s) of ' + where + '?',
      body: { shard: view.shard, ids } };
  }
  if (action === 'cancel') {
    const ids = document.getElementById('qv-cancel-ids').value.split(/[\s,]+/).filter(Boolean).map(Number);
    if (ids.length === 0 || ids.some(n => !Number.isInteger(n))) return null;
    return { count: ids.length, text: 'Cancel ' + ids.length + ' pending event(s) of ' + where + '?',
      body: { shard: view.shard, ids } };
  }
  const q = view.status || {};
  const count = Number(q.pending || 0);
  return { count, text: (action === 'pause' ? 'Pause ' : 'Resume ') + where + ': '
    + count.toLocaleString('en-US') + ' pending event(s) ' + (action === 'pause' ? 'will wait' : 'will flow again') + '.',
    body: { shard: view.shard } };
}

function confirmed(text, count) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  dialog.dataset.count = count;
  return new Promise(resolve => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
  });
}

async function act(action, given) {
  const p = given || plan(action);
  if (!p) {
    showResult(action + ': select the events first (or give the ids)', false);
    return;
  }
  if (!await confirmed(p.text, p.count)) return;
  try {
    const r = await fetch(api(queuePath(action)), {
      method: 'POST', cache: 'no-store',
      headers: { 'Content-Type': 'application/json', 'X-Sluice-Action': '1' },
      body: JSON.stringify(p.body),
    });
    const out = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(out.error || 'answered ' + r.status);
    const box = document.getElementById('qv-result');
    if ('changed' in out) {
      const left = (out.unchanged || []).map(u => u.id + ' (' + u.why + ')').join(', ');
      showResult(action + ': ' + out.changed + ' changed' + (left ? '; unchanged: ' + left : ''), true);
      box.dataset.changed = out.changed;
    } else {
      showResult(action + ': done on shard(s) ' + (out.shards || []).join(', '), true);
    }
    box.dataset.action = action;
    await loadDead(false);
    await loadHalted();
    const shown = document.getElementById('event');
    if (!shown.hidden && shown.dataset.id) showEvent(shown.dataset.id);
  } catch (e) {
    showResult(action + ' refused: ' + e.message, false);
  }
}

function onStatus(s) {
  if (!view.queue) return;
  const q = s.queues.find(x => x.queue === view.queue && (!view.shard || x.shard === view.shard));
  view.status = q || null;
  const state = document.getElementById('qv-state');
  if (!q) {
    state.textContent = 'not served by this manager';
    return;
  }
  state.textContent = (q.paused ? 'paused' : 'serving') + ' · pending ' + num(q.pending) + ' · fired '
    + num(q.fired) + ' · acked ' + num(q.acked) + ' · dead ' + num(q.dead);
  const v = document.getElementById('queue-view');
  const box = document.getElementById('event');
  if (q.counted_at_ms !== view.counted && !box.hidden && box.dataset.id) showEvent(box.dataset.id);
  view.counted = q.counted_at_ms;
  v.dataset.paused = q.paused;
  v.dataset.acked = q.acked;
  v.dataset.dead = q.dead;
}

function openFromHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const v = document.getElementById('queue-view');
  view.queue = h.get('queue');
  view.shard = h.get('shard') || '';
  v.hidden = !view.queue;
  document.getElementById('event').hidden = true;
  document.getElementById('qv-result').hidden = true;
  if (!view.queue) return;
  v.dataset.queue = view.queue;
  document.getElementById('qv-title').textContent = view.queue + (view.shard ? ' (' + view.shard + ')' : '');
  loadDead(false);
  loadHalted();
  v.scrollIntoView();
}

document.addEventListener('sluice-status', e => onStatus(e.detail));
window.addEventListener('hashchange', openFromHash);
document.getElementById('qv-close').addEventListener('click', e => { e.preventDefault(); location.hash = ''; });
document.getElementById('qv-filters').addEventListener('submit', e => { e.preventDefault(); loadDead(false); });
document.getElementById('dead-more').addEventListener('click', () => loadDead(true));
document.getElementById('dead-all').addEventListener('change', e => {
  for (const ev of view.events) if (e.target.checked) view.selected.add(ev.id); else view.selected.delete(ev.id);
  renderDead();
  document.getElementById('dead-all').checked = e.target.checked;
});
for (const b of document.querySelectorAll('#queue-view button[data-action]')) {
  b.addEventListener('click', () => act(b.dataset.action));
}
openFromHash();
