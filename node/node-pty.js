'use strict';
// node-pty's API (`spawn` and the `IPty` it returns, as node-pty's typings
// declare them for Unix) over termio's Rust session, so that an
// application written against node-pty runs on termio by requiring
// `termio/node-pty` in its place. Where it differs from node-pty is said
// in node/README.md: every byte the child wrote is given before `exit`.
const { EventEmitter } = require('node:events');
const { StringDecoder } = require('node:string_decoder');
const fs = require('node:fs');
const os = require('node:os');
const native = require('./termio.linux-x64-gnu.node');

const DEFAULT_FILE = 'sh';
const DEFAULT_NAME = 'xterm';
const DEFAULT_COLS = 80;
const DEFAULT_ROWS = 24;
const FLOW_CONTROL_PAUSE = '\x13';
const FLOW_CONTROL_RESUME = '\x11';
// A terminal's size is 16 bits a side (struct winsize).
const MAX_SIDE = 0xffff;
// Output decoded while nothing listens for it is kept, as node-pty's
// paused stream keeps it, up to this much; past it, reading waits.
const HELD_MAX = 1 << 20;
// Variables node-pty leaves out of `process.env` when it is the child's.
const SANITIZED = ['TMUX', 'TMUX_PANE', 'STY', 'WINDOW', 'WINDOWID', 'TERMCAP', 'COLUMNS', 'LINES'];

/** node-pty's check of an option's type (a falsy value is not checked). */
function checkType(name, value, type) {
  if (!value) return;
  if (typeof value !== type) {
    throw new TypeError(`${name} must be a ${type} (not a ${typeof value})`);
  }
}

/** A size side that a terminal can have, or an error that says why not. */
function side(name, value) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_SIDE) {
    throw new RangeError(`${name} must be a whole number from 1 to ${MAX_SIDE} (not ${String(value)})`);
  }
  return value;
}

/** A program in a new PTY, as node-pty's `IPty`. */
class Terminal extends EventEmitter {
  constructor(file, args, opt) {
    super();
    if (typeof args === 'string') {
      throw new TypeError('args as a string is not supported on unix.');
    }
    if (args != null && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) {
      throw new TypeError('args must be an array of strings');
    }
    opt = opt || {};
    if (typeof opt !== 'object') throw new TypeError(`options must be an object (not a ${typeof opt})`);
    for (const [name, type] of [
      ['name', 'string'], ['cols', 'number'], ['rows', 'number'], ['cwd', 'string'], ['env', 'object'],
      ['uid', 'number'], ['gid', 'number'], ['encoding', 'string'],
    ]) checkType(name, opt[name], type);
    if (file != null && typeof file !== 'string') throw new TypeError(`file must be a string (not a ${typeof file})`);
    file = file || DEFAULT_FILE;
    this.handleFlowControl = !!opt.handleFlowControl;
    this._flowControlPause = opt.flowControlPause || FLOW_CONTROL_PAUSE;
    this._flowControlResume = opt.flowControlResume || FLOW_CONTROL_RESUME;
    this._cols = side('cols', opt.cols || DEFAULT_COLS);
    this._rows = side('rows', opt.rows || DEFAULT_ROWS);
    const source = opt.env || process.env;
    const env = {};
    for (const [k, v] of Object.entries(source)) {
      if (v !== undefined) env[k] = String(v);
    }
    if (source === process.env) for (const k of SANITIZED) delete env[k];
    const cwd = opt.cwd || process.cwd();
    env.PWD = cwd;
    this._name = opt.name || env.TERM || DEFAULT_NAME;
    env.TERM = this._name;
    this._encoding = opt.encoding === undefined ? 'utf8' : opt.encoding;
    if (this._encoding !== null && !Buffer.isEncoding(this._encoding)) {
      throw new TypeError(`encoding must be a Buffer encoding (not ${JSON.stringify(this._encoding)})`);
    }
    this._decoder = this._encoding === null ? null : new StringDecoder(this._encoding);
    this._file = file;
    this._native = native.NativeSession.spawn(file, {
      args: args || [],
      cwd,
      env,
      cols: this._cols,
      rows: this._rows,
      clearEnv: true,
      // A program that cannot be run, or a cwd that cannot be entered, is
      // the child's exit with code 1 and its message, as in node-pty.
      startErrorsExit: true,
      uid: opt.uid ?? undefined,
      gid: opt.gid ?? undefined,
    });
    this._pid = this._native.pid;
    this._ptsName = this._native.ptsName;
    this._exited = false;
    this._paused = false;
    this._unpause = null;
    this._held = [];
    this._heldBytes = 0;
    this._writes = Promise.resolve();
    // Output that comes before a listener is kept for the first one.
    this.on('newListener', (event) => {
      if (event === 'data' && this._held.length > 0) process.nextTick(() => this._flush());
    });
    this._read();
  }

  get pid() { return this._pid; }
  get cols() { return this._cols; }
  get rows() { return this._rows; }
  /** The terminal's child side, as node-pty's `UnixTerminal.ptsName`. */
  get ptsName() { return this._ptsName; }
  /** The master side's descriptor (termio's own: for `isatty`, not to close). */
  get fd() { return this._native.fd; }

