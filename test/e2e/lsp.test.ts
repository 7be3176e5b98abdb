/**
 * `mhl lsp` driven by a real LSP client (vscode-jsonrpc over the built CLI's stdio) on a copy of
 * test/fixtures/lsp: diagnostics as you type and across an import, hover, definition into
 * another module and into a prompt file, completion, symbols, rename, bad input, shutdown.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CompletionRequest,
  DefinitionRequest,
  DidChangeWatchedFilesNotification,
  DidCloseTextDocumentNotification,
  type DocumentSymbol,
  DocumentSymbolRequest,
  FileChangeType,
  type Hover,
  HoverRequest,
  type Location,
  type MarkupContent,
  type Position,
  PrepareRenameRequest,
  RenameRequest,
  ResponseError,
} from 'vscode-languageserver-protocol/node';
import { runCli } from '../helpers/cli.js';
import { LSP_FIXTURE, LspClient } from '../helpers/lsp-client.js';

const SCAN = readFileSync(join(LSP_FIXTURE, 'scan.mh'), 'utf8');
const MARKERS = readFileSync(join(LSP_FIXTURE, 'lib/markers.mh'), 'utf8');
/** LSP's RequestFailed: a request that was valid but could not be done (a refused rename). */
const REQUEST_FAILED = -32803;

/** The position of the `nth` occurrence of `needle` in `text`, plus `shift` characters. */
function pos(text: string, needle: string, shift = 0, nth = 1): Position {
  let at = -1;
  for (let i = 0; i < nth; i++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at >= 0, `fixture has no ${nth}× "${needle}"`);
  }
  const before = text.slice(0, at + shift);
  const line = before.split('\n').length - 1;
  return { line, character: before.length - before.lastIndexOf('\n') - 1 };
}

/** The markdown of a hover, failing when there is none. */
function hoverText(hover: Hover | null): string {
  assert.ok(hover, 'no hover');
  return (hover.contents as MarkupContent).value;
}

function replaceAt(text: string, needle: string, replacement: string) {
  const start = pos(text, needle);
  const end = pos(text, needle, needle.length);
  return { range: { start, end }, text: replacement };
}

