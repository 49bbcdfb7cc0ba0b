// aria_snapshot.mjs: Playwright's AI snapshot of pages, beside spaced's
// (snapshot_bench playwright).  For each url it loads the page once in
// Debian's Chromium through playwright-core (the console tests' copy),
// then takes runs snapshots with page.ariaSnapshot({mode: "ai"}), the
// outline Playwright MCP gives an agent (refs, iframes included), and
// prints one JSON line per page: the url, the bytes of the outline (UTF-8),
// its refs (Playwright gives one to every element it prints: headings,
// paragraphs and wrappers too), the refs of what a person can act on
// (a widget role, or a pointer cursor), and each run's time in ms.
// Measured, never asserted.
//
//   node aria_snapshot.mjs RUNS URL...
import { createRequire } from 'node:module';

const require = createRequire(new URL('../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');

// ARIA's widget roles, and Chromium's for fields.
const ACTING = new Set(['button', 'checkbox', 'combobox', 'link', 'listbox',
  'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'radio',
  'scrollbar', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab',
  'textbox', 'treeitem']);

function actingRefs(text) {
  let n = 0;
  for (const line of text.split('\n')) {
    const m = /^\s*- ([A-Za-z]+)\b.*\[ref=/.exec(line);
    if (m && (ACTING.has(m[1]) || line.includes('[cursor=pointer]')))
      n++;
  }
  return n;
}

const runs = Number.parseInt(process.argv[2], 10);
const urls = process.argv.slice(3);
if (!(runs > 0) || urls.length === 0) {
  process.stderr.write('usage: node aria_snapshot.mjs RUNS URL...\n');
  process.exit(2);
}

const args = process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  for (const url of urls) {
    await page.goto(url, { waitUntil: 'load' });
    const ms = [];
    let text = '';
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      text = await page.ariaSnapshot({ mode: 'ai' });
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const refs = (text.match(/\[ref=[^\]]+\]/g) || []).length;
    process.stdout.write(JSON.stringify({
      url, bytes: Buffer.byteLength(text, 'utf8'), refs,
      acting_refs: actingRefs(text), ms,
    }) + '\n');
  }
} finally {
  await browser.close();
}
