// The operator console: plain JS, no framework, no build step.
//
// Every datum comes from the /api/v1 routes with the operator's bearer
// token, which lives in this tab's sessionStorage only: never in a URL, a
// cookie or localStorage.  Text from the service reaches the page through
// textContent only, never as HTML.  The live event log is read with
// fetch() streaming (EventSource cannot send the Authorization header)
// and resumes with Last-Event-ID after a dropped connection.
'use strict';

const TOKEN_KEY = 'spaced.token';
const WORKSPACE_KEY = 'spaced.workspace';
const LIST_LIMIT = 100;       // Spaces listed (the API's maximum)
const TASKS_LIMIT = 20;       // tasks shown for the selected Space
const EVENTS_SHOWN_MAX = 500; // rows kept in the event log
const REFRESH_MS = 5000;      // Spaces and instances read again
const RETRY_MS = 1000;        // a dropped event stream is resumed after this
const TASKS_READ_MAX = 5;     // tasks read again after one batch of events
const ACTIVE_READ_MAX = 10;   // running Spaces whose active task is read
const TERMINAL_KINDS = ['queued', 'completed', 'failed', 'cancelled'];

// What an operator reads for the codes that need more than their name.
const MESSAGES = {
  browser_instance_in_use:
    'That browser instance is already reserved by another Space. Choose a free instance: a tab is never shared.',
  space_task_in_progress:
    'This Space is still running a task. Wait for it to finish or cancel it, then submit again.',
  space_held:
    'An operator holds this Space: tasks wait until it is released.',
  runtime_not_ready:
    'The Space\'s browser is not ready yet. Try again in a moment.',
  runtime_crashed:
    'The browser crashed while running the task. It is relaunched for the next one.',
  host_not_allowed:
    'The instance\'s network policy does not allow that host.',
  element_not_found:
    'That element is not on the page any more, or the ref is stale. Take a new snapshot and use a ref from it.',
  element_obscured:
    'Another element covers that one, so a click would land on it instead. Close or move what covers it, then try again.',
  element_not_interactable:
    'That element is hidden or disabled, so nothing was done to it.',
  element_not_editable:
    'That element takes no typing. Use the capability the message names.',
  dialog_open:
    'The page has a dialog open. Answer it with handle_dialog first.',
  no_dialog:
    'The page has no dialog open, so there is nothing to answer.',
  no_tab:
    'No tab has that index. List the tabs (tabs, action list) first.',
  space_closed: 'This Space is closed or closing: it takes no new tasks.',
  space_unusable: 'This Space is in error and cannot run tasks. Close it and create a new one.',
  quota_exceeded: 'The workspace has as many active Spaces as it may. Close one first.',
  forbidden: 'This token may not do that.',
  not_found: 'Not found (it may have been removed, or it belongs to another workspace).',
  task_timeout: 'The task ran out of time.',
  outcome_unknown: 'The task\'s executor died mid-call; its outcome is unknown and it is never replayed.',
};
const SIGNED_OUT_MESSAGE =
  'The token was refused (wrong, expired or revoked). Sign in again.';

const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  me: null,
  workspace: null,
  instances: [],
  bundles: [],
  spaces: [],
  spaceId: null,
  space: null,
  tasks: new Map(),  // task_id -> task, for the selected Space
  lastSeq: 0,
  stream: null,      // AbortController of the event stream
  live: null,        // AbortController of the live view, while watching
  timer: null,
};

class ApiError extends Error {
  constructor(status, code, message, data) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data;
  }
}

function explain(code, message) {
  const known = MESSAGES[code];
  if (known) return `${known} (${code})`;
  return message ? `${message} (${code})` : code;
}

function say(text, kind) {
  const m = $('msg');
  m.textContent = text || '';
  m.className = 'msg' + (kind ? ' ' + kind : '');
}

function sayError(e) {
  if (e instanceof ApiError) say(explain(e.code, e.message), 'error');
  else say(String(e && e.message ? e.message : e), 'error');
}

