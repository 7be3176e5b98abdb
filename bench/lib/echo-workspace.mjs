// The workspace the HTTP benches serve: a temp folder with `flows/echo.mh` (a one-step Echo, the
// trivial workflow of issue 11's HTTP goals) and an empty `cwd/` that calls pass as their context.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes the workspace under the system temp folder; the caller removes `dir`. */
export function echoWorkspace(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const flows = join(dir, 'flows');
  const cwd = join(dir, 'cwd');
  mkdirSync(flows);
  mkdirSync(cwd);
  writeFileSync(
    join(flows, 'echo.mh'),
    'pipeline Echo {\n  input text: string\n  var out = ""\n  step S { out = text }\n}\n',
  );
  return { dir, flows, cwd };
}
