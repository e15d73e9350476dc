import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/cluster/types.js';
import { buildCatalog } from '../../../src/snapshot-api/catalog.js';

/**
 * The catalog lists each resource in `namespace/name` order whatever order the objects come in: already in it (a
 * snapshot read back from the parsed-snapshot cache), or not (a snapshot as written). A later object with the same
 * identity replaces an earlier one either way, as a re-applied manifest would.
 */

function pod(namespace: string, name: string, version: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels: { version } } };
}

const names = (objects: readonly { namespace?: string | undefined; name: string }[]) =>
  objects.map((o) => `${o.namespace}/${o.name}`);
const versions = (objects: readonly { labels?: Readonly<Record<string, string>> | undefined }[]) =>
  objects.map((o) => o.labels?.['version']);

describe('the catalog of a snapshot', () => {
  // In key order: `a-b/x` before `a/x`, since `-` comes before `/`.
  const inOrder = [
    pod('a-b', 'x', '1'),
    pod('a', 'x', '1'),
    pod('a', 'y', '1'),
    pod('a', 'y', '2'),
    pod('a0', 'x', '1'),
    pod('b', 'x', '1'),
  ];

  it('lists objects that come in key order as they come, a later duplicate in place of the earlier', () => {
    const catalog = buildCatalog(inOrder);
    expect(names(catalog.objects('pods'))).toEqual(['a-b/x', 'a/x', 'a/y', 'a0/x', 'b/x']);
    expect(versions(catalog.objects('pods'))).toEqual(['1', '1', '2', '1', '1']);
    expect(catalog.get('pods', 'a', 'y')?.labels?.['version']).toBe('2');
    expect(catalog.count()).toBe(5);
  });

  it('lists the same objects the same way in any other order, the later duplicate winning', () => {
    const shuffled = [inOrder[5], inOrder[3], inOrder[0], inOrder[4], inOrder[2], inOrder[1]] as KubeObject[];
    const catalog = buildCatalog(shuffled);
    expect(names(catalog.objects('pods'))).toEqual(['a-b/x', 'a/x', 'a/y', 'a0/x', 'b/x']);
    // Pod a/y at version 1 comes after version 2 here: it is the one kept.
    expect(versions(catalog.objects('pods'))).toEqual(['1', '1', '1', '1', '1']);
    expect(catalog.get('pods', 'a', 'y')?.labels?.['version']).toBe('1');
    expect(names(catalog.objectsKeyedIn('pods', 'a'))).toEqual(['a/x', 'a/y']);
  });

  it('finds an object by name only where it is, in both cases', () => {
    for (const catalog of [buildCatalog(inOrder), buildCatalog([...inOrder].reverse())]) {
      expect(catalog.get('pods', 'a-b', 'x')?.name).toBe('x');
      expect(catalog.get('pods', 'a', 'z')).toBeUndefined();
      expect(catalog.get('pods', 'c', 'x')).toBeUndefined();
      expect(catalog.get('configmaps', 'a', 'x')).toBeUndefined();
    }
  });
});
