// Language server latency: the time from a keystroke (didChange) to its diagnostics in a file
// that imports a generated 10,000-line module, over stdio against the built `mhl lsp`, with
// the debounce at 0. Same-run baseline: one plain checkFiles of the same two files in this
// process (what a server without incremental reuse would pay per keystroke). One JSON line
// per figure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { checkFiles, diskHost } from '../dist/lang/index.js';
import { generateSource } from './gen-source.mjs';

const RUNS = 15;
const dir = mkdtempSync(join(tmpdir(), 'mhl-lsp-bench-'));
const lib = join(dir, 'lib.mh');
const main = join(dir, 'main.mh');
writeFileSync(lib, generateSource(10_000));
const mainText = (n) =>
  `import "lib.mh"\n\npipeline Main {\n    var n = ${n}\n    step S {\n        log(Helper0.total([n]))\n    }\n}\n`;
writeFileSync(main, mainText(0));

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const child = spawn(process.execPath, ['dist/bin/mhl.js', 'lsp'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const connection = createMessageConnection(
  new StreamMessageReader(child.stdout),
  new StreamMessageWriter(child.stdin),
);
let waiting;
connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
  if (waiting && p.version === waiting.version) waiting.resolve(p);
});
connection.listen();
const next = (version) => new Promise((resolve) => (waiting = { version, resolve }));
await connection.sendRequest(InitializeRequest.type, {
  processId: process.pid,
  rootUri: pathToFileURL(dir).href,
  capabilities: {},
  initializationOptions: { debounceMs: 0 },
});
await connection.sendNotification(InitializedNotification.type, {});
const uri = pathToFileURL(main).href;
let version = 1;
let opened = next(version);
await connection.sendNotification(DidOpenTextDocumentNotification.type, {
  textDocument: { uri, languageId: 'mhl', version, text: mainText(0) },
});
const first = await opened;
if (first.diagnostics.length)
  throw new Error(`fixture is not clean: ${first.diagnostics[0].message}`);
const samples = [];
for (let i = 1; i <= RUNS + 3; i++) {
  version++;
  opened = next(version);
  const started = process.hrtime.bigint();
  await connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version },
    contentChanges: [{ text: mainText(i) }],
  });
  await opened;
  if (i > 3) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
}
await connection.sendRequest(ShutdownRequest.type);
await connection.sendNotification(ExitNotification.type);
connection.dispose();

const baseline = [];
for (let i = 0; i < RUNS + 3; i++) {
  const started = process.hrtime.bigint();
  checkFiles([main], diskHost);
  if (i >= 3) baseline.push(Number(process.hrtime.bigint() - started) / 1e6);
}
rmSync(dir, { recursive: true, force: true });
const change = median(samples);
const plain = median(baseline);
console.log(
  JSON.stringify({
    bench: 'lsp',
    figure: 'change_to_diagnostics_ms',
    lines: 10_000,
    ms: +change.toFixed(1),
  }),
);
console.log(
  JSON.stringify({ bench: 'lsp', figure: 'plain_check_ms', lines: 10_000, ms: +plain.toFixed(1) }),
);
console.log(
  JSON.stringify({
    bench: 'lsp',
    figure: 'change_vs_plain_check',
    ratio: +(change / plain).toFixed(2),
  }),
);
