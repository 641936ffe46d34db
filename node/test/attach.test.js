'use strict';
// A real consumer: a small app written against node-pty (xterm.js's
// attach addon over `ws`, as xterm.js's own demo), run unchanged with
// `node-pty` resolving to termio's entry point, in real Chromium.
const test = require('node:test');
const assert = require('node:assert');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

test('an app written for node-pty runs on termio/node-pty, typed into in Chromium', async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: apt-get install chromium`);
  // `require('node-pty')` resolves to termio's entry point: the app is
  // not changed.
  const alias = fs.mkdtempSync(path.join(os.tmpdir(), 'termio-alias-'));
  fs.mkdirSync(path.join(alias, 'node-pty'));
  fs.writeFileSync(path.join(alias, 'node-pty', 'index.js'),
    `module.exports = require(${JSON.stringify(path.join(__dirname, '..', 'node-pty.js'))});\n`);
  const app = spawn(process.execPath, [path.join(__dirname, '..', 'test-apps', 'attach-app.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_PATH: alias, SHELL_UNDER_TEST: '/bin/sh', PS1: '$ ' },
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    let out = '';
    const url = await new Promise((resolve) => {
      app.stdout.on('data', (d) => {
        out += d.toString();
        const m = /(http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
    });
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForFunction(() => window.ready === true);
    await page.click('#term');
    await page.keyboard.type('echo hel""lo; exit 4\n');
    await page.waitForFunction(() => {
      const b = window.term.buffer.active;
      let s = '';
      for (let i = 0; i < b.length; i++) s += b.getLine(i).translateToString(true) + '\n';
      return s.includes('\nhello\n');
    }, null, { timeout: 10000 });
    // The shell's exit reaches the app through onExit, after its output.
    await new Promise((resolve) => {
      const check = () => (out.includes('exit 4') ? resolve() : app.stdout.once('data', () => setImmediate(check)));
      check();
    });
  } finally {
    await browser.close();
    app.kill();
    fs.rmSync(alias, { recursive: true, force: true });
  }
});
