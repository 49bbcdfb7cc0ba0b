// lifecycle.mjs: one agent's browser lifecycle through an MCP server,
// on spaced's workspace MCP URL and on Playwright MCP, with one client,
// the official SDK's (@modelcontextprotocol/sdk, pinned in
// package-lock.json with @playwright/mcp).  mcp_bench.c starts spaced,
// a managed Chromium bound to the workspace and the page server, then
// this, with in its environment:
//   MCP_URL    the workspace's MCP URL (the caller's own Space)
//   MCP_TOKEN  a bearer token of the workspace's operator
//   MCP_PAGE   the page to drive: a form with a text field "Query" and
//              a button
//   MCP_DIR    a directory of the bench's own: Playwright MCP's working
//              directory (its output goes there)
// It reads one word a line on stdin, "spaced" or "playwright", runs one
// lifecycle of that server, and answers one line on stdout:
//   <server> ok <start> <total> <connect> <navigate> <snapshot> <click>
//     <type> <close> <space>
// start the run's first moment on CLOCK_MONOTONIC (as process.hrtime
// reads it), the rest its lengths, all in ns; space the id of the Space
// browser_space_close named ("-" for Playwright); or
//   <server> fail <why>
// on one line.  EOF ends it.  The token is never printed.
//
// A lifecycle: connect (Playwright MCP: its process spawned, on stdio,
// its default transport; spaced: over Streamable HTTP) and initialize;
// browser_navigate to MCP_PAGE; browser_snapshot; browser_click on the
// text field's ref from that snapshot; browser_type into the field's
// ref as the click's answer shows it (its answer must hold the text);
// browser_space_close (spaced) or browser_close (Playwright).  Each
// server's own defaults: spaced's actions answer with the outline after
// them, Playwright MCP's with its snapshot after its settle wait, and
// its type fills the field where spaced's types keys.  Timed from
// before the connect to the close's answer; what follows (the session
// ended, the process gone) is not.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const cli = new URL('./node_modules/@playwright/mcp/cli.js', import.meta.url).pathname;
const text = 'hello from the bench';

// The text of a tool result that must have succeeded.
function textOf(name, res) {
  const t = (res.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
  if (res.isError === true) throw new Error(`${name} answered an error: ${t.slice(0, 500)}`);
  return t;
}

// The ref on the outline line that names what, in either server's form
// ("textbox \"Query\" [ref=e3]").
function refOf(outline, what, name) {
  const line = outline.split('\n').find((l) => l.includes(what) && /\[ref=/.test(l));
  const m = line === undefined ? null : /\[ref=([^\]]+)\]/.exec(line);
  if (m === null) throw new Error(`${name}: no ref on ${what} in:\n${outline.slice(0, 2000)}`);
  return m[1];
}

function spacedTransport() {
  return new StreamableHTTPClientTransport(new URL(env('MCP_URL')), {
    requestInit: { headers: { Authorization: `Bearer ${env('MCP_TOKEN')}` } },
  });
}

function playwrightTransport() {
  const args = [cli, '--executable-path', '/usr/bin/chromium', '--headless', '--isolated',
    '--output-dir', env('MCP_DIR')];
  // Chromium's sandbox needs a user namespace that root is not given here.
  if (process.getuid() === 0) args.push('--no-sandbox');
  return new StdioClientTransport({
    command: process.execPath, args, cwd: env('MCP_DIR'), env: process.env, stderr: 'ignore',
  });
}

// One lifecycle on server: its figures, as the answer line's fields.
async function lifecycle(server) {
  const spaced = server === 'spaced';
  const c = new Client({ name: 'spaced-mcp-bench', version: '1.0.0' });
  const field = 'textbox "Query"';
  const lap = [];
  const t0 = process.hrtime.bigint();
  let t = t0;
  const mark = () => {
    const now = process.hrtime.bigint();
    lap.push(now - t);
    t = now;
  };
  const call = async (name, args) => textOf(name, await c.callTool({ name, arguments: args }));
  const transport = spaced ? spacedTransport() : playwrightTransport();

  try {
    await c.connect(transport);
    mark();
    await call('browser_navigate', { url: env('MCP_PAGE') });
    mark();
    const outline = await call('browser_snapshot', {});
    const ref = refOf(outline, field, 'browser_snapshot');
    mark();
    const clicked = await call('browser_click', spaced ? { ref } : { element: 'Query text field', target: ref });
    // The field as the page after the click shows it, else as before.
    const again = clicked.includes(field) ? refOf(clicked, field, 'browser_click') : ref;
    mark();
    const typed = await call('browser_type', spaced ? { ref: again, text }
      : { element: 'Query text field', target: again, text });
    mark();
    const closed = await call(spaced ? 'browser_space_close' : 'browser_close', {});
    mark();
    const total = process.hrtime.bigint() - t0;
    if (!typed.includes(text)) throw new Error(`browser_type: the text is not in:\n${typed.slice(0, 2000)}`);
    let space = '-';
    if (spaced) {
      const m = /The Space (\S+) is (closed|closing)/.exec(closed);
      if (m === null) throw new Error(`browser_space_close did not close: ${closed}`);
      space = m[1];
      await transport.terminateSession();
    }
    return ['ok', t0, total, ...lap, space].join(' ');
  } finally {
    await c.close();
  }
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  const server = line.trim();
  let answer;
  try {
    if (server !== 'spaced' && server !== 'playwright') throw new Error(`no server "${server}"`);
    answer = await lifecycle(server);
  } catch (err) {
    answer = `fail ${String(err?.stack ?? err).replace(/\s+/g, ' ')}`;
  }
  process.stdout.write(`${server} ${answer}\n`);
}
