'use strict';
// The package's API from Node, with real PTYs and real sockets.
const test = require('node:test');
const assert = require('node:assert');
const WebSocket = require('ws');
const { createTerminalServer, spawn } = require('..');

function exited(session) {
  return new Promise((resolve) => session.onExit(resolve));
}

test('spawn: output in order, then the exit code after all of it', async () => {
  const s = spawn('/bin/sh', ['-c', "head -c 65536 /dev/zero | tr '\\0' x; exit 5"]);
  let n = 0;
  s.onData((b) => { n += b.length; });
  assert.strictEqual(await exited(s), 5);
  assert.strictEqual(n, 65536);
});

test('spawn: input, resize and kill', async () => {
  const s = spawn('/bin/sh', ['-c', 'read x; stty size; read y'], { cols: 80, rows: 24 });
  let out = '';
  const sized = new Promise((resolve) => s.onData((b) => {
    out += b.toString('utf8');
    if (out.includes('43 132')) resolve();
  }));
  const done = exited(s);
  s.resize(132, 43);
  await s.write('go\r');
  await sized;
  s.kill('SIGTERM');
  assert.strictEqual(await done, -15);
});

function open(server, origin) {
  return new WebSocket(server.url, { origin, headers: { host: `127.0.0.1:${server.port}` } });
}

test('server: a page from an allowed origin runs a session; its exit is an event', async () => {
  const server = await createTerminalServer({
    shell: '/bin/sh', args: ['-c', 'read x; echo "got $x"; exit 7'], allowedOrigins: ['http://app.test'],
  });
  try {
    assert.match(server.token, /^[0-9a-f]{32}$/);
    assert.strictEqual(server.host, '127.0.0.1');
    const exit = new Promise((resolve) => server.once('exit', resolve));
    const ws = open(server, 'http://app.test');
    // Listened for from the start: the socket may close before the exit
    // event's handler runs (a close listener added after it would wait for
    // ever).
    const closed = new Promise((r) => ws.on('close', r));
    const messages = [];
    let out = '';
    let greeted;
    const hello = new Promise((resolve) => { greeted = resolve; });
    ws.on('message', (data, binary) => {
      if (binary) {
        out += data.toString('utf8');
      } else {
        messages.push(JSON.parse(data.toString()));
        greeted();
      }
    });
    await new Promise((r) => ws.on('open', r));
    ws.send(JSON.stringify({ type: 'hello', token: server.token, cols: 80, rows: 24 }));
    await hello;
    assert.strictEqual(messages[0].type, 'hello');
    assert.deepStrictEqual(server.sessions().map((s) => s.id), [messages[0].session]);
    ws.send(Buffer.from('hi\r'));
    const e = await exit;
    assert.deepStrictEqual(e, { session: messages[0].session, code: 7 });
    await closed;
    assert.match(out, /got hi/);
    assert.deepStrictEqual(messages[messages.length - 1], { type: 'exit', code: 7 });
  } finally {
    server.close();
  }
});

test('server: a page from another origin is refused, and nothing is spawned', async () => {
  const server = await createTerminalServer({ shell: '/bin/cat', allowedOrigins: ['http://app.test'] });
  try {
    const ws = open(server, 'http://evil.test');
    const status = await new Promise((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode)));
    assert.strictEqual(status, 403);
    assert.deepStrictEqual(server.sessions(), []);
  } finally {
    server.close();
  }
});

test('server: plan-mode markers in the output come as plan events, with the plan text', async () => {
  const script = "printf '\\033[2m\\342\\217\\270 plan \\033[1mmode\\033[0m on\\r\\n';"
    + " printf \"Here is Claude's plan:\\r\\n1. Add a retry policy\\r\\nWould you like to proceed?\\r\\n\"; read x";
  const server = await createTerminalServer({ shell: '/bin/sh', args: ['-c', script], allowedOrigins: ['http://app.test'] });
  try {
    const events = [];
    const four = new Promise((resolve) => server.on('plan', (e) => { events.push(e); if (events.length === 4) resolve(); }));
    const ws = open(server, 'http://app.test');
    await new Promise((r) => ws.on('open', r));
    ws.send(JSON.stringify({ type: 'hello', token: server.token }));
    await four;
    const session = server.sessions()[0].id;
    assert.deepStrictEqual(events, [
      { session, agent: 'claude-code', marker: 'entered' },
      { session, agent: 'claude-code', marker: 'planStart' },
      { session, agent: 'claude-code', marker: 'plan', text: '1. Add a retry policy' },
      { session, agent: 'claude-code', marker: 'planEnd' },
    ]);
    ws.close();
  } finally {
    server.close();
  }
});

