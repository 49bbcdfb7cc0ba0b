// sdk.test.mjs: spaced's MCP endpoint driven by the official TypeScript
// SDK (@modelcontextprotocol/sdk, pinned in package-lock.json), as an
// agent's MCP client would: test_mcp_sdk.c starts the service with a
// managed Chromium bound to the workspace and the page server, then runs
// this with, in its environment:
//   MCP_URL    the workspace's MCP URL (the caller's own Space)
//   MCP_TOKEN  a bearer token of the workspace's manager
//   MCP_PAGES  the page server's base URL (http://127.0.0.1:N)
// Exits 0 when every check holds, else 1 naming the first that failed.
// The token is never printed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = (name) => {
  const v = process.env[name];
  if (!v) fail(`${name} is not set`);
  return v;
};

function fail(why) {
  console.error(`sdk.test: FAIL: ${why}`);
  process.exit(1);
}

function check(cond, why, detail) {
  if (!cond) fail(detail === undefined ? why : `${why}\n--- got:\n${detail}`);
}

const url = new URL(env('MCP_URL'));
const token = env('MCP_TOKEN');
const pages = env('MCP_PAGES');

function transport(headers) {
  return new StreamableHTTPClientTransport(url, { requestInit: { headers } });
}

async function connect() {
  const t = transport({ Authorization: `Bearer ${token}` });
  const c = new Client({ name: 'spaced-sdk-test', version: '1.0.0' });
  await c.connect(t);
  return { c, t };
}

// The text of a tool result that must have succeeded.
function textOf(name, res) {
  const text = (res.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
  check(res.isError !== true, `${name} answered an error`, text);
  check(text.length > 0, `${name} answered no text`, JSON.stringify(res));
  return text;
}

async function tool(c, name, args) {
  return textOf(name, await c.callTool({ name, arguments: args }));
}

// The ref on the outline line that names what ("textbox \"User\"").
function refOf(outline, what) {
  const line = outline.split('\n').find((l) => l.includes(what));
  check(line !== undefined, `no ${what} in the outline`, outline);
  const m = /\[ref=([^\]]+)\]/.exec(line);
  check(m !== null, `no ref on ${what}`, line);
  return m[1];
}

// A PNG's width and height, from its signature and IHDR chunk.
function pngSize(b64) {
  const png = Buffer.from(b64, 'base64');
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  check(png.length > 24, `the screenshot is ${png.length} bytes`);
  check(png.subarray(0, 8).equals(sig), 'the screenshot has no PNG signature');
  check(png.toString('latin1', 12, 16) === 'IHDR', 'the PNG does not begin with IHDR');
  return { w: png.readUInt32BE(16), h: png.readUInt32BE(20) };
}

async function main() {
  // Without the token the SDK gets no session: the 401 is its error.
  {
    const c = new Client({ name: 'spaced-sdk-test', version: '1.0.0' });
    let refused = null;
    try {
      await c.connect(transport({}));
    } catch (err) {
      refused = err;
    }
    check(refused instanceof StreamableHTTPError, 'no token: not an HTTP error', String(refused));
    check(refused.code === 401 && /unauthenticated/.test(refused.message), 'no token: not a 401 unauthenticated',
      `${refused.code} ${refused}`);
    await c.close();
  }

  const first = await connect();
  const sid = first.t.sessionId;
  check(typeof sid === 'string' && /^[0-9a-f]{48}$/.test(sid), 'no session id of 24 bytes in hex', String(sid));
  check(first.c.getServerCapabilities()?.tools !== undefined, 'the server offers no tools capability',
    JSON.stringify(first.c.getServerCapabilities()));
  check(typeof first.c.getServerVersion()?.name === 'string', 'no serverInfo', JSON.stringify(first.c.getServerVersion()));
  await first.c.ping();

  const { tools } = await first.c.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ['browser_navigate', 'browser_snapshot', 'browser_click', 'browser_type',
    'browser_screenshot', 'browser_space_close'])
    check(names.includes(want), `tools/list has no ${want}`, names.join(' '));
  for (const t of tools)
    check(t.inputSchema?.type === 'object', `${t.name} has no object inputSchema`, JSON.stringify(t));
  const nav = tools.find((t) => t.name === 'browser_navigate');
  check(nav.inputSchema.properties?.url !== undefined, 'browser_navigate takes no url', JSON.stringify(nav));

  // The first call opens the caller's Space; its answer is the page.
  let text = await tool(first.c, 'browser_navigate', { url: `${pages}/login` });
  check(text.includes('title: Sign in'), 'navigate: not the sign-in page', text);
  text = await tool(first.c, 'browser_snapshot', {});
  check(text.includes(`url: ${pages}/login`), 'snapshot: not at /login', text);
  const user = refOf(text, 'textbox "User"');
  const pw = refOf(text, 'textbox "Password"');
  const button = refOf(text, 'button "Sign in"');

  text = await tool(first.c, 'browser_type', { ref: user, text: 'alice' });
  check(text.includes('textbox "User"'), 'type: the outline after it has no User box', text);
  await tool(first.c, 'browser_type', { ref: pw, text: 'pw' });
  text = await tool(first.c, 'browser_click', { ref: button });
  check(text.includes('heading "Second page"'), 'click: not on the second page', text);
  check(text.includes('user=alice'), 'click: the form did not send what was typed', text);

  // A ref that names nothing is a tool error, not a protocol one.
  const bad = await first.c.callTool({ name: 'browser_click', arguments: { ref: 'e999999' } });
  check(bad.isError === true, 'a click on an unknown ref succeeded', JSON.stringify(bad));

  const shot = await first.c.callTool({ name: 'browser_screenshot', arguments: {} });
  textOf('browser_screenshot', shot);
  const img = (shot.content ?? []).find((b) => b.type === 'image');
  check(img !== undefined, 'the screenshot has no image block', JSON.stringify(shot).slice(0, 2000));
  check(img.mimeType === 'image/png', `the image is ${img.mimeType}`);
  const { w, h } = pngSize(img.data);
  check(w > 0 && h > 0, `the PNG is ${w}x${h}`);

  // The session ends (DELETE); the Space and its page stay.
  await first.t.terminateSession();
  check(first.t.sessionId === undefined, 'the transport kept the ended session');
  await first.c.close();
  {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`, 'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sid,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    check(res.status === 404, `the ended session answered ${res.status}, not 404`);
  }

  const second = await connect();
  check(second.t.sessionId !== sid, 'the new client got the ended session id');
  text = await tool(second.c, 'browser_snapshot', {});
  check(text.includes('user=alice'), 'a new session: not the page the last one left', text);
  check(text.includes('heading "Second page"'), 'a new session: no second page', text);

  text = await tool(second.c, 'browser_space_close', {});
  check(/The Space \S+ is (closed|closing)/.test(text), 'browser_space_close did not close', text);
  text = await tool(second.c, 'browser_space_close', {});
  check(text.includes('no open Space'), 'a Space is still open after browser_space_close', text);
  await second.t.terminateSession();
  await second.c.close();
  console.log(`sdk.test: ok (${tools.length} tools, a ${w}x${h} screenshot)`);
}

main().catch((err) => fail(err?.stack ?? String(err)));
