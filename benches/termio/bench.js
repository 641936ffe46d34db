#!/usr/bin/env node
'use strict';
// `cargo xtask bench termio`'s driver (Node). Every workload goes through a
// real PTY, served by each stack in its own process:
// - termio: the npm package's server (stacks/termio.js);
// - the optimised Node stack: node-pty + ws with the proof of concept's five
//   changes (stacks/optimised.js);
// - the baseline Node stack: node-pty + ws + JSON frames + the full-rescan
//   detector (stacks/baseline.js);
// - ttyd, when it is installed.
// The client is this process (ws), the same for all; it speaks each stack's
// protocol.
//
// Workloads:
// - echo: probes of unique payloads (`@123456@`) typed into flood.py, a raw
//   `stty raw -echo; cat` that also floods the terminal at a set rate, timed
//   from the moment each was due to be sent (a fixed schedule, every 20 ms,
//   so a stalled client does not hide its own lateness) to the moment its
//   echo reaches the client. Idle, under a 625 KB/s and a 10 MB/s flood, and
//   through a delaying proxy (proxy.js). The floor row (but through the
//   proxy) is the PTY alone: node-pty in this process, no server, no socket.
// - relay: `cat` of a file (256 MiB; 64 MiB with --quick) in a raw PTY; time
//   per MiB to the client, byte exact (each chunk compared with the file's bytes), and the
//   server's CPU (and, in the log, the client's, and how busy the machine's
//   CPUs were). Beside them, the PTY alone, read by a blocking loop
//   (ptyfloor.py), and the same loop sending each read to this client over
//   TCP: a relay with nothing in it, to show the client's share.
// - memory: 1, 10 and 100 viewers of one terminal under a 10 MB/s flood,
//   one of them stalled (connected, never reading): the server's peak RSS.
// - detector: the plan-mode detector's cost per MiB, termio's (in Rust) and
//   the two JavaScript ones (detectors.js).
// Subjects take turns in blocks, in rotating order, each block from a fresh
// server. Writes the latency crate's events as JSON lines on stdout.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const net = require('node:net');
const termio = require(path.join(__dirname, '..', '..', 'node'));
const { RescanDetector, OverlapDetector } = require('./detectors');

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const argOf = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const shm = argOf('--shm') || argOf('--scratch') || require('node:os').tmpdir();
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const note = (text) => emit({ event: 'note', text });
const log = (text) => process.stderr.write(text + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nowNs = () => process.hrtime.bigint();

const FLOOD = path.join(__dirname, 'flood.py');
const peers = JSON.parse(process.env.XTASK_PEERS || '[]');
const peer = (name) => peers.find((p) => p.name === name) || { name, missing: 'not installed by xtask' };
const nodePty = peer('node-pty');
const wsPeer = peer('ws');
const ttyd = peer('ttyd');
// The peers' node_modules, for the Node stacks and for this client.
const nodeModules = nodePty.program ? path.dirname(nodePty.program) : null;
const WebSocket = require(wsPeer.program || path.join(__dirname, '..', '..', 'node', 'node_modules', 'ws'));

// ---------------------------------------------------------------- stacks

// Every server and proxy started, killed if this driver ends early.
const children = new Set();
function track(proc) {
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return proc;
}
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));

function readLine(stream) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) { stream.off('data', onData); resolve(buf.slice(0, nl)); }
    };
    stream.on('data', onData);
    stream.on('end', () => reject(new Error(`ended before a line: ${buf}`)));
  });
}

async function startNodeStack(script, cmd) {
  const env = { ...process.env };
  if (nodeModules) env.NODE_PATH = nodeModules;
  const proc = track(spawn(process.execPath, [path.join(__dirname, 'stacks', script), JSON.stringify(cmd)], {
    env, stdio: ['ignore', 'pipe', 'inherit'],
  }));
  const { port, token } = JSON.parse(await readLine(proc.stdout));
  return { proc, port, token };
}