  /** The name of the terminal's foreground process (the file if none). */
  get process() {
    try {
      const stat = fs.readFileSync(`/proc/${this._pid}/stat`, 'latin1');
      // Fields after the command's name in parentheses: state, ppid, pgrp,
      // session, tty_nr, tpgid.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const tpgid = Number(fields[5]);
      if (tpgid > 0) {
        const cmdline = fs.readFileSync(`/proc/${tpgid}/cmdline`, 'utf8');
        const argv0 = cmdline.split('\0')[0];
        if (argv0) return argv0;
      }
    } catch {
      // Gone: the file it started.
    }
    return this._file;
  }

  /** Calls `listener(data)` with each piece of output. */
  onData(listener) {
    this.on('data', listener);
    return { dispose: () => this.off('data', listener) };
  }

  /** Calls `listener({ exitCode, signal })` once, after all the output. */
  onExit(listener) {
    const l = (exitCode, signal) => listener({ exitCode, signal });
    this.on('exit', l);
    return { dispose: () => this.off('exit', l) };
  }

  /** Writes to the program's input (a string in the terminal's encoding, or bytes). */
  write(data) {
    if (this.handleFlowControl) {
      if (data === this._flowControlPause) { this.pause(); return; }
      if (data === this._flowControlResume) { this.resume(); return; }
    }
    if (typeof data !== 'string' && !(data instanceof Uint8Array)) {
      throw new TypeError(`data must be a string or a Buffer (not a ${typeof data})`);
    }
    if (this._exited) throw new Error(`the terminal's program (pid ${this._pid}) has exited: nothing can be written`);
    const bytes = typeof data === 'string' ? Buffer.from(data, this._encoding || 'utf8') : Buffer.from(data);
    // One write after another, in the order asked.
    this._writes = this._writes
      .then(() => this._native.write(bytes))
      .catch((e) => { if (this.listenerCount('error') > 0) this.emit('error', e); });
  }

  /** Sets the size, in characters and, if given, in pixels (`{ width, height }`). */
  resize(columns, rows, pixelSize) {
    side('cols', columns);
    side('rows', rows);
    let width; let height;
    if (pixelSize !== undefined) {
      if (pixelSize === null || typeof pixelSize !== 'object') throw new TypeError('pixelSize must be an object { width, height }');
      width = pixelSize.width === 0 ? 0 : side('pixelSize.width', pixelSize.width);
      height = pixelSize.height === 0 ? 0 : side('pixelSize.height', pixelSize.height);
    }
    if (this._exited) throw new Error(`the terminal's program (pid ${this._pid}) has exited: it cannot be resized`);
    this._native.resize(columns, rows, width, height);
    this._cols = columns;
    this._rows = rows;
  }

  /** No-op on Unix, as in node-pty (its buffer is ConPTY's, on Windows). */
  clear() {}

  /** Sends `signal` (SIGHUP by default) to the program, as node-pty does. */
  kill(signal) {
    const name = signal === undefined ? 'SIGHUP' : signal;
    if (typeof name !== 'string' || !Object.hasOwn(os.constants.signals, name)) {
      throw new TypeError(`unknown signal: ${String(signal)}`);
    }
    try {
      process.kill(this._pid, name);
    } catch (e) {
      // Already gone (its exit is on its way): as node-pty, nothing to say.
      if (e.code !== 'ESRCH') throw e;
    }
  }

  /** Ends the program (SIGHUP), as node-pty's `destroy`. */
  destroy() {
    if (!this._exited) this.kill('SIGHUP');
  }

  /** Stops reading the program's output (it blocks once the PTY is full). */
  pause() { this._paused = true; }

  /** Reads its output again. */
  resume() {
    this._paused = false;
    this._wake();
  }

  /** The reading loop looks again at whether it may read. */
  _wake() {
    if (this._unpause) { const u = this._unpause; this._unpause = null; u(); }
  }

  _deliver(chunk) {
    if (this.listenerCount('data') === 0) {
      this._held.push(chunk);
      this._heldBytes += chunk.length;
      return;
    }
    this.emit('data', chunk);
  }

  _flush() {
    const held = this._held;
    this._held = [];
    this._heldBytes = 0;
    for (const c of held) this.emit('data', c);
    // Reading goes on, unless the caller paused it.
    this._wake();
  }

  async _read() {
    for (;;) {
      while (this._paused || this._heldBytes >= HELD_MAX) {
        await new Promise((resolve) => { this._unpause = resolve; });
      }
      const b = await this._native.read();
      if (b === null) break;
      const chunk = this._decoder ? this._decoder.write(b) : b;
      if (chunk.length > 0) this._deliver(chunk);
    }
    if (this._decoder) {
      const rest = this._decoder.end();
      if (rest.length > 0) this._deliver(rest);
    }
    const code = await this._native.exitCode();
    this._exited = true;
    // The output kept for a listener still goes first.
    const finish = () => {
      if (code < 0) this.emit('exit', 0, -code); else this.emit('exit', code, 0);
      this.emit('close');
    };
    if (this._held.length > 0 && this.listenerCount('data') > 0) this._flush();
    finish();
  }
}

/**
 * Starts `file` (default `sh`) with `args` in a new PTY, as node-pty's
 * `spawn`: `{ name, cols, rows, cwd, env, encoding, handleFlowControl,
 * flowControlPause, flowControlResume, uid, gid }`.
 */
function spawn(file, args, options) {
  return new Terminal(file, args, options);
}

module.exports = { spawn, Terminal };
