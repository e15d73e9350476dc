import { describe, expect, it } from 'vitest';
import { contextFromObjects } from '../../../../src/triage/analyze/index.js';
import { EvidenceList } from '../../../../src/triage/kube/evidence-list.js';
import { revisionChanges, rolloutLine } from '../../../../src/triage/kube/revisions.js';
import { makePod, NOW, NS, replicaSet } from '../../../support/analyzers/units.js';

describe('revisions', () => {
  it('says what the failing revision changed and which earlier revision still serves', () => {
    const probe = (port: number) => ({ httpGet: { port, path: '/healthz' } });
    const objects = [
      replicaSet('auth-59f4d', 'auth', 30, 1, 1, {
        containers: [{ name: 'auth', image: 'r/login:3.1', livenessProbe: probe(8080) }],
      }),
      replicaSet('auth-7d6c9', 'auth', 31, 1, 0, {
        containers: [{ name: 'auth', image: 'r/login:3.2', livenessProbe: probe(8081) }],
      }),
    ];
    const pod = makePod('auth-7d6c9-ts75z', { owner: { kind: 'ReplicaSet', name: 'auth-7d6c9' } });
    const ctx = contextFromObjects({ namespace: NS, now: NOW, objects: [...objects, pod] });
    expect(revisionChanges(ctx, pod)).toBe(
      'revision 31 changed from revision 30 (ReplicaSet auth-59f4d): containers[auth].image "r/login:3.1" → "r/login:3.2"; containers[auth].livenessProbe.httpGet.port 8080 → 8081',
    );
    expect(rolloutLine(ctx, pod)).toBe(
      'pods of ReplicaSet auth-7d6c9 (revision 31); the newest revision of Deployment auth; previous ReplicaSet auth-59f4d (revision 30) still has 1 ready pod(s)',
    );
  });

  it('keeps the decisive evidence when there is more than a finding carries', () => {
    const list = new EvidenceList().add(5, 'e').add(0, 'a').add(2, 'c').add(1, 'b').add(3, 'd').add(4, 'x').add(0, 'a');
    expect(list.lines()).toEqual(['a', 'b', 'c', 'd', 'x']);
  });
});
