// termio's browser client: xterm.js over the relay's WebSocket
// (crates/termio/PROTOCOL.md). The token comes in the page's fragment
// (#token=…, never sent to a server) or from a prompt, and is kept for
// this tab only; the session and the sequence number reached are kept
// too, so that a reload resumes the session and replays what it missed.
'use strict';
(function () {
  const status = document.getElementById('status');
  const banner = document.getElementById('banner');
  const term = new Terminal({ scrollback: 10000 });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(document.getElementById('term'));
  fit.fit();

  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get('token')) {
    sessionStorage.setItem('termio.token', fragment.get('token'));
    history.replaceState(null, '', location.pathname + location.search);
  }
  let token = sessionStorage.getItem('termio.token');
  if (!token) {
    token = prompt('termio token') || '';
    sessionStorage.setItem('termio.token', token);
  }

  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/term';
  let ws;
  let seq = Number(sessionStorage.getItem('termio.seq') || 0);
  let session = sessionStorage.getItem('termio.session');
  const encoder = new TextEncoder();

  function send(m) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(m)); }

  // The first connection of a page asks for all the session has kept (the
  // page's terminal is new); a reconnect asks from the byte it reached.
  let fresh = true;
  let ended = false;

  function connect() {
    ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      const hello = { type: 'hello', token, cols: term.cols, rows: term.rows };
      if (session) {
        hello.session = session;
        if (!fresh) hello.seq = seq;
      }
      fresh = false;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== 'string') {
        const bytes = new Uint8Array(e.data);
        term.write(bytes);
        seq += bytes.length;
        sessionStorage.setItem('termio.seq', String(seq));
        return;
      }
      const m = JSON.parse(e.data);
      if (m.type === 'hello') {
        session = m.session;
        seq = m.seq;
        sessionStorage.setItem('termio.session', session);
        sessionStorage.setItem('termio.seq', String(seq));
        status.textContent = 'session ' + session;
      } else if (m.type === 'lost') {
        // What the lost bytes drew is unknown: start from a clean terminal;
        // the relay has asked the program to draw its screen again.
        seq = m.to;
        term.reset();
        term.write('\x1b[33m[termio: ' + (m.to - m.from) + ' bytes of output were lost; redrawn]\x1b[0m\r\n');
      } else if (m.type === 'exit') {
        ended = true;
        status.textContent = 'exited with ' + m.code;
        sessionStorage.removeItem('termio.session');
        sessionStorage.removeItem('termio.seq');
        session = null;
      } else if (m.type === 'plan') {
        banner.style.display = 'block';
        banner.textContent = 'plan mode: ' + m.marker;
      }
    };
    ws.onclose = (e) => {
      status.textContent = 'closed (' + e.code + (e.reason ? ': ' + e.reason : '') + ')';
      if (e.code === 4404) {
        // The session is gone: the next connection starts a new one.
        session = null;
        sessionStorage.removeItem('termio.session');
      }
      // Refusals (4400-4499) and the end are final; anything else is a
      // dropped connection: reconnect, resuming from the byte reached.
      if (!ended && !(e.code >= 4400 && e.code < 4500 && e.code !== 4404)) {
        setTimeout(connect, 1000);
      }
    };
  }

  term.onData((d) => { if (ws && ws.readyState === 1) ws.send(encoder.encode(d)); });
  term.onResize(({ cols, rows }) => send({ type: 'resize', cols, rows }));
  window.addEventListener('resize', () => fit.fit());
  connect();
  window.termio = { term };
})();