async function startTtyd(cmd) {
  const proc = track(spawn(ttyd.program, ['-i', 'lo', '-p', '0', '-W', ...cmd], { stdio: ['ignore', 'ignore', 'pipe'] }));
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stderr.on('data', (d) => {
      if (buf === null) return;
      buf += d;
      const m = /Listening on port: (\d+)/.exec(buf);
      if (m) { buf = null; resolve(Number(m[1])); }
    });
    proc.on('exit', () => reject(new Error('ttyd exited')));
  });
  return { proc, port, token: '' };
}

async function stop(srv) {
  if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) return;
  const gone = new Promise((r) => srv.proc.once('exit', r));
  srv.proc.kill('SIGTERM');
  const t = setTimeout(() => srv.proc.kill('SIGKILL'), 3000);
  await gone;
  clearTimeout(t);
}

// A client connection: `send(str)` types, `onOutput(cb)` gets every chunk
// of output (a Buffer, or a string from the JSON stack), `close()`.
function wsConnect(url, options, hello, onMessage) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols || [], { perMessageDeflate: false, ...options.ws });
    const conn = { ws, out: () => {}, ended: () => {}, session: null, seq: 0 };
    conn.onOutput = (cb) => { conn.out = cb; };
    // The program's exit, or the connection's end.
    conn.onEnd = (cb) => { conn.ended = cb; };
    ws.on('close', () => conn.ended());
    conn.close = () => ws.terminate();
    ws.on('open', () => {
      if (hello) ws.send(hello);
      if (!options.waitHello) resolve(conn);
    });
    ws.on('message', (data, isBinary) => onMessage(conn, data, isBinary, resolve));
    ws.on('error', reject);
  });
}

const clients = {
  termio(srv, port, join) {
    const hello = { type: 'hello', token: srv.token, cols: 120, rows: 40 };
    if (join) Object.assign(hello, join);
    return wsConnect(`ws://127.0.0.1:${port}/`, {
      waitHello: true,
      ws: { origin: 'http://bench.invalid', headers: { host: `127.0.0.1:${srv.port}` } },
    }, JSON.stringify(hello), (conn, data, isBinary, resolve) => {
      if (isBinary) return conn.out(data);
      const msg = JSON.parse(data);
      if (msg.type === 'hello') { conn.session = msg.session; conn.seq = msg.seq; resolve(conn); }
      if (msg.type === 'exit') conn.ended();
    }).then((conn) => { conn.send = (s) => conn.ws.send(Buffer.from(s), { binary: true }); return conn; });
  },
  optimised(srv, port) {
    return wsConnect(`ws://127.0.0.1:${port}/?token=${srv.token}`, {}, null, (conn, data, isBinary) => {
      if (isBinary) conn.out(data);
      else if (JSON.parse(data).type === 'exit') conn.ended();
    }).then((conn) => { conn.send = (s) => conn.ws.send(Buffer.from(s), { binary: true }); return conn; });
  },
  baseline(srv, port) {
    return wsConnect(`ws://127.0.0.1:${port}/?token=${srv.token}`, {}, null, (conn, data) => {
      const msg = JSON.parse(data);
      if (msg.type === 'output') conn.out(msg.data);
      if (msg.type === 'exit') conn.ended();
    }).then((conn) => { conn.send = (s) => conn.ws.send(JSON.stringify({ type: 'input', data: s })); return conn; });
  },
  ttyd(srv, port) {
    return wsConnect(`ws://127.0.0.1:${port}/ws`, { protocols: ['tty'] },
      JSON.stringify({ AuthToken: '', columns: 120, rows: 40 }), (conn, data) => {
        if (data[0] === 0x30) conn.out(data.subarray(1));
      }).then((conn) => { conn.send = (s) => conn.ws.send(Buffer.from('0' + s)); return conn; });
  },
};