test('attach: an http.Server hands its upgrades on a path to termio, with the same checks', async () => {
  const http = require('node:http');
  const server = await createTerminalServer({ shell: '/bin/cat', allowedOrigins: ['http://app.test'] });
  const web = http.createServer((req, res) => res.end('page'));
  server.attach(web, { path: '/term' });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  const port = web.address().port;
  try {
    // A bad origin is refused by the relay, on the web server's port.
    const bad = new WebSocket(`ws://127.0.0.1:${port}/term`, { origin: 'http://evil.test' });
    const status = await new Promise((resolve) => bad.on('unexpected-response', (_req, res) => resolve(res.statusCode)));
    assert.strictEqual(status, 403);
    // A good one gets a session: input echoed by cat.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/term`, { origin: 'http://app.test' });
    await new Promise((r) => ws.on('open', r));
    let out = '';
    const echoed = new Promise((resolve) => ws.on('message', (data, binary) => {
      if (binary) { out += data.toString(); if (out.includes('ping')) resolve(); }
    }));
    ws.send(JSON.stringify({ type: 'hello', token: server.token }));
    ws.send(Buffer.from('ping'));
    await echoed;
    assert.strictEqual(server.sessions().length, 1);
    ws.close();
  } finally {
    server.close();
    web.close();
  }
});

test('server: sessions are bounded (4429 past maxSessions), and a short token is refused', async () => {
  await assert.rejects(createTerminalServer({ token: 'x'.repeat(31) }), /at least 32 characters/);
  const server = await createTerminalServer({
    shell: '/bin/sh', args: ['-c', 'read x'], allowedOrigins: ['http://app.test'], maxSessions: 1,
  });
  try {
    const session = async () => {
      const ws = open(server, 'http://app.test');
      await new Promise((r) => ws.on('open', r));
      const reply = new Promise((resolve) => {
        ws.on('message', (data, binary) => { if (!binary) resolve(JSON.parse(data.toString())); });
        ws.on('close', (code) => resolve({ code }));
      });
      ws.send(JSON.stringify({ type: 'hello', token: server.token }));
      return { ws, reply: await reply };
    };
    const first = await session();
    assert.strictEqual(first.reply.type, 'hello');
    const second = await session();
    assert.strictEqual(second.reply.code, 4429);
    assert.strictEqual(server.sessions().length, 1);
    first.ws.close();
  } finally {
    server.close();
  }
});

test('server: idleTimeout closes a session its clients have left, with an exit event', async () => {
  await assert.rejects(createTerminalServer({ idleTimeout: -1 }), /idleTimeout/);
  const server = await createTerminalServer({
    shell: '/bin/sh', args: ['-c', 'read x'], allowedOrigins: ['http://app.test'], idleTimeout: 0.3,
  });
  try {
    const exit = new Promise((resolve) => server.once('exit', resolve));
    const ws = open(server, 'http://app.test');
    await new Promise((r) => ws.on('open', r));
    const hello = new Promise((resolve) => ws.on('message', (d, binary) => { if (!binary) resolve(); }));
    ws.send(JSON.stringify({ type: 'hello', token: server.token }));
    await hello;
    assert.strictEqual(server.sessions().length, 1);
    const left = Date.now();
    ws.close();
    const e = await exit;
    assert.ok(Date.now() - left >= 250, `closed after ${Date.now() - left} ms`);
    assert.strictEqual(e.code, -1, 'SIGHUP, negated');
    assert.strictEqual(server.sessions().length, 0);
  } finally {
    server.close();
  }
});