// One call to the API.  A 401 ends the session, whatever asked.
async function api(method, path, body, signal) {
  const headers = { 'Authorization': 'Bearer ' + state.token };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method, headers, signal, cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let doc = null;
  try { doc = await res.json(); } catch (_) { doc = null; }
  if (res.status === 401) {
    signOut(SIGNED_OUT_MESSAGE);
    throw new ApiError(401, 'unauthenticated', SIGNED_OUT_MESSAGE, null);
  }
  if (!res.ok) {
    const err = (doc && doc.error) || {};
    throw new ApiError(res.status, err.code || 'http_' + res.status,
      err.message || res.statusText, doc ? doc.data : undefined);
  }
  return { status: res.status, data: doc ? doc.data : null };
}

function wsPath(rest) {
  return `/api/v1/workspaces/${encodeURIComponent(state.workspace)}${rest}`;
}

function spacePath(rest) {
  return wsPath(`/browser-spaces/${encodeURIComponent(state.spaceId)}${rest || ''}`);
}

function requestId() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return 'console-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function age(rfc3339) {
  const t = Date.parse(rfc3339);
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.floor((Date.now() - t) / 1000));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min';
  if (s < 86400) return Math.floor(s / 3600) + ' h';
  return Math.floor(s / 86400) + ' d';
}

function instanceName(id) {
  const i = state.instances.find((x) => x.browser_instance_id === id);
  return i ? i.name : id;
}

// A cell or line that names something, its id on hover.
function named(tag, text, id) {
  const e = el(tag, text);
  if (id) e.title = id;
  return e;
}

function ownerName(s) {
  return `${s.owner_name || s.owner_id} (${s.owner_type === 'runtime_agent' ? 'agent' : 'operator'})`;
}

// The status with what an operator must see at a glance: held, and by
// whom; help asked for.
function statusText(s) {
  let t = s.status;
  if (s.close_requested && s.status !== 'closed') t += ' (closing)';
  if (s.hold && s.hold.pending) t += ' (being taken over)';
  if (s.help_requested) t += ', help requested';
  return t;
}

function holdText(s) {
  if (!s.hold) return 'none';
  const who = s.hold.held_by_name || s.hold.held_by;
  const until = s.hold.held_until ? new Date(s.hold.held_until).toLocaleTimeString() : '?';
  return `${who}, until ${until}${s.hold.pending ? ' (waits for the running task to be cancelled)' : ''}`;
}

// A dialog in the page, not window.confirm: true when confirmed.
function confirmAction(text) {
  const d = $('confirm');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'yes'), { once: true });
    d.returnValue = '';
    d.showModal();
  });
}

/* --- signing in and out ------------------------------------------------ */

async function signIn(token) {
  state.token = token;
  const me = await api('GET', '/api/v1/me');
  state.me = me.data;
  sessionStorage.setItem(TOKEN_KEY, token);
  const names = new Map();
  for (const m of state.me.memberships || []) names.set(m.workspace_id, m.workspace_id);
  if (state.me.is_admin) {
    try {
      const all = await api('GET', '/api/v1/admin/workspaces');
      for (const w of all.data || []) names.set(w.workspace_id, w.name);
    } catch (e) { if (e.status === 401) throw e; }
  }
  const sel = $('workspace');
  sel.replaceChildren();
  for (const [id, name] of names) {
    const o = el('option', name === id ? id : `${name} (${id})`);
    o.value = id;
    sel.append(o);
  }
  const kept = sessionStorage.getItem(WORKSPACE_KEY);
  if (kept && names.has(kept)) sel.value = kept;
  $('who-name').textContent = `${state.me.name} (${state.me.kind}${state.me.is_admin ? ', admin' : ''})`;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('who').hidden = false;
  $('signin-msg').textContent = '';
  if (names.size === 0) {
    say('This principal is a member of no workspace.', 'error');
    return;
  }
  await chooseWorkspace(sel.value);
  state.timer = setInterval(() => { refresh().catch(sayError); }, REFRESH_MS);
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  if (state.timer) clearInterval(state.timer);
  stopStream();
  stopWatch();
  Object.assign(state, {
    token: null, me: null, workspace: null, spaceId: null, space: null,
    timer: null, lastSeq: 0,
  });
  state.tasks.clear();
  $('app').hidden = true;
  $('who').hidden = true;
  $('space').hidden = true;
  $('signin').hidden = false;
  $('token').value = '';
  const m = $('signin-msg');
  m.textContent = message || '';
  m.className = 'msg' + (message ? ' error' : '');
}

/* --- the workspace: Spaces, instances, bundles ---------------------------- */

