#!/usr/bin/env node
'use strict';
// termio's stack: the npm package's server (the relay in Rust, inside the
// addon), with its defaults.
//
// Usage: termio.js '["cmd", "arg", ...]'; prints {"port": N, "token": T}.
const path = require('node:path');
const termio = require(path.join(__dirname, '..', '..', '..', 'node'));

const [cmd, ...args] = JSON.parse(process.argv[2]);
termio.createTerminalServer({
  host: '127.0.0.1', port: 0, shell: cmd, args, allowedOrigins: ['http://bench.invalid'],
}).then((server) => {
  process.on('SIGTERM', () => { server.close(); process.exit(0); });
  process.stdout.write(JSON.stringify({ port: server.port, token: server.token }) + '\n');
});
