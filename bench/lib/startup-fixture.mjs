// What the start-up benches serve and send (serve-startup.bench.mjs, startup-init.mjs): a folder
// of generated workflows, and the 2026-07-28 `server/discover` a client opens with.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The `_meta` of a modern request. */
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** One `server/discover` request, id 1, as a stdio line. */
export const DISCOVER_LINE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: { _meta: MODERN_META },
})}\n`;

/** Writes `count` two-step workflows, `Flow0`…, into a new folder `dir`; returns `dir`. */
export function writeWorkflows(dir, count) {
  mkdirSync(dir);
  for (let i = 0; i < count; i++) {
    writeFileSync(
      join(dir, `flow${i}.mh`),
      `pipeline Flow${i} {\n  description: "workflow ${i}"\n  input name: string\n  input count: number = 1\n  var out = ""\n  step Build { out = "\${name} \${count}" }\n  step Report { log(out) }\n}\n`,
    );
  }
  return dir;
}
