// The node's read-only page. Every piece of data is put into the DOM as text
// (textContent, text nodes, dataset), never parsed as HTML: lessons come from
// strangers. No inline script or style is used, so the page runs under
// Content-Security-Policy: default-src 'self'.
'use strict';

(function () {
  const POLL_MS = 2000;
  const STATES = ['candidate', 'common', 'fading', 'removed', 'revoked'];
  const FILTERS = [['', 'all'], ['active', 'active']].concat(STATES.map((s) => [s, s]));

  const $ = (id) => document.getElementById(id);

  // The API token. The API answers only requests that carry it, and any
  // local process can fetch this page, so the page holds none: the link
  // `remem node` and `remem web` print carries it after # (#token=…), which
  // the browser never sends. takeToken keeps it for this tab in
  // sessionStorage and takes it out of the address bar, so no history entry
  // or bookmark holds it; every fetch sends it as a bearer.
  const TOKEN_KEY = 'remem-api-token';
  const NEED_TOKEN = 'This page needs the node\'s API token. In a terminal on this machine, run `remem web` and open the link it prints (`remem node` prints it too when it starts): the token rides after # and never leaves this browser.';
  function takeToken() {
    const m = location.hash.match(/^#token=([^&]*)(?:&(.*))?$/);
    if (!m) return false;
    let token = '';
    try { token = decodeURIComponent(m[1]); } catch (e) { /* not a token */ }
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    history.replaceState(null, '', location.pathname + '#' + (m[2] || '/'));
    return true;
  }
  takeToken();

  const data = {
    lessons: null, lessonsRaw: '',
    status: null, statusRaw: '',
    detail: null, detailRaw: '', detailHash: '', detailError: '',
    related: null, relatedFor: '',
    lastOK: null, error: '', needToken: false,
  };
  let route = parseRoute();
  let polling = false;
  let relatedTimer = 0;

  // shown:begin
  // shown is s as the page shows it: every control character (C0, DEL, C1),
  // format character (bidi overrides and isolates, zero-width), line or
  // paragraph separator and private-use, surrogate or unassigned code point
  // written as a Go escape, as internal/display's Text writes it, so a
  // lesson from a stranger cannot reorder or hide what the page shows.
  const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}]/gu;
  const NAMED = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
  function shown(s) {
    return String(s).replace(UNSAFE, (c) => {
      const n = c.codePointAt(0);
      if (NAMED[n]) return NAMED[n];
      const h = n.toString(16);
      if (n < 0x80) return '\\x' + h.padStart(2, '0');
      if (n <= 0xffff) return '\\u' + h.padStart(4, '0');
      return '\\U' + h.padStart(8, '0');
    });
  }
  // shown:end

  // el builds an element. props: class, text, title, href, dataset, on*;
  // children: nodes or strings (strings become text nodes). Every string
  // shown, text or attribute, passes shown().
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = shown(v);
        else if (k === 'dataset') Object.assign(e.dataset, v);
        else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : shown(v));
      }
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(shown(kid)));
    }
    return e;
  }

  const isHash = (s) => /^[0-9a-f]{32}$/.test(s);
  const lessonHref = (hash) => '#/lesson/' + (isHash(hash) ? hash : '');

  function shortID(s, n) {
    s = String(s || '');
    return s.length > n ? s.slice(0, n) + '…' : s;
  }

  function mono(s, n) {
    return el('code', { class: 'hash', title: s || '' }, shortID(s, n || 10));
  }

  function badge(st, reason) {
    const known = STATES.includes(st) ? st : 'unknown';
    return el('span', { class: 'badge st-' + known, title: reason || st }, st || '?');
  }

  function kindTag(kind) {
    const known = ['error', 'correction', 'surprise'].includes(kind) ? kind : 'other';
    return el('span', { class: 'kind k-' + known }, kind || '?');
  }

  function meter(strength) {
    const s = Math.max(0, Math.min(1, Number(strength) || 0));
    const fill = el('span', { class: 'fill' });
    fill.style.width = (s * 100).toFixed(0) + '%';
    return el('span', { class: 'strength', title: 'strength ' + s.toFixed(3) },
      el('span', { class: 'meter' }, fill), el('span', { class: 'num' }, s.toFixed(2)));
  }

  function chips(list, cls) {
    return el('span', { class: 'chips' }, (list || []).map((x) => el('span', { class: 'chip ' + (cls || '') }, x)));
  }

  function isZero(t) {
    return !t || t.startsWith('0001-01-01');
  }

  function ago(t) {
    if (isZero(t)) return 'never';
    const d = new Date(t);
    if (isNaN(d)) return String(t);
    let s = Math.round((Date.now() - d.getTime()) / 1000);
    const future = s < 0;
    s = Math.abs(s);
    if (s < 3) return 'now';
    let out;
    if (s < 45) out = s + ' s';
    else if (s < 2700) out = Math.round(s / 60) + ' min';
    else if (s < 129600) out = Math.round(s / 3600) + ' h';
    else out = Math.round(s / 86400) + ' d';
    return future ? 'in ' + out : out + ' ago';
  }

  function when(t) {
    return el('time', { datetime: isZero(t) ? null : t, title: isZero(t) ? 'never' : t }, ago(t));
  }

  function fullTime(t) {
    return isZero(t) ? 'never' : String(t).replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC');
  }

  // Routes: #/ (with ?q=…&state=…) and #/lesson/<hash>.
  function parseRoute() {
    const h = location.hash.replace(/^#/, '') || '/';
    const i = h.indexOf('?');
    const path = i < 0 ? h : h.slice(0, i);
    const params = new URLSearchParams(i < 0 ? '' : h.slice(i + 1));
    const m = path.match(/^\/lesson\/(.*)$/);
    if (m) return { view: 'lesson', hash: decodeURIComponent(m[1]).toLowerCase() };
    return { view: 'lessons', q: params.get('q') || '', state: params.get('state') || '' };
  }

  function listHash(q, state) {
    const p = new URLSearchParams();
    if (q) p.set('q', q);
    if (state) p.set('state', state);
    const s = p.toString();
    return '#/' + (s ? '?' + s : '');
  }

  // authError is the error of a fetch without the right token.
  function authError() {
    const err = new Error(NEED_TOKEN);
    err.status = 401;
    return err;
  }

  async function getJSON(url) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (!token) throw authError();
    const res = await fetch(url, { cache: 'no-store', headers: { Accept: 'application/json', Authorization: 'Bearer ' + token } });
    const text = await res.text();
    if (res.status === 401) {
      // A token the node does not take (another node's, or a restart's
      // new one): forget it, and say where the right link comes from.
      sessionStorage.removeItem(TOKEN_KEY);
      throw authError();
    }
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { msg = JSON.parse(text).error || msg; } catch (e) { /* not JSON */ }
      const err = new Error(msg);
      err.status = res.status;
      throw err;
    }
    return text;
  }

  async function poll() {
    if (polling) return;
    polling = true;
    try {
      const [lessonsRaw, statusRaw] = await Promise.all([getJSON('lessons?all=1'), getJSON('status')]);
      let changed = false;
      if (lessonsRaw !== data.lessonsRaw) {
        data.lessonsRaw = lessonsRaw;
        data.lessons = JSON.parse(lessonsRaw) || [];
        changed = true;
      }
      if (statusRaw !== data.statusRaw) {
        data.statusRaw = statusRaw;
        data.status = JSON.parse(statusRaw) || {};
        changed = true;
      }
      if (route.view === 'lesson') changed = (await pollDetail()) || changed;
      data.lastOK = new Date();
      data.error = '';
      data.needToken = false;
      if (changed) render();
    } catch (e) {
      data.error = e.message || String(e);
      data.needToken = e.status === 401;
    } finally {
      polling = false;
      renderLive();
    }
  }

  async function pollDetail() {
    const hash = route.hash;
    if (!isHash(hash)) {
      const changed = data.detailHash !== hash;
      data.detailHash = hash;
      data.detail = null;
      data.detailRaw = '';
      data.detailError = 'not a lesson hash: a hash is 32 lowercase hex characters';
      return changed;
    }
    try {
      const raw = await getJSON('lessons/' + hash);
      if (raw === data.detailRaw && data.detailHash === hash) return false;
      data.detailRaw = raw;
      data.detail = JSON.parse(raw);
      data.detailError = '';
    } catch (e) {
      if (e.status !== 404) throw e;
      const changed = data.detailHash !== hash || data.detailError === '';
      data.detail = null;
      data.detailRaw = '';
      data.detailError = e.message;
      data.detailHash = hash;
      return changed;
    }
    data.detailHash = hash;
    return true;
  }

  function renderLive() {
    const live = $('live');
    live.replaceChildren();
    const notice = $('need-token');
    notice.hidden = !data.needToken;
    notice.textContent = data.needToken ? NEED_TOKEN : '';
    document.body.dataset.token = data.needToken ? 'needed' : 'sent';
    if (data.needToken) {
      live.className = 'live down';
      live.append(el('span', { class: 'dot' }), 'no API token: run remem web');
    } else if (data.error) {
      live.className = 'live down';
      live.append(el('span', { class: 'dot' }), 'node not answering, retrying: ' + data.error);
    } else if (data.lastOK) {
      live.className = 'live up';
      live.append(el('span', { class: 'dot' }), 'live · ' + data.lastOK.toLocaleTimeString());
    }
  }

  function render() {
    renderSummary();
    const lessonsView = $('view-lessons');
    const lessonView = $('view-lesson');
    if (route.view === 'lesson') {
      lessonsView.hidden = true;
      lessonView.hidden = false;
      renderLesson();
    } else {
      lessonView.hidden = true;
      lessonsView.hidden = false;
      renderList();
      renderPanels();
    }
    if (data.lessons) document.body.dataset.ready = '1';
  }

  function renderSummary() {
    const st = data.status || {};
    $('origin').textContent = shown(shortID(st.origin || '…', 16));
    $('origin').title = 'origin ' + (st.origin || '') + (st.key ? '\nkey ' + st.key : '');
    const counts = {};
    for (const l of data.lessons || []) counts[l.state] = (counts[l.state] || 0) + 1;
    const total = (data.lessons || []).length;
    document.title = 'remem · ' + total + ' lesson' + (total === 1 ? '' : 's');
    const stat = (label, value, title) => el('div', { class: 'stat', title: title || null },
      el('span', { class: 'label' }, label), el('span', { class: 'value' }, value));
    const stateStat = el('div', { class: 'stat states' }, el('span', { class: 'label' }, 'by state'),
      el('span', { class: 'value' }, STATES.filter((s) => counts[s]).map((s) =>
        el('a', { class: 'badge st-' + s, href: listHash(route.q || '', s), title: 'show ' + s + ' lessons' }, s + ' ' + counts[s]))));
    const stats = st.stats || {};
    const refused = Object.values(st.refused_by_reason || {}).reduce((a, b) => a + b, 0);
    $('summary').replaceChildren(...[
      stat('lessons', String(total)),
      stateStat,
      stat('records', String(st.records ?? '–'), 'signed records held'),
      stat('peers', String((st.peers || []).length)),
      stat('received', String(stats.received ?? 0), 'accepted ' + (stats.accepted ?? 0) + ', duplicate ' + (stats.duplicate ?? 0) + ', skipped ' + (stats.skipped ?? 0)),
      stat('refused', String(refused)),
      el('div', { class: 'stat' }, el('span', { class: 'label' }, 'last sleep'), el('span', { class: 'value' }, when(st.last_sleep))),
      isZero(st.next_sleep) ? null : el('div', { class: 'stat' }, el('span', { class: 'label' }, 'next sleep'), el('span', { class: 'value' }, when(st.next_sleep))),
    ].filter(Boolean));
  }

  function haystack(l) {
    return [l.text, l.hash, l.kind, l.state, l.state_reason, l.author, l.own ? 'own' : 'received']
      .concat(l.origins || [], l.confirmers || [], l.layers || [], l.scopes || []).join(' ').toLowerCase();
  }

  function filtered() {
    const terms = (route.q || '').toLowerCase().split(/\s+/).filter(Boolean);
    const st = route.state || '';
    return (data.lessons || []).filter((l) => {
      if (st === 'active' && (l.state === 'removed' || l.state === 'revoked')) return false;
      if (st && st !== 'active' && l.state !== st) return false;
      if (!terms.length) return true;
      const h = haystack(l);
      return terms.every((t) => h.includes(t));
    });
  }

  function renderFilters() {
    const box = $('states');
    box.replaceChildren(...FILTERS.map(([value, label]) => el('a', {
      class: 'filter' + ((route.state || '') === value ? ' on' : ''),
      href: listHash(route.q || '', value),
      dataset: { state: value },
    }, label)));
  }

  function renderList() {
    const q = $('q');
    if (document.activeElement !== q && q.value !== (route.q || '')) q.value = route.q || '';
    renderFilters();
    const rows = filtered();
    const total = (data.lessons || []).length;
    $('count').textContent = rows.length === total ? total + ' lessons' : rows.length + ' of ' + total + ' lessons';
    $('rows').replaceChildren(...rows.map(row));
    const empty = $('empty');
    if (!data.lessons) {
      empty.hidden = false;
      empty.textContent = 'Loading…';
    } else if (!total) {
      empty.hidden = false;
      empty.textContent = 'No lessons yet. Agents report surprises (remem remember, the inbox, POST /memory/remember or the MCP tool remember); the node\'s sleep turns them into lessons, and lessons from peers arrive by gossip, folders and the commons.';
    } else if (!rows.length) {
      empty.hidden = false;
      empty.textContent = 'No lesson matches this search.';
    } else {
      empty.hidden = true;
    }
    renderRelated(rows);
  }

  function row(l) {
    const origins = l.origins || [];
    const confirmers = l.confirmers || [];
    const inactive = l.state === 'removed' || l.state === 'revoked';
    return el('tr', { class: inactive ? 'inactive' : null, dataset: { hash: l.hash, state: l.state } },
      el('td', { class: 'c-state' }, badge(l.state, l.state_reason)),
      el('td', { class: 'c-strength' }, meter(l.strength)),
      el('td', { class: 'c-kind' }, kindTag(l.kind)),
      el('td', { class: 'c-text' },
        el('a', { class: 'text', href: lessonHref(l.hash), title: 'provenance of this lesson' }, l.text),
        el('div', { class: 'sub' },
          l.own ? el('span', { class: 'chip own', title: 'written by this memory' }, 'own') : null,
          l.draft ? el('span', { class: 'chip draft', title: 'kept here, never shared until written as a sentence (remem lessons rewrite)' }, 'draft: ' + l.draft) : null,
          chips(l.layers, 'layer'),
          l.seen ? el('span', { class: 'seen', title: 'surprises of this memory it absorbed' }, 'seen ' + l.seen) : null)),
      el('td', { class: 'c-origins', title: origins.join('\n') },
        el('span', { class: 'n' }, String(origins.length)), ' ', origins.slice(0, 2).map((o) => mono(o, 8)),
        origins.length > 2 ? el('span', { class: 'more' }, '+' + (origins.length - 2)) : null),
      el('td', { class: 'c-confirmers', title: confirmers.join('\n') },
        el('span', { class: 'n' }, String(confirmers.length)), ' ', confirmers.slice(0, 2).map((o) => mono(o, 8)),
        confirmers.length > 2 ? el('span', { class: 'more' }, '+' + (confirmers.length - 2)) : null,
        l.support ? el('div', { class: 'sub support', title: 'only admitted memories count toward common (SPEC §8)' }, l.support) : null),
      el('td', { class: 'c-updated' }, when(l.updated)),
      el('td', { class: 'c-hash' }, el('a', { href: lessonHref(l.hash) }, mono(l.hash, 10))),
    );
  }

  // Related by meaning: the node's recall (GET /lessons?query=) for the search
  // words, minus what the text search already shows.
  function renderRelated(shown) {
    const box = $('related');
    const q = (route.q || '').trim();
    if (!q || !data.lessons || !data.lessons.length) {
      box.hidden = true;
      return;
    }
    if (data.relatedFor !== q) {
      clearTimeout(relatedTimer);
      relatedTimer = setTimeout(() => fetchRelated(q), 300);
    }
    const have = new Set(shown.map((l) => l.hash));
    const extra = (data.relatedFor === q && data.related ? data.related : []).filter((l) => !have.has(l.hash));
    if (!extra.length) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.replaceChildren(el('h3', null, 'Related by meaning'),
      el('ul', null, extra.map((l) => el('li', null, badge(l.state, l.state_reason), ' ',
        el('a', { class: 'text', href: lessonHref(l.hash) }, l.text), ' ',
        el('span', { class: 'muted' }, 'relevance ' + (Number(l.score) || 0).toFixed(2))))));
  }

  async function fetchRelated(q) {
    try {
      const raw = await getJSON('lessons?limit=10&query=' + encodeURIComponent(q));
      data.related = JSON.parse(raw) || [];
    } catch (e) {
      data.related = [];
    }
    data.relatedFor = q;
    if (route.view === 'lessons' && (route.q || '').trim() === q) renderList();
  }

  function panel(id, title, ...body) {
    $(id).replaceChildren(el('h2', null, title), ...body);
  }

  function kv(pairs) {
    return el('dl', { class: 'kv' }, pairs.filter(Boolean).map(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
  }

  function renderPanels() {
    const st = data.status;
    if (!st) return;
    const stats = st.stats || {};
    panel('node-panel', 'This node', kv([
      ['origin', mono(st.origin, 16)],
      st.peer_id ? ['peer id', mono(st.peer_id, 20)] : null,
      ['addresses', (st.addrs || []).length ? el('ul', { class: 'plain' }, st.addrs.map((a) => el('li', null, el('code', null, a)))) : el('span', { class: 'muted' }, 'none (no network running)')],
      ['scopes', (st.scopes || []).length ? chips(st.scopes, 'scope') : el('span', { class: 'muted' }, 'none')],
      ['last sleep', el('span', null, when(st.last_sleep), ' ', el('span', { class: 'muted' }, fullTime(st.last_sleep)))],
      isZero(st.next_sleep) ? null : ['next sleep', when(st.next_sleep)],
      isZero(st.started) ? null : ['running since', el('span', null, fullTime(st.started))],
      ['held', (st.records ?? 0) + ' records, ' + (st.lessons ?? 0) + ' lessons'],
      ['received', (stats.received ?? 0) + ' lines: ' + (stats.accepted ?? 0) + ' accepted, ' + (stats.duplicate ?? 0) + ' duplicate, ' + (stats.skipped ?? 0) + ' skipped'],
    ]));

    const peers = st.peers || [];
    const topics = st.topics || [];
    panel('peers-panel', 'Peers and topics',
      el('h3', null, 'Topics'),
      topics.length ? chips(topics, 'topic') : el('p', { class: 'muted' }, 'No team topic joined.'),
      el('h3', null, 'Peers (' + peers.length + ')'),
      peers.length ? el('div', { class: 'scroll' }, el('table', { class: 'small' },
        el('thead', null, el('tr', null, ['Peer', 'Origin', 'Score', 'Topics', 'Address'].map((h) => el('th', null, h)))),
        el('tbody', { id: 'peer-rows' }, peers.map((p) => el('tr', null,
          el('td', null, mono(p.id, 14)),
          el('td', null, mono(p.origin, 10)),
          el('td', { class: (Number(p.score) || 0) < 0 ? 'neg num' : 'num' }, (Number(p.score) || 0).toFixed(2)),
          el('td', null, chips(p.topics, 'topic')),
          el('td', null, (p.addrs || []).length ? el('code', { class: 'addr', title: p.addrs.join('\n') }, p.addrs[0]) : ''))))))
        : el('p', { class: 'muted' }, 'No peer connected.'));

    const refused = Object.entries(st.refused_by_reason || {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    panel('refused-panel', 'Refused records by reason',
      refused.length ? el('table', { class: 'small' },
        el('thead', null, el('tr', null, el('th', null, 'Reason'), el('th', { class: 'num' }, 'Lines'))),
        el('tbody', { id: 'refused-rows' }, refused.map(([reason, n]) => el('tr', null, el('td', null, el('code', null, reason)), el('td', { class: 'num' }, String(n))))))
        : el('p', { class: 'muted' }, 'Nothing refused: every line received so far verified.'));

    const agents = st.agents || [];
    panel('agents-panel', 'Events by agent (30 days)',
      agents.length ? el('table', { class: 'small' },
        el('thead', null, el('tr', null, el('th', null, 'Agent'), el('th', { class: 'num' }, 'Events'), el('th', { class: 'num' }, 'Pending'), el('th', null, 'Last'))),
        el('tbody', { id: 'agent-rows' }, agents.map((a) => el('tr', null,
          el('td', null, a.agent ? el('code', null, a.agent) : el('span', { class: 'muted' }, 'unnamed')),
          el('td', { class: 'num' }, String(a.events)),
          el('td', { class: 'num' }, String(a.pending)),
          el('td', { title: fullTime(a.last) }, when(a.last))))))
        : el('p', { class: 'muted' }, 'No agent reported an event in 30 days: remem setup TOOL connects one.'));
  }

  function renderLesson() {
    const view = $('view-lesson');
    const back = el('a', { class: 'back', href: listHash(lastList.q, lastList.state) }, '← all lessons');
    if (data.detailHash !== route.hash) {
      view.replaceChildren(back, el('p', { class: 'muted' }, 'Loading…'));
      return;
    }
    if (!data.detail) {
      view.replaceChildren(back, el('h1', null, 'Lesson not found'),
        el('p', null, data.detailError || 'No lesson with that hash is held here.'), el('p', null, mono(route.hash, 40)));
      view.dataset.loaded = route.hash;
      return;
    }
    const p = data.detail;
    const records = p.records || [];
    const confirmations = records.filter((r) => r.type === 'confirmation');
    const hist = Array.isArray(p.history) ? p.history : [];
    view.replaceChildren(
      back,
      el('div', { class: 'lesson-head' },
        el('blockquote', { class: 'lesson-text', id: 'lesson-text' }, p.text),
        el('div', { class: 'badges' }, badge(p.state, p.state_reason), kindTag(p.kind), meter(p.strength),
          p.own ? el('span', { class: 'chip own' }, 'own') : el('span', { class: 'chip' }, 'received'),
          p.draft ? el('span', { class: 'chip draft', title: 'kept here, never shared until written as a sentence' }, 'draft: ' + p.draft) : null,
          chips(p.layers, 'layer'))),
      el('p', { class: 'reason' }, el('strong', null, p.state + ': '), p.state_reason || ''),
      el('div', { class: 'grid2' },
        el('section', { class: 'panel' }, el('h2', null, 'Provenance'), kv([
          ['hash', el('code', { class: 'hash full' }, p.hash)],
          ['author', p.author ? mono(p.author, 16) : el('span', { class: 'muted' }, 'none (not published)')],
          ['origins', originList(p.origins)],
          ['verifiers', originList(p.verifiers)],
          ['support', el('span', { class: 'support' }, p.support || '')],
          (p.admission || []).length ? ['admission', el('ul', { class: 'plain admission' }, p.admission.map((a) =>
            el('li', { dataset: { origin: a.origin, admitted: String(a.admitted) } }, mono(a.origin, 16), ' ',
              el('span', { class: a.admitted ? null : 'muted' }, a.admitted ? 'admitted: ' + a.why : a.why))))] : null,
          (p.revokers || []).length ? ['revoked by', originList(p.revokers)] : null,
          ['scopes', (p.scopes || []).length ? chips(p.scopes, 'scope') : el('span', { class: 'muted' }, 'none (local only)')],
          ['seen', String(p.seen || 0) + ' surprise' + (p.seen === 1 ? '' : 's') + ' of this memory'],
          ['met before', p.met_before ? 'yes: this memory had met the surprise before the lesson arrived' : 'no'],
          ['confirmed here', p.confirmed_here ? 'yes: this memory signed a confirmation' : 'no'],
          (p.projects || []).length ? ['projects (local)', el('ul', { class: 'plain' }, p.projects.map((x) => el('li', null, el('code', null, x))))] : null,
          ['updated', el('span', null, when(p.updated), ' ', el('span', { class: 'muted' }, fullTime(p.updated)))],
        ])),
        el('section', { class: 'panel', id: 'confirmers' }, el('h2', null, 'Confirmed by (' + (p.confirmers || []).length + ')'),
          (p.confirmers || []).length ? el('ul', { class: 'confirmers' }, p.confirmers.map((o) => {
            const rec = confirmations.find((r) => r.origin === o);
            return el('li', { dataset: { origin: o } }, el('code', { class: 'hash full' }, o),
              rec ? el('span', { class: 'muted' }, ' signed ', when(rec.time), ', arrived ', when(rec.arrived), ' by ', (rec.scopes || []).join(', ') || 'no scope') : null);
          })) : el('p', { class: 'muted' }, 'No other memory has confirmed this lesson yet.'))),
      el('section', { class: 'panel' }, el('h2', null, 'Records held (' + records.length + ')'),
        records.length ? el('table', { class: 'records' },
          el('thead', null, el('tr', null, ['Type', 'Origin', 'Signed', 'Arrived', 'Scope', 'Reason', 'Signed line'].map((h) => el('th', null, h)))),
          el('tbody', { id: 'record-rows' }, records.map((r) => el('tr', { dataset: { type: r.type } },
            el('td', null, el('span', { class: 'rtype r-' + (['lesson', 'confirmation', 'revocation'].includes(r.type) ? r.type : 'other') }, r.type)),
            el('td', null, mono(r.origin, 16)),
            el('td', { title: r.time }, fullTime(r.time)),
            el('td', { title: r.arrived }, fullTime(r.arrived)),
            el('td', null, chips(r.scopes, 'scope')),
            el('td', null, r.reason || ''),
            el('td', null, el('details', null, el('summary', null, 'show'), el('pre', { class: 'line' }, r.line || '')))))))
          : el('p', { class: 'muted' }, 'No signed record: this lesson is local only (not published).')),
      el('section', { class: 'panel' }, el('h2', null, 'State history'),
        hist.length ? el('ol', { class: 'history', id: 'history' }, hist.map((h) =>
          el('li', null, el('span', { class: 'at' }, fullTime(h.at)), ' ', badge(h.state, h.reason), ' ', el('span', null, h.reason || ''))))
          : el('ol', { class: 'history', id: 'history' }, timeline(p))),
    );
    view.dataset.loaded = route.hash;
    document.title = 'remem · ' + shown(shortID(p.text, 60));
  }

  function originList(list) {
    list = list || [];
    if (!list.length) return el('span', { class: 'muted' }, 'none');
    return el('span', { class: 'chips' }, list.map((o) => el('code', { class: 'hash', title: o }, o)));
  }

  // timeline derives the lesson's history from its records when the node
  // reports none: each arrival, in order, and the state now.
  function timeline(p) {
    const items = (p.records || []).slice().sort((a, b) => String(a.arrived).localeCompare(String(b.arrived))).map((r) =>
      el('li', null, el('span', { class: 'at' }, fullTime(r.arrived)), ' ',
        el('span', { class: 'rtype r-' + r.type }, r.type), ' by ', mono(r.origin, 16),
        ' arrived by ', (r.scopes || []).join(', ') || 'no scope', ' (signed ' + fullTime(r.time) + ')',
        r.reason ? el('span', { class: 'muted' }, ' reason: ' + r.reason) : null));
    items.push(el('li', { class: 'now' }, el('span', { class: 'at' }, 'now'), ' ', badge(p.state, p.state_reason), ' ', p.state_reason || ''));
    return items;
  }

  let lastList = { q: route.q || '', state: route.state || '' };

  function onRoute() {
    if (takeToken()) poll(); // a link pasted into this tab
    const prev = route;
    route = parseRoute();
    if (route.view === 'lessons') lastList = { q: route.q, state: route.state };
    if (route.view === 'lesson' && (prev.view !== 'lesson' || prev.hash !== route.hash)) {
      window.scrollTo(0, 0);
      render();
      loadDetail();
      return;
    }
    render();
  }

  async function loadDetail() {
    try {
      await pollDetail();
    } catch (e) {
      data.error = e.message || String(e);
      renderLive();
    }
    render();
  }

  function init() {
    const q = $('q');
    q.value = route.q || '';
    q.addEventListener('input', () => {
      const h = listHash(q.value.trim() ? q.value : '', route.state || '');
      history.replaceState(null, '', h);
      route = parseRoute();
      lastList = { q: route.q, state: route.state };
      renderList();
    });
    q.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        q.value = '';
        q.dispatchEvent(new Event('input'));
      }
    });
    window.addEventListener('hashchange', onRoute);
    render();
    renderLive();
    if (route.view === 'lesson') loadDetail();
    poll();
    setInterval(poll, POLL_MS);
    // Relative times age between polls.
    setInterval(() => { if (!polling && data.lessons && route.view === 'lessons') renderList(); }, 30000);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
}());
