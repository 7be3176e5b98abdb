/**
 * 2026-07-28 retries of a paused synchronous call (SEP-2322): a changed, foreign or undecodable
 * `requestState` and malformed `inputResponses` are `-32602` naming the field, a retry without
 * the asked key is asked again, and answers without a `requestState` apply to a fresh run.
 * The fixture's first step appends to a marks file, so each test can tell what ran.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serverStarter } from '../helpers/http-server.js';
import {
  accept,
  diagnostic,
  errorOf,
  type Json,
  KEY,
  marks,
  modernCall,
  PAUSE_FOLDER,
  resultOf,
} from '../helpers/pause.js';

const start = serverStarter(PAUSE_FOLDER);

describe('retrying a paused call over 2026-07-28 (HTTP)', () => {
  it('refuses a changed, foreign or undecodable requestState with -32602', async () => {
    const port = await start().ready;
    const m = marks();
    const first = resultOf(await modernCall(port, 'Approve', { marks: m.path }));
    const state = String(first['requestState']);
    const middle = Math.floor(state.length / 2);
    const flipped = `${state.slice(0, middle)}${state[middle] === 'A' ? 'B' : 'A'}${state.slice(middle + 1)}`;
    const bad = [flipped, `${state}-TAMPERED`, 'mhl1.', 'not-a-state', 'x'.repeat(300_000)];
    const reasons: unknown[] = [];
    for (const text of bad) {
      const error = errorOf(
        await modernCall(port, 'Approve', { marks: m.path }, accept(text, { approved: 'yes' })),
      );
      const data = error['data'] as Json;
      assert.deepEqual([error['code'], data['field']], [-32602, 'requestState']);
      reasons.push(data['reason']);
    }
    assert.deepEqual(reasons, ['unverified', 'unverified', 'truncated', 'unknown', 'unknown']);
    // Sealed for Approve: it does not open for another workflow.
    const foreign = errorOf(await modernCall(port, 'Wait', {}, accept(state, {})));
    assert.equal(foreign['code'], -32602);
    // Sealed by this process: another server process cannot open it.
    const other = await start().ready;
    const elsewhere = errorOf(
      await modernCall(other, 'Approve', { marks: m.path }, accept(state, { approved: 'yes' })),
    );
    assert.deepEqual(
      [elsewhere['code'], (elsewhere['data'] as Json)['reason']],
      [-32602, 'unverified'],
    );
    const wrongType = await modernCall(port, 'Approve', { marks: m.path }, { requestState: 7 });
    assert.equal(errorOf(wrongType)['code'], -32602);
    assert.equal(m.count(), 1, 'no refused retry ran anything');
  });

  it('refuses malformed inputResponses with -32602 naming the entry', async () => {
    const port = await start().ready;
    const m = marks();
    const state = String(
      resultOf(await modernCall(port, 'Approve', { marks: m.path }))['requestState'],
    );
    for (const [responses, field] of [
      [{ [KEY]: 12345 }, `inputResponses.${KEY}`],
      [{ [KEY]: { action: 'maybe' } }, `inputResponses.${KEY}`],
      [{ other: 'x', [KEY]: { action: 'accept' } }, 'inputResponses.other'],
      [null, 'inputResponses'],
      ['text', 'inputResponses'],
    ] as const) {
      for (const withState of [{ requestState: state }, {}]) {
        const error = errorOf(
          await modernCall(
            port,
            'Approve',
            { marks: m.path },
            { inputResponses: responses, ...withState },
          ),
        );
        assert.deepEqual(
          [error['code'], (error['data'] as Json)['field']],
          [-32602, field],
          JSON.stringify(responses),
        );
      }
    }
    // Well-formed answers naming undeclared inputs are a tool error a model can correct.
    const undeclared = resultOf(
      await modernCall(port, 'Approve', { marks: m.path }, accept(state, { bogus: 1 })),
    );
    const found = diagnostic(undeclared);
    assert.deepEqual([found['code'], found['undeclared']], ['INVALID_ARGUMENT', ['bogus']]);
    // Every entry is checked before anything runs: only the first call's Mark ran.
    assert.equal(m.count(), 1, 'no refused retry ran anything');
  });

  it('refuses a state carried to a call with other arguments, or to a client that cannot answer', async () => {
    const port = await start().ready;
    const m = marks();
    const other = marks();
    const state = String(
      resultOf(await modernCall(port, 'Approve', { marks: m.path }))['requestState'],
    );
    // The Mark step ran for m: resuming at Review with other arguments would skip other's Mark.
    for (const args of [{ marks: other.path }, { marks: m.path, note: 'changed' }]) {
      const error = errorOf(await modernCall(port, 'Approve', args, accept(state, {})));
      assert.deepEqual([error['code'], (error['data'] as Json)['reason']], [-32602, 'unverified']);
    }
    // Without form elicitation the state cannot be used; ignoring it would re-run Mark.
    const unusable = errorOf(
      await modernCall(port, 'Approve', { marks: m.path }, accept(state, { approved: 'yes' }), {}),
    );
    assert.deepEqual(
      [unusable['code'], (unusable['data'] as Json)['field']],
      [-32602, 'requestState'],
    );
    assert.deepEqual([m.count(), other.count()], [1, 0], 'no refused retry ran anything');
  });

  it('keeps each round’s answer when a later step pauses again', async () => {
    const port = await start().ready;
    const first = resultOf(await modernCall(port, 'Gates', {}));
    assert.deepEqual(Object.keys(first['inputRequests'] as Json), ['Who']);
    const second = resultOf(
      await modernCall(
        port,
        'Gates',
        {},
        {
          requestState: first['requestState'],
          inputResponses: { Who: { action: 'accept', content: { who: 'ana' } } },
        },
      ),
    );
    assert.deepEqual(Object.keys(second['inputRequests'] as Json), ['Size']);
    // The client sends the call's own arguments again, and only the new answer.
    const third = resultOf(
      await modernCall(
        port,
        'Gates',
        {},
        {
          requestState: second['requestState'],
          inputResponses: { Size: { action: 'accept', content: { size: 'L' } } },
        },
      ),
    );
    assert.deepEqual(third['structuredContent'], { said: 'ana L' });
  });

  it('asks again for an answer the retry lacks, from the same pause', async () => {
    const port = await start().ready;
    const m = marks();
    const state = String(
      resultOf(await modernCall(port, 'Approve', { marks: m.path }))['requestState'],
    );
    for (const extra of [
      { requestState: state },
      { requestState: state, inputResponses: { wrong_key: { action: 'accept', content: {} } } },
    ]) {
      const again = resultOf(await modernCall(port, 'Approve', { marks: m.path }, extra));
      assert.equal(again['resultType'], 'input_required');
      assert.deepEqual(Object.keys(again['inputRequests'] as Json), [KEY]);
      // The re-asked state resumes the same pause: still no second mark.
      const done = resultOf(
        await modernCall(
          port,
          'Approve',
          { marks: m.path },
          accept(String(again['requestState']), { approved: 'yes' }),
        ),
      );
      assert.deepEqual(done['structuredContent'], { trail: ['marked', 'approved'], note: '' });
    }
    assert.equal(m.count(), 1);
  });

  it('applies inputResponses without requestState to the pauses of a fresh run', async () => {
    const port = await start().ready;
    const m = marks();
    // The asked key answered (extra keys ignored): the fresh run completes in this call.
    const answered = {
      inputResponses: {
        [KEY]: { action: 'accept', content: { approved: 'yes', note: 'fresh' } },
        unknown_extra_key: { action: 'accept', content: { foo: 'bar' } },
      },
    };
    const done = resultOf(await modernCall(port, 'Approve', { marks: m.path }, answered));
    assert.equal(done['resultType'], 'complete');
    assert.deepEqual(done['structuredContent'], { trail: ['marked', 'approved'], note: 'fresh' });
    assert.equal(m.count(), 1, 'the answer resumed the pausing step, not the run');
    // Only other keys: the pause is asked for.
    const wrong = { inputResponses: { wrong_key: { action: 'accept', content: {} } } };
    const asked = resultOf(await modernCall(port, 'Approve', { marks: m.path }, wrong));
    assert.equal(asked['resultType'], 'input_required');
    assert.deepEqual(Object.keys(asked['inputRequests'] as Json), [KEY]);
    assert.equal(m.count(), 2);
  });
});