const SUBJECTS = [
  { key: 'termio', name: 'termio', version: '0.1.0', start: (cmd) => startNodeStack('termio.js', cmd), viewers: true },
  { key: 'optimised', name: 'node-pty + ws, optimised', start: (cmd) => startNodeStack('optimised.js', cmd), needs: [nodePty, wsPeer], viewers: true },
  { key: 'baseline', name: 'node-pty + ws, baseline', start: (cmd) => startNodeStack('baseline.js', cmd), needs: [nodePty, wsPeer], viewers: true },
  { key: 'ttyd', name: 'ttyd', start: startTtyd, needs: [ttyd] },
].filter((s) => {
  // `--subjects termio,ttyd`: only these (for working on one).
  const only = argOf('--subjects');
  if (only && !only.split(',').includes(s.key)) return false;
  const missing = (s.needs || []).filter((p) => !p.program);
  if (missing.length) note(`termio: ${s.name} left out: ${missing.map((p) => `${p.name}: ${p.missing}`).join('; ')}`);
  return missing.length === 0;
});
for (const s of SUBJECTS) {
  if (s.version) continue;
  s.version = (s.needs || []).map((p) => p.version).join(', ');
}
const subjectInfo = (list) => list.map((s) => ({ name: s.name, version: s.version }));
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] || 0; };

// A note of each subject's rounds (min..max) and of its ratio to subject
// `ref`, round by round: the spread behind a row's median.
function spread(what, subjects, rounds, fmt, ref = 0) {
  const parts = subjects.map((s, i) => {
    const v = rounds.map((row) => row[i].value);
    let text = `${s.name} ${fmt(Math.min(...v))}..${fmt(Math.max(...v))}`;
    if (i !== ref) text += ` (÷ ${subjects[ref].name}, by round: ${rounds.map((row) => (row[i].value / row[ref].value).toFixed(2)).join(' ')})`;
    return text;
  });
  note(`termio, ${what}, over ${rounds.length} rounds: ${parts.join('; ')}`);
}

// ---------------------------------------------------------------- echo

const INTERVAL_MS = 20;

// The bytes of a chunk of output (a string from the JSON stack is UTF-8 on
// the wire and in the PTY).
const byteLength = (chunk) => (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);

// Finds `@NNNNNN@` probes in output that comes in pieces.
function probeMatcher(onProbe) {
  let tail = '';
  return (chunk) => {
    const text = typeof chunk === 'string' ? chunk : chunk.latin1Slice(0, chunk.length);
    const s = tail + text;
    if (s.indexOf('@') >= 0) {
      const re = /@(\d{6})@/g;
      let m;
      while ((m = re.exec(s)) !== null) onProbe(Number(m[1]));
    }
    tail = s.slice(-7);
  };
}

let nextProbe = 0;

