import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTable, type LocalDynamo, localClientOptions, startLocalDynamo } from '../../../local/dynamodb/index.js';
import { formatFindingsReport, groupFindings } from '../../../src/diagnosis/blackboard.js';
import { BlackboardRepository, createDocumentClient, createDynamoClient } from '../../../src/store/index.js';

/**
 * The blackboard end to end: specialists record what they saw in the session (update_shared_context), the
 * orchestrator reads it back (get_shared_context), groups it (group_findings) and prints the report
 * (print_findings_report).
 */
describe('blackboard on dynalite', () => {
  let dynamo: LocalDynamo;
  let blackboard: BlackboardRepository;

  beforeAll(async () => {
    dynamo = await startLocalDynamo();
    const base = createDynamoClient(localClientOptions(dynamo.endpoint));
    await ensureTable(base, 'calmops-blackboard');
    blackboard = new BlackboardRepository({ client: createDocumentClient(base), tableName: 'calmops-blackboard' });
  });

  afterAll(async () => {
    await dynamo?.close();
  });

  it('turns a pending PVC, its unschedulable pod and the crashlooping consumer into one storage incident', async () => {
    const sessionId = ulid();
    const t0 = Date.parse('2025-08-10T04:00:00.000Z');
    // The compute specialist reports first; arrival order must not decide the root cause.
    await blackboard.updateSharedContext(
      sessionId,
      {
        specialist: 'compute',
        summary: 'Consumer orders-consumer-6d8f-x2k is in CrashLoopBackOff: connection refused to db-0:5432',
        confidence: 0.7,
        code: 'CRASH_LOOP',
        severity: 'high',
        resource: { kind: 'Pod', name: 'orders-consumer-6d8f-x2k', namespace: 'payments' },
        related: [{ kind: 'Pod', name: 'db-0', namespace: 'payments' }],
        evidence: ['dial tcp 10.0.0.12:5432: connect: connection refused'],
        recordedBy: 'compute-specialist',
      },
      new Date(t0),
    );
    await blackboard.updateSharedContext(
      sessionId,
      {
        specialist: 'compute',
        summary: 'Pod db-0 is unschedulable: pod has unbound immediate PersistentVolumeClaims',
        confidence: 0.85,
        code: 'POD_UNSCHEDULABLE',
        severity: 'high',
        resource: { kind: 'Pod', name: 'db-0', namespace: 'payments' },
        related: [{ kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'payments' }],
        evidence: ['FailedScheduling: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims'],
        recordedBy: 'compute-specialist',
      },
      new Date(t0 + 1000),
    );
    await blackboard.updateSharedContext(
      sessionId,
      {
        specialist: 'storage',
        summary: 'PVC data-db-0 is Pending: storageclass.storage.k8s.io "fast-ssd" not found',
        confidence: 0.95,
        code: 'PVC_PENDING',
        severity: 'critical',
        resource: { kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'payments' },
        related: [{ kind: 'StorageClass', name: 'fast-ssd' }],
        evidence: ['ProvisioningFailed: storageclass.storage.k8s.io "fast-ssd" not found'],
        recordedBy: 'storage-specialist',
      },
      new Date(t0 + 2000),
    );

    const context = await blackboard.getSharedContext(sessionId);
    expect(context.map((f) => f.code)).toEqual(['CRASH_LOOP', 'POD_UNSCHEDULABLE', 'PVC_PENDING']);

    const groups = groupFindings(context);
    expect(groups).toHaveLength(1);
    const incident = groups[0]!;
    expect(incident.primaryDomain).toBe('storage');
    expect(incident.rootCause.code).toBe('PVC_PENDING');
    expect(incident.findings.map((f) => f.code)).toEqual(['PVC_PENDING', 'POD_UNSCHEDULABLE', 'CRASH_LOOP']);
    expect(incident.severity).toBe('critical');
    expect(incident.title).toBe(
      'Storage incident: PVC data-db-0 is Pending: storageclass.storage.k8s.io "fast-ssd" not found',
    );

    const report = formatFindingsReport(groups, { title: 'Findings for payments' });
    expect(report).toContain('3 finding(s) grouped into 1 incident(s).');
    expect(report).toContain('## 1. Storage incident: PVC data-db-0 is Pending');
    expect(report).toContain(
      '**Causal links:** PVC_PENDING@persistentvolumeclaims/payments/data-db-0 → POD_UNSCHEDULABLE@pods/payments/db-0; ' +
        'POD_UNSCHEDULABLE@pods/payments/db-0 → CRASH_LOOP@pods/payments/orders-consumer-6d8f-x2k',
    );
  });
});