async function chooseWorkspace(id) {
  state.workspace = id;
  sessionStorage.setItem(WORKSPACE_KEY, id);
  selectSpace(null);
  say('');
  const b = await api('GET', wsPath('/runtime-bundles'));
  state.bundles = b.data || [];
  await refresh();
}

async function refresh() {
  if (!state.workspace) return;
  const [inst, spaces] = await Promise.all([
    api('GET', wsPath('/browser-instances')),
    api('GET', wsPath(`/browser-spaces?limit=${LIST_LIMIT}`)),
  ]);
  state.instances = inst.data || [];
  state.spaces = spaces.data || [];
  // The list carries no active task: a running Space's detail does.
  const running = state.spaces.filter((x) => x.status === 'running').slice(0, ACTIVE_READ_MAX);
  const details = await Promise.all(running.map((x) =>
    api('GET', wsPath(`/browser-spaces/${encodeURIComponent(x.space_id)}`)).catch((e) => {
      if (e.status === 401) throw e;
      return null;
    })));
  for (const d of details) if (d) putSpace(d.data);
  renderSpaces();
  renderCreate();
  if (state.spaceId) await loadSpace();
}

// Replaces a Space of the list with a newer reading of it.
function putSpace(s) {
  const at = state.spaces.findIndex((x) => x.space_id === s.space_id);
  if (at >= 0) state.spaces[at] = s;
  return at >= 0;
}

function renderSpaces() {
  const body = $('spaces').tBodies[0];
  body.replaceChildren();
  for (const s of state.spaces) {
    const tr = el('tr', null, s.status === 'closed' ? 'closed' : '');
    tr.dataset.space = s.space_id;
    if (s.space_id === state.spaceId) tr.classList.add('selected');
    const status = el('td', statusText(s), 'status-' + s.status);
    if (s.help_requested) status.classList.add('help');
    tr.append(named('td', s.space_id.slice(0, 8), s.space_id), status,
      named('td', ownerName(s), s.owner_id),
      named('td', instanceName(s.browser_instance_id), s.browser_instance_id),
      el('td', s.active_task ? `${s.active_task.capability} (${s.active_task.status})` : ''),
      el('td', age(s.created_at)));
    const td = el('td');
    const open = el('button', 'Open');
    open.type = 'button';
    open.addEventListener('click', () => selectSpace(s.space_id));
    td.append(open);
    tr.append(td);
    body.append(tr);
  }
  $('spaces-empty').hidden = state.spaces.length > 0;
}

function bundleOf(instanceId) {
  const i = state.instances.find((x) => x.browser_instance_id === instanceId);
  return i && state.bundles.find((b) => b.bundle_id === i.bundle_id);
}

function capabilities(bundle) {
  return (bundle && bundle.manifest && bundle.manifest.capabilities) || [];
}

// Free instances are offered; the one already chosen stays chosen when it
// stops being free, so the service's answer (browser_instance_in_use)
// decides, never a stale page.
function renderCreate() {
  const sel = $('create-instance');
  const chosen = sel.value;
  sel.replaceChildren();
  for (const i of state.instances) {
    const free = i.status === 'ready' && !i.in_use;
    if (!free && i.browser_instance_id !== chosen) continue;
    const o = el('option', `${i.name} (${i.driver}${free ? '' : ', in use'})`);
    o.value = i.browser_instance_id;
    sel.append(o);
  }
  if (chosen && [...sel.options].some((o) => o.value === chosen)) sel.value = chosen;
  $('create-none').hidden = sel.options.length > 0;
  $('create-button').disabled = sel.options.length === 0;
  renderGrants();
}

function renderGrants() {
  const box = $('create-caps');
  const inst = $('create-instance').value;
  if (box.dataset.instance === inst) return; // keep the operator's ticks
  box.dataset.instance = inst;
  for (const l of [...box.querySelectorAll('label')]) l.remove();
  for (const c of capabilities(bundleOf(inst))) {
    const cb = el('input');
    cb.type = 'checkbox';
    cb.value = c.name;
    cb.checked = true;
    cb.name = 'grant';
    const l = el('label');
    l.append(cb, ' ' + c.name);
    box.append(l);
  }
}

