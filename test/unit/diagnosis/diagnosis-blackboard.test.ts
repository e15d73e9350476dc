import { describe, expect, it } from 'vitest';
import { formatFindingsReport, groupFindings } from '../../../src/diagnosis/blackboard.js';
import { classifyRequest } from '../../../src/diagnosis/commands/index.js';
import { type ApprovedPlan, ApprovedPlanSchema, answerFromPlan } from '../../../src/diagnosis/resolving.js';
import { finding, pvcIncidentFindings } from '../../support/diagnosis-fixtures.js';

describe('groupFindings', () => {
  it('makes one storage incident of a pending PVC, its unschedulable pod and the crashing consumer', () => {
    const [pvc, pod, consumer] = pvcIncidentFindings();
    // Order of arrival must not matter.
    const groups = groupFindings([consumer!, pod!, pvc!]);
    expect(groups).toHaveLength(1);
    const group = groups[0]!;
    expect(group.primaryDomain).toBe('storage');
    expect(group.rootCause.code).toBe('PVC_PENDING');
    expect(group.findings.map((f) => f.code)).toEqual(['PVC_PENDING', 'POD_UNSCHEDULABLE', 'CRASH_LOOP']);
    expect(group.domains.sort()).toEqual(['compute', 'storage']);
    expect(group.severity).toBe('critical');
    expect(group.links).toEqual(
      expect.arrayContaining([
        {
          cause: 'PVC_PENDING@persistentvolumeclaims/payments/data-db-0',
          dependent: 'POD_UNSCHEDULABLE@pods/payments/db-0',
        },
        { cause: 'POD_UNSCHEDULABLE@pods/payments/db-0', dependent: 'CRASH_LOOP@pods/payments/api-7f9c-abcde' },
      ]),
    );
    expect(groupFindings([pvc!, pod!, consumer!])[0]?.id).toBe(group.id);
  });

  it('keeps unrelated findings apart, and joins findings on the same object', () => {
    const groups = groupFindings([
      ...pvcIncidentFindings(),
      finding({
        code: 'ROUTE_NO_ENDPOINTS',
        domain: 'networking',
        severity: 'high',
        resource: { kind: 'Route', name: 'shop', namespace: 'web' },
        related: [{ kind: 'Service', name: 'shop' }],
      }),
      finding({
        code: 'SERVICE_NO_ENDPOINTS',
        domain: 'networking',
        severity: 'medium',
        resource: { kind: 'Service', name: 'shop', namespace: 'web' },
      }),
      finding({ code: 'NODE_NOT_READY', resource: { kind: 'Node', name: 'worker-3' }, severity: 'medium' }),
    ]);
    expect(groups.map((g) => [g.primaryDomain, g.rootCause.code, g.findings.length])).toEqual([
      ['storage', 'PVC_PENDING', 3],
      ['networking', 'SERVICE_NO_ENDPOINTS', 2],
      ['compute', 'NODE_NOT_READY', 1],
    ]);
  });

  it('accepts specialists’ shared-context entries', () => {
    const groups = groupFindings([
      {
        specialist: 'storage',
        summary: 'OSD.5 is down with I/O errors',
        confidence: 0.95,
        code: 'OSD_DOWN',
        resource: { kind: 'PersistentVolume', name: 'pv-1' },
      },
      {
        specialist: 'storage',
        summary: 'PVC bound to a PV on the failed OSD',
        confidence: 0.8,
        resource: { kind: 'PersistentVolumeClaim', name: 'data', namespace: 'db' },
        related: [{ kind: 'PersistentVolume', name: 'pv-1' }],
      },
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0]?.rootCause.code).toBe('OSD_DOWN');
  });
});

