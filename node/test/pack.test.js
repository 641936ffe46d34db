'use strict';
// `npm pack` makes a tarball that installs into a clean project and works
// there (its addon built before packing, carried in the tarball).
const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

test('npm pack: the tarball installs into a clean project, and its addon runs a PTY', { timeout: 600000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'termio-pack-'));
  try {
    const out = execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], {
      cwd: path.join(__dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tarball = path.join(dir, out.trim().split('\n').pop());
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), '{"name":"p","version":"1.0.0","private":true}');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', tarball], { cwd: project, stdio: 'inherit' });
    const script = "const t = require('termio'); const s = t.spawn('/bin/echo', ['from the tarball']);"
      + " let o = ''; s.onData((b) => { o += b; }); s.onExit((c) => { process.stdout.write(o.trim() + ' ' + c); });";
    const got = execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' });
    assert.strictEqual(got, 'from the tarball 0');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