describe('mhl lsp', () => {
  let client: LspClient;
  let scan: string;
  let markers: string;

  before(async () => {
    client = new LspClient();
    scan = client.uri('scan.mh');
    markers = client.uri('lib/markers.mh');
    const init = await client.initialize();
    const caps = init.capabilities;
    assert.equal(init.serverInfo?.name, 'mhl');
    assert.ok(caps.hoverProvider && caps.definitionProvider && caps.documentSymbolProvider);
    assert.deepEqual(caps.completionProvider?.triggerCharacters, ['.']);
    assert.deepEqual(caps.renameProvider, { prepareProvider: true });
  });

  after(() => client.kill());

  it('reports an error at its range as the document opens, and clears it once fixed', async () => {
    const broken = SCAN.replace('Markers.file_of', 'Marker.file_of');
    const diagnostics = await client.open(scan, broken);
    assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
    const [d] = diagnostics;
    assert.equal(d?.code, 'UNKNOWN_NAME');
    assert.equal(d?.severity, 1);
    const start = pos(broken, 'Marker.file_of');
    assert.deepEqual(d?.range, { start, end: { ...start, character: start.character + 6 } });
    // Fix it with an incremental edit: insert the missing "s".
    const at = pos(broken, 'Marker.file_of', 6);
    const fixed = await client.change(scan, [{ range: { start: at, end: at }, text: 's' }]);
    assert.deepEqual(fixed, []);
  });

  it('hovers a declaration with its kind, signature and description', async () => {
    const onTool = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'Markers.file_of', 2),
    });
    const value = hoverText(onTool);
    assert.match(value, /export tool Markers \{\n {2}file_of\(line: string\): string\n\}/);
    assert.match(value, /\*tool in lib\/markers\.mh\*/);
    assert.match(value, /Reads the lines grep prints\./);
    const onPrompt = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'Summary(count', 1),
    });
    const prompt = hoverText(onPrompt);
    assert.match(prompt, /prompt Summary\(count: number\) from "summary\.prompt\.md"/);
    assert.match(prompt, /The one-line report of a scan/, 'description from the frontmatter');
    const onNative = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'cmd.exec(', 5),
    });
    assert.match(hoverText(onNative), /cmd\.exec\(command, timeout: dur\?\)/);
    const onInput = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'pattern, folder', 1),
    });
    assert.match(hoverText(onInput), /input pattern: string = "TODO\|FIXME"/);
  });

  it('goes to a definition across an import and into a prompt file', async () => {
    const onUse = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'Markers.file_of', 3),
    })) as Location;
    const name = pos(MARKERS, 'Markers');
    assert.deepEqual(onUse, {
      uri: markers,
      range: { start: name, end: { ...name, character: name.character + 7 } },
    });
    const onMethod = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'file_of(m)', 2),
    })) as Location;
    assert.equal(onMethod.uri, markers);
    assert.deepEqual(onMethod.range.start, pos(MARKERS, 'file_of'));
    const onPath = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, '"lib/markers.mh"', 3),
    })) as Location;
    assert.equal(onPath.uri, markers);
    // From the prompt declaration (opened from disk as the editor would) into its file.
    await client.open(markers, MARKERS);
    const onFrom = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: markers },
      position: pos(MARKERS, '"summary.prompt.md"', 2),
    })) as Location;
    assert.equal(onFrom.uri, client.uri('lib/summary.prompt.md'));
    const local = (await client.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'found.exit_code', 1),
    })) as Location;
    assert.deepEqual(local.range.start, pos(SCAN, 'found = cmd'));
  });

  it("completes a native's methods after `cmd.`, and names in scope elsewhere", async () => {
    const line = pos(SCAN, '        log.info(Summary');
    await client.edit(scan, [{ range: { start: line, end: line }, text: '        cmd.\n' }]);
    const after = { line: line.line, character: 12 };
    const items = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: scan },
      position: after,
      context: { triggerKind: 2, triggerCharacter: '.' },
    });
    const labels = (Array.isArray(items) ? items : (items?.items ?? [])).map((i) => i.label);
    assert.deepEqual(labels.sort(), ['exec', 'exec_all']);
    // An empty line in the step: locals, pipeline names, imports, natives and keywords.
    await client.edit(scan, [
      { range: { start: line, end: { line: line.line, character: 12 } }, text: '        ' },
    ]);
    const here = { line: line.line, character: 8 };
    const all = await client.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: scan },
      position: here,
    });
    const names = new Set((Array.isArray(all) ? all : (all?.items ?? [])).map((i) => i.label));
    for (const expected of [
      'matches',
      'folder',
      'Markers',
      'Summary',
      'cmd',
      'html',
      'fail',
      'var',
    ])
      assert.ok(names.has(expected), `completion lacks ${expected}`);
    assert.ok(!names.has('found'), "another step's local is not in scope");
    const restored = await client.change(scan, [
      { range: { start: line, end: { line: line.line + 1, character: 0 } }, text: '' },
    ]);
    assert.deepEqual(restored, []);
  });

  it('lists the document symbols', async () => {
    const symbols = (await client.connection.sendRequest(DocumentSymbolRequest.type, {
      textDocument: { uri: scan },
    })) as DocumentSymbol[];
    assert.deepEqual(
      symbols.map((s) => s.name),
      ['TodoScan'],
    );
    assert.deepEqual(
      symbols[0]?.children?.map((c) => `${c.detail} ${c.name}`),
      ['input folder', 'input pattern', 'var matches', 'var files', 'step Search', 'step Group'],
    );
    assert.deepEqual(symbols[0]?.selectionRange.start, pos(SCAN, 'TodoScan'));
  });

  it('renames a local everywhere it is used, and refuses an imported name', async () => {
    const at = pos(SCAN, 'found.stdout', 2);
    const prepared = await client.connection.sendRequest(PrepareRenameRequest.type, {
      textDocument: { uri: scan },
      position: at,
    });
    assert.deepEqual(prepared, {
      range: { start: pos(SCAN, 'found.stdout'), end: pos(SCAN, 'found.stdout', 5) },
      placeholder: 'found',
    });
    const edit = await client.connection.sendRequest(RenameRequest.type, {
      textDocument: { uri: scan },
      position: at,
      newName: 'hits',
    });
    const edits = edit?.changes?.[scan] ?? [];
    assert.equal(Object.keys(edit?.changes ?? {}).length, 1);
    assert.equal(edits.length, 4, 'the declaration and three uses');
    assert.ok(edits.every((e) => e.newText === 'hits'));
    for (const [position, why] of [
      [pos(SCAN, 'Markers.file_of', 1), 'imported'],
      [pos(SCAN, 'cmd.exec', 1), 'native'],
    ] as const) {
      await assert.rejects(
        client.connection.sendRequest(RenameRequest.type, {
          textDocument: { uri: scan },
          position,
          newName: 'Other',
        }),
        (e: unknown) => e instanceof ResponseError && e.code === REQUEST_FAILED,
        why,
      );
    }
  });

  it('re-checks an importer when the file it imports changes', async () => {
    const scanNext = client.nextDiagnostics(scan, (p) => p.diagnostics.length > 0);
    await client.change(markers, [replaceAt(MARKERS, 'export prompt', 'prompt')]);
    const broken = await scanNext;
    assert.deepEqual(
      broken.diagnostics.map((d) => [d.code, d.range.start]),
      [['IMPORT', pos(SCAN, 'Summary }')]],
    );
    const scanFixed = client.nextDiagnostics(scan, (p) => p.diagnostics.length === 0);
    const start = pos(MARKERS, 'export prompt');
    await client.change(markers, [{ range: { start, end: start }, text: 'export ' }]);
    await scanFixed;
  });

  it('renames a declaration local to its file, and refuses an exported one', async () => {
    const prompts = client.uri('prompts.mh');
    const PROMPTS = readFileSync(join(LSP_FIXTURE, 'prompts.mh'), 'utf8');
    assert.deepEqual(await client.open(prompts, PROMPTS), []);
    const edit = await client.connection.sendRequest(RenameRequest.type, {
      textDocument: { uri: prompts },
      position: pos(PROMPTS, 'Depth = Depth.Quick', 8),
      newName: 'Thoroughness',
    });
    const edits = edit?.changes?.[prompts] ?? [];
    assert.deepEqual(
      edits.map((e) => e.range.start).sort((a, b) => a.line - b.line || a.character - b.character),
      [pos(PROMPTS, 'Depth {'), pos(PROMPTS, 'Depth = Depth'), pos(PROMPTS, 'Depth.Quick')],
    );
    await assert.rejects(
      client.connection.sendRequest(PrepareRenameRequest.type, {
        textDocument: { uri: markers },
        position: pos(MARKERS, 'Markers', 1),
      }),
      (e: unknown) => e instanceof ResponseError && e.code === REQUEST_FAILED,
    );
    await assert.rejects(
      client.connection.sendRequest(RenameRequest.type, {
        textDocument: { uri: prompts },
        position: pos(PROMPTS, 'depth: Depth', 1),
        newName: 'summary',
      }),
      (e: unknown) => e instanceof ResponseError && e.code === REQUEST_FAILED,
      'a name already taken in the scope',
    );
  });

  it('re-checks only the changed document and its importers, not unrelated open ones', async () => {
    const prompts = client.uri('prompts.mh');
    const before = client.published.filter((p) => p.uri === prompts).length;
    const markersBefore = client.published.filter((p) => p.uri === markers).length;
    const at = pos(SCAN, 'TodoScan');
    await client.change(scan, [{ range: { start: at, end: at }, text: ' ' }]);
    await client.change(scan, [
      { range: { start: at, end: { ...at, character: at.character + 1 } }, text: '' },
    ]);
    // A round trip: anything that check published is in before the answer.
    await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: at,
    });
    assert.equal(client.published.filter((p) => p.uri === prompts).length, before);
    assert.equal(
      client.published.filter((p) => p.uri === markers).length,
      markersBefore,
      'an imported file is not re-checked for its importer',
    );
  });

  it("completes a tool's methods and the run context's fields after the dot", async () => {
    const line = pos(SCAN, '        log.info(Summary');
    const labelsAfter = async (text: string) => {
      await client.edit(scan, [{ range: { start: line, end: line }, text: `        ${text}\n` }]);
      const items = await client.connection.sendRequest(CompletionRequest.type, {
        textDocument: { uri: scan },
        position: { line: line.line, character: 8 + text.length },
      });
      await client.edit(scan, [
        { range: { start: line, end: { line: line.line + 1, character: 0 } }, text: '' },
      ]);
      return (Array.isArray(items) ? items : (items?.items ?? [])).map((i) => i.label);
    };
    assert.deepEqual(await labelsAfter('Markers.'), ['file_of']);
    assert.deepEqual((await labelsAfter('context.')).sort(), [
      'principal',
      'resumed',
      'session_id',
      'started_at',
      'vars',
    ]);
    assert.deepEqual(await labelsAfter('matches.'), [], 'no guesses about what a variable holds');
  });

  it("shows a prompt file's problem on the `from` that names it, after the file changes on disk", async () => {
    const file = join(client.root, 'lib/summary.prompt.md');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('${count}', '${total}'));
    const next = client.nextDiagnostics(markers, (p) => p.diagnostics.length > 0);
    await client.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: client.uri('lib/summary.prompt.md'), type: FileChangeType.Changed }],
    });
    const [d, ...rest] = (await next).diagnostics;
    assert.deepEqual(rest, []);
    assert.equal(d?.code, 'ASSET');
    assert.deepEqual(d?.range.start, pos(MARKERS, '"summary.prompt.md"'));
    assert.equal(d?.relatedInformation?.[0]?.location.uri, client.uri('lib/summary.prompt.md'));
    assert.deepEqual(d?.relatedInformation?.[0]?.location.range.start, { line: 3, character: 6 });
    writeFileSync(file, text);
    const clean = client.nextDiagnostics(markers, (p) => p.diagnostics.length === 0);
    await client.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: client.uri('lib/summary.prompt.md'), type: FileChangeType.Changed }],
    });
    await clean;
  });

  it('clears the diagnostics of a document when it closes', async () => {
    const prompts = client.uri('prompts.mh');
    const cleared = client.nextDiagnostics(prompts);
    await client.connection.sendNotification(DidCloseTextDocumentNotification.type, {
      textDocument: { uri: prompts },
    });
    assert.deepEqual((await cleared).diagnostics, []);
  });

  it('survives malformed and oversized input', async () => {
    client.raw('Content-Length: 7\r\n\r\n{"oops:');
    client.raw('Content-Type: nothing-else\r\n\r\n');
    client.raw(
      `Content-Length: 40\r\n\r\n${JSON.stringify({ jsonrpc: '2.0', method: 12 }).padEnd(40)}`,
    );
    const big = client.uri('big.mh');
    const huge = `// ${'x'.repeat(5 * 1024 * 1024)}\n`;
    const diagnostics = await client.open(big, huge);
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['LIMIT_EXCEEDED'],
    );
    // A message past the server's 32 MiB cap is skipped whole: this document never opens.
    const tooBig = client.uri('too-big.mh');
    const text = `pipeline P {\n    step S { cmd.exec("true") }\n}\n// ${'x'.repeat(33 * 1024 * 1024)}\n`;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      method: 'textDocument/didOpen',
      params: { textDocument: { uri: tooBig, languageId: 'mhl', version: 1, text } },
    });
    client.raw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const skipped = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: tooBig },
      position: { line: 1, character: 14 },
    });
    assert.equal(skipped, null);
    const nowhere = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: { line: 10_000, character: 10_000 },
    });
    assert.equal(nowhere, null);
    const unknown = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: client.uri('never-opened.mh') },
      position: { line: 0, character: 0 },
    });
    assert.equal(unknown, null);
  });

  it('shuts down and exits 0', async () => {
    assert.equal(await client.shutdown(), 0);
  });
});

