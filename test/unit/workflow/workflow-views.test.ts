import { describe, expect, it } from 'vitest';
import { messageBlockProblems } from '../../../local/slack/block-rules.js';
import type { TriageEnvelope } from '../../../src/triage/envelope/envelope.js';
import { breakGlassWarningView } from '../../../src/views/break-glass.js';
import { decidedView } from '../../../src/views/decided.js';
import { envelopeView } from '../../../src/views/envelope.js';
import { fitMessage, section, THREAD_LIMITS, truncate } from '../../../src/views/limits.js';
import { approvedPlanView } from '../../../src/views/plan.js';
import { readResultView } from '../../../src/views/read-result.js';

const envelope: TriageEnvelope = {
  schemaVersion: 1,
  routing: {
    intent: 'pvc-binding',
    templateId: 'pvc-binding@v1',
    domain: 'storage',
    namespace: 'shop',
    bounded: true,
    stepBudget: 3,
    triggerMode: 'replace',
    intentConfidence: 1,
    why: 'explicit',
  },
  rubrics: { safety: 'REQUIRES_APPROVAL', priority: 'P2', confidence: 'High' },
  summary: 'PVC data is Pending'.repeat(400),
  evidence: {
    completeness: 0.75,
    threshold: 0.8,
    present: ['pvcs', 'events', 'pods'],
    missing: ['storageclasses'],
    gaps: [{ type: 'storageclasses', reason: 'forbidden', detail: 'RBAC' }],
  },
  findings: Array.from({ length: 20 }, (_, i) => ({
    code: 'PVC_PENDING',
    analyzer: 'pvc',
    domain: 'storage' as const,
    severity: 'high' as const,
    resource: { kind: 'PersistentVolumeClaim', name: `data-${i}`, namespace: 'shop' },
    message: 'waiting for a volume'.repeat(50),
    evidence: [],
    confidence: 0.9,
    related: [],
    remediation: [],
  })),
  rootCause: [
    {
      rank: 1,
      code: 'PVC_PENDING',
      summary: 'no StorageClass',
      confidence: 0.9,
      resource: { kind: 'PersistentVolumeClaim', name: 'data-0', namespace: 'shop' },
    },
  ],
  nextActions: [
    { command: 'kubectl get sc', type: 'read-only', safety: 'SAFE', description: 'list classes' },
    { command: 'kubectl delete pvc data-0', type: 'mutating', safety: 'DANGEROUS', description: 'recreate' },
  ],
  promptSuggestions: ['Which StorageClass is the default?'],
  execution: {
    stepsExecuted: 2,
    stepBudget: 3,
    requests: 5,
    durationMs: 10,
    timedOut: false,
    now: '2025-01-01T00:00:00.000Z',
  },
};

describe('thread views', () => {
  it('gives every hypothesis button its own action_id, as Slack requires within a block', () => {
    const message = envelopeView({
      sessionId: 'S1',
      envelope,
      hypotheses: [1, 2, 3].map((rank) => ({
        id: `h${rank}`,
        rank,
        code: `CODE_${rank}`,
        summary: `cause ${rank}`,
        confidence: 0.9 - rank / 10,
      })),
    });
    expect(messageBlockProblems(message.blocks)).toEqual([]);
    const ids = [...JSON.stringify(message.blocks).matchAll(/"action_id":"(hypothesis_choose[^"]*)"/g)].map(
      (m) => m[1],
    );
    expect(ids).toEqual(['hypothesis_choose:1', 'hypothesis_choose:2', 'hypothesis_choose:3']);
  });

  it('keeps an oversized envelope within Slack limits and points to the full report', () => {
    const message = envelopeView({
      sessionId: 'S1',
      envelope,
      hypotheses: [{ id: 'h1', rank: 1, code: 'PVC_PENDING', summary: 'no StorageClass', confidence: 0.9 }],
    });
    expect(messageBlockProblems(message.blocks)).toEqual([]);
    const json = JSON.stringify(message.blocks);
    expect(json).toContain('/triage status S1');
    // The envelope is posted once and never edited: it carries no state line to go stale.
    expect(json).not.toMatch(/\*State\*/);
    expect(json).toContain(':red_circle: DANGEROUS');
    expect(json).toContain('hypothesis_choose');
    expect(json).toContain('{\\"s\\":\\"S1\\",\\"h\\":\\"h1\\"}');
    expect(message.text.length).toBeLessThanOrEqual(THREAD_LIMITS.fallbackText);
  });

  it('cuts more than 50 blocks and every long text instead of failing', () => {
    const blocks = Array.from({ length: 80 }, (_, i) => section(`${i} ${'x'.repeat(5000)}`));
    const fitted = fitMessage({ text: 'y'.repeat(50_000), blocks }, 'Full report: `/triage status S2`');
    expect(fitted.blocks).toHaveLength(50);
    expect(messageBlockProblems(fitted.blocks)).toEqual([]);
    expect(JSON.stringify(fitted.blocks.at(-1))).toContain('31 more block(s) not shown');
    expect(truncate('abcdef', 4)).toBe('abc…');
  });

  it('renders the other thread views within the limits', () => {
    const plan = {
      plan_version: '1' as const,
      name: 'fix-pvc',
      summary: 'Create a default StorageClass',
      rootCause: 'no default class',
      namespace: 'shop',
      author: 'U1',
      steps: [
        {
          id: 'inspect',
          description: 'look',
          command: 'kubectl get sc',
          mode: 'read' as const,
          safety: 'SAFE' as const,
          needs: [],
        },
        {
          id: 'fix',
          description: 'mark default',
          command: 'kubectl patch sc fast -p x',
          mode: 'write' as const,
          safety: 'REQUIRES_APPROVAL' as const,
          rollback: 'kubectl patch sc fast -p y',
          needs: ['inspect'],
        },
      ],
    };
    const approved = approvedPlanView({ sessionId: 'S', plan, approvedBy: 'U2', autonomous: false });
    expect(JSON.stringify(approved.blocks)).toContain('session_resolved');
    const decided = decidedView({
      outcome: 'approved',
      by: 'U2',
      at: '2025-01-01T10:00:00.000Z',
      blocks: approved.blocks,
      sessionId: 'S',
    });
    expect(decided.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(JSON.stringify(decided.blocks)).toContain('<@U2>');
    for (const m of [
      approved,
      decided,
      breakGlassWarningView({
        sessionId: 'S',
        requestId: 'r',
        requester: 'U1',
        approver: 'U2',
        justification: 'j'.repeat(4000),
        targetState: 'RESOLVING',
        timeLimitMinutes: 30,
      }),
      readResultView({
        sessionId: 'S',
        title: 'kubectl logs x',
        outcome: 'ok',
        summary: 's',
        lines: Array.from({ length: 500 }, () => 'l'.repeat(200)),
      }),
    ]) {
      expect(messageBlockProblems(m.blocks)).toEqual([]);
    }
  });
});
