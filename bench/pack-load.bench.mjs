// Load time of a 1,000-file workflow folder two ways, side by side in one run: from the folder on
// disk (loadCatalog, what `mhl serve mcp DIR` does) and from its DMPK pack (read the file,
// decrypt every entry, build the catalog from memory, what `--workflows-pack` does). Also the
// pack's read + decrypt alone. Medians of 15 alternating runs after 2 warm-ups; one JSON line
// per figure. Build first: this runs dist/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { loadCatalog, loadPackCatalog } = await import('../dist/catalog/index.js');
const { collectPackFiles, decodePack, encodePack, newWorkflowsKey, readPackFile } = await import(
  '../dist/pack/index.js'
);

const WORKFLOWS = 500; // each with its schema file: 1,000 files
const RUNS = 15;
const WARMUPS = 2;

const base = mkdtempSync(join(tmpdir(), 'mhl-bench-pack-'));
const dir = join(base, 'workflows');
mkdirSync(join(dir, 'schemas'), { recursive: true });
for (let i = 0; i < WORKFLOWS; i++) {
  writeFileSync(
    join(dir, `flow${i}.mh`),
    `schema Out${i} from "schemas/flow${i}.json"\n\npipeline Flow${i} {\n  description: "workflow ${i}"\n  input name: string\n  input count: number = 1\n  var out = ""\n  step Build { out = "\${name} \${count} \${Out${i}.path}" }\n  step Report { log(out) }\n}\n`,
  );
  writeFileSync(
    join(dir, 'schemas', `flow${i}.json`),
    JSON.stringify({
      type: 'object',
      properties: { out: { type: 'string' }, n: { type: 'integer', minimum: i } },
      required: ['out'],
    }),
  );
}
const key = newWorkflowsKey();
const { entries } = collectPackFiles(dir);
const packFile = join(base, 'workflows.dmpk');
writeFileSync(packFile, encodePack(entries, key), { mode: 0o600 });

const fromDir = () => loadCatalog(dir);
const fromPack = () => loadPackCatalog(readPackFile(packFile), key, dir);
const decodeOnly = () => decodePack(readPackFile(packFile), key);

function time(run) {
  const started = process.hrtime.bigint();
  const result = run();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.ok === false) throw new Error(`load failed: ${JSON.stringify(result.problems[0])}`);
  return ms;
}

const samples = { dir: [], pack: [], decode: [] };
for (let i = 0; i < WARMUPS + RUNS; i++) {
  // Alternate, so drift in the machine's load hits both sides alike.
  const d = time(fromDir);
  const p = time(fromPack);
  const c = time(decodeOnly);
  if (i >= WARMUPS) {
    samples.dir.push(d);
    samples.pack.push(p);
    samples.decode.push(c);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirMs = median(samples.dir);
const packMs = median(samples.pack);
const files = entries.length;
const line = (figure, value, extra = {}) =>
  console.log(JSON.stringify({ bench: 'pack-load', figure, files, ...extra, value }));
line('dir_load_ms', +dirMs.toFixed(1));
line('pack_load_ms', +packMs.toFixed(1), { pack_bytes: readPackFile(packFile).length });
line('pack_read_decrypt_ms', +median(samples.decode).toFixed(1));
line('pack_over_dir', +(packMs / dirMs).toFixed(2));
rmSync(base, { recursive: true, force: true });
