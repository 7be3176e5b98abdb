// A child process for the SIGKILL test (test/e2e/sessions-kill.test.ts): it advances one sealed
// session over and over through the built store (`advanceSession`, as every tool does), printing
// `ready` once and `seq N` after every completed write, until it is killed. A session it cannot
// open (a kill between the file and its seal) is started over as a fresh one.
import { advanceSession, historyEvent, SYSTEM_CLOCK } from '../../dist/surfaces/sessions/store/advance.js';
import { loadKey } from '../../dist/surfaces/sessions/store/key.js';
import { SessionStore } from '../../dist/surfaces/sessions/store/session-store.js';

const [planningRoot, keyDir] = process.argv.slice(2);
const store = new SessionStore({ planningRoot, key: loadKey(keyDir) });
const folder = store.makeFolder('killed');
const fresh = () => ({
  schemaVersion: 1,
  sessionIndex: store.indexFor(folder),
  workflowId: 'ponytail',
  workflowVersion: '2.0.0',
  agentId: 'writer',
  seq: 0,
  ts: 0,
  startedAt: new Date().toISOString(),
  currentActivity: '',
  currentTechnique: '',
  condition: '',
  variables: {},
  completedActivities: [],
  skippedActivities: [],
  checkpointResponses: {},
  history: [],
  status: 'running',
  triggeredWorkflows: [],
});
let root;
try {
  root = store.readFolder(folder);
} catch {
  root = fresh();
  await store.save(folder, root);
}
process.stdout.write('ready\n');
for (;;) {
  const handle = { folder, root, path: [], state: root, transient: false };
  await advanceSession(store, handle, SYSTEM_CLOCK, (s) => {
    s.variables.counter = s.seq;
    // A growing file, so writes take long enough to be interrupted in the middle.
    s.history.push(historyEvent(SYSTEM_CLOCK, 'step_completed', { activity: 'a', data: { stepId: `s${s.seq}`, pad: 'x'.repeat(512) } }));
    if (s.history.length > 200) s.history.splice(0, 100);
  });
  process.stdout.write(`seq ${root.seq}\n`);
}
