import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  listResources,
  loadCatalog,
  readResource,
  workflowManifest,
} from '../../../src/catalog/index.js';

const result = loadCatalog('test/fixtures/catalog/basic');
assert.ok(result.ok);
const { catalog } = result;

describe('listResources', () => {
  it('lists a manifest and a source entry per workflow, by name', () => {
    const resources = listResources(catalog);
    assert.deepEqual(
      resources.map((r) => r.uri),
      ['Build', 'Cycle', 'Quiet', 'Shared', 'Types'].flatMap((n) => [
        `mhl://workflow/${n}`,
        `mhl://workflow/${n}/source`,
      ]),
    );
    assert.deepEqual(resources.slice(0, 2), [
      {
        uri: 'mhl://workflow/Build',
        name: 'Build (manifest)',
        description: 'Build the project',
        mimeType: 'application/json',
      },
      { uri: 'mhl://workflow/Build/source', name: 'Build (source)', mimeType: 'text/x-mhl' },
    ]);
  });
});

describe('readResource', () => {
  it('reads the manifest as JSON', () => {
    const read = readResource(catalog, 'mhl://workflow/Shared');
    const [content] = read?.contents ?? [];
    assert.equal(content?.uri, 'mhl://workflow/Shared');
    assert.equal(content?.mimeType, 'application/json');
    const shared = catalog.workflows.get('Shared');
    assert.ok(shared);
    assert.deepEqual(JSON.parse(content?.text ?? ''), workflowManifest(shared, catalog.root));
  });

  it('reads the declaring file’s source text', () => {
    const read = readResource(catalog, 'mhl://workflow/Shared/source');
    assert.deepEqual(read, {
      contents: [
        {
          uri: 'mhl://workflow/Shared/source',
          mimeType: 'text/x-mhl',
          text: readFileSync('test/fixtures/catalog/basic/lib/shared.mh', 'utf8'),
        },
      ],
    });
  });

  it('answers undefined for a URI it does not serve', () => {
    for (const uri of [
      'mhl://workflow/Nope',
      'mhl://workflow/Nope/source',
      'mhl://workflow/Build/other',
      'mhl://workflow/',
      'mhl://run/abc/logs',
      'file:///etc/passwd',
      'mhl://workflow/Fragment',
      'mhl://workflow/Hidden',
    ]) {
      assert.equal(readResource(catalog, uri), undefined, uri);
    }
  });
});
