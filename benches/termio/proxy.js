#!/usr/bin/env node
'use strict';
// A delaying TCP proxy for termio's benchmark (this kernel has no netem).
// Time runs in 100 ms windows; each window draws a delay of MEAN ms plus or
// minus up to JITTER ms (uniform), and, with probability SPIKE_P, SPIKE ms
// more. A chunk read from one side is written to the other after its
// window's delay; order is kept, as TCP keeps it, so a spike delays what
// follows it too. Both directions are delayed, independently. At most 1 MiB
// per direction is in the proxy at once: past that it stops reading, as a
// real path's window would.
//
// Usage: proxy.js TARGET_PORT MEAN JITTER SPIKE_P SPIKE; prints {"port": N}.
const net = require('node:net');

const [target, mean, jitter, spikeP, spike] = process.argv.slice(2).map(Number);
const WINDOW = 1 << 20;

function pipe(from, to) {
  let last = 0;
  let held = 0;
  let window = -1;
  let delay = mean;
  // Chunks waiting, in order, each with when it is due; one timer, for the
  // first.
  const queue = [];
  let timer = null;
  const release = () => {
    timer = null;
    const now = performance.now();
    while (queue.length && queue[0].at <= now) {
      const { chunk } = queue.shift();
      held -= chunk.length;
      to.write(chunk, () => { if (held <= WINDOW && from.isPaused()) from.resume(); });
    }
    if (queue.length) timer = setTimeout(release, queue[0].at - now);
    else if (ended) to.end();
  };
  let ended = false;
  from.on('data', (chunk) => {
    const now = performance.now();
    if (Math.floor(now / 100) !== window) {
      window = Math.floor(now / 100);
      delay = mean + (Math.random() * 2 - 1) * jitter;
      if (Math.random() < spikeP) delay += spike;
    }
    const at = Math.max(last, now + delay);
    last = at;
    held += chunk.length;
    if (held > WINDOW) from.pause();
    queue.push({ chunk, at });
    if (timer === null) timer = setTimeout(release, at - now);
  });
  from.on('end', () => {
    ended = true;
    if (!queue.length) to.end();
  });
  from.on('error', () => to.destroy());
}

const server = net.createServer((client) => {
  const upstream = net.connect(target, '127.0.0.1');
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  pipe(client, upstream);
  pipe(upstream, client);
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
