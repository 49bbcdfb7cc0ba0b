// console.test.mjs: the operator console in a real browser, end to end.
// playwright-core drives Debian's Chromium, headless, against the real
// spaced that tests/console/test_console.c started, with two managed
// instances bound to the workspace and a page server on 127.0.0.1.
//
// Environment (all set by test_console.c):
//   CONSOLE_URL          the api, http://127.0.0.1:<port>
//   CONSOLE_TOKEN        an operator's token (a manager of the workspace)
//   CONSOLE_TOKEN_ID     its id, revoked by the last case
//   CONSOLE_ADMIN_TOKEN  the admin's token (to revoke it)
//   CONSOLE_WORKSPACE    the workspace's id
//   CONSOLE_OWNER_ID     the operator's principal id
//   CONSOLE_INSTANCE_A   a managed instance the test reserves behind the console
//   CONSOLE_INSTANCE_B   a managed instance the console creates its Space on
//   CONSOLE_PAGE_URL     the test page (title "Home", heading "Welcome")
//   CONSOLE_SHOTS        where the screenshot of each main state goes
//   CONSOLE_SPACED_PID   the supervisor, whose spaced-api the test kills once
//   CONSOLE_CHROMIUM     the browser (default /usr/bin/chromium)
//
// Exits 0 when every case passed; otherwise prints the failure, saves
// failure.png beside the other screenshots and exits 1.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const URL_BASE = env('CONSOLE_URL');
const TOKEN = env('CONSOLE_TOKEN');
const TOKEN_ID = env('CONSOLE_TOKEN_ID');
const ADMIN = env('CONSOLE_ADMIN_TOKEN');
const WS = env('CONSOLE_WORKSPACE');
const OWNER = env('CONSOLE_OWNER_ID');
const INST_A = env('CONSOLE_INSTANCE_A');
const INST_B = env('CONSOLE_INSTANCE_B');
const PAGE_URL = env('CONSOLE_PAGE_URL');
const SHOTS = env('CONSOLE_SHOTS');
const SPACED_PID = env('CONSOLE_SPACED_PID');
const CHROMIUM = process.env.CONSOLE_CHROMIUM || '/usr/bin/chromium';
// A browser task on a loaded machine: a bound, not a speed.
const TASK_WAIT_MS = 90000;

mkdirSync(SHOTS, { recursive: true });

