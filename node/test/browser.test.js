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

test('the browser: type, see it, resize, reload and see the history again, and multibyte characters cut at every offset', async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install chromium`);
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
    // Multibyte characters cut at every offset: the two parts of each line
    // are written 2 ms apart (the relay holds the start of a character for
    // its rest) and 50 ms apart (it sends the start alone; the page decodes
    // across frames). No U+FFFD, every line whole.
    const chars = Buffer.from('\u00e9\u4e2d\ud83d\ude00\u0416', 'utf8');
    const script = path.join(require('node:os').tmpdir(), `termio-utf8-${process.pid}.sh`);
    const octal = (b) => [...b].map((x) => `\\${x.toString(8).padStart(3, '0')}`).join('');
    const lines = [];
    for (const pause of ['0.002', '0.05']) {
      for (let cut = 1; cut < chars.length; cut++) {
        lines.push(`printf 'cut ${cut}: ${octal(chars.subarray(0, cut))}'; sleep ${pause}; printf '${octal(chars.subarray(cut))} end\\n'`);
      }
    }
    fs.writeFileSync(script, lines.join('\n') + '\n');
    try {
      await page.click('#term');
      await page.keyboard.type(`sh ${script}; echo utf8-done\n`);
      await until(page, '\nutf8-done');
      const shown = await screen(page);
      assert.ok(!shown.includes('\ufffd'), `a U+FFFD on the screen:\n${shown}`);
      const want = `${chars.toString('utf8')} end`;
      let whole = 0;
      for (const line of shown.split('\n')) if (/^cut \d+: /.test(line)) { assert.strictEqual(line.replace(/^cut \d+: /, ''), want); whole++; }
      assert.strictEqual(whole, 2 * (chars.length - 1));
    } finally {
      fs.unlinkSync(script);
    }
  } finally {
    await browser.close();
    serve.kill('SIGTERM');
  }
});