// One block: a fresh server (and proxy), `n` probes on a fixed schedule.
async function echoBlock(subject, rate, n, delay) {
  let srv = null;
  let proxy = null;
  let conn = null;
  let term = null;
  const first = nextProbe;
  nextProbe += n;
  if (nextProbe > 999999) nextProbe = 0;
  const due = new Array(n);
  const got = new Array(n).fill(null);
  let received = 0;
  let bytes = 0;
  let ready;
  const isReady = new Promise((r) => { ready = r; });
  let done;
  const allIn = new Promise((r) => { done = r; });
  const match = probeMatcher((id) => {
    const i = id - first;
    if (i < 0 || i >= n || got[i] !== null || due[i] === undefined) return;
    got[i] = Number(nowNs() - due[i]);
    if (++received === n) done();
  });
  // Ready at the first output: flood.py writes `ready` first, but a Node
  // stack spawns the program before the client connects and keeps a
  // bounded history, from which the word may have gone by then (through
  // the slow proxy it had, and the block waited for it for good).
  const onOutput = (chunk) => {
    bytes += byteLength(chunk);
    ready();
    match(chunk);
  };
  const cmd = ['python3', FLOOD, String(rate)];
  let send;
  if (subject.key === 'floor') {
    const pty = require(nodePty.program);
    term = pty.spawn(cmd[0], cmd.slice(1), { name: 'xterm-256color', cols: 120, rows: 40, encoding: null });
    term.onData(onOutput);
    send = (s) => term.write(s);
  } else {
    srv = await subject.start(cmd);
    let port = srv.port;
    if (delay) {
      proxy = await startNodeProxy(srv.port, delay);
      port = proxy.port;
    }
    conn = await clients[subject.key](srv, port);
    conn.onOutput(onOutput);
    send = (s) => conn.send(s);
  }
  const noOutput = new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`echo: ${subject.name}: no output within 30 s`)), 30000);
    isReady.then(() => clearTimeout(t));
  });
  await Promise.race([isReady, noOutput]);
  await sleep(500);
  const startBytes = bytes;
  const t0 = nowNs();
  const interval = BigInt(INTERVAL_MS * 1e6);
  await new Promise((resolve) => {
    let i = 0;
    const tick = () => {
      // Every probe due by now goes, each timed from when it was due.
      const now = nowNs();
      while (i < n && t0 + BigInt(i) * interval <= now) {
        due[i] = t0 + BigInt(i) * interval;
        send(`@${String(first + i).padStart(6, '0')}@`);
        i++;
      }
      if (i >= n) return resolve();
      setTimeout(tick, Math.max(0, Number(t0 + BigInt(i) * interval - nowNs()) / 1e6));
    };
    tick();
  });
  const wait = quick ? 10000 : 30000;
  const timer = new Promise((r) => setTimeout(r, wait));
  await Promise.race([allIn, timer]);
  const seconds = Number(nowNs() - t0) / 1e9;
  const rateOut = (bytes - startBytes) / seconds;
  if (conn) conn.close();
  if (term) term.kill();
  if (proxy) await stop(proxy);
  if (srv) await stop(srv);
  const lost = got.filter((x) => x === null).length;
  // A probe never echoed counts as the whole wait: the tail shows it.
  return { values: got.map((x) => (x === null ? wait * 1e6 : x)), lost, rateOut };
}

async function startNodeProxy(target, d) {
  const proc = track(spawn(process.execPath, [path.join(__dirname, 'proxy.js'), target, d.mean, d.jitter, d.spikeP, d.spike].map(String), {
    stdio: ['ignore', 'pipe', 'inherit'],
  }));
  const { port } = JSON.parse(await readLine(proc.stdout));
  return { proc, port };
}

async function echoWorkload(w, subjects) {
  const rounds = quick ? 2 : 4;
  const per = quick ? 50 : 250;
  const columns = subjects.map(() => []);
  const lost = subjects.map(() => 0);
  const rates = subjects.map(() => []);
  for (let r = 0; r <= rounds; r++) {
    // Round 0 is a warm-up of 20 probes each.
    const n = r === 0 ? 20 : per;
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      const got = await echoBlock(subjects[i], w.rate, n, w.delay);
      if (r === 0) continue;
      const v = [...got.values].sort((a, b) => a - b);
      const at = (q) => `${(v[Math.min(v.length - 1, Math.floor(q * v.length))] / 1e6).toFixed(2)}`;
      log(`termio echo: ${w.label}: ${subjects[i].name}: round ${r}: p50 ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, max ${at(1)} ms${w.delay ? '' : `; probes over 10 ms at ${got.values.map((x, j) => (x > 10e6 ? j : -1)).filter((j) => j >= 0).join(' ') || 'none'}`}`);
      columns[i].push(...got.values);
      lost[i] += got.lost;
      rates[i].push(got.rateOut);
    }
  }
  const count = Math.min(...columns.map((c) => c.length));
  const roundsOut = [];
  for (let k = 0; k < count; k++) roundsOut.push(columns.map((c) => ({ value: Math.max(1, Math.round(c[k])) })));
  emit({
    event: 'run',
    system: 'termio',
    workload: `echo: ${w.label}`,
    params: { probes: String(count), every: `${INTERVAL_MS} ms`, flood: w.rate ? `${w.rate / 1e6} MB/s` : 'none', ...(w.delay ? { delay: w.delayLabel } : {}) },
    unit: 'ns',
    subjects: subjectInfo(subjects),
    reference: 0,
    rounds: roundsOut,
  });
  note(`termio, echo: ${w.label}: output delivered while probing (median of blocks): `
    + subjects.map((s, i) => `${s.name} ${(median(rates[i]) / 1e6).toFixed(2)} MB/s`).join(', ')
    + `; probes never echoed within the wait: `
    + subjects.map((s, i) => `${s.name} ${lost[i]}`).join(', '));
}

