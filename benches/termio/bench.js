#!/usr/bin/env node
'use strict';
// `cargo xtask bench termio`'s driver (Node). So far one workload: the
// plan-mode detector's cost per MB of an agent's output, termio's (in Rust,
// inside the addon, as the session's reader runs it) beside faithful
// JavaScript versions of the two detectors it replaces:
// - "rescan": on every chunk, append it to the history (kept to the last
//   100,000 characters), strip the escapes from all of it with a regex, and
//   test every marker's regex on all of it (the proof of concept's first
//   detector);
// - "chunk + 512 overlap": strip and test only the new chunk with the last
//   512 characters before it (its second).
// The output is synthetic but shaped like an agent's: coloured lines, box
// drawing, cursor moves, multibyte text, and a plan (its markers) every MiB.
// Chunks are 4 KiB, as a PTY read gives. Subjects alternate in rotating
// order each round; the first round is a warm-up. Writes the latency
// crate's events as JSON lines on stdout.
const path = require('node:path');
const termio = require(path.join(__dirname, '..', '..', 'node'));

const quick = process.argv.includes('--quick');
const emit = (o) => process.stdout.write(JSON.stringify(o) + '\n');

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

const ANSI = /\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -\/]*[0-~]/g;
const MARKERS = [
  /plan mode on/, /Here is Claude's plan:/, /Would you like to proceed\?/,
  /User approved Claude's plan/, /User rejected Claude's plan/,
];

function rescan(chunks) {
  let history = '';
  let events = 0;
  const t = process.hrtime.bigint();
  for (const c of chunks) {
    history += c.toString('utf8');
    if (history.length > 100000) history = history.slice(-100000);
    const text = history.replace(ANSI, '');
    for (const re of MARKERS) if (re.test(text)) events++;
  }
  return { ns: Number(process.hrtime.bigint() - t), events };
}

function overlap(chunks) {
  let tail = '';
  let events = 0;
  const t = process.hrtime.bigint();
  for (const c of chunks) {
    const text = tail + c.toString('utf8');
    const stripped = text.replace(ANSI, '');
    for (const re of MARKERS) if (re.test(stripped)) events++;
    tail = text.slice(-512);
  }
  return { ns: Number(process.hrtime.bigint() - t), events };
}

function main() {
  const mib = quick ? 2 : 16;
  const data = corpus(mib << 20);
  const chunks = [];
  for (let at = 0; at < data.length; at += 4096) chunks.push(data.subarray(at, at + 4096));
  const subjects = [
    ['termio', termio.detectorTiming ? () => termio.detectorTiming(data, 4096) : null],
    ['js: chunk + 512 overlap', () => overlap(chunks)],
    ['js: rescan the history', () => rescan(chunks)],
  ];
  const rounds = quick ? 3 : 9;
  emit({ event: 'plan', steps: 1 });
  emit({ event: 'step', label: 'plan-mode detector' });
  const rows = [];
  for (let r = 0; r <= rounds; r++) {
    const order = subjects.map((_, i) => (i + r) % subjects.length);
    const row = new Array(subjects.length);
    for (const i of order) {
      const got = subjects[i][1]();
      row[i] = { value: Math.round(got.ns / mib) };
    }
    if (r > 0) rows.push(row);
  }
  emit({
    event: 'run',
    system: 'termio',
    workload: 'plan-mode detector, per MiB of output',
    params: { chunk: '4 KiB', corpus: `${mib} MiB` },
    unit: 'ns',
    subjects: subjects.map(([name]) => ({ name, version: name === 'termio' ? '0.1.0' : `node ${process.version}` })),
    reference: 0,
    rounds: rows,
  });
}

main();
