import { describe, expect, it } from 'vitest';
import {
  extractKeyReasons,
  fingerprintEnvelope,
  fingerprintTokens,
  imageRegistry,
} from '../../../src/store/memory-fingerprint.js';
import { scoreSimilarity } from '../../../src/store/memory-similarity.js';
import { envelope, finding } from '../../support/diagnosis-fixtures.js';

describe('fingerprint', () => {
  it('extracts normalised key reasons', () => {
    expect(
      extractKeyReasons(
        'failed to provision volume with StorageClass "gp3": provisioner ebs.csi.aws.com timed out',
      ).sort(),
    ).toEqual(['provisioner:ebs.csi.aws.com']);
    expect(
      extractKeyReasons(
        '0/3 nodes are available: 3 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }, 2 Insufficient cpu. FailedScheduling',
      ),
    ).toEqual(
      expect.arrayContaining(['taint:node.kubernetes.io/disk-pressure', 'insufficient:cpu', 'reason:failedscheduling']),
    );
    expect(extractKeyReasons('Back-off pulling image "quay.io/acme/api:1.4": manifest unknown')).toEqual(
      expect.arrayContaining(['registry:quay.io', 'reason:manifest-unknown']),
    );
    expect(extractKeyReasons('container app terminated: OOMKilled, exit code 137')).toEqual(
      expect.arrayContaining(['reason:oomkilled', 'exit-code:137']),
    );
    expect(extractKeyReasons('route returned HTTP 503')).toEqual(['http:503']);
    expect(extractKeyReasons('exited with exit code 0')).toEqual([]);
    expect(imageRegistry('nginx:1.25')).toBe('docker.io');
    expect(imageRegistry('registry.local:5000/team/app')).toBe('registry.local:5000');
  });

  it('fingerprints an envelope without cluster-specific names', () => {
    const fp = fingerprintEnvelope(envelope());
    expect(fp).toEqual({
      intent: 'pvc-binding',
      domain: 'storage',
      findingCodes: ['CRASH_LOOP', 'POD_UNSCHEDULABLE', 'PVC_PENDING'],
      keyReasons: expect.arrayContaining([
        'reason:provisioningfailed',
        'reason:storageclass-not-found',
        'reason:unbound-pvc',
        'reason:connection-refused',
      ]),
      resourceKinds: ['persistentvolumeclaims', 'pods'],
      rootCauseCode: 'PVC_PENDING',
      rootCauseKind: 'persistentvolumeclaims',
    });
    expect(JSON.stringify(fp)).not.toMatch(/data-db-0|payments|api-7f9c/);
    expect(fingerprintEnvelope(envelope(), { confirmedRootCauseCode: 'SC_MISSING' }).rootCauseCode).toBe('SC_MISSING');
    expect(fingerprintTokens(fp)).toEqual(
      expect.arrayContaining([
        'intent:pvc-binding',
        'code:PVC_PENDING',
        'kind:pods',
        'root:PVC_PENDING',
        'rootkind:persistentvolumeclaims',
        'r:reason:unbound-pvc',
      ]),
    );
  });

  it('keeps what fails because of the cause apart from the cause', () => {
    const base = envelope();
    const top = base.rootCause[0]!;
    const withImpact = envelope({
      rootCause: [
        {
          ...top,
          impact: [
            {
              resource: { kind: 'Deployment', name: 'api', namespace: 'payments' },
              code: 'CRASH_LOOP',
              summary: 'x',
              evidence: [],
            },
          ],
        },
      ],
    });
    const fp = fingerprintEnvelope(withImpact);
    expect(fp.rootCauseCode).toBe('PVC_PENDING');
    expect(fp.impactCodes).toEqual(['CRASH_LOOP']);
    expect(fingerprintTokens(fp)).toContain('impact:CRASH_LOOP');
    expect(JSON.stringify(fp)).not.toMatch(/payments|"api"/);
  });
});

describe('similarity', () => {
  const base = fingerprintEnvelope(envelope());

  it('scores an identical incident 1 and explains it in one line', () => {
    const result = scoreSimilarity(base, base);
    expect(result.score).toBe(1);
    expect(result.explanation).toMatch(/^same intent, same root cause PVC_PENDING, 3 of 3 finding codes, same /);
    expect(result.explanation).not.toContain('\n');
  });

  it('names a shared provisioner and a differing one', () => {
    const withProvisioner = (name: string) =>
      fingerprintEnvelope(
        envelope({
          findings: [
            finding({
              code: 'PVC_PENDING',
              domain: 'storage',
              resource: { kind: 'PersistentVolumeClaim', name: 'x', namespace: 'y' },
              evidence: [`ProvisioningFailed: provisioner ${name} failed`],
            }),
            finding({ code: 'POD_UNSCHEDULABLE', resource: { kind: 'Pod', name: 'p', namespace: 'y' } }),
          ],
        }),
      );
    const same = scoreSimilarity(withProvisioner('ebs.csi.aws.com'), withProvisioner('ebs.csi.aws.com'));
    expect(same.explanation).toContain('same provisioner (ebs.csi.aws.com)');
    const other = scoreSimilarity(withProvisioner('ebs.csi.aws.com'), withProvisioner('rbd.csi.ceph.com'));
    expect(other.explanation).toContain('different provisioner (rbd.csi.ceph.com)');
    expect(other.score).toBeLessThan(same.score);
  });

  it('ranks a different intent with other codes far below', () => {
    const other = fingerprintEnvelope(
      envelope({
        routing: { ...envelope().routing, intent: 'dns-failure', domain: 'networking' },
        findings: [
          finding({ code: 'DNS_NXDOMAIN', domain: 'networking', resource: { kind: 'Pod', name: 'a', namespace: 'b' } }),
        ],
        rootCause: [],
      }),
    );
    const result = scoreSimilarity(base, other);
    expect(result.score).toBeLessThan(0.2);
    expect(result.explanation).toMatch(/^different intent \(dns-failure\), 0 of 3 finding codes/);
  });
});
