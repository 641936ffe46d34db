'use strict';
// Faithful JavaScript versions of the two plan-mode detectors termio's
// replaces, as the proof of concept ran them on each chunk of output:
// - RescanDetector: append the chunk to the history (the last 100,000
//   characters), strip the escapes from all of it with a regex, and test
//   every marker's regex on all of it;
// - OverlapDetector: strip and test only the new chunk with the last 512
//   characters before it.
// Both take strings (the Node stacks decode the PTY's bytes as UTF-8).

const ANSI = /\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -\/]*[0-~]/g;
const MARKERS = [
  /plan mode on/, /Here is Claude's plan:/, /Would you like to proceed\?/,
  /User approved Claude's plan/, /User rejected Claude's plan/,
];

class RescanDetector {
  constructor() { this.history = ''; }
  feed(chunk) {
    let events = 0;
    this.history += chunk;
    if (this.history.length > 100000) this.history = this.history.slice(-100000);
    const text = this.history.replace(ANSI, '');
    for (const re of MARKERS) if (re.test(text)) events++;
    return events;
  }
}

class OverlapDetector {
  constructor() { this.tail = ''; }
  feed(chunk) {
    let events = 0;
    const text = this.tail + chunk;
    const stripped = text.replace(ANSI, '');
    for (const re of MARKERS) if (re.test(stripped)) events++;
    this.tail = text.slice(-512);
    return events;
  }
}

module.exports = { RescanDetector, OverlapDetector };
