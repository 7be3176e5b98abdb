import assert from 'node:assert/strict';
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { wrapMessage } from '../../../src/runtime/interpreter/wrap-message.js';
import { clientPaths, clientPathsFor } from '../../../src/runtime/services/client-paths.js';
import { run } from './interpreter/harness.js';

describe('clientPaths', () => {
  const roots = { root: '/srv/flows', cwd: '/home/op/repo' };
  const cases: readonly (readonly [string, string])[] = [
    ['/srv/flows/a.mh:3:4: boom', 'a.mh:3:4: boom'],
    ['step "S" failed: /srv/flows/lib/x.mh:1:2: no', 'step "S" failed: lib/x.mh:1:2: no'],
    ["open '/srv/flows/data.txt'", "open 'data.txt'"],
    ['in /srv/flows, then /srv/flows.', 'in ., then ..'],
    ['read /home/op/repo/notes.txt', 'read notes.txt'],
    ['ran in /home/op/repo', 'ran in .'],
    // Not the folder: a sibling whose name starts the same, a URL, a path inside another.
    ['/srv/flows2/a.mh', '/srv/flows2/a.mh'],
    ['see http://host/srv/flows/a.mh', 'see http://host/srv/flows/a.mh'],
    ['/opt/srv/flows/a.mh', '/opt/srv/flows/a.mh'],
    [`cache ${tmpdir()}/mhl-calls-1/x.log`, 'cache $TMPDIR/mhl-calls-1/x.log'],
    [`key ${homedir()}/.ssh/id`, 'key ~/.ssh/id'],
    ['nothing to see', 'nothing to see'],
  ];
  for (const [text, shown] of cases) {
    it(`shows ${JSON.stringify(text)} as ${JSON.stringify(shown)}`, () => {
      assert.equal(clientPaths(text, roots), shown);
    });
  }

  it('prefers the served folder to a working directory above it', () => {
    const nested = { root: '/srv/flows/sub', cwd: '/srv/flows' };
    assert.equal(clientPaths('/srv/flows/sub/a.mh and /srv/flows/b', nested), 'a.mh and b');
  });

  it('never treats / as a root, and leaves text alone without roots', () => {
    assert.equal(clientPaths('/etc/passwd', { root: '/', cwd: '/' }), '/etc/passwd');
    assert.equal(clientPathsFor(undefined)('/srv/flows/a.mh'), '/srv/flows/a.mh');
  });
});

describe('wrapMessage', () => {
  const agent = 'agent "X"';
  const cases: readonly (readonly [string, string, string, string])[] = [
    [
      'agent "X" failed: ',
      agent,
      'agent "X" failed (exit code 3): no',
      'agent "X" failed (exit code 3): no',
    ],
    ['agent "X" failed: ', agent, 'agent "X" failed: boom', 'agent "X" failed: boom'],
    [
      'agent "X" failed: ',
      agent,
      'agent "Y" failed (exit code 1)',
      'agent "X" failed: agent "Y" failed (exit code 1)',
    ],
    ['agent "X" failed: ', agent, 'schema mismatch', 'agent "X" failed: schema mismatch'],
    [
      'step "S" failed: ',
      'step "S"',
      'step "S" failed: a.mh:1:1: x',
      'step "S" failed: a.mh:1:1: x',
    ],
    ['step "S" failed: ', 'step "S"', 'a.mh:1:1: x', 'step "S" failed: a.mh:1:1: x'],
  ];
  for (const [prefix, subject, message, wrapped] of cases) {
    it(`wraps ${JSON.stringify(message)}`, () => {
      assert.equal(wrapMessage(prefix, subject, message), wrapped);
    });
  }
});

describe('failure messages name each agent and step once', () => {
  const FAKE = resolve(import.meta.dirname, '../../fixtures/bin/fake-agent.mjs');
  const decls = `agent Broken { command: env("FAKE")  args: ["-p", "[fail:3] \${prompt}"] }`;
  const cases: readonly (readonly [string, string, RegExp])[] = [
    ['an agent call', 'var r = ""\nstep S { r = Broken.run(prompt: "x") }', /agent "Broken"/g],
    [
      'a spawned agent call',
      'step S {\n spawn h = Broken.run(prompt: "x")\n wait h\n}',
      /agent "Broken"|spawned Broken/g,
    ],
    ['a failing step', 'step S { fail("no") }', /step "S"/g],
  ];
  for (const [what, body, subject] of cases) {
    it(`in ${what}`, async () => {
      const { outcome } = await run(body, { decls, env: { FAKE } });
      const message = outcome.error?.message ?? '';
      assert.equal(outcome.status, 'failed');
      assert.equal(message.match(subject)?.length, 1, message);
    });
  }
});

describe('a served run shows paths relative to its folder', () => {
  const body =
    'step S {\n  var here = cmd.exec(["pwd"]).stdout.trim()\n  log("wrote ${here}/out.txt")\n  fail("stopped in ${here}")\n}';

  it('in its error and its output lines', async () => {
    const { outcome, output, cwd } = await run(body, { served: true });
    assert.deepEqual(output, ['wrote out.txt']);
    assert.match(outcome.error?.message ?? '', /^step "S" failed: main\.mh:6:\d+: stopped in \.$/);
    assert.ok(!JSON.stringify({ outcome, output }).includes(cwd));
  });

  it('and leaves a local run (mhl run) as it was', async () => {
    const { outcome, output, cwd } = await run(body);
    assert.deepEqual(output, [`wrote ${cwd}/out.txt`]);
    assert.ok(outcome.error?.message.startsWith(`step "S" failed: ${cwd}/main.mh:`));
  });

  it('in a pause reason', async () => {
    const paused = 'step S {\n  pause("waiting in ${cmd.exec(["pwd"]).stdout.trim()}/inbox")\n}';
    const { outcome } = await run(paused, { served: true });
    assert.deepEqual([outcome.status, outcome.pauseReason], ['paused', 'waiting in inbox']);
  });
});
