import { EventEmitter } from 'node:events';

export interface ServerOptions {
  /** The address to listen on (default 127.0.0.1). */
  host?: string;
  /** The port (default: any free one). */
  port?: number;
  /** The token clients send in their first message: at least 32 characters (default: 128 random bits as hex). */
  token?: string;
  /** The program each session runs (default: $SHELL, else /bin/sh). */
  shell?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Origins whose pages may connect, exactly (`http://127.0.0.1:8080`). */
  allowedOrigins?: string[];
  /** Host headers accepted (default: the address and port, and localhost:port). */
  allowedHosts?: string[];
  /** The path it answers on (default `/`). */
  path?: string;
  /** Sessions at once, at most (default 16): the server has one token, so also per token. */
  maxSessions?: number;
  /** Seconds a session with no client lives (default 300). */
  idleTimeout?: number;
}

export interface PlanEvent {
  session: string;
  /** The agent whose interface printed it: 'claude-code', 'codex', 'gemini-cli' or 'copilot-cli'. */
  agent: string;
  marker: 'entered' | 'planStart' | 'plan' | 'planEnd' | 'approved' | 'exited';
  /** With marker 'plan': the plan's text, escapes taken out. */
  text?: string;
}

export interface SessionInfo { id: string; pid: number; viewers: number }

export declare class TerminalServer extends EventEmitter {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly url: string;
  sessions(): SessionInfo[];
  on(event: 'exit', listener: (e: { session: string; code: number }) => void): this;
  on(event: 'plan', listener: (e: PlanEvent) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
  /** Hands `httpServer`'s WebSocket upgrades on `path` over to this relay. */
  attach(httpServer: import('node:http').Server, options?: { path?: string }): this;
  close(): void;
}

export declare function createTerminalServer(options?: ServerOptions): Promise<TerminalServer>;

export interface Disposable { dispose(): void }

export declare class Session {
  readonly pid: number;
  exitCode: number | null;
  write(data: string | Uint8Array): Promise<void>;
  resize(cols: number, rows: number): void;
  kill(signal?: 'SIGHUP' | 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGQUIT'): void;
  onData(cb: (data: Buffer) => void): Disposable;
  onExit(cb: (code: number) => void): Disposable;
}

export interface SpawnOptions { cwd?: string; env?: Record<string, string>; cols?: number; rows?: number }

export declare function spawn(file: string, args?: string[], options?: SpawnOptions): Session;

/**
 * For the benchmark (benches/termio): the Rust plan-mode detector's time over
 * `data` fed `chunk` bytes at a time, in nanoseconds, and the events it found.
 */
export declare function detectorTiming(data: Buffer, chunk: number): { ns: number; events: number };