async function createSpace(ev) {
  ev.preventDefault();
  const inst = $('create-instance').value;
  if (!inst) return;
  const granted = [...$('create-caps').querySelectorAll('input[name=grant]:checked')].map((x) => x.value);
  const body = {
    browser_instance_id: inst, owner_type: state.me.kind,
    owner_id: state.me.principal_id, granted_capabilities: granted,
    request_id: requestId(),
  };
  if ($('create-dialogs').value) body.dialog_policy = $('create-dialogs').value;
  try {
    const r = await api('POST', wsPath('/browser-spaces'), body);
    say(`Space ${r.data.space_id} created.`, 'info');
    $('create-instance').value = ''; // offer the instances still free
    await refresh();
    await selectSpace(r.data.space_id);
  } catch (e) {
    sayError(e);
    if (e.status !== 401) refresh().catch(() => {});
  }
}

/* --- one Space ------------------------------------------------------------ */

async function selectSpace(id) {
  stopStream();
  stopWatch();
  $('live').hidden = true;
  $('live').removeAttribute('src');
  state.spaceId = id;
  state.space = null;
  state.tasks.clear();
  state.lastSeq = 0;
  $('events').replaceChildren();
  $('tasks').replaceChildren();
  $('outline').textContent = '';
  $('outline-title').textContent = 'No snapshot yet.';
  setShot(null);
  $('capability').dataset.for = '';
  $('space').hidden = id === null;
  $('space-id').textContent = id || '';
  for (const f of ['space-status', 'space-owner', 'space-instance', 'space-hold', 'space-page', 'space-active', 'space-error']) $(f).textContent = '';
  state.pageAt = null;
  for (const tr of $('spaces').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.space === id);
  if (id === null) return;
  try {
    await loadSpace();
    const t = await api('GET', spacePath(`/tasks?limit=${TASKS_LIMIT}`));
    for (const task of (t.data || []).slice().reverse()) showTask(task);
    const last = (t.data || []).find((x) => x.capability === 'snapshot' && x.status === 'completed');
    if (last) showOutline(last);
    const shot = (t.data || []).find((x) => x.capability === 'screenshot' && x.status === 'completed');
    if (shot) await showShot(shot);
  } catch (e) { sayError(e); }
  startStream(id);
}

async function loadSpace() {
  const id = state.spaceId;
  const r = await api('GET', spacePath());
  if (state.spaceId !== id) return;
  const s = (state.space = r.data);
  if (putSpace(s)) renderSpaces();
  $('space-id').textContent = s.space_id;
  $('space-status').textContent = statusText(s);
  $('space-status').className = 'status-' + s.status + (s.help_requested ? ' help' : '');
  $('space-owner').textContent = ownerName(s);
  $('space-owner').title = s.owner_id;
  $('space-instance').textContent = instanceName(s.browser_instance_id);
  $('space-instance').title = s.browser_instance_id;
  $('space-hold').textContent = holdText(s);
  $('space-hold').title = s.hold ? s.hold.held_by : '';
  $('space-active').textContent = s.active_task ? `${s.active_task.capability} (${s.active_task.status}) ${s.active_task.task_id}` : 'none';
  $('space-error').textContent = s.last_error_code ? explain(s.last_error_code) : 'none';
  const open = s.status !== 'closed' && !s.close_requested;
  $('close-button').disabled = !open;
  $('cancel-button').disabled = s.status === 'closed';
  $('takeover-button').disabled = !open;
  $('takeover-button').textContent = s.hold && s.hold.held_by === state.me.principal_id ? 'Renew hold' : 'Take over';
  $('release-button').disabled = !s.hold;
  renderLive();
  $('submit-button').disabled = !open;
  renderCapabilities(s);
}

// The granted capabilities the bundle declares, and a form for the args
// of the one chosen, generated from its args schema.
function renderCapabilities(s) {
  const sel = $('capability');
  const key = s.space_id + ':' + s.granted_capabilities.join(',');
  if (sel.dataset.for === key) return;
  sel.dataset.for = key;
  sel.replaceChildren();
  const caps = capabilities(bundleOf(s.browser_instance_id));
  for (const name of s.granted_capabilities) {
    if (caps.length && !caps.some((c) => c.name === name)) continue;
    const o = el('option', name);
    o.value = name;
    sel.append(o);
  }
  renderArgs();
}

function capSchema() {
  const name = $('capability').value;
  const c = capabilities(bundleOf(state.space && state.space.browser_instance_id)).find((x) => x.name === name);
  return (c && c.args) || { type: 'object', properties: {} };
}

