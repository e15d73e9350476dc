import { describe, expect, it } from 'vitest';
import { DEMO_SNAPSHOT } from '../../../local/demo/index.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { loadSnapshotFiles, siblingLogsPath } from '../../../src/cluster/snapshot.js';
import { groupFindings } from '../../../src/diagnosis/blackboard.js';
import { kubeconfigYaml } from '../../../src/snapshot-api/kubeconfig.js';
import { startSnapshotServer } from '../../../src/snapshot-api/server.js';
import { rankingEffect, runSpecialist } from '../../../src/specialists/index.js';
import type { Domain } from '../../../src/triage/envelope/findings.js';
import { silentLogger, triage } from '../../../src/triage/index.js';
import { startedForSuite } from '../../support/suite-lifecycle.js';

/**
 * The specialists against the demo cluster, through the snapshot API server and the real read-only reader: each
 * adds a finding or a ruled-out check the envelope did not have, the platform specialist names the database the
 * inventory pods' readiness check cannot reach and takes the lead with it, and the blackboard has no circular link.
 */

const cluster = startedForSuite(async () => {
  const snapshot = await loadSnapshotFiles(DEMO_SNAPSHOT, siblingLogsPath(DEMO_SNAPSHOT));
  const server = await startSnapshotServer({ objects: snapshot.objects, logs: snapshot.logs, port: 0 });
  const reader = createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: server.url }) } });
  return { reader, close: () => server.close() };
});

async function handOff(namespace: string, text: string, domain: Domain) {
  const { reader } = cluster;
  const envelope = await triage({ text, namespace }, { reader, logger: silentLogger });
  const report = await runSpecialist(reader, { domain, namespace });
  const known = new Set(envelope.findings.map((f) => `${f.code}/${f.resource.kind}/${f.resource.name}`));
  const added = report.findings.filter((f) => !known.has(`${f.code}/${f.resource.kind}/${f.resource.name}`));
  return { envelope, report, added, ranking: rankingEffect(envelope.rootCause[0], added) };
}

describe('specialists on the demo cluster', () => {
  it.each([
    ['ml-team', 'pvc stuck pending', 'storage'],
    ['payments', 'pods stuck pending', 'compute'],
    ['orders', 'crashloop', 'compute'],
    ['inventory', 'route returns 503', 'platform'],
    ['wiki', 'route returns 503', 'compute'],
  ] as const)(
    '%s (“%s”): the %s specialist reports what the envelope did not have',
    async (namespace, text, domain) => {
      const { envelope, report, added } = await handOff(namespace, text, domain as Domain);
      const envelopeText = JSON.stringify(envelope);
      const newChecks = report.checks.filter((c) => c.outcome !== 'not-read' && !envelopeText.includes(c.detail));
      expect(added.length + newChecks.length).toBeGreaterThan(0);
      expect(report.reads).toBeLessThanOrEqual(report.budget);
    },
  );

  it('inventory: names the database the readiness check cannot reach, and leads with it', async () => {
    const { added, ranking } = await handOff('inventory', 'route returns 503', 'platform');
    const database = added.find((f) => f.code === 'APP_DEPENDENCY_UNREACHABLE');
    expect(database?.message).toMatch(/cannot reach its database at 172\.30\.41\.17:5432 \(connection refused\)/);
    expect(database?.message).toMatch(/no Service in the cluster has that address/);
    expect(ranking).toMatchObject({
      effect: 'changed',
      from: { code: 'ROUTE_PODS_NOT_READY' },
      to: { code: 'APP_DEPENDENCY_UNREACHABLE' },
    });
  });

  it('ml-team: one blackboard, the claim before its pod, no circular link', async () => {
    const { envelope, report } = await handOff('ml-team', 'pvc stuck pending', 'storage');
    const top = envelope.rootCause[0];
    const groups = groupFindings([...envelope.findings, ...report.findings], top ? { lead: top } : {});
    const group = groups.find((g) => g.rootCause.code === 'PVC_STORAGECLASS_NOT_FOUND');
    expect(group).toBeDefined();
    const links = new Set(group?.links.map((l) => `${l.cause}>${l.dependent}`));
    for (const l of group?.links ?? []) expect(links.has(`${l.dependent}>${l.cause}`)).toBe(false);
    expect(report.checks.find((c) => c.analyzer === 'classes-and-capacity')?.detail).toMatch(
      /class fast-ssd does not exist; the cluster has gp3-wiki/,
    );
  });
});
