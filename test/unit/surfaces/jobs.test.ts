import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isReservedJobName, reservedNameProblem } from '../../../src/surfaces/jobs.js';

describe('the reserved job.* namespace', () => {
  it('covers every name under job. and nothing else', () => {
    assert.deepEqual(
      ['job.start', 'job.anything', 'job.', 'job', 'jobs.start', 'Job.start', 'my.job.x'].map(
        isReservedJobName,
      ),
      [true, true, true, false, false, false, false],
    );
  });

  it('refuses a catalog that publishes such a name, naming each one', () => {
    assert.equal(reservedNameProblem(['Quick', 'job', 'Hold']), undefined);
    assert.equal(
      reservedNameProblem(['Quick', 'job.start', 'job.mine']),
      '"job.start", "job.mine" use the reserved job.* tool namespace; rename them',
    );
  });
});