function renderArgs() {
  const box = $('args');
  box.replaceChildren();
  const schema = capSchema();
  const required = new Set(schema.required || []);
  for (const [name, p] of Object.entries(schema.properties || {})) {
    const label = el('label');
    const title = el('span', name, required.has(name) ? 'req' : '');
    let input;
    if (Array.isArray(p.enum)) {
      input = el('select');
      if (!required.has(name)) input.append(el('option', ''));
      for (const v of p.enum) {
        const o = el('option', JSON.stringify(v));
        o.value = JSON.stringify(v);
        input.append(o);
      }
    } else if (p.type === 'boolean') {
      input = el('input');
      input.type = 'checkbox';
    } else if (p.type === 'integer' || p.type === 'number') {
      input = el('input');
      input.type = 'number';
      if (p.minimum !== undefined) input.min = p.minimum;
      if (p.maximum !== undefined) input.max = p.maximum;
      if (p.type === 'integer') input.step = 1;
    } else if (p.type === 'array' || p.type === 'object') {
      // A list or an element ({"ref"} or {"selector"}) as JSON; a list of
      // strings may also be written as words separated by commas.
      input = el('input');
      input.type = 'text';
      input.spellcheck = false;
      input.placeholder = p.type === 'array' ? 'a, b  or  ["a", "b"]' : '{"selector": "#id"}  or  {"ref": "e1"}';
    } else {
      input = el('input');
      input.type = 'text';
      if (p.maxLength !== undefined) input.maxLength = p.maxLength;
      input.spellcheck = false;
    }
    input.name = name;
    input.dataset.kind = Array.isArray(p.enum) ? 'enum' : p.type || 'string';
    input.required = required.has(name) && p.type !== 'boolean';
    label.append(title, ' ', input);
    box.append(label);
  }
  if (!box.children.length) box.append(el('p', 'No arguments.', 'hint'));
}

function readArgs() {
  const args = {};
  for (const input of $('args').querySelectorAll('[name]')) {
    const kind = input.dataset.kind;
    if (kind === 'boolean') {
      if (input.checked) args[input.name] = true;
    } else if (input.value === '') {
      continue;
    } else if (kind === 'enum') {
      args[input.name] = JSON.parse(input.value);
    } else if (kind === 'integer' || kind === 'number') {
      args[input.name] = Number(input.value);
    } else if (kind === 'array' || kind === 'object') {
      const v = input.value.trim();
      if (kind === 'array' && !v.startsWith('[')) {
        args[input.name] = v.split(',').map((x) => x.trim()).filter((x) => x !== '');
        continue;
      }
      try {
        args[input.name] = JSON.parse(v);
      } catch (e) {
        throw new Error(`${input.name}: not JSON (${e.message})`);
      }
    } else {
      args[input.name] = input.value;
    }
  }
  return args;
}

async function submitTask(ev) {
  ev.preventDefault();
  const capability = $('capability').value;
  if (!capability) return;
  try {
    const r = await api('POST', spacePath('/tasks'), {
      request_id: requestId(), capability, args: readArgs(),
    });
    showTask(r.data);
    say(`Task ${capability} ${r.data.status}.`, 'info');
  } catch (e) {
    // runtime_not_ready persists a failed task and returns it in data.
    if (e.data && e.data.task_id) showTask(e.data);
    sayError(e);
  }
}

async function cancelTask() {
  const s = state.space;
  if (!s || !(await confirmAction(`Cancel the task running on Space ${s.space_id}?`))) return;
  try {
    const r = await api('POST', spacePath('/cancel'), {});
    say(`Cancel: the task is ${r.data.status}${r.data.cancel_requested ? ' (cancel requested)' : ''}.`, 'info');
  } catch (e) { sayError(e); }
}

async function takeOver() {
  const s = state.space;
  if (!s) return;
  try {
    const r = await api('POST', spacePath('/takeover'), {});
    say(r.data.hold && r.data.hold.pending
      ? 'Taking over: the running task is being cancelled; the hold begins once it has ended.'
      : `You hold Space ${s.space_id} until ${new Date(r.data.hold.held_until).toLocaleTimeString()}: the agent's tasks are refused.`, 'info');
    await loadSpace();
    if (!state.live) watch(s.space_id);
  } catch (e) { sayError(e); }
}

