import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSnapshotFiles } from '../../../src/cluster/snapshot.js';
import type { KubeObject } from '../../../src/cluster/types.js';
import { TriageEnvelopeSchema } from '../../../src/triage/envelope/envelope.js';
import { triageAt, withSnapshotServer } from '../../support/triage-helpers.js';

/**
 * An API server validates what it stores, but a dump edited by hand, or a server that does not validate, can hand
 * the triage objects of the right kind with lists that are not lists, or null among a list's entries. The triage
 * still answers every request with an envelope: the cluster never makes it throw.
 */

const dir = fileURLToPath(new URL('../../fixtures/snapshots/', import.meta.url));
const fixtures = readdirSync(dir)
  .filter((f) => /^[a-z0-9-]+--[a-z0-9-]+\.ya?ml$/.test(f))
  .sort();

type Mangling = 'lists as strings' | 'junk among entries';

/** Every list below an object's top level replaced: by a string, or with null, a number, a string and a list added. */
function mangle(value: unknown, how: Mangling): unknown {
  if (Array.isArray(value)) {
    return how === 'lists as strings' ? 'not-a-list' : [null, 7, 'x', ...value.map((v) => mangle(v, how)), []];
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mangle(v, how)]));
  }
  return value;
}

function mangled(objects: readonly KubeObject[], how: Mangling): KubeObject[] {
  // Identity stays readable, as the reader requires of every item; everything else is mangled.
  return objects.map((o) => ({
    ...(mangle(o, how) as KubeObject),
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: o.metadata,
  }));
}

describe('objects whose lists are malformed', () => {
  for (const how of ['lists as strings', 'junk among entries'] as const) {
    it(`still give an envelope for every fixture, by intent and from the words (${how})`, async () => {
      for (const file of fixtures) {
        const snapshot = await loadSnapshotFiles(`${dir}${file}`);
        const namespaces = snapshot.objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n);
        const namespace = namespaces.sort().at(-1) as string;
        const intent = file.split('--')[0] as string;
        await withSnapshotServer({ objects: mangled(snapshot.objects, how), logs: snapshot.logs }, async (server) => {
          for (const request of [{ intent, namespace }, { text: `something is off in ${namespace}` }]) {
            const envelope = await triageAt(server.url, request).catch((error: unknown) => {
              throw new Error(`${file} ${JSON.stringify(request)}: ${(error as Error).message}`, { cause: error });
            });
            expect(TriageEnvelopeSchema.safeParse(envelope).success).toBe(true);
            expect(envelope.routing.namespace).toBe(namespace);
          }
        });
      }
    }, 120_000);
  }
});
