'use strict';
// The browser client in real Chromium (Debian's package, driven with
// playwright-core), against `termio serve` with a real shell.
const test = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** The terminal's text, all lines, as the page's xterm.js holds it. */
function screen(page) {
  return page.evaluate(() => {
    const b = window.termio.term.buffer.active;
    const lines = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
    return lines.join('\n');
  });
}

function until(page, text) {
  return page.waitForFunction((t) => {
    const b = window.termio && window.termio.term.buffer.active;
    if (!b) return false;
    let s = '';
    for (let i = 0; i < b.length; i++) s += b.getLine(i).translateToString(true) + '\n';
    return s.includes(t);
  }, text, { timeout: 10000 });
}

test('the browser: type, see it, resize, reload and see the history again', async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt install chromium`);
  const serve = spawn(process.execPath, [path.join(__dirname, '..', 'bin', 'termio.js'), 'serve', '--port', '0', '--shell', '/bin/sh'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PS1: '$ ' },
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const url = await new Promise((resolve) => {
      serve.stdout.on('data', (d) => {
        const m = /(http:\/\/\S+)/.exec(d.toString());
        if (m) resolve(m[1]);
      });
    });
    const page = await browser.newPage({ viewport: { width: 900, height: 500 } });
    await page.goto(url);
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('session'));
    // The token left the address bar once read.
    assert.ok(!page.url().includes('token'), page.url());
    await page.click('#term');
    await page.keyboard.type('echo hel""lo\n');
    await until(page, '\nhello');
    // A smaller window: the terminal and the PTY get the new size.
    await page.setViewportSize({ width: 500, height: 300 });
    await page.waitForFunction(() => window.termio.term.cols < 60);
    const size = await page.evaluate(() => `${window.termio.term.rows} ${window.termio.term.cols}`);
    await page.keyboard.type('stty size\n');
    await until(page, `\n${size}`);
    // A reload resumes the session and replays what it kept.
    await page.reload();
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('session'));
    await until(page, '\nhello');
    const text = await screen(page);
    assert.ok(text.includes('echo hel""lo'), text);
    assert.ok(!text.includes('\ufffd'), 'a U+FFFD on the screen');
  } finally {
    await browser.close();
    serve.kill('SIGTERM');
  }
});