async function call(method, path, token, body) {
  const res = await fetch(URL_BASE + path, {
    method,
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, doc: await res.json().catch(() => null) };
}

let page;
let step = '';
async function shot(name) {
  await page.screenshot({ path: join(SHOTS, name + '.png'), fullPage: true });
}
function log(text) {
  step = text;
  console.log('console: ' + text);
}

// The task row of the console's task list for the newest task of cap.
const taskRow = (cap) => page.locator('#tasks li', { has: page.locator('strong', { hasText: new RegExp('^' + cap + '$') }) }).first();

async function waitTaskStatus(cap, status) {
  await page.waitForFunction(([c, s]) => {
    const li = [...document.querySelectorAll('#tasks li')].find((x) => x.querySelector('strong')?.textContent === c);
    return li && li.querySelector('.task-status')?.textContent === s;
  }, [cap, status], { timeout: TASK_WAIT_MS });
}

async function submit(cap, args) {
  await page.selectOption('#capability', cap);
  for (const [k, v] of Object.entries(args)) {
    await page.fill(`#args [name="${k}"]`, String(v));
  }
  await page.click('#submit-button');
}

async function confirmDialog() {
  await page.waitForSelector('#confirm[open]');
  await shot('confirm-dialog');
  await page.click('#confirm-yes');
  await page.waitForSelector('#confirm:not([open])', { state: 'attached' });
}

async function main() {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.setDefaultTimeout(30000);
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  // The token must never travel in a URL.
  const urls = [];
  page.on('request', (r) => urls.push(r.url()));

  try {
    log('a wrong token is refused with a clear message');
    await page.goto(URL_BASE + '/');
    await page.fill('#token', 'not-a-token');
    await page.click('#signin-button');
    await page.waitForFunction(() => document.querySelector('#signin-msg').textContent.includes('Sign in again'));
    assert.equal(await page.isVisible('#app'), false);
    assert.equal(await page.isVisible('#who'), false);
    await shot('wrong-token');

    log('sign in');
    await page.fill('#token', TOKEN);
    await page.click('#signin-button');
    await page.waitForSelector('#app:not([hidden])');
    assert.equal(await page.inputValue('#workspace'), WS);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('spaced.token')), TOKEN);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    await page.waitForSelector(`#create-instance option[value="${INST_A}"]`, { state: 'attached' });
    await shot('signed-in');

    log('browser_instance_in_use: another client reserves the chosen instance');
    await page.selectOption('#create-instance', INST_A);
    const other = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces`, TOKEN, {
      browser_instance_id: INST_A, owner_type: 'operator', owner_id: OWNER,
      granted_capabilities: ['snapshot'],
    });
    assert.equal(other.status, 201, JSON.stringify(other.doc));
    await page.click('#create-button');
    await page.waitForFunction(() => document.querySelector('#msg').textContent.includes('browser_instance_in_use'));
    const inUse = await page.textContent('#msg');
    assert.match(inUse, /already reserved by another Space/);
    assert.match(inUse, /never shared/);
    await shot('instance-in-use');

    log('create a Space from a free instance, choosing its capabilities');
    await page.selectOption('#create-instance', INST_B);
    await page.waitForSelector('#create-caps input[value="navigate"]');
    await page.uncheck('#create-caps input[value="press"]');
    await page.click('#create-button');
    await page.waitForSelector('#space:not([hidden])');
    await page.waitForFunction(() => document.querySelector('#space-id').textContent.trim() !== '');
    const spaceId = (await page.textContent('#space-id')).trim();
    assert.ok(spaceId.length > 0);
    const created = await call('GET', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}`, TOKEN);
    assert.equal(created.doc.data.browser_instance_id, INST_B);
    assert.ok(!created.doc.data.granted_capabilities.includes('press'));
    assert.ok(created.doc.data.granted_capabilities.includes('screenshot'));
    await page.waitForSelector(`#spaces tr[data-space="${spaceId}"]`);
    const row = await page.textContent(`#spaces tr[data-space="${spaceId}"]`);
    assert.match(row, /idle/);
    // Names, with the ids on hover.
    assert.ok(created.doc.data.owner_name, 'the Space names its owner');
    assert.match(row, new RegExp(`${created.doc.data.owner_name} \\(operator\\)`));
    const cell = (n) => `#spaces tr[data-space="${spaceId}"] td:nth-child(${n})`;
    assert.equal(await page.getAttribute(cell(3), 'title'), OWNER);
    assert.equal(await page.getAttribute(cell(4), 'title'), INST_B);
    assert.equal(await page.getAttribute(cell(1), 'title'), spaceId);
    // Age: the last cell but the Open button's.
    const ageCell = await page.textContent(`#spaces tr[data-space="${spaceId}"] td:nth-child(6)`);
    assert.match(ageCell, /^\d+ (s|min|h|d)$/, `age ${ageCell}`);
    // The capabilities offered are the ones granted.
    const offered = await page.$$eval('#capability option', (os) => os.map((o) => o.value));
    assert.ok(!offered.includes('press'), offered.join(','));
    await page.waitForSelector('#events li[data-kind="space_opened"]', { timeout: TASK_WAIT_MS });
    await shot('space-created');

    log('navigate to the test page through a form built from the args schema');
    await submit('navigate', { url: PAGE_URL });
    await waitTaskStatus('navigate', 'completed');
    assert.match(await taskRow('navigate').locator('pre').textContent(), /"title": "Home"/);

    log('snapshot, and see the outline with its refs');
    await submit('snapshot', {});
    await waitTaskStatus('snapshot', 'completed');
    await page.waitForFunction(() => document.querySelector('#outline').textContent.includes('heading "Welcome"'));
    const outline = await page.textContent('#outline');
    assert.match(outline, /link "Next page" \[ref=e\d+\]/);
    assert.match(await page.textContent('#outline-title'), /Home/);
    await shot('snapshot-outline');

    log('screenshot, and see the image');
    await submit('screenshot', {});
    await waitTaskStatus('screenshot', 'completed');
    await page.waitForSelector('#shot:not([hidden])', { timeout: TASK_WAIT_MS });
    await page.waitForFunction(() => {
      const i = document.querySelector('#shot');
      return i.complete && i.naturalWidth > 0 && i.src.startsWith('blob:');
    });
    const shotTask = await page.getAttribute('#shot', 'data-task');
    assert.ok(shotTask);
    await shot('screenshot');

    log('the live event log shows each task in order');
    const kinds = await page.$$eval('#events li', (ls) => ls.map((l) => [Number(l.dataset.seq), l.dataset.kind]));
    const seqs = kinds.map((k) => k[0]);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), 'events in order');
    assert.deepEqual(seqs, seqs.map((_, i) => i + 1), 'no gap');
    for (const k of ['space_opened', 'queued', 'started', 'completed']) {
      assert.ok(kinds.some((x) => x[1] === k), `no ${k} event in ${JSON.stringify(kinds)}`);
    }
    // A task submitted by another client shows up live, with no reload.
    const before = kinds.length;
    const extra = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/tasks`, TOKEN, {
      request_id: 'console-test-live', capability: 'snapshot', args: {},
    });
    assert.equal(extra.status, 202, JSON.stringify(extra.doc));
    await page.waitForSelector(`#events li[data-kind="completed"]:nth-child(n+${before + 1})`, { timeout: TASK_WAIT_MS });
    await page.waitForSelector(`#tasks li[data-task="${extra.doc.data.task_id}"] .status-completed`, { timeout: TASK_WAIT_MS });
    await shot('live-events');

    log('a dropped event stream resumes with Last-Event-ID, with no gap and no repeat');
    const resumed = [];
    page.on('request', (r) => {
      if (r.url().endsWith(`/browser-spaces/${spaceId}/events`)) resumed.push(r.headers()['last-event-id']);
    });
    // The api dies under the stream (the supervisor starts a new one).
    const apiPid = Number(execFileSync('pgrep', ['-P', SPACED_PID, '-x', 'spaced-api']).toString().trim());
    assert.ok(apiPid > 0);
    process.kill(apiPid, 'SIGKILL');
    await page.waitForFunction(() => document.querySelector('#stream-state').textContent === '(reconnecting)');
    let whileOff = null;
    for (const until = Date.now() + TASK_WAIT_MS; !whileOff && Date.now() < until;) {
      try {
        const r = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/tasks`, TOKEN, {
          request_id: 'console-test-resume', capability: 'snapshot', args: {},
        });
        if (r.status === 202 || r.status === 200) whileOff = r;
      } catch (_) { /* the new api is not listening yet */ }
      if (!whileOff) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(whileOff, 'no api came back');
    await page.waitForSelector(`#tasks li[data-task="${whileOff.doc.data.task_id}"] .status-completed`, { timeout: TASK_WAIT_MS });
    await page.waitForFunction(() => document.querySelector('#stream-state').textContent === '(live)');
    const after = await page.$$eval('#events li', (ls) => ls.map((l) => Number(l.dataset.seq)));
    assert.deepEqual(after, after.map((_, i) => i + 1), 'a gap or a repeat after the resume');
    assert.ok(resumed.length > 0 && resumed.every((id) => Number(id) >= seqs.length), `resumed with ${resumed.join(',')}`);

    log('space_task_in_progress while a task runs, then cancel it after confirming');
    await submit('wait_for', { text: 'This text never appears.', timeout_ms: 50000 });
    await waitTaskStatus('wait_for', 'running');
    // The list's active task, kept current from the event stream.
    await page.waitForFunction((id) => document.querySelector(`#spaces tr[data-space="${id}"] td:nth-child(5)`)?.textContent === 'wait_for (running)', spaceId);
    await submit('snapshot', {});
    await page.waitForFunction(() => document.querySelector('#msg').textContent.includes('space_task_in_progress'));
    assert.match(await page.textContent('#msg'), /still running a task/);
    await shot('task-in-progress');
    await page.click('#cancel-button');
    await confirmDialog();
    await waitTaskStatus('wait_for', 'cancelled');
    await page.waitForSelector('#events li[data-kind="cancelled"]', { timeout: TASK_WAIT_MS });

    log('a stale ref fails with a clear message');
    await submit('click', { ref: 'e99999' });
    await waitTaskStatus('click', 'failed');
    assert.match(await taskRow('click').textContent(), /Take a new snapshot/);

    log('live view: the agent\'s navigate shows in the frames');
    await page.click('#watch-button');
    await page.waitForFunction(() => (document.querySelector('#live').getAttribute('src') || '').startsWith('data:image/jpeg;base64,'), null, { timeout: TASK_WAIT_MS });
    const firstFrame = await page.getAttribute('#live', 'src');
    const nav = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/tasks?wait=30`, TOKEN,
      { request_id: 'console-live-nav', capability: 'navigate', args: { url: PAGE_URL + 'next' } });
    assert.equal(nav.status, 200, JSON.stringify(nav.doc));
    await page.waitForFunction((b) => { const s = document.querySelector('#live').getAttribute('src'); return s && s !== b; }, firstFrame, { timeout: TASK_WAIT_MS });
    await shot('live-view');
    // The page header, as the agent's last task saw it.
    await page.waitForFunction(() => document.querySelector('#space-page').textContent.startsWith('Next, http'));
    assert.match(await page.textContent('#space-page'), /; 1 tab$/);
    const home = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/tasks?wait=30`, TOKEN,
      { request_id: 'console-live-home', capability: 'navigate', args: { url: PAGE_URL } });
    assert.equal(home.status, 200, JSON.stringify(home.doc));

    log('take over: a task is refused with space_held until the release');
    await page.click('#takeover-button');
    await page.waitForFunction(() => document.querySelector('#space-status').textContent.startsWith('held'));
    assert.match(await page.textContent('#space-hold'), /until/);
    assert.equal(await page.textContent('#takeover-button'), 'Renew hold');
    await page.waitForFunction((id) => document.querySelector(`#spaces tr[data-space="${id}"] td:nth-child(2)`)?.textContent.startsWith('held'), spaceId);
    await page.waitForSelector('#events li[data-kind="takeover_started"]', { timeout: TASK_WAIT_MS });
    await submit('snapshot', {});
    await page.waitForFunction(() => document.querySelector('#msg').textContent.includes('space_held'));
    assert.match(await page.textContent('#msg'), /An operator holds this Space/);
    await shot('space-held');

    log('the holder clicks the link in the live view, and the page follows');
    const inputPath = `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/live/input`;
    let linkY = -1;
    for (let y = 60; y < 240 && linkY < 0; y += 4) {
      const m = await call('POST', inputPath, TOKEN, { kind: 'move', x: 24, y });
      assert.equal(m.status, 200, JSON.stringify(m.doc));
      if (m.doc.data.role === 'link') linkY = y;
    }
    assert.ok(linkY >= 0, 'the pointer never met the link');
    const box = await page.locator('#live').boundingBox();
    const w = Number(await page.getAttribute('#live', 'data-width'));
    const h = Number(await page.getAttribute('#live', 'data-height'));
    // At that point of the picture, scrolled into view first.
    await page.locator('#live').click({ position: { x: (24 + 0.5) * box.width / w, y: (linkY + 0.5) * box.height / h } });
    // The click's own event, the one the picture sent.
    await page.waitForFunction(() => [...document.querySelectorAll('#events li[data-kind="operator_input"]')]
      .some((l) => l.textContent.includes('"kind":"click"') && l.textContent.includes('"role":"link"')), null, { timeout: TASK_WAIT_MS });
    await shot('operator-input');
    await page.click('#release-button');
    await confirmDialog();
    await page.waitForFunction(() => document.querySelector('#space-status').textContent.startsWith('idle'));
    await page.waitForSelector('#events li[data-kind="takeover_ended"]', { timeout: TASK_WAIT_MS });
    assert.equal(await page.textContent('#space-hold'), 'none');
    // The agent's next snapshot is the page the operator left.
    // (The click's navigation may still be loading: a bounded poll.)
    let handedBack;
    for (let i = 0; i < 20; i++) {
      handedBack = await call('POST', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}/tasks?wait=30`, TOKEN,
        { request_id: `console-after-hold-${i}`, capability: 'snapshot', args: {} });
      assert.equal(handedBack.status, 200, JSON.stringify(handedBack.doc));
      if (handedBack.doc.data.result.title === 'Next') break;
    }
    assert.equal(handedBack.doc.data.result.title, 'Next', JSON.stringify(handedBack.doc.data.result));

    log('host_not_allowed: the instance may reach 127.0.0.1 only');
    await submit('navigate', { url: PAGE_URL.replace('127.0.0.1', 'localhost') });
    await page.waitForFunction(() => document.querySelector('#msg').textContent.includes('host_not_allowed'));
    assert.match(await page.textContent('#msg'), /network policy does not allow that host/);

    log('runtime_crashed: the Space\'s browser killed under a running task');
    await submit('wait_for', { text: 'This text never appears.', timeout_ms: 50000 });
    await waitTaskStatus('wait_for', 'running');
    const actorPid = execFileSync('pgrep', ['-P', SPACED_PID, '-f', '--', `--space=${spaceId}`]).toString().trim().split('\n')[0];
    assert.ok(Number(actorPid) > 0, 'no actor for the Space');
    // The browser is its actor's child and leads a process group of
    // its own: kill -9 of the whole group, as a crash of Chromium.
    const browserPid = Number(execFileSync('pgrep', ['-P', actorPid, '-f', '--', '--user-data-dir=']).toString().trim().split('\n')[0]);
    assert.ok(browserPid > 0, 'no browser for the Space');
    process.kill(-browserPid, 'SIGKILL');
    await waitTaskStatus('wait_for', 'failed');
    assert.match(await taskRow('wait_for').textContent(), /browser crashed while running the task/);
    await shot('runtime-crashed');

    log('runtime_not_ready: the instance disabled by the admin');
    const sp = await call('GET', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}`, TOKEN);
    const inst = sp.doc.data.browser_instance_id;
    let r = await call('POST', `/api/v1/admin/browser-instances/${inst}/disable`, ADMIN);
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    await submit('snapshot', {});
    await page.waitForFunction(() => document.querySelector('#msg').textContent.includes('runtime_not_ready'));
    assert.match(await page.textContent('#msg'), /browser is not ready yet/);
    await shot('runtime-not-ready');
    r = await call('POST', `/api/v1/admin/browser-instances/${inst}/enable`, ADMIN);
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    await submit('snapshot', {});
    await waitTaskStatus('snapshot', 'completed');

    log('close after confirming; keeping it first does nothing');
    await page.click('#close-button');
    await page.waitForSelector('#confirm[open]');
    await page.click('#confirm-no');
    const kept = await call('GET', `/api/v1/workspaces/${WS}/browser-spaces/${spaceId}`, TOKEN);
    assert.equal(kept.doc.data.close_requested, false);
    await page.click('#close-button');
    await confirmDialog();
    await page.waitForSelector('#events li[data-kind="space_closed"]', { timeout: TASK_WAIT_MS });
    await page.waitForFunction(() => document.querySelector('#space-status').textContent === 'closed', null, { timeout: TASK_WAIT_MS });
    await page.waitForFunction((id) => document.querySelector(`#spaces tr[data-space="${id}"]`)?.textContent.includes('closed'), spaceId);
    assert.equal(await page.isDisabled('#submit-button'), true);
    await shot('space-closed');

    log('a token revoked while the page is open returns to sign-in');
    const rev = await call('DELETE', `/api/v1/admin/tokens/${TOKEN_ID}`, ADMIN);
    assert.equal(rev.status, 200, JSON.stringify(rev.doc));
    // No click: the console reads the Spaces again every few seconds
    // and, refused, returns to sign-in by itself (a click on Refresh
    // could race that and find the button already hidden).
    await page.waitForSelector('#signin:not([hidden])', { timeout: TASK_WAIT_MS });
    assert.match(await page.textContent('#signin-msg'), /wrong, expired or revoked/);
    assert.equal(await page.isVisible('#app'), false);
    assert.equal(await page.isVisible('#who'), false, 'the signed-out header still shows the operator');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('spaced.token')), null);
    await shot('token-revoked');

    log('choose a workspace: the admin signs in and switches between two');
    const second = await call('POST', '/api/v1/admin/workspaces', ADMIN, { name: 'console-second' });
    assert.equal(second.status, 201, JSON.stringify(second.doc));
    const ws2 = second.doc.data.workspace_id;
    await page.fill('#token', ADMIN);
    await page.click('#signin-button');
    await page.waitForSelector('#app:not([hidden])');
    const choices = await page.$$eval('#workspace option', (os) => os.map((o) => o.value));
    assert.ok(choices.includes(WS) && choices.includes(ws2), choices.join(','));
    await page.selectOption('#workspace', WS);
    await page.waitForSelector(`#spaces tr[data-space="${spaceId}"]`);
    await page.selectOption('#workspace', ws2);
    await page.waitForSelector('#spaces-empty:not([hidden])');
    assert.equal(await page.$$eval('#spaces tbody tr', (rs) => rs.length), 0);
    assert.equal(await page.isVisible('#create-none'), true, 'the second workspace has no instance bound');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('spaced.workspace')), ws2);
    await shot('workspace-chosen');
    await page.selectOption('#workspace', WS);
    await page.waitForSelector(`#spaces tr[data-space="${spaceId}"]`);

    log('the token never appeared in a URL');
    for (const u of urls) assert.ok(!u.includes(TOKEN) && !u.includes(ADMIN), `token in ${u}`);
    assert.deepEqual(consoleErrors.filter((t) => /Content Security Policy/i.test(t)), [], 'CSP violations');
    log('all cases passed');
  } catch (e) {
    console.error(`console: FAILED at "${step}": ${e.stack || e}`);
    if (consoleErrors.length) console.error('console: page errors:\n  ' + consoleErrors.join('\n  '));
    try { await shot('failure'); } catch (_) { /* the page may be gone */ }
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
