#!/usr/bin/env node
'use strict';
// `termio serve [--port N] [--host H] [--shell CMD]`: a browser terminal
// on this machine. Serves the client page and relays its WebSocket (on
// /term) to a shell in a PTY. Prints the URL, with a one-time token in the
// fragment (which browsers do not send to servers).
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { createTerminalServer } = require('..');

function usage(code) {
  (code ? process.stderr : process.stdout).write(
    'usage: termio serve [--port N] [--host ADDR] [--shell CMD]\n'
    + '  --port N      the port to serve on (default 7681; 0: any free one)\n'
    + '  --host ADDR   the address to listen on (default 127.0.0.1)\n'
    + '  --shell CMD   the program each session runs (default $SHELL)\n',
  );
  process.exit(code);
}

function parse(argv) {
  const o = { port: 7681, host: '127.0.0.1', shell: process.env.SHELL || '/bin/sh' };
  if (argv[0] !== 'serve') usage(argv[0] === '--help' || argv[0] === '-h' ? 0 : 2);
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const v = () => { if (i + 1 >= argv.length) usage(2); return argv[++i]; };
    if (a === '--port') o.port = Number(v());
    else if (a === '--host') o.host = v();
    else if (a === '--shell') o.shell = v();
    else if (a === '--help' || a === '-h') usage(0);
    else { process.stderr.write(`termio: unknown option ${a}\n`); usage(2); }
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) {
    process.stderr.write('termio: --port takes 0 to 65535\n');
    process.exit(2);
  }
  return o;
}

const files = {
  '/': ['client/index.html', 'text/html; charset=utf-8'],
  '/client.js': ['client/client.js', 'text/javascript'],
  '/xterm.js': [require.resolve('@xterm/xterm/lib/xterm.js'), 'text/javascript'],
  '/xterm.css': [require.resolve('@xterm/xterm/css/xterm.css'), 'text/css'],
  '/addon-fit.js': [require.resolve('@xterm/addon-fit/lib/addon-fit.js'), 'text/javascript'],
};

async function main() {
  const o = parse(process.argv.slice(2));
  const web = http.createServer((req, res) => {
    const f = files[new URL(req.url, 'http://x').pathname];
    if (!f) { res.writeHead(404).end('not found'); return; }
    const file = path.isAbsolute(f[0]) ? f[0] : path.join(__dirname, '..', f[0]);
    res.writeHead(200, { 'content-type': f[1], 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve, reject) => {
    web.once('error', reject);
    web.listen(o.port, o.host, resolve);
  });
  const { port } = web.address();
  const shown = o.host.includes(':') ? `[${o.host}]` : o.host;
  const origins = [`http://${shown}:${port}`, `http://localhost:${port}`];
  const relay = await createTerminalServer({ shell: o.shell, allowedOrigins: origins });
  relay.attach(web, { path: '/term' });
  process.stdout.write(`termio: http://${shown}:${port}/#token=${relay.token}\n`);
  const stop = () => { relay.close(); web.close(); process.exit(0); };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => { process.stderr.write(`termio: ${e.message}\n`); process.exit(1); });