async function releaseSpace() {
  const s = state.space;
  if (!s || !(await confirmAction(`Hand Space ${s.space_id} back to its agent?`))) return;
  try {
    await api('POST', spacePath('/release'), {});
    say('Released: the agent may go on.', 'info');
    await loadSpace();
  } catch (e) { sayError(e); }
}

async function closeSpace() {
  const s = state.space;
  if (!s || !(await confirmAction(`Close Space ${s.space_id}? Its browser is torn down and the instance released.`))) return;
  try {
    await api('POST', spacePath('/close'), {});
    say(`Closing Space ${s.space_id}.`, 'info');
    await refresh();
  } catch (e) { sayError(e); }
}

/* --- tasks, results, screenshots, outlines ------------------------------ */

function showTask(t) {
  state.tasks.set(t.task_id, t);
  let li = $('tasks').querySelector(`li[data-task="${CSS.escape(t.task_id)}"]`);
  if (!li) {
    li = el('li');
    li.dataset.task = t.task_id;
    $('tasks').prepend(li);
  }
  const head = el('div');
  head.append(el('strong', t.capability), ' ', el('span', t.status, 'task-status status-' + t.status),
    ' ', el('code', t.task_id, 'hint'));
  if (t.cancel_requested && t.status !== 'cancelled') head.append(' (cancel requested)');
  li.replaceChildren(head);
  if (t.error && t.error.code) li.append(el('div', explain(t.error.code, t.error.message), 'task-error'));
  if (t.result !== null && t.result !== undefined) li.append(el('pre', JSON.stringify(t.result, null, 2), 'result'));
  if (t.result && t.result.page) showPage(t);
}

// The page header of the Space's newest task that says one: its url,
// title, tabs and an open dialog, as the agent last saw them.
function showPage(t) {
  if (state.pageAt && state.pageAt > t.created_at) return;
  state.pageAt = t.created_at;
  const p = t.result.page;
  const tabs = Array.isArray(p.tabs) ? p.tabs.length : 0;
  let text = `${p.title || '(no title)'}, ${p.url || ''}${p.loading ? ' (loading)' : ''}; ${tabs} tab${tabs === 1 ? '' : 's'}`;
  if (p.dialog) text += `; a ${p.dialog.type || ''} dialog is open: "${p.dialog.message || ''}"`;
  $('space-page').textContent = text;
}

function showOutline(t) {
  const r = t.result || {};
  $('outline-title').textContent = `${r.title || ''} ${r.url || ''}`.trim() || 'Snapshot';
  $('outline').textContent = r.snapshot || '';
}

function setShot(url) {
  const img = $('shot');
  if (img.src && img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
  if (url) img.src = url; else img.removeAttribute('src');
  img.hidden = !url;
  $('shot-none').hidden = !!url;
}

// The artifact is fetched with the token and shown through a blob: URL.
async function showShot(t) {
  const name = t.result && t.result.artifact;
  if (!name) return;
  const res = await fetch(spacePath(`/tasks/${encodeURIComponent(t.task_id)}/artifacts/${encodeURIComponent(name)}`), {
    headers: { 'Authorization': 'Bearer ' + state.token }, cache: 'no-store',
  });
  if (res.status === 401) { signOut(SIGNED_OUT_MESSAGE); return; }
  if (!res.ok) { say(`The screenshot could not be read (${res.status}).`, 'error'); return; }
  const blob = await res.blob();
  setShot(URL.createObjectURL(blob));
  $('shot').dataset.task = t.task_id;
}

async function taskChanged(taskId) {
  const space = state.spaceId;
  const r = await api('GET', spacePath(`/tasks/${encodeURIComponent(taskId)}`));
  if (state.spaceId !== space) return;
  const t = r.data;
  showTask(t);
  if (t.status === 'completed' && t.capability === 'snapshot') showOutline(t);
  if (t.status === 'completed' && t.capability === 'screenshot') await showShot(t);
  if (t.status === 'failed' && t.error) say(`${t.capability} failed: ${explain(t.error.code, t.error.message)}`, 'error');
}

/* --- the live event log ----------------------------------------------------- */

function stopStream() {
  if (state.stream) state.stream.abort();
  state.stream = null;
  $('stream-state').textContent = '';
}

function showEvent(e) {
  const list = $('events');
  const li = el('li');
  li.dataset.seq = e.sequence;
  li.dataset.kind = e.kind;
  const payload = e.payload && Object.keys(e.payload).length ? ' ' + JSON.stringify(e.payload) : '';
  li.textContent = `#${e.sequence} ${e.created_at} ${e.kind}${e.task_id ? ' task ' + e.task_id : ''}${payload}`;
  list.append(li);
  while (list.children.length > EVENTS_SHOWN_MAX) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

// The events of one read of the stream: each is shown, then the tasks
// they name (the last few) and the Space are read once for all of them.
async function onEvents(batch) {
  const tasks = [];
  let lists = false;
  for (const e of batch) {
    if (e.sequence <= state.lastSeq) continue; // a resumed stream may repeat
    state.lastSeq = e.sequence;
    showEvent(e);
    if (e.task_id) {
      const at = tasks.indexOf(e.task_id);
      if (at >= 0) tasks.splice(at, 1);
      tasks.push(e.task_id);
    }
    // What the Spaces list shows: a status, a hold, a call for help.
    if (e.kind.startsWith('space_') || e.kind.startsWith('takeover_') || e.kind === 'help_requested' ||
        TERMINAL_KINDS.includes(e.kind)) lists = true;
  }
  for (const id of tasks.slice(-TASKS_READ_MAX)) await taskChanged(id);
  if (lists) await refresh();
  else if (batch.length) await loadSpace();
}

// Reads a stream of Server-Sent Events to its end: each message's data,
// parsed, goes to each(), and what one read brought to batch(), when it
// brought any (a heartbeat comment brings none).
async function readStream(res, each, batch) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    const got = [];
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
      }
      if (!data) continue;
      const m = JSON.parse(data);
      each(m);
      got.push(m);
    }
    if (got.length) await batch(got);
  }
}