// ---------------------------------------------------------------- relay

function relayFile(bytes) {
  const file = path.join(shm, `termio-relay-${bytes}.txt`);
  const block = corpus(1 << 20);
  const cut = block.lastIndexOf(0x0a) + 1;
  const unit = block.subarray(0, cut);
  const fd = fs.openSync(file, 'w');
  let n = 0;
  while (n < bytes) {
    const part = unit.subarray(0, Math.min(unit.length, bytes - n));
    fs.writeSync(fd, part);
    n += part.length;
  }
  fs.closeSync(fd);
  // The file must stay valid UTF-8 (the baseline decodes it): end on a line.
  const data = fs.readFileSync(file);
  return { file, size: data.length, data };
}

function cpuNs(pid) {
  // utime + stime of every thread, in clock ticks (100 a second).
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 1e7;
}

function busyShare(since) {
  const now = cpuBusy();
  return (now.busy - since.busy) / Math.max(1, now.total - since.total);
}

function cpuBusy() {
  // Every CPU's busy and total time so far, in clock ticks (/proc/stat).
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

async function relayOnce(subject, rf) {
  if (subject.key === 'floor') {
    const busy0 = cpuBusy();
    const proc = track(spawn('python3', [path.join(__dirname, 'ptyfloor.py'), rf.file], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const got = JSON.parse(await readLine(proc.stdout));
    const busy = busyShare(busy0);
    // It keeps no copy: it proves the count, not the hash.
    return { ns: got.ns, cpu: got.cpu_ns, busy, exact: got.bytes === rf.size, bytes: got.bytes, frames: got.reads };
  }
  if (subject.key === 'floor-send') return relayFloorSend(rf);
  const srv = await subject.start(['sh', '-c', 'stty raw -echo && exec cat "$0"', rf.file]);
  // Each chunk is compared with the file's bytes at its place as it comes
  // (a memcmp): no copy is kept and nothing is hashed, since the floor's
  // reader does neither, and 256 MiB of kept chunks cost the client page
  // faults and collections while it is timed.
  let bytes = 0;
  let same = true;
  const cpu0 = cpuNs(srv.proc.pid);
  const me0 = process.cpuUsage();
  const busy0 = cpuBusy();
  const t0 = nowNs();
  let done;
  const finished = new Promise((r) => { done = r; });
  const conn = await clients[subject.key](srv, srv.port);
  let lastByte = t0;
  let frames = 0;
  conn.onOutput((chunk) => {
    frames++;
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (same) same = bytes + b.length <= rf.size && b.equals(rf.data.subarray(bytes, bytes + b.length));
    bytes += b.length;
    lastByte = nowNs();
    if (bytes >= rf.size) done();
  });
  // A stack may lose the output's end (node-pty's issue #726): once the
  // program has exited, what has not come within half a second is lost.
  conn.onEnd(() => setTimeout(done, 500));
  const limit = setTimeout(done, 300000);
  await finished;
  clearTimeout(limit);
  const ns = Number(lastByte - t0);
  const cpu = cpuNs(srv.proc.pid) - cpu0;
  const busy = busyShare(busy0);
  const me = process.cpuUsage(me0);
  const clientCpu = (me.user + me.system) * 1e3;
  conn.close();
  await stop(srv);
  const exact = same && bytes === rf.size;
  return { ns, cpu, clientCpu, busy, exact, bytes, frames };
}

// The floor that sends each read to this client over TCP: timed here, from
// the connection to the last byte, with the same check of every chunk.
async function relayFloorSend(rf) {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const me0 = process.cpuUsage();
  const busy0 = cpuBusy();
  const proc = track(spawn('python3', [path.join(__dirname, 'ptyfloor.py'), rf.file, '--send', String(server.address().port)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const line = readLine(proc.stdout);
  const got = await new Promise((resolve) => {
    server.once('connection', (sock) => {
      const t0 = nowNs();
      let bytes = 0;
      let same = true;
      let lastByte = t0;
      sock.on('data', (b) => {
        if (same) same = bytes + b.length <= rf.size && b.equals(rf.data.subarray(bytes, bytes + b.length));
        bytes += b.length;
        lastByte = nowNs();
      });
      sock.on('close', () => resolve({ ns: Number(lastByte - t0), bytes, same }));
    });
  });
  const busy = busyShare(busy0);
  const me = process.cpuUsage(me0);
  server.close();
  const floor = JSON.parse(await line);
  return { ns: got.ns, cpu: floor.cpu_ns, clientCpu: (me.user + me.system) * 1e3, busy, exact: got.same && got.bytes === rf.size, bytes: got.bytes, frames: floor.reads };
}

async function relayWorkload(subjects) {
  // 256 MiB: the floor reads it in over a second; the baseline stack, at
  // about 5 MB/s, in under a minute a round.
  const rf = relayFile(quick ? 64 << 20 : 256 << 20);
  const mib = rf.size / (1 << 20);
  const rounds = quick ? 2 : 5;
  const time = [];
  const cpu = [];
  const problems = [];
  // A warm-up, not counted: each subject relays 16 MiB once, so that the
  // client's first frames (its code not yet compiled, its buffers not yet
  // grown) are nobody's round. Without it they fell to the subject that
  // goes first in round 1, always the same one.
  const warm = relayFile(16 << 20);
  for (const s of subjects) await relayOnce(s, warm);
  fs.unlinkSync(warm.file);
  for (let r = 0; r < rounds; r++) {
    const rowT = new Array(subjects.length);
    const rowC = new Array(subjects.length);
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      const got = await relayOnce(subjects[i], rf);
      const perMiB = (ns) => `${(ns / 1e6 / mib).toFixed(2)} ms`;
      const cpus = got.clientCpu === undefined ? `its CPU ${perMiB(got.cpu)}` : `CPU a MiB: server ${perMiB(got.cpu)}, client ${perMiB(got.clientCpu)}`;
      log(`termio relay: ${subjects[i].name}: ${(rf.size / got.ns * 1e3).toFixed(1)} MB/s, ${got.bytes} bytes in ${got.frames} frames, ${cpus}, the machine's CPUs ${(got.busy * 100).toFixed(0)}% busy${got.exact ? '' : ', NOT exact'}`);
      if (!got.exact) problems.push(`${subjects[i].name}: ${got.bytes} of ${rf.size} bytes, ${got.bytes === rf.size ? 'some differ' : 'not all compared'}`);
      rowT[i] = { value: Math.round(got.ns / mib) };
      rowC[i] = { value: Math.max(1, Math.round(got.cpu / mib)) };
    }
    time.push(rowT);
    cpu.push(rowC);
  }
  fs.unlinkSync(rf.file);
  spread('relay, time per MiB', subjects, time, (v) => `${(v / 1e6).toFixed(2)} ms`, subjects.length - 1);
  const params = { file: `${mib} MiB`, pty: 'raw' };
  emit({ event: 'run', system: 'termio', workload: 'relay: time per MiB (cat of a file)', params, unit: 'ns', subjects: subjectInfo(subjects), reference: 0, rounds: time });
  emit({ event: 'run', system: 'termio', workload: "relay: the server's CPU per MiB", params, unit: 'ns', subjects: subjectInfo(subjects), reference: 0, rounds: cpu });
  note(problems.length ? `termio, relay: NOT byte exact: ${problems.join('; ')}` : `termio, relay: every subject delivered all ${rf.size} bytes, each equal to the file's, in every round`);
}

// ---------------------------------------------------------------- memory

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const get = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: get('VmRSS'), hwm: get('VmHWM') };
}

async function memoryOnce(subject, viewers, seconds) {
  const srv = await subject.start(['python3', FLOOD, String(10e6)]);
  const conns = [];
  const first = await clients[subject.key](srv, srv.port);
  // The first viewer stalls: it never reads again.
  first.ws._socket.pause();
  conns.push(first);
  let bytes = 0;
  for (let v = 1; v < viewers; v++) {
    const join = first.session ? { session: first.session, seq: first.seq } : undefined;
    const c = await clients[subject.key](srv, srv.port, join);
    c.onOutput((chunk) => { bytes += byteLength(chunk); });
    conns.push(c);
  }
  await sleep(seconds * 1000);
  const mem = rssKiB(srv.proc.pid);
  for (const c of conns) c.close();
  await stop(srv);
  return { ...mem, rate: viewers > 1 ? bytes / (viewers - 1) / seconds : 0 };
}

async function memoryWorkload(subjects) {
  const seconds = quick ? 3 : 10;
  const rounds = quick ? 2 : 5;
  for (const viewers of [1, 10, 100]) {
    const rows = [];
    const rates = subjects.map(() => []);
    for (let r = 0; r < rounds; r++) {
      const row = new Array(subjects.length);
      for (let k = 0; k < subjects.length; k++) {
        const i = (k + r) % subjects.length;
        const got = await memoryOnce(subjects[i], viewers, seconds);
        row[i] = { value: got.hwm };
        rates[i].push(got.rate);
      }
      rows.push(row);
    }
    emit({
      event: 'run', system: 'termio', workload: "memory: the server's peak RSS, one viewer stalled",
      params: { flood: '10 MB/s', for: `${seconds} s` }, size: viewers, unit: 'KiB',
      subjects: subjectInfo(subjects), reference: 0, rounds: rows,
    });
    spread(`memory, ${viewers} viewers, peak RSS`, subjects, rows, (v) => `${(v / 1024).toFixed(1)} MiB`);
    if (viewers > 1) {
      note(`termio, memory, ${viewers} viewers: output each reading viewer got (median of rounds): `
        + subjects.map((s, i) => `${s.name} ${(median(rates[i]) / 1e6).toFixed(2)} MB/s`).join(', '));
    }
  }
}

// ---------------------------------------------------------------- detector

function corpus(bytes) {
  const parts = [];
  let n = 0;
  let i = 0;
  let nextPlan = 1 << 20;
  while (n < bytes) {
    let line;
    if (n >= nextPlan) {
      nextPlan += 1 << 20;
      line = '\x1b[2m\u23f8 plan \x1b[1mmode\x1b[0m on (shift+tab to cycle)\r\n'
        + "\x1b[1mReady to code?\x1b[0m\r\nHere is Claude's plan:\r\n"
        + '\x1b[38;5;246m1. Read the retry policy\x1b[0m\r\n2. Change it\r\n'
        + 'Would you like to proceed?\r\n\u276f 1. Yes\r\n';
    } else {
      const k = i++ % 5;
      if (k === 0) line = `\x1b[38;5;${i % 256}m\u25cf\x1b[0m Reading \x1b[1msrc/module_${i}.rs\x1b[0m (${i % 977} lines)\r\n`;
      else if (k === 1) line = `  \u2502 ${'fn handler_'.padEnd(12)}${i}(req: &Request) -> Result<Response> {  // \u00e9t\u00e9 \u4e2d\u6587\r\n`;
      else if (k === 2) line = `\x1b[2K\x1b[1G\x1b[36m\u280b\x1b[0m Thinking\u2026 (${i % 60}s \u00b7 esc to interrupt)\r`;
      else if (k === 3) line = `\x1b]8;;file:///src/m${i}.rs\x07m${i}.rs\x1b]8;;\x07 +${i % 40} -${i % 7}\r\n`;
      else line = `\u256d${'\u2500'.repeat(60)}\u256e\r\n\u2502 \x1b[33mwarning\x1b[0m: unused variable \`x_${i}\`${' '.repeat(20)}\u2502\r\n`;
    }
    const b = Buffer.from(line, 'utf8');
    parts.push(b);
    n += b.length;
  }
  return Buffer.concat(parts).subarray(0, bytes);
}

function timeDetector(Detector, chunks) {
  const d = new Detector();
  let events = 0;
  const t = nowNs();
  for (const c of chunks) events += d.feed(c.toString('utf8'));
  return { ns: Number(nowNs() - t), events };
}

function detectorWorkload() {
  const mib = quick ? 2 : 16;
  const data = corpus(mib << 20);
  const chunks = [];
  for (let at = 0; at < data.length; at += 4096) chunks.push(data.subarray(at, at + 4096));
  const subjects = [
    ['termio', () => termio.detectorTiming(data, 4096)],
    ['js: chunk + 512 overlap', () => timeDetector(OverlapDetector, chunks)],
    ['js: rescan the history', () => timeDetector(RescanDetector, chunks)],
  ];
  const rounds = quick ? 3 : 9;
  const rows = [];
  for (let r = 0; r <= rounds; r++) {
    const row = new Array(subjects.length);
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + r) % subjects.length;
      row[i] = { value: Math.round(subjects[i][1]().ns / mib) };
    }
    if (r > 0) rows.push(row);
  }
  emit({
    event: 'run', system: 'termio', workload: 'plan-mode detector, per MiB of output',
    params: { chunk: '4 KiB', corpus: `${mib} MiB` }, unit: 'ns',
    subjects: subjects.map(([name]) => ({ name, version: name === 'termio' ? '0.1.0' : `node ${process.version}` })),
    reference: 0, rounds: rows,
  });
}

// ---------------------------------------------------------------- main

const ECHO = [
  { label: 'idle', rate: 0 },
  { label: 'flood 625 KB/s', rate: 625e3 },
  { label: 'flood 10 MB/s', rate: 10e6 },
  { label: 'flood 625 KB/s, proxy 40±5 ms', rate: 625e3, delay: { mean: 40, jitter: 5, spikeP: 0, spike: 0 }, delayLabel: '40±5 ms each way' },
  { label: 'flood 625 KB/s, proxy 120±30 ms, 5% spikes', rate: 625e3, delay: { mean: 120, jitter: 30, spikeP: 0.05, spike: 300 }, delayLabel: '120±30 ms each way, 5% of 100 ms windows +300 ms' },
];

async function main() {
  const only = argOf('--only');
  const want = (k) => !only || only.split(',').includes(k);
  const steps = ECHO.filter((w) => want('echo')).length + (want('relay') ? 1 : 0) + (want('memory') ? 1 : 0) + (want('detector') ? 1 : 0);
  emit({ event: 'plan', steps });
  if (want('echo')) {
    // `--echo 'flood 10 MB/s'`: only that workload (for work on one).
    const one = argOf('--echo');
    for (const w of ECHO.filter((x) => !one || x.label === one)) {
      emit({ event: 'step', label: `echo: ${w.label}` });
      let subjects = SUBJECTS;
      if (!w.delay && nodePty.program) {
        subjects = [...SUBJECTS, { key: 'floor', name: 'floor: the PTY alone (node-pty in the client)', version: nodePty.version }];
      }
      await echoWorkload(w, subjects);
    }
  }
  if (want('relay')) {
    emit({ event: 'step', label: 'relay' });
    await relayWorkload([
      ...SUBJECTS,
      { key: 'floor-send', name: 'the PTY to the client: a blocking loop sends each read over TCP', version: 'python3' },
      { key: 'floor', name: 'the PTY alone: a blocking read loop', version: 'python3' },
    ]);
  }
  if (want('memory')) {
    emit({ event: 'step', label: 'memory' });
    const viewers = SUBJECTS.filter((s) => s.viewers);
    if (viewers.length < SUBJECTS.length) note('termio, memory: ttyd is not in it: it runs one program for each connection, so its viewers never share a terminal');
    await memoryWorkload(viewers);
  }
  if (want('detector')) {
    emit({ event: 'step', label: 'plan-mode detector' });
    detectorWorkload();
  }
}

main().then(() => process.exit(0), (e) => { log(e.stack || String(e)); process.exit(1); });
