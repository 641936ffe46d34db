'use strict';
// termio's JavaScript API over the Rust addon. The data path (the PTY,
// the ring of output, the WebSocket relay) runs in Rust, off this thread;
// events come here through async calls made in a loop.
const { EventEmitter } = require('node:events');
const native = require('./termio.linux-x64-gnu.node');

/** A relay of PTY sessions to browser terminals over WebSocket. */
class TerminalServer extends EventEmitter {
  constructor(n) {
    super();
    this._native = n;
    this._closed = false;
    this._pump();
  }

  get host() { return this._native.host; }
  get port() { return this._native.port; }
  get token() { return this._native.token; }
  /** The WebSocket URL (the token goes in the first message, not here). */
  get url() { return `ws://${this.host}:${this.port}/`; }

  /** The sessions it keeps: `{ id, pid, viewers }`. */
  sessions() { return this._native.sessions(); }

  async _pump() {
    for (;;) {
      const e = await this._native.nextEvent();
      if (e === null) return;
      if (e.kind === 'exit') {
        this.emit('exit', { session: e.session, code: e.code });
      } else if (e.kind === 'plan') {
        // marker: 'entered', 'planStart', 'plan' (with text), 'planEnd',
        // 'approved' or 'exited'.
        const ev = { session: e.session, agent: e.agent, marker: e.marker };
        if (e.text != null) ev.text = e.text;
        this.emit('plan', ev);
      }
    }
  }

  /**
   * Hands the WebSocket upgrades that `httpServer` (a Node http.Server,
   * Express's or Fastify's underneath) gets on `path` over to this relay,
   * which answers them in Rust with the same checks; other upgrades are
   * left to the server's other listeners. The server's address is added to
   * the allowed Host headers once it listens.
   */
  attach(httpServer, { path = '/' } = {}) {
    const allow = () => {
      const a = httpServer.address();
      if (a && typeof a === 'object') {
        const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
        this._native.allowHost(`${host}:${a.port}`);
        this._native.allowHost(`localhost:${a.port}`);
      }
    };
    if (httpServer.listening) allow(); else httpServer.once('listening', allow);
    httpServer.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url, 'http://x');
      if (url.pathname !== path) return;
      const fd = socket._handle && socket._handle.fd;
      try {
        this._native.adopt(typeof fd === 'number' ? fd : -1, `${this._path}${url.search}`, req.rawHeaders, head);
      } catch (e) {
        socket.end('HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n');
        return;
      }
      // The relay has its own copy of the socket.
      socket.destroy();
    });
    return this;
  }

  /** Stops listening and ends every session (SIGHUP to each). */
  close() {
    if (this._closed) return;
    this._closed = true;
    this._native.close();
  }
}

/**
 * Starts a relay: `{ host = '127.0.0.1', port = 0, token (random),
 * shell ($SHELL), args, cwd, env, allowedOrigins, allowedHosts, path,
 * maxSessions = 16, idleTimeout = 300 (seconds) }`.
 */
async function createTerminalServer(options = {}) {
  const {
    host, port, token, shell, args, cwd, env, allowedOrigins, allowedHosts, path, maxSessions, idleTimeout,
  } = options;
  const n = await native.NativeServer.listen({
    host, port, token, shell, args, cwd, env, allowedOrigins, allowedHosts, path, maxSessions, idleTimeout,
  });
  const server = new TerminalServer(n);
  server._path = path || '/';
  return server;
}

/** A program in a PTY, with its bytes in JavaScript. */
class Session {
  constructor(n) {
    this._native = n;
    this._data = [];
    this._exit = [];
    this.exitCode = null;
    this._reading = false;
  }

  get pid() { return this._native.pid; }

  /** Writes a string (UTF-8) or bytes to the program's input. */
  write(data) {
    const b = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    return this._native.write(b);
  }

  resize(cols, rows) { this._native.resize(cols, rows); }

  /** Sends a signal ('SIGHUP' by default) to the program's process group. */
  kill(signal) { this._native.kill(signal); }

  /** Calls `cb(buffer)` with each piece of output, in order. */
  onData(cb) {
    this._data.push(cb);
    this._read();
    return { dispose: () => { this._data = this._data.filter((f) => f !== cb); } };
  }

  /** Calls `cb(code)` once the program has exited and all its output was given. */
  onExit(cb) {
    this._exit.push(cb);
    this._read();
    return { dispose: () => { this._exit = this._exit.filter((f) => f !== cb); } };
  }

  async _read() {
    if (this._reading) return;
    this._reading = true;
    for (;;) {
      const b = await this._native.read();
      if (b === null) break;
      for (const cb of this._data) cb(b);
    }
    this.exitCode = await this._native.exitCode();
    for (const cb of this._exit) cb(this.exitCode);
  }
}

/** Starts `file` with `args` in a new PTY: `{ cwd, env, cols, rows }`. */
function spawn(file, args = [], options = {}) {
  const { cwd, env, cols, rows } = options;
  return new Session(native.NativeSession.spawn(file, { args, cwd, env, cols, rows }));
}

// detectorTiming(buffer, chunk): the Rust plan-mode detector's time over
// `buffer`, for the benchmark (benches/termio).
module.exports = {
  createTerminalServer, spawn, TerminalServer, Session, detectorTiming: native.detectorTiming,
};
