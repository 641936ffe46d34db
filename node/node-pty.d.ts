// node-pty's Unix API, as node-pty's typings declare it, from termio.
// `require('termio/node-pty')` (or an alias of `node-pty` to it) in place
// of `require('node-pty')`.

export interface IPtyForkOptions {
  /** The terminal's name: $TERM in the child (default: env's TERM, else 'xterm'). */
  name?: string;
  cols?: number;
  rows?: number;
  cwd?: string;
  /** The child's whole environment (default: this process's, without TMUX and the like). */
  env?: { [key: string]: string | undefined };
  uid?: number;
  gid?: number;
  /** How output is decoded: 'utf8' by default; null gives Buffers. */
  encoding?: BufferEncoding | null;
  /** Whether writing `flowControlPause`/`flowControlResume` pauses/resumes reading instead. */
  handleFlowControl?: boolean;
  /** Default '\x13' (XOFF). */
  flowControlPause?: string;
  /** Default '\x11' (XON). */
  flowControlResume?: string;
}

export interface IDisposable { dispose(): void }

export interface IEvent<T> { (listener: (e: T) => any): IDisposable }

export interface IPty {
  readonly pid: number;
  readonly cols: number;
  readonly rows: number;
  /** The foreground process's name (argv[0]). */
  readonly process: string;
  handleFlowControl: boolean;
  readonly onData: IEvent<string>;
  /** After every byte of output (which node-pty does not promise). */
  readonly onExit: IEvent<{ exitCode: number; signal?: number }>;
  on(event: 'data', listener: (data: string) => void): void;
  on(event: 'exit', listener: (exitCode: number, signal?: number) => void): void;
  resize(columns: number, rows: number, pixelSize?: { width: number; height: number }): void;
  /** A no-op on Unix, as in node-pty. */
  clear(): void;
  write(data: string | Buffer): void;
  kill(signal?: string): void;
  pause(): void;
  resume(): void;
}

export declare function spawn(file?: string, args?: string[], options?: IPtyForkOptions): IPty;
