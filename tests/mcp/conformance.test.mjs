// conformance.test.mjs: the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package-lock.json; it
// needs Node 22, the pinned package node) against spaced's MCP endpoint.
// test_mcp_sdk.c starts the service and runs this with, in its
// environment:
//   MCP_URL    the workspace's MCP URL
//   MCP_TOKEN  a bearer token of the workspace's manager
//   MCP_DIR    a directory of the test's own, for the suite's files
// The suite's clients send no Authorization header, so they go through a
// proxy on 127.0.0.1 that adds the token.  It forwards only one path, a
// random one known to this process alone (the suite runs in it, so the
// path is on no command line): the proxy is no way into spaced for
// anyone else.  It keeps the suite's Host and Origin when they name
// another host (the DNS-rebinding scenario's evil.example.com reaches
// spaced as sent), and names spaced instead of itself when they are
// local, as a client of spaced's own address would.
//
// Every server scenario runs; conformance-baseline.txt lists the ones
// expected to fail, one a line with its reason.  The suite's own
// baseline check exits 1 when a scenario not listed fails, or a listed
// one passes.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function fail(why) {
  console.error(`conformance.test: FAIL: ${why}`);
  process.exit(1);
}

const env = (name) => process.env[name] || fail(`${name} is not set`);
const target = new URL(env('MCP_URL'));
const token = env('MCP_TOKEN');
const dir = env('MCP_DIR');
const secret = `/${randomBytes(24).toString('hex')}/mcp`;
const LOCAL = new Set(['localhost', '127.0.0.1', '[::1]']);

// The baseline: "scenario reason..." lines; # begins a comment.
function baseline() {
  const text = readFileSync(join(here, 'conformance-baseline.txt'), 'utf8');
  const names = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [name, ...why] = line.split(/\s+/);
    if (why.length === 0) fail(`the baseline's ${name} gives no reason`);
    names.push(name);
  }
  return names;
}

// A local Host (or Origin's host) is the proxy's own name: spaced's.
function local(host) {
  try {
    return LOCAL.has(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

function forward(req, res) {
  if (new URL(req.url, 'http://x').pathname !== secret) {
    res.writeHead(404).end();
    return;
  }
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  if (local(headers.host)) headers.host = target.host;
  if (headers.origin && local(headers.origin.replace(/^[a-z]+:\/\//, '')))
    headers.origin = target.origin;
  const up = http.request(target, { method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (err) => {
    res.writeHead(502).end(String(err));
  });
  req.pipe(up);
}

const proxy = http.createServer(forward);
await new Promise((ok) => proxy.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${proxy.address().port}${secret}`;

const expected = join(dir, 'conformance-expected.yaml');
const names = baseline();
writeFileSync(expected, `server:${names.length ? '' : ' []'}\n${names.map((n) => `  - ${n}\n`).join('')}`);

// The suite's CLI, in this process: it exits with its verdict.
process.argv = [process.argv[0], 'conformance', 'server', '--url', url, '--suite', 'all',
  '--expected-failures', expected, '-o', join(dir, 'conformance-results')];
await import('@modelcontextprotocol/conformance/dist/index.js');
