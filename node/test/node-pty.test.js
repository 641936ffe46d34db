'use strict';
// termio's node-pty API (`termio/node-pty`) from Node, with real PTYs:
// what node-pty's users rely on, and node-pty's errors for bad input.
const test = require('node:test');
const assert = require('node:assert');
const os = require('node:os');
const pty = require('../node-pty');

function exited(term) {
  return new Promise((resolve) => term.onExit(resolve));
}

function output(term) {
  let text = '';
  term.onData((d) => { text += d; });
  return () => text;
}

test('node-pty: strings in UTF-8 by default, every byte before onExit', async () => {
  const term = pty.spawn('/bin/sh', ['-c', "printf '\\303\\246'; head -c 100000 /dev/zero | tr '\\0' x; exit 3"]);
  const text = output(term);
  const e = await exited(term);
  assert.deepStrictEqual(e, { exitCode: 3, signal: 0 });
  assert.ok(text().startsWith('\u00e6'));
  assert.strictEqual(text().length, 1 + 100000);
});

test('node-pty: Buffers with encoding null, other encodings decoded', async () => {
  const raw = pty.spawn('/bin/sh', ['-c', "printf '\\303\\246'"], { encoding: null });
  const chunks = [];
  raw.on('data', (d) => chunks.push(d));
  await exited(raw);
  assert.ok(chunks.every((c) => Buffer.isBuffer(c)));
  assert.deepStrictEqual([...Buffer.concat(chunks)], [0xc3, 0xa6]);

  const b64 = pty.spawn('/bin/sh', ['-c', 'printf "test \\303\\246!"'], { encoding: 'base64' });
  const text = output(b64);
  await exited(b64);
  assert.strictEqual(Buffer.from(text(), 'base64').toString(), 'test \u00e6!');
});

test('node-pty: name, cwd, env (the whole environment), size, pid and process', async () => {
  const term = pty.spawn('/bin/sh', ['-c', 'echo "$TERM|$PWD|$ONLY|${HOME-unset}"; stty size; echo $$; sleep 0.3'], {
    name: 'xterm-256color', cwd: os.tmpdir(), env: { ONLY: 'this', PATH: process.env.PATH }, cols: 100, rows: 30,
  });
  const text = output(term);
  assert.strictEqual(term.cols, 100);
  assert.strictEqual(term.rows, 30);
  const e = exited(term);
  // The foreground process: the shell, then its `sleep`.
  assert.ok(['/bin/sh', 'sleep', 'stty'].includes(term.process), term.process);
  await e;
  const lines = text().split('\r\n');
  assert.strictEqual(lines[0], `xterm-256color|${os.tmpdir()}|this|unset`);
  assert.strictEqual(lines[1], '30 100');
  assert.strictEqual(Number(lines[2]), term.pid);
});

test('node-pty: write, resize with pixels, on("exit") with the signal', async () => {
  const term = pty.spawn('/bin/sh', ['-c', 'read x; echo "got $x"; stty size; read y']);
  const text = output(term);
  const ended = new Promise((resolve) => term.on('exit', (code, signal) => resolve([code, signal])));
  term.resize(132, 43, { width: 1320, height: 860 });
  assert.strictEqual(term.cols, 132);
  term.write('hello\r');
  await new Promise((resolve) => { const t = setInterval(() => { if (text().includes('43 132')) { clearInterval(t); resolve(); } }, 10); });
  assert.ok(text().includes('got hello'));
  term.kill('SIGTERM');
  assert.deepStrictEqual(await ended, [0, os.constants.signals.SIGTERM]);
  assert.throws(() => term.write('late'), /has exited/);
});

test('node-pty: pause holds the output back, resume gives all of it', async () => {
  const term = pty.spawn('/bin/sh', ['-c', "head -c 300000 /dev/zero | tr '\\0' y"], { handleFlowControl: true });
  let n = 0;
  term.onData((d) => { n += d.length; });
  term.write('\x13');
  const seen = n;
  await new Promise((resolve) => setTimeout(resolve, 200));
  // Paused: at most what one read had in hand.
  assert.ok(n - seen <= 256 * 1024, `${n - seen} bytes came while paused`);
  term.write('\x11');
  await exited(term);
  assert.strictEqual(n, 300000);
});

test("node-pty: bad input gets node-pty's errors, not a crash", () => {
  assert.throws(() => pty.spawn('/bin/sh', 'a string'), /args as a string is not supported on unix/);
  assert.throws(() => pty.spawn('/bin/sh', [], { cols: '80' }), { name: 'TypeError', message: 'cols must be a number (not a string)' });
  assert.throws(() => pty.spawn('/bin/sh', [], { env: 'x' }), { name: 'TypeError', message: 'env must be a object (not a string)' });
  assert.throws(() => pty.spawn('/bin/sh', [], { encoding: 'nope' }), /encoding must be a Buffer encoding/);
  assert.throws(() => pty.spawn('/bin/sh', [], { cols: 1e6 }), RangeError);
  const term = pty.spawn('/bin/sh', ['-c', 'sleep 5']);
  assert.throws(() => term.resize(0, 24), RangeError);
  assert.throws(() => term.resize(80, 100000), RangeError);
  assert.throws(() => term.kill('SIGNOPE'), { name: 'TypeError', message: 'unknown signal: SIGNOPE' });
  assert.throws(() => term.write(42), TypeError);
  term.kill('SIGKILL');
  return exited(term);
});

test('node-pty: a program that cannot start exits with code 1 and says why, as in node-pty', async () => {
  for (const [file, opts, words] of [
    ['/bin/bogus.exe', {}, 'execvp(3) failed.: No such file or directory'],
    ['/bin/echo', { cwd: '/nowhere' }, 'chdir(2) failed.: No such file or directory'],
  ]) {
    const term = pty.spawn(file, [], opts);
    const text = output(term);
    assert.deepStrictEqual(await exited(term), { exitCode: 1, signal: 0 });
    assert.strictEqual(text(), `${words}\r\n`);
  }
});

test('node-pty: output before the first data listener is kept for it', async () => {
  const term = pty.spawn('/bin/sh', ['-c', 'echo early; sleep 0.4; echo late']);
  const ended = exited(term);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const text = output(term);
  await ended;
  assert.strictEqual(text(), 'early\r\nlate\r\n');
});
