#!/usr/bin/env node
'use strict';
// The baseline stack, as the proof of concept first served a terminal:
// node-pty and ws, one PTY shared by every client (spawned by the first),
// output as JSON text frames, a history array trimmed with shift(), and the
// full-rescan plan detector on every chunk. The token is in the URL,
// compared with ===. ws itself sets TCP_NODELAY on its sockets, so this
// stack has it too (the proof of concept's own baseline did not).
//
// Usage: baseline.js '["cmd", "arg", ...]'; prints {"port": N, "token": T}.
const pty = require('node-pty');
const { stack } = require('./common');
const { RescanDetector } = require('../detectors');

const s = stack();
const { cmd, args, token, wss, clients } = s;
const history = [];
const detector = new RescanDetector();

function start(cols, rows) {
  s.term = pty.spawn(cmd, args, { name: 'xterm-256color', cols, rows, cwd: process.cwd(), env: process.env });
  s.term.onData((data) => {
    history.push(data);
    if (history.length > 1000) history.shift();
    detector.feed(data);
    const msg = JSON.stringify({ type: 'output', data });
    for (const ws of clients) ws.send(msg);
  });
  s.term.onExit(({ exitCode }) => {
    for (const ws of clients) ws.send(JSON.stringify({ type: 'exit', code: exitCode }));
  });
}

wss.on('connection', (ws, req) => {
  const url = new URL(req.url, 'http://x');
  if (url.searchParams.get('token') !== token) return ws.close(4401);
  clients.add(ws);
  if (s.term) for (const data of history) ws.send(JSON.stringify({ type: 'output', data }));
  else start(80, 24);
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw);
    if (msg.type === 'input') s.term.write(msg.data);
    else if (msg.type === 'resize') s.term.resize(msg.cols, msg.rows);
  });
  ws.on('close', () => clients.delete(ws));
});