describe('mhl lsp (debounce)', () => {
  let client: LspClient;
  before(async () => {
    client = new LspClient();
    // Far longer than the test: only a request can make the server check.
    await client.initialize(10_000);
  });
  after(() => client.kill());

  it('checks a burst of changes once, at its last version, when a request needs it', async () => {
    const scan = client.uri('scan.mh');
    await client.openOnly(scan, SCAN);
    const at = pos(SCAN, 'Markers.file_of');
    await client.edit(scan, [{ range: { start: at, end: at }, text: 'x' }]);
    await client.edit(scan, [
      { range: { start: at, end: { ...at, character: at.character + 1 } }, text: 'y' },
    ]);
    const hover = await client.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri: scan },
      position: pos(SCAN, 'cmd.exec', 1),
    });
    assert.match(hoverText(hover), /native namespace cmd/);
    // The check ran before the answer was written, so its diagnostics are already here.
    const mine = client.published.filter((p) => p.uri === scan);
    assert.deepEqual(
      mine.map((p) => [p.version, p.diagnostics.map((d) => d.code)]),
      [[3, ['UNKNOWN_NAME']]],
    );
    assert.equal(await client.shutdown(), 0);
  });
});

describe('mhl lsp (process)', () => {
  it('exits when its client goes away without shutting it down', async () => {
    // runCli closes stdin at once, as a crashed editor's pipe would be closed.
    const r = await runCli(['lsp']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '', 'stdout carries nothing but the protocol');
  });
});