// Reads the Space's events as Server-Sent Events, from state.lastSeq on,
// until space_closed ends the stream; a dropped stream is resumed.
async function startStream(id) {
  const ctl = new AbortController();
  state.stream = ctl;
  let ended = false;
  while (!ended && !ctl.signal.aborted && state.spaceId === id) {
    $('stream-state').textContent = '(live)';
    try {
      const res = await fetch(wsPath(`/browser-spaces/${encodeURIComponent(id)}/events`), {
        headers: {
          'Authorization': 'Bearer ' + state.token,
          'Accept': 'text/event-stream',
          'Last-Event-ID': String(state.lastSeq),
        },
        cache: 'no-store',
        signal: ctl.signal,
      });
      if (res.status === 401) { signOut(SIGNED_OUT_MESSAGE); return; }
      if (!res.ok || !res.body) throw new Error('the event stream answered ' + res.status);
      await readStream(res, (e) => {
        if (e.kind === 'space_closed') ended = true;
      }, async (batch) => {
        try { await onEvents(batch); } catch (err) { if (err.status !== 401) sayError(err); }
      });
    } catch (err) {
      if (ctl.signal.aborted || !state.token) return;
    }
    // The stream ended before space_closed, cleanly or not: resume it.
    if (!ended) {
      $('stream-state').textContent = '(reconnecting)';
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
  if (state.stream === ctl) $('stream-state').textContent = ended ? '(ended: the Space is closed)' : '';
}

/* --- the live view, and the holder's input ------------------------------------ */

// Whether the caller holds the open Space: only then does its pointer
// and keys go to the page.
function holding() {
  const s = state.space;
  return !!(s && s.status === 'held' && s.hold && s.hold.held_by === state.me.principal_id);
}

function renderLive() {
  const img = $('live');
  img.classList.toggle('yours', holding());
  $('watch-button').textContent = state.live ? 'Stop watching' : 'Watch live';
  $('live-hint').textContent = !state.live ? 'Not watching. Take the Space over to click and type in it.'
    : holding() ? 'You hold this Space: clicks, the wheel and keys on the picture go to its page.'
    : 'Watching. Take the Space over to click and type in it.';
}

// Frames while someone watches: the stream of GET .../live, each frame
// drawn as it comes; the last one stays when the watch ends.
async function watch(id) {
  stopWatch();
  const ctl = new AbortController();
  state.live = ctl;
  renderLive();
  $('live-state').textContent = '(connecting)';
  try {
    const res = await fetch(wsPath(`/browser-spaces/${encodeURIComponent(id)}/live`), {
      headers: { 'Authorization': 'Bearer ' + state.token, 'Accept': 'text/event-stream' },
      cache: 'no-store',
      signal: ctl.signal,
    });
    if (res.status === 401) { signOut(SIGNED_OUT_MESSAGE); return; }
    if (!res.ok || !res.body) {
      const doc = await res.json().catch(() => null);
      throw new ApiError(res.status, doc && doc.error ? doc.error.code : 'live', doc && doc.error ? doc.error.message : '');
    }
    $('live-state').textContent = '(live)';
    // Only the newest frame of what came together is drawn.
    await readStream(res, () => {}, (frames) => {
      const f = frames[frames.length - 1];
      const img = $('live');
      img.src = 'data:image/jpeg;base64,' + f.jpeg;
      img.dataset.width = f.width;
      img.dataset.height = f.height;
      img.dataset.seq = f.seq;
      img.hidden = false;
    });
  } catch (err) {
    if (!ctl.signal.aborted) sayError(err);
  }
  if (state.live === ctl) {
    state.live = null;
    $('live-state').textContent = '(ended)';
    renderLive();
  }
}

function stopWatch() {
  if (state.live) state.live.abort();
  state.live = null;
  $('live-state').textContent = '';
}

// The holder's inputs go one after another, in order.
let inputs = Promise.resolve();
function sendInput(body) {
  if (!holding()) return;
  inputs = inputs.then(() => api('POST', spacePath('/live/input'), body)).catch(sayError);
}

// A point of the picture in the page's CSS pixels.
function pagePoint(ev) {
  const img = $('live');
  const r = img.getBoundingClientRect();
  const w = Number(img.dataset.width) || img.naturalWidth, h = Number(img.dataset.height) || img.naturalHeight;
  return {
    x: Math.max(0, Math.min(w - 1, Math.round((ev.clientX - r.left) * w / r.width))),
    y: Math.max(0, Math.min(h - 1, Math.round((ev.clientY - r.top) * h / r.height))),
  };
}

const NAMED_KEYS = new Set(['Enter', 'Tab', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown',
  'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown', ' ']);

function wireLive() {
  const img = $('live');
  $('watch-button').addEventListener('click', () => {
    if (state.live) { stopWatch(); renderLive(); } else if (state.spaceId) watch(state.spaceId);
  });
  img.addEventListener('click', (ev) => {
    if (!holding()) return;
    img.focus();
    sendInput({ kind: 'click', ...pagePoint(ev) });
  });
  img.addEventListener('wheel', (ev) => {
    if (!holding()) return;
    ev.preventDefault();
    sendInput({ kind: 'wheel', ...pagePoint(ev), delta_x: Math.round(ev.deltaX), delta_y: Math.round(ev.deltaY) });
  }, { passive: false });
  img.addEventListener('keydown', (ev) => {
    if (!holding() || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    ev.preventDefault();
    if (ev.key.length === 1 && ev.key !== ' ') sendInput({ kind: 'text', text: ev.key });
    else if (NAMED_KEYS.has(ev.key)) sendInput({ kind: 'key', key: ev.key === ' ' ? 'Space' : ev.key });
  });
}

/* --- wiring ------------------------------------------------------------------ */

function init() {
  $('signin-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = $('token').value.trim();
    if (!token) return;
    $('signin-msg').textContent = '';
    try { await signIn(token); } catch (e) {
      if (e.status !== 401) signOut(e instanceof ApiError ? explain(e.code, e.message) : String(e));
    }
  });
  $('signout').addEventListener('click', () => signOut(''));
  $('refresh').addEventListener('click', () => refresh().catch(sayError));
  $('workspace').addEventListener('change', (ev) => chooseWorkspace(ev.target.value).catch(sayError));
  $('create-instance').addEventListener('change', renderGrants);
  $('create-form').addEventListener('submit', createSpace);
  $('capability').addEventListener('change', renderArgs);
  $('task-form').addEventListener('submit', submitTask);
  $('cancel-button').addEventListener('click', cancelTask);
  $('close-button').addEventListener('click', closeSpace);
  $('takeover-button').addEventListener('click', takeOver);
  wireLive();
  $('release-button').addEventListener('click', releaseSpace);
  const kept = sessionStorage.getItem(TOKEN_KEY);
  if (kept) signIn(kept).catch((e) => { if (e.status !== 401) signOut(String(e.message || e)); });
}

document.addEventListener('DOMContentLoaded', init);
