/**
 * The inspector's page: one self-contained HTML document (markup, style and script inline), so
 * nothing is built or fetched from elsewhere; it reads the JSON API under /inspect/api
 * (src/server/inspector.ts). Plain DOM code: text is set with textContent, never parsed as HTML.
 */
export const INSPECTOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>relevance-gate inspector</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #1d2230; background: #f6f7fb; }
  header { background: #1d2230; color: #fff; padding: 10px 16px; display: flex; gap: 16px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; }
  main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px; padding: 12px; }
  section { background: #fff; border: 1px solid #dde1ea; border-radius: 6px; padding: 10px 12px; overflow: auto; }
  section h2 { font-size: 14px; margin: 0 0 8px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eef0f5; white-space: nowrap; }
  th { font-weight: 600; color: #555c70; }
  tr.selected { background: #e6efff; }
  #decisions tbody tr { cursor: pointer; }
  .route-included { color: #11763a; } .route-excluded { color: #a3261b; } .route-conflicting { color: #9a6400; }
  .num { text-align: right; font-variant-numeric: tabular-nums; }
  .bar { display: inline-block; height: 10px; background: #4a6fd8; vertical-align: middle; }
  .hist { display: grid; grid-template-columns: 130px 1fr; gap: 2px 8px; margin-bottom: 8px; }
  .counts td:nth-child(n+2) { text-align: right; font-variant-numeric: tabular-nums; }
  textarea { width: 100%; height: 90px; font: 12px monospace; box-sizing: border-box; }
  #status-line { color: #a3261b; }
  .muted { color: #7a8194; }
</style>
</head>
<body>
<header>
  <h1>relevance-gate inspector</h1>
  <span id="summary" class="muted"></span>
  <span id="status-line"></span>
</header>
<main>
  <div>
    <section>
      <h2>Recent decisions <button id="refresh" type="button">refresh</button>
        <label class="muted"><input id="auto" type="checkbox"> auto</label></h2>
      <table id="decisions">
        <thead><tr><th>time</th><th>request</th><th>model</th><th>endpoint</th><th>query</th>
          <th class="num">incl.</th><th class="num">confl.</th><th class="num">excl.</th><th class="num">ms</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
    <section style="margin-top:12px">
      <h2>Passages of <span id="detail-id" class="muted">(pick a request)</span>
        <label class="muted"><input id="dropped-only" type="checkbox"> dropped only</label></h2>
      <table id="passages">
        <thead><tr><th>#</th><th>id</th><th>route</th><th>rule</th><th class="num">relevance</th><th>tier</th><th>signals</th><th>hash</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
  </div>
  <div>
    <section>
      <h2>Policy editor: re-route the logged window</h2>
      <div>
        <label>mode <select id="mode">
          <option value="logged">as logged</option>
          <option value="threshold" selected>threshold</option>
          <option value="precise">precise</option>
          <option value="balanced">balanced</option>
          <option value="related">related</option>
        </select></label>
        <label>threshold <input id="threshold" type="range" min="0" max="1" step="0.01" value="0.5"></label>
        <span id="threshold-value">0.50</span>
      </div>
      <p class="muted">Policy merged over each request's logged policy (null unsets a field):</p>
      <textarea id="policy" spellcheck="false"></textarea>
      <button id="apply" type="button">re-route</button> <span id="replay-status" class="muted">idle</span>
      <table class="counts" style="margin-top:8px">
        <thead><tr><th></th><th>logged</th><th>this policy</th></tr></thead>
        <tbody>
          <tr><td>requests / pairs</td><td id="replay-requests">-</td><td id="replay-pairs">-</td></tr>
          <tr><td class="route-included">included</td><td id="before-included">-</td><td id="after-included">-</td></tr>
          <tr><td class="route-conflicting">conflicting</td><td id="before-conflicting">-</td><td id="after-conflicting">-</td></tr>
          <tr><td class="route-excluded">excluded</td><td id="before-excluded">-</td><td id="after-excluded">-</td></tr>
          <tr><td>empty answers</td><td id="empty-before">-</td><td id="empty-after">-</td></tr>
        </tbody>
      </table>
      <p id="shadow-line" class="muted"></p>
      <table id="moves" style="margin-top:8px">
        <thead><tr><th class="num">pairs</th><th>from (rule)</th><th>to (rule)</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
    <section style="margin-top:12px">
      <h2>Over time <span class="muted">(the listed decisions, per minute)</span></h2>
      <table id="timeline">
        <thead><tr><th>minute</th><th>model</th><th class="num">requests</th><th class="num">excluded</th><th class="num">empty</th><th>signal means</th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
    <section style="margin-top:12px">
      <h2>Signal histograms <span class="muted">(since start, per model)</span></h2>
      <div id="histograms"></div>
    </section>
  </div>
</main>
<script>
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (cls) e.className = cls; return e; };
  const fmt = (x) => (typeof x === 'number' ? x.toFixed(3) : '-');
  let decisions = [];
  let selected = null;

  async function api(path, init) {
    const res = await fetch(path, { credentials: 'same-origin', headers: { 'content-type': 'application/json' }, ...init });
    if (res.status === 401) {
      $('status-line').textContent = 'API key needed: sign in at /inspect/login';
      throw new Error('unauthorized');
    }
    const body = await res.json();
    if (!res.ok) throw new Error(body && body.error ? body.error.message : 'HTTP ' + res.status);
    return body;
  }

  function renderDecisions() {
    const body = $('decisions').tBodies[0];
    body.replaceChildren();
    for (const d of decisions) {
      const tr = el('tr');
      tr.dataset.requestId = d.requestId;
      if (selected === d.requestId) tr.className = 'selected';
      tr.append(el('td', d.time.slice(11, 23)), el('td', d.requestId), el('td', d.shadowOf !== undefined ? d.model + ' (shadow)' : d.model), el('td', d.endpoint),
        el('td', d.query !== undefined ? d.query.slice(0, 60) : d.queryHash.slice(0, 12) + '…', d.query !== undefined ? '' : 'muted'),
        el('td', d.counts.included, 'num route-included'), el('td', d.counts.conflicting, 'num route-conflicting'),
        el('td', d.counts.excluded, 'num route-excluded'), el('td', d.timings.serverMs === null ? '-' : d.timings.serverMs, 'num'));
      tr.addEventListener('click', () => select(d.requestId));
      body.append(tr);
    }
  }

  function renderPassages() {
    const body = $('passages').tBodies[0];
    body.replaceChildren();
    const d = decisions.find((x) => x.requestId === selected);
    $('detail-id').textContent = d ? d.requestId : '(pick a request)';
    if (!d) return;
    const droppedOnly = $('dropped-only').checked;
    for (const p of d.passages) {
      if (droppedOnly && p.route !== 'excluded') continue;
      const signals = p.signals === null ? (p.reason || 'unscored') : Object.entries(p.signals).map(([k, v]) => k + ' ' + v.toFixed(3)).join(', ');
      const tr = el('tr');
      tr.append(el('td', p.rank), el('td', p.id), el('td', p.route, 'route-' + p.route), el('td', p.rule),
        el('td', fmt(p.relevance), 'num'), el('td', p.tier === null ? '-' : p.tier), el('td', signals), el('td', p.hash.slice(0, 12) + '…', 'muted'));
      if (p.text !== undefined) tr.title = p.text.slice(0, 500);
      body.append(tr);
    }
  }

  function select(id) { selected = id; renderDecisions(); renderPassages(); }

  function renderTimeline() {
    const rows = new Map();
    for (const d of decisions) {
      if (d.shadowOf !== undefined) continue;
      const key = d.time.slice(0, 16) + ' ' + d.model;
      let r = rows.get(key);
      if (!r) { r = { minute: d.time.slice(11, 16), model: d.model, requests: 0, pairs: 0, excluded: 0, empty: 0, sums: {}, counts: {} }; rows.set(key, r); }
      r.requests++;
      r.pairs += d.passages.length;
      r.excluded += d.counts.excluded;
      if (d.counts.included === 0) r.empty++;
      for (const p of d.passages) if (p.signals) for (const [k, v] of Object.entries(p.signals)) { r.sums[k] = (r.sums[k] || 0) + v; r.counts[k] = (r.counts[k] || 0) + 1; }
    }
    const body = $('timeline').tBodies[0];
    body.replaceChildren();
    for (const r of [...rows.values()].sort((a, b) => (a.minute < b.minute ? -1 : 1))) {
      const means = Object.keys(r.sums).sort().map((k) => k + ' ' + (r.sums[k] / r.counts[k]).toFixed(3)).join(', ');
      const tr = el('tr');
      tr.append(el('td', r.minute), el('td', r.model), el('td', r.requests, 'num'),
        el('td', (r.pairs ? (100 * r.excluded / r.pairs).toFixed(1) : '0') + ' %', 'num'), el('td', r.empty, 'num'), el('td', means));
      body.append(tr);
    }
  }

  async function loadDecisions() {
    const body = await api('/inspect/api/decisions?limit=200');
    decisions = body.decisions;
    const s = body.stats;
    $('summary').textContent = body.total + ' decisions in the window · log: ' + s.written + ' written, ' + s.dropped + ' dropped, ' + s.sampledOut + ' sampled out';
    $('decisions').dataset.count = String(decisions.length);
    renderDecisions();
    renderPassages();
    renderTimeline();
  }

  async function loadHistograms() {
    const body = await api('/inspect/api/drift');
    const root = $('histograms');
    root.replaceChildren();
    for (const [model, snap] of Object.entries(body.models)) {
      root.append(el('h3', model + ' · ' + snap.requests + ' requests, ' + snap.emptyAnswers + ' empty, ' + snap.fallbacks + ' fallbacks'));
      for (const [signal, h] of Object.entries(snap.signals)) {
        const grid = el('div', undefined, 'hist');
        const max = Math.max(1, ...h.buckets);
        grid.append(el('strong', signal), el('span', 'mean ' + (h.count ? (h.sum / h.count).toFixed(3) : '-') + ' · n ' + h.count, 'muted'));
        h.buckets.forEach((n, i) => {
          const bar = el('span', undefined, 'bar');
          bar.style.width = Math.round((n / max) * 200) + 'px';
          const cell = el('span');
          cell.append(bar, el('span', ' ' + n, 'muted'));
          grid.append(el('span', '≤ ' + ((i + 1) / 10).toFixed(1), 'muted'), cell);
        });
        root.append(grid);
      }
    }
  }

  function policyFromControls() {
    const mode = $('mode').value;
    if (mode === 'logged') return {};
    if (mode === 'threshold') return { mode: 'threshold', threshold: Number($('threshold').value) };
    return { mode };
  }

  let timer = null;
  function controlsChanged() {
    $('threshold-value').textContent = Number($('threshold').value).toFixed(2);
    $('threshold').disabled = $('mode').value !== 'threshold';
    $('policy').value = JSON.stringify(policyFromControls(), null, 1);
    clearTimeout(timer);
    timer = setTimeout(replay, 120);
  }

  let generation = 0;
  async function replay() {
    const mine = ++generation;
    let policy;
    try { policy = JSON.parse($('policy').value || '{}'); } catch (e) { $('replay-status').textContent = 'error: the policy is not JSON'; return; }
    $('replay-status').textContent = 'running';
    try {
      const r = await api('/inspect/api/replay', { method: 'POST', body: JSON.stringify({ policy }) });
      if (mine !== generation) return;
      $('replay-requests').textContent = r.requests; $('replay-pairs').textContent = r.pairs;
      for (const route of ['included', 'conflicting', 'excluded']) {
        $('before-' + route).textContent = r.routes.before[route];
        $('after-' + route).textContent = r.routes.after[route];
      }
      $('empty-before').textContent = r.emptyAnswers.before; $('empty-after').textContent = r.emptyAnswers.after;
      const body = $('moves').tBodies[0];
      body.replaceChildren();
      for (const m of r.moves.slice(0, 20)) {
        const tr = el('tr');
        tr.append(el('td', m.count, 'num'), el('td', m.from + ' (' + m.ruleBefore + ')', 'route-' + m.from), el('td', m.to + ' (' + m.ruleAfter + ')', 'route-' + m.to));
        body.append(tr);
      }
      $('shadow-line').textContent = r.shadow
        ? 'shadow: ' + r.shadow.disagreements + ' of ' + r.shadow.pairs + ' pairs of ' + r.shadow.requests + ' requests routed otherwise than live (as logged)'
        : '';
      $('replay-status').textContent = 'done';
      $('replay-status').dataset.policy = JSON.stringify(policy);
    } catch (e) {
      if (mine === generation) $('replay-status').textContent = 'error: ' + e.message;
    }
  }

  async function refresh() {
    try { await loadDecisions(); await loadHistograms(); await replay(); $('status-line').textContent = ''; }
    catch (e) { if (e.message !== 'unauthorized') $('status-line').textContent = e.message; }
  }

  $('refresh').addEventListener('click', refresh);
  $('dropped-only').addEventListener('change', renderPassages);
  $('threshold').addEventListener('input', controlsChanged);
  $('mode').addEventListener('change', controlsChanged);
  $('apply').addEventListener('click', replay);
  setInterval(() => { if ($('auto').checked) refresh(); }, 2000);
  $('policy').value = JSON.stringify(policyFromControls(), null, 1);
  refresh().then(() => { document.body.dataset.ready = 'true'; });
})();
</script>
</body>
</html>
`;

export const LOGIN_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>relevance-gate inspector: sign in</title>
<style>body { font: 14px system-ui, sans-serif; margin: 40px; } input { width: 320px; }</style></head>
<body>
<h1>relevance-gate inspector</h1>
<p>This server requires its API key.</p>
<form id="form"><input id="key" type="password" autocomplete="current-password" placeholder="API key">
<button type="submit">sign in</button> <span id="message"></span></form>
<script>
document.getElementById('form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const res = await fetch('/inspect/login', { method: 'POST', credentials: 'same-origin',
    headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: document.getElementById('key').value }) });
  if (res.ok) location.href = '/inspect';
  else document.getElementById('message').textContent = 'wrong key';
});
</script>
</body>
</html>
`;
