import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Admission } from '../../../src/runs/admission.js';
import {
  JOB_TTL_MS,
  JobRegistry,
  type JobResponse,
  type JobTask,
  type JobView,
  MAX_JOBS,
} from '../../../src/runs/jobs.js';

/** A handler the test finishes by hand; `aborted` resolves with the signal's reason. */
function handler() {
  let finish: (r: JobResponse) => void = () => {};
  let fail: (e: unknown) => void = () => {};
  const settled = new Promise<JobResponse>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  let abortedWith: (reason: unknown) => void = () => {};
  const aborted = new Promise<unknown>((done) => {
    abortedWith = done;
  });
  let began: () => void = () => {};
  const begun = new Promise<void>((done) => {
    began = done;
  });
  const run = (signal: AbortSignal) => {
    began();
    if (signal.aborted) abortedWith(signal.reason);
    else signal.addEventListener('abort', () => abortedWith(signal.reason), { once: true });
    return settled;
  };
  return { run, begun, aborted, finish, fail };
}

/** A registry on a clock the test moves, with its admission. */
function setup(capacity = 4, maxJobs = MAX_JOBS) {
  const clock = { now: 1_000_000 };
  const admission = new Admission(capacity);
  const events: [string, JobView][] = [];
  const faults: unknown[] = [];
  const jobs = new JobRegistry({
    admission,
    maxJobs,
    now: () => clock.now,
    onEvent: (event, view) => events.push([event, view]),
    onFault: (error) => faults.push(error),
  });
  return { clock, admission, jobs, events, faults };
}

function started(result: JobView | string): JobView {
  assert.equal(typeof result, 'object', `expected a job, got ${String(result)}`);
  return result as JobView;
}

const task = (run: JobTask['run'], extra: Partial<JobTask> = {}): JobTask => ({
  tool: 'Target',
  owner: 'alice',
  run,
  ...extra,
});

const OK = { content: [{ type: 'text', text: '{}' }], structuredContent: { ok: true } };