describe('formatFindingsReport', () => {
  it('prints one section per incident with a findings table and evidence', () => {
    const report = formatFindingsReport(groupFindings(pvcIncidentFindings()), { title: 'Incident in payments' });
    expect(report).toMatch(/^# Incident in payments\n/);
    expect(report).toContain('3 finding(s) grouped into 1 incident(s).');
    expect(report).toContain('## 1. Storage incident: PVC data-db-0 is Pending');
    expect(report).toContain('- **Primary domain:** storage (also compute)');
    expect(report).toContain('| 1 | critical | `PVC_PENDING` | PersistentVolumeClaim payments/data-db-0 |');
    expect(report).toContain('  - ProvisioningFailed: storageclass.storage.k8s.io "fast-ssd" not found');
  });

  it('escapes table cells and says when there is nothing to report', () => {
    const report = formatFindingsReport(
      groupFindings([finding({ code: 'X', resource: { kind: 'Pod', name: 'a', namespace: 'b' }, message: 'a | b' })]),
    );
    expect(report).toContain('a \\| b');
    expect(formatFindingsReport([])).toContain('No findings were recorded.');
  });
});

describe('answerFromPlan', () => {
  const plan: ApprovedPlan = ApprovedPlanSchema.parse({
    id: 'plan-7',
    title: 'Restore the API',
    approvedBy: 'U222',
    steps: [
      { id: 's1', mode: 'read', command: 'kubectl get deploy api -n payments' },
      {
        id: 's2',
        mode: 'write',
        command: 'kubectl rollout restart deployment/api -n payments',
        rollback: 'kubectl rollout undo deployment/api -n payments',
      },
      {
        id: 's3',
        mode: 'write',
        command: 'kubectl scale deployment/worker --replicas=4 -n payments',
        rollback: 'kubectl scale deployment/worker --replicas=2 -n payments',
      },
    ],
  });

  it('answers a matching request with the plan’s command, rollback and safety label', () => {
    const answer = answerFromPlan(classifyRequest('restart the deployment api'), plan);
    expect(answer).toMatchObject({
      matched: true,
      command: 'kubectl rollout restart deployment/api -n payments',
      rollback: 'kubectl rollout undo deployment/api -n payments',
      safety: 'REQUIRES_APPROVAL',
    });
    expect(answer.message).toMatch(/^calmops does not run changes/);
    const typed = answerFromPlan(classifyRequest('kubectl scale deploy/worker --replicas=4 -n payments'), plan);
    expect(typed).toMatchObject({ matched: true, step: { id: 's3' } });
  });

  it('refuses what the plan does not contain', () => {
    const wrongName = answerFromPlan(classifyRequest('kubectl rollout restart deploy/web -n payments'), plan);
    expect(wrongName).toMatchObject({ matched: false, reason: 'no plan step matches the request' });
    const wrongNs = answerFromPlan(classifyRequest('kubectl rollout restart deploy/api -n shop'), plan);
    expect(wrongNs.matched).toBe(false);
    expect(answerFromPlan(classifyRequest('kubectl delete pod api-1'), plan).matched).toBe(false);
    expect(answerFromPlan(classifyRequest('restart it'), undefined)).toMatchObject({
      matched: false,
      reason: 'no approved plan',
    });
  });

  it('asks which step is meant when a request is ambiguous', () => {
    const answer = answerFromPlan(classifyRequest('fix it'), plan);
    expect(answer).toMatchObject({ matched: false });
    expect(answer.matched === false && answer.candidates.map((s) => s.id)).toEqual(['s2', 's3']);
  });

  it('labels destructive plan steps DANGEROUS', () => {
    const single = ApprovedPlanSchema.parse({
      id: 'p',
      steps: [
        {
          id: 'd',
          mode: 'write',
          command: 'kubectl delete pod db-0 -n payments',
          rollback: 'the StatefulSet recreates it',
        },
      ],
    });
    expect(answerFromPlan(classifyRequest('kubectl delete pod db-0 -n payments'), single)).toMatchObject({
      matched: true,
      safety: 'DANGEROUS',
    });
  });

  it('refuses a plan whose write step has no rollback', () => {
    expect(() =>
      ApprovedPlanSchema.parse({ id: 'p', steps: [{ id: 'x', mode: 'write', command: 'kubectl apply -f x.yaml' }] }),
    ).toThrow(/rollback/);
  });
});
