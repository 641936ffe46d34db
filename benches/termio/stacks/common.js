'use strict';
// What the two Node stacks share: the command from argv, a token, an HTTP
// server with a ws server on it (on 127.0.0.1, any port), the set of
// clients, and the line that tells the driver the port and token.
const http = require('node:http');
const crypto = require('node:crypto');
const { WebSocketServer } = require('ws');

function stack() {
  const [cmd, ...args] = JSON.parse(process.argv[2]);
  const token = crypto.randomBytes(16).toString('hex');
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  const s = { cmd, args, token, wss, clients: new Set(), term: null };
  process.on('SIGTERM', () => { if (s.term) s.term.kill('SIGHUP'); process.exit(0); });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ port: server.address().port, token }) + '\n');
  });
  return s;
}

module.exports = { stack };
