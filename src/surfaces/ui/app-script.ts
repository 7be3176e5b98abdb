/**
 * The runs page's script (`GET /ui/app.js`), served as written: no build step, no CDN, no
 * dependency. It keeps the token (with `--token`) in session storage only, reads the live
 * stream (`/ui/events`) with `fetch`, since `EventSource` cannot send an `Authorization`
 * header, and sends cancel and resume as `run/cancel` and `run/resume` JSON-RPC requests
 * (2026-07-28, stateless) to the MCP endpoint, the same methods every client calls. Markup comes
 * only from the server, which escapes it; text from the stream (log lines, errors) is set with
 * `textContent`. Reconnects after a dropped stream with a growing delay; never polls.
 */
export const APP_SCRIPT = String.raw`'use strict';
(function () {
  var TOKEN_KEY = 'mhl-ui-token';
  var VERSION = '2026-07-28';
  var body = document.body;
  var needsToken = body.dataset.auth === 'token';
  var mcpPath = body.dataset.mcp || '/mcp';
  var page = Number(new URLSearchParams(location.search).get('page') || body.dataset.page || '1');
  if (!(page >= 1)) page = 1;
  var runsEl = document.getElementById('runs');
  var live = document.getElementById('live');
  var notice = document.getElementById('notice');
  var form = document.getElementById('token-form');
  var input = document.getElementById('token-input');
  var tokenError = document.getElementById('token-error');
  var forget = document.getElementById('forget-token');
  var nextId = 1;
  var retryMs = 500;
  var controller = null;

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }
  function headers(extra) {
    var h = extra || {};
    var t = token();
    if (t) h['Authorization'] = 'Bearer ' + t;
    return h;
  }
  function setLive(state, text) {
    live.dataset.live = state;
    live.textContent = text;
  }
  function say(text) {
    notice.textContent = text;
    notice.hidden = text === '';
  }
  function askToken(message) {
    form.hidden = false;
    forget.hidden = true;
    tokenError.textContent = message || '';
    tokenError.hidden = !message;
    setLive('off', 'not live');
    input.focus();
  }

  function durationText(ms) {
    var whole = Math.max(0, Math.round(ms));
    if (whole < 1000) return whole + ' ms';
    if (whole < 60000) return (whole / 1000).toFixed(1) + ' s';
    var s = Math.floor(whole / 1000);
    if (s < 3600) return Math.floor(s / 60) + 'm ' + String(s % 60).padStart(2, '0') + 's';
    var m = Math.floor(s / 60);
    return Math.floor(m / 60) + 'h ' + String(m % 60).padStart(2, '0') + 'm';
  }
  // The step still running shows its time so far; the server's next row replaces it.
  setInterval(function () {
    var open = document.querySelectorAll('.span[data-started]');
    for (var i = 0; i < open.length; i++) {
      var dur = open[i].querySelector('.dur');
      if (dur) dur.textContent = durationText(Date.now() - Number(open[i].dataset.started));
    }
  }, 1000);

  function replaceRow(runId, html) {
    var old = document.getElementById('run-' + runId);
    if (!old) return;
    var holder = document.createElement('ol');
    holder.innerHTML = html;
    var row = holder.firstElementChild;
    if (!row) return;
    var oldLog = old.querySelector('pre.log');
    var keepBottom = oldLog && oldLog.scrollTop + oldLog.clientHeight >= oldLog.scrollHeight - 4;
    old.replaceWith(row);
    var log = row.querySelector('pre.log');
    if (log && keepBottom) log.scrollTop = log.scrollHeight;
  }
  function appendLog(runId, text, dropped) {
    var row = document.getElementById('run-' + runId);
    var log = row && row.querySelector('pre.log');
    if (!log) return;
    var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    log.append(document.createTextNode((dropped ? '\u2026\n' : '') + text));
    if (atBottom) log.scrollTop = log.scrollHeight;
  }
  function onEvent(name, data) {
    var value;
    try { value = JSON.parse(data); } catch (e) { return; }
    if (name === 'page') {
      runsEl.innerHTML = value.html;
      var logs = runsEl.querySelectorAll('pre.log');
      for (var i = 0; i < logs.length; i++) logs[i].scrollTop = logs[i].scrollHeight;
    } else if (name === 'row') replaceRow(value.runId, value.html);
    else if (name === 'log') appendLog(value.runId, value.text, value.dropped === true);
  }

  // One SSE block: 'event:' and 'data:' lines; comments (':') keep the stream alive.
  function parseBlock(block) {
    var name = 'message';
    var data = [];
    var lines = block.split('\n');
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) onEvent(name, data.join('\n'));
  }

  function retry() {
    setLive('off', 'reconnecting\u2026');
    var wait = retryMs;
    retryMs = Math.min(retryMs * 2, 10000);
    setTimeout(connect, wait);
  }

  function connect() {
    if (needsToken && !token()) return askToken('');
    if (controller) controller.abort();
    controller = new AbortController();
    setLive('connecting', 'connecting\u2026');
    fetch('/ui/events?page=' + page, {
      headers: headers({ Accept: 'text/event-stream' }),
      cache: 'no-store',
      signal: controller.signal,
    }).then(function (res) {
      if (res.status === 401) {
        try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage off */ }
        return askToken('That token was refused.');
      }
      if (!res.ok || !res.body) {
        say('The live stream is unavailable (HTTP ' + res.status + ').');
        return retry();
      }
      form.hidden = true;
      forget.hidden = !needsToken;
      setLive('open', 'live');
      say('');
      retryMs = 500;
      var reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      var buffer = '';
      function read() {
        return reader.read().then(function (step) {
          if (step.done) return retry();
          buffer += step.value;
          var end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            parseBlock(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
          return read();
        });
      }
      return read();
    }).catch(function (error) {
      if (error && error.name === 'AbortError') return;
      retry();
    });
  }

  function call(method, runId, button) {
    button.disabled = true;
    var request = {
      jsonrpc: '2.0',
      id: nextId++,
      method: method,
      params: {
        runId: runId,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': VERSION,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'mhl-ui', version: '1' },
        },
      },
    };
    fetch(mcpPath, {
      method: 'POST',
      headers: headers({
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'MCP-Protocol-Version': VERSION,
        'Mcp-Method': method,
      }),
      body: JSON.stringify(request),
    }).then(function (res) {
      if (res.status === 401) {
        try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage off */ }
        askToken('That token was refused.');
        return null;
      }
      return res.json();
    }).then(function (answer) {
      if (answer && answer.error) say(method + ' refused: ' + answer.error.message);
      else if (answer) say('');
    }).catch(function () {
      say(method + ' could not reach the server.');
    }).finally(function () {
      button.disabled = false;
    });
  }

  document.addEventListener('click', function (event) {
    var target = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (!target) return;
    var action = target.dataset.action;
    if (action === 'cancel') call('run/cancel', target.dataset.runId, target);
    else if (action === 'resume') call('run/resume', target.dataset.runId, target);
  });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var value = input.value;
    input.value = '';
    if (value === '') return;
    try { sessionStorage.setItem(TOKEN_KEY, value); } catch (e) { /* storage off */ }
    connect();
  });
  forget.addEventListener('click', function () {
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage off */ }
    if (controller) controller.abort();
    runsEl.textContent = '';
    askToken('');
  });
  connect();
})();
`;