describe('JobRegistry', () => {
  it('answers running at once, then keeps the response for repeated reads', async () => {
    const { jobs, admission } = setup();
    const h = handler();
    const job = started(jobs.start(task(h.run)));
    assert.match(job.job_id, /^job-[0-9a-f]{32}$/);
    assert.deepEqual([job.tool, job.status, job.draining], ['Target', 'running', false]);
    assert.equal(admission.active, 1);
    assert.deepEqual(jobs.outcome(job.job_id, 'alice'), { view: job });
    h.finish(OK);
    await jobs.drained();
    assert.equal(admission.active, 0);
    const first = jobs.outcome(job.job_id, 'alice');
    assert.equal(first?.view.status, 'succeeded');
    assert.deepEqual(first?.outcome && 'response' in first.outcome && first.outcome.response, OK);
    assert.deepEqual(jobs.outcome(job.job_id, 'alice'), first);
  });

  it('calls a job failed when the target answers isError or its handler throws', async () => {
    const { jobs, faults } = setup();
    const a = handler();
    const b = handler();
    const one = started(jobs.start(task(a.run)));
    const two = started(jobs.start(task(b.run)));
    a.finish({ isError: true, content: [] });
    const thrown = new Error('boom at /srv/secret/path');
    b.fail(thrown);
    await jobs.drained();
    assert.equal(jobs.get(one.job_id, 'alice')?.status, 'failed');
    // The caller gets the code; the error's own text (maybe a server path) goes to the log.
    const outcome = jobs.outcome(two.job_id, 'alice')?.outcome;
    assert.deepEqual(outcome && 'failure' in outcome && outcome.failure.code, 'INTERNAL_ERROR');
    assert.doesNotMatch(JSON.stringify(outcome), /srv|boom/);
    assert.deepEqual(faults, [thrown]);
  });

  it('shows cancellation at once and drains, holding one slot, until the handler exits', async () => {
    const { jobs, admission, events } = setup(2);
    const h = handler();
    const job = started(jobs.start(task(h.run)));
    await h.begun;
    const view = jobs.cancel(job.job_id, 'alice');
    assert.deepEqual([view?.status, view?.draining], ['cancelled', true]);
    assert.equal(((await h.aborted) as Error).name, 'AbortError');
    assert.equal(admission.active, 1, 'the draining handler keeps its slot');
    assert.notEqual(admission.tryAcquire(), 'full');
    assert.equal(admission.tryAcquire(), 'full', 'and only its own slot');
    h.finish(OK);
    await jobs.drained();
    const after = jobs.outcome(job.job_id, 'alice');
    assert.deepEqual([after?.view.status, after?.view.draining], ['cancelled', false]);
    assert.deepEqual(after?.outcome, {
      failure: { code: 'CANCELLED', message: 'the job was cancelled' },
    });
    assert.equal(admission.active, 1, 'only the test slot is left');
    assert.deepEqual(
      events.map(([e, v]) => [e, v.status, v.draining]),
      [
        ['started', 'running', false],
        ['ended', 'cancelled', true],
        ['exited', 'cancelled', false],
      ],
    );
    assert.deepEqual(jobs.cancel(job.job_id, 'alice')?.status, 'cancelled');
  });

  it('never starts the handler of a job cancelled before it began', async () => {
    const { jobs, admission } = setup();
    let ran = false;
    const job = started(
      jobs.start(
        task(async () => {
          ran = true;
          return OK;
        }),
      ),
    );
    jobs.cancel(job.job_id, 'alice');
    await jobs.drained();
    assert.equal(ran, false);
    assert.deepEqual(jobs.get(job.job_id, 'alice')?.draining, false);
    assert.equal(admission.active, 0);
  });

  it('times a job out at its limit even while the handler ignores the abort', async () => {
    const { jobs, admission } = setup();
    const h = handler();
    const job = started(jobs.start(task(h.run, { timeoutMs: 1 })));
    assert.equal(((await h.aborted) as Error).name, 'TimeoutError');
    const view = jobs.get(job.job_id, 'alice');
    assert.deepEqual([view?.status, view?.draining], ['timed_out', true]);
    assert.equal(admission.active, 1);
    h.finish(OK);
    await jobs.drained();
    assert.equal(jobs.get(job.job_id, 'alice')?.draining, false);
    const outcome = jobs.outcome(job.job_id, 'alice')?.outcome;
    assert.equal(outcome && 'failure' in outcome && outcome.failure.code, 'TIMEOUT');
  });

  it('hides a job from every other owner exactly as if it did not exist', () => {
    const { jobs } = setup();
    const job = started(jobs.start(task(handler().run)));
    assert.equal(jobs.get(job.job_id, 'bob'), undefined);
    assert.equal(jobs.outcome(job.job_id, 'bob'), undefined);
    assert.equal(jobs.cancel(job.job_id, 'bob'), undefined);
    assert.equal(jobs.get(job.job_id, 'alice')?.status, 'running');
    assert.equal(jobs.get('job-0000', 'alice'), undefined);
    jobs.cancelAll('cleanup');
  });

  it('refuses without a slot, and says closed once admission closed', () => {
    const { jobs, admission } = setup(1);
    started(jobs.start(task(handler().run)));
    assert.equal(jobs.start(task(handler().run)), 'full');
    admission.close();
    assert.equal(jobs.start(task(handler().run)), 'closed');
    assert.equal(jobs.size, 1, 'a refused job leaves no record');
    jobs.cancelAll('cleanup');
  });

  it('keeps at most 128 records, evicting the first to have physically completed', async () => {
    const { jobs, clock } = setup(MAX_JOBS + 1);
    const handlers = Array.from({ length: MAX_JOBS }, () => handler());
    const ids = handlers.map((h) => started(jobs.start(task(h.run))).job_id);
    // Complete them newest first, so "oldest completed" and "oldest started" differ.
    for (const h of [...handlers].reverse()) {
      clock.now += 1;
      h.finish(OK);
      await new Promise<void>((done) => setImmediate(done));
    }
    await jobs.drained();
    assert.equal(jobs.size, MAX_JOBS);
    started(jobs.start(task(handler().run)));
    assert.equal(jobs.size, MAX_JOBS);
    assert.equal(jobs.get(ids.at(-1) ?? '', 'alice'), undefined, 'the first completed is gone');
    assert.equal(jobs.get(ids[0] ?? '', 'alice')?.status, 'succeeded', 'the first started stays');
    jobs.cancelAll('cleanup');
  });

  it('makes room from the owner holding the most records, so a flood evicts its own results first', async () => {
    const { jobs, clock } = setup(10, 4);
    const finishedJob = async (owner: string) => {
      const h = handler();
      const job = started(jobs.start(task(h.run, { owner })));
      clock.now += 1;
      h.finish(OK);
      await jobs.drained();
      return job.job_id;
    };
    // Bob's result is the oldest in the table, and still unread.
    const bobs = await finishedJob('bob');
    const mallorys = [await finishedJob('mallory'), await finishedJob('mallory')];
    await finishedJob('mallory');
    // Full: each new start by mallory forgets mallory's oldest, never bob's.
    for (let i = 0; i < 5; i++) await finishedJob('mallory');
    assert.equal(jobs.size, 4);
    assert.equal(jobs.get(bobs, 'bob')?.status, 'succeeded', "bob's result is kept");
    for (const id of mallorys) assert.equal(jobs.get(id, 'mallory'), undefined);
    // Once bob holds the most, bob's own oldest goes first.
    const bobsToo = [await finishedJob('bob'), await finishedJob('bob')];
    await finishedJob('bob');
    assert.equal(jobs.get(bobs, 'bob'), undefined);
    assert.equal(jobs.get(bobsToo[1] ?? '', 'bob')?.status, 'succeeded');
    jobs.cancelAll('cleanup');
  });

  it('never evicts running or draining records: a table full of them refuses new jobs', async () => {
    const { jobs } = setup(10, 3);
    const hs = [handler(), handler(), handler()];
    const ids = hs.map((h) => started(jobs.start(task(h.run))).job_id);
    await Promise.all(hs.map((h) => h.begun));
    assert.equal(jobs.start(task(handler().run)), 'jobs_full');
    jobs.cancel(ids[1] ?? '', 'alice');
    assert.equal(jobs.start(task(handler().run)), 'jobs_full', 'a draining job is kept');
    hs[1]?.finish(OK);
    await hs[1]?.aborted;
    await new Promise<void>((done) => setImmediate(done));
    started(jobs.start(task(handler().run)));
    assert.equal(jobs.get(ids[1] ?? '', 'alice'), undefined, 'the drained job made room');
    assert.equal(jobs.get(ids[0] ?? '', 'alice')?.status, 'running');
    jobs.cancelAll('cleanup');
  });

  it('evicts nobody for a start refused for want of a slot', async () => {
    const { jobs, admission } = setup(1, 2);
    const done = handler();
    const doneId = started(jobs.start(task(done.run))).job_id;
    done.finish(OK);
    await jobs.drained();
    const running = handler();
    started(jobs.start(task(running.run, { owner: 'bob' })));
    assert.equal(admission.active, 1);
    assert.equal(jobs.start(task(handler().run, { owner: 'carol' })), 'full');
    assert.equal(jobs.get(doneId, 'alice')?.status, 'succeeded', 'alice keeps her finished job');
    assert.equal(admission.active, 1, 'the refused start holds no slot');
    jobs.cancelAll('cleanup');
  });

  it('expires completed records an hour after their handler exited, never draining ones', async () => {
    const { jobs, clock } = setup();
    const done = handler();
    const stuck = handler();
    const a = started(jobs.start(task(done.run)));
    const b = started(jobs.start(task(stuck.run)));
    await stuck.begun;
    done.finish(OK);
    jobs.cancel(b.job_id, 'alice');
    await new Promise<void>((done) => setImmediate(done));
    clock.now += JOB_TTL_MS - 1;
    assert.equal(jobs.get(a.job_id, 'alice')?.status, 'succeeded');
    clock.now += JOB_TTL_MS * 2;
    assert.equal(jobs.get(a.job_id, 'alice'), undefined);
    assert.equal(jobs.get(b.job_id, 'alice')?.draining, true);
    stuck.finish(OK);
    await jobs.drained();
    clock.now += JOB_TTL_MS;
    assert.equal(jobs.get(b.job_id, 'alice'), undefined);
  });

  it('cancels every running job for shutdown and reports when all handlers exited', async () => {
    const { jobs } = setup();
    const hs = [handler(), handler()];
    const ids = hs.map((h) => started(jobs.start(task(h.run))).job_id);
    await Promise.all(hs.map((h) => h.begun));
    jobs.cancelAll('the server is shutting down');
    for (const id of ids) assert.equal(jobs.get(id, 'alice')?.status, 'cancelled');
    let drained = false;
    const waiting = jobs.drained().then(() => {
      drained = true;
    });
    hs[0]?.finish(OK);
    await new Promise<void>((done) => setImmediate(done));
    assert.equal(drained, false);
    hs[1]?.finish(OK);
    await waiting;
    const outcome = jobs.outcome(ids[0] ?? '', 'alice')?.outcome;
    assert.deepEqual(outcome, {
      failure: { code: 'CANCELLED', message: 'the server is shutting down' },
    });
  });
});
