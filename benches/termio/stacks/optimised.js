#!/usr/bin/env node
'use strict';
// The optimised Node stack: the baseline with the proof of concept's five
// changes. TCP_NODELAY (set explicitly); a circular history buffer; input
// before output (input is written in process.nextTick, output waits for
// setImmediate, so keystrokes read in the same turn go first); binary
// frames (node-pty gives Buffers); and the plan detector that scans each
// chunk with a 512-character overlap.
//
// Usage: optimised.js '["cmd", "arg", ...]'; prints {"port": N, "token": T}.
const { StringDecoder } = require('node:string_decoder');
const pty = require('node-pty');
const { stack } = require('./common');
const { OverlapDetector } = require('../detectors');

const s = stack();
const { cmd, args, token, wss, clients } = s;
const detector = new OverlapDetector();
const decoder = new StringDecoder('utf8');

// The last RING chunks of output, for clients that join late.
const RING = 1024;
const ring = new Array(RING);
let ringNext = 0;
let ringCount = 0;

let queue = [];
let flushing = false;

function flush() {
  flushing = false;
  const out = queue.length === 1 ? queue[0] : Buffer.concat(queue);
  queue = [];
  for (const ws of clients) ws.send(out, { binary: true });
}

function start(cols, rows) {
  s.term = pty.spawn(cmd, args, { name: 'xterm-256color', cols, rows, cwd: process.cwd(), env: process.env, encoding: null });
  s.term.onData((buf) => {
    ring[ringNext] = buf;
    ringNext = (ringNext + 1) % RING;
    ringCount = Math.min(ringCount + 1, RING);
    detector.feed(decoder.write(buf));
    queue.push(buf);
    if (!flushing) {
      flushing = true;
      setImmediate(flush);
    }
  });
  s.term.onExit(({ exitCode }) => {
    for (const ws of clients) ws.send(JSON.stringify({ type: 'exit', code: exitCode }));
  });
}

wss.on('connection', (ws, req) => {
  const url = new URL(req.url, 'http://x');
  if (url.searchParams.get('token') !== token) return ws.close(4401);
  req.socket.setNoDelay(true);
  clients.add(ws);
  if (s.term) {
    for (let i = 0; i < ringCount; i++) ws.send(ring[(ringNext - ringCount + i + RING) % RING], { binary: true });
  } else {
    start(80, 24);
  }
  ws.on('message', (raw, isBinary) => {
    if (isBinary) {
      process.nextTick(() => s.term.write(raw));
      return;
    }
    const msg = JSON.parse(raw);
    if (msg.type === 'resize') s.term.resize(msg.cols, msg.rows);
  });
  ws.on('close', () => clients.delete(ws));
});
