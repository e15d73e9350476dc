import * as z from 'zod';
import { ReadSpecSchema } from '../../cluster/read-spec.js';
import { evidenceFromRead } from '../../diagnosis/evidence-sources.js';
import type { UserRequest } from '../../diagnosis/request.js';
import { SessionId, SUMMARY_MAX } from '../../limits.js';
import { hypothesisChoiceBlocks } from '../../views/envelope.js';
import { context, fitMessage, reportPointer, section } from '../../views/limits.js';
import { readResultView } from '../../views/read-result.js';
import { postToSession } from '../common.js';
import type { WorkflowDeps } from '../deps.js';
import { recordEvent } from '../events.js';
import { addEvidence } from '../progress.js';

/**
 * The steps after a read: what a targeted read or a hypothesis's test found becomes evidence (and may move the
 * session), and the thread sees the result.
 */

export const RecordReadPayload = z.object({
  step: z.literal('record-read'),
  sessionId: SessionId,
  request: ReadSpecSchema.extend({ cluster: z.string() }),
  result: z.object({
    title: z.string(),
    outcome: z.enum(['ok', 'empty', 'failed']),
    summary: z.string(),
    lines: z.array(z.string()),
    /** A typed read's whole answer when the reply shows only its first lines. */
    text: z
      .string()
      .max(64 * 1024)
      .optional(),
    note: z.string().max(500).optional(),
  }),
});

/** `kubectl get pods -n shop` → `kubectl-get-pods-n-shop.txt`. */
function fileNameFor(title: string): string {
  const base = title
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${base || 'read'}.txt`;
}

function requestFor(spec: z.infer<typeof ReadSpecSchema>): UserRequest {
  const verb = spec.verb === 'logs' ? 'logs' : spec.verb === 'events' ? 'events' : spec.name ? 'describe' : 'get';
  return {
    kind: 'read',
    toolClass: 'read',
    verb,
    resource: { kind: spec.kind, ...(spec.name ? { name: spec.name } : {}) },
    ...(spec.namespace ? { namespace: spec.namespace } : {}),
    allNamespaces: false,
    source: 'command',
    reasons: [],
    escalation: false,
    malformed: false,
    raw: spec.title,
  };
}

export async function recordRead(deps: WorkflowDeps, p: z.infer<typeof RecordReadPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const at = deps.now().toISOString();
  const progress = await addEvidence(
    deps,
    p.sessionId,
    evidenceFromRead(
      requestFor(p.request),
      { outcome: p.result.outcome, summary: p.result.summary },
      { state: session.state, at },
    ),
  );
  await recordEvent(deps, p.sessionId, 'read.done', {
    summary: `${p.request.title}: ${p.result.summary}`.slice(0, SUMMARY_MAX),
    data: { outcome: p.result.outcome, lines: p.result.lines.length },
  });
  const moved = progress.transitions.at(-1);
  const { text } = p.result;
  const attach = text !== undefined && deps.slack.upload !== undefined && progress.session.threadTs !== undefined;
  await postToSession(
    deps,
    progress.session,
    readResultView({
      sessionId: p.sessionId,
      title: p.result.title,
      outcome: p.result.outcome,
      summary: p.result.summary,
      lines: p.result.lines,
      ...(p.result.note ? { note: p.result.note } : {}),
      ...(text !== undefined ? { rest: attach ? 'attached' : 'not-shown' } : {}),
      ...(moved ? { guidance: `Moved to ${moved.to}: ${moved.reason}` } : {}),
    }),
  );
  if (attach && text !== undefined && progress.session.threadTs !== undefined) {
    try {
      await deps.slack.upload?.(progress.session.channelId, progress.session.threadTs, {
        filename: fileNameFor(p.request.title),
        title: p.result.title.slice(0, 200),
        content: text,
      });
    } catch (error) {
      // The reply already shows the first lines; a file Slack refuses must not fail the read.
      await recordEvent(deps, p.sessionId, 'read.attachment-failed', {
        summary: `${p.request.title}: ${(error as Error).message}`.slice(0, 500),
      });
    }
  }
  return { outcome: p.result.outcome };
}

export const RecordTestPayload = z.object({
  step: z.literal('record-test'),
  sessionId: SessionId,
  hypothesis: z.object({ id: z.string(), code: z.string(), summary: z.string() }).passthrough(),
  result: z.object({ hypothesisId: z.string(), results: z.array(RecordReadPayload.shape.result) }),
});

export async function recordTest(deps: WorkflowDeps, p: z.infer<typeof RecordTestPayload>) {
  const session = await deps.store.sessions.getRequired(p.sessionId);
  const workflow = await deps.artifacts.getOrCreateWorkflow(p.sessionId, deps.now());
  const hypothesis = workflow.hypotheses.find((h) => h.id === p.hypothesis.id);
  const at = deps.now().toISOString();
  const evidence = p.result.results.flatMap((r, i) => {
    const spec = hypothesis?.reads[i];
    return spec
      ? evidenceFromRead(requestFor(spec), { outcome: r.outcome, summary: r.summary }, { state: 'TESTING', at })
      : [];
  });
  const progress = await addEvidence(deps, p.sessionId, evidence);
  await recordEvent(deps, p.sessionId, 'hypothesis.tested', {
    summary: `${p.hypothesis.code}: ${p.result.results.map((r) => `${r.title} ${r.outcome}`).join('; ')}`.slice(
      0,
      SUMMARY_MAX,
    ),
    data: { hypothesisId: p.hypothesis.id, reads: p.result.results.length },
  });
  for (const r of p.result.results) {
    await postToSession(
      deps,
      session,
      readResultView({
        sessionId: p.sessionId,
        title: r.title,
        outcome: r.outcome,
        summary: r.summary,
        lines: r.lines,
        hypothesis: `${p.hypothesis.code}: ${p.hypothesis.summary}`,
      }),
    );
  }
  const others = progress.workflow.hypotheses.filter((h) => h.id !== p.hypothesis.id);
  await postToSession(
    deps,
    session,
    fitMessage(
      {
        text: `Does this confirm ${p.hypothesis.code}?`,
        blocks: [
          section(
            `Does this confirm *${p.hypothesis.code}*? Reply \`confirmed\` to draft a remediation plan for review, or test another hypothesis.`,
          ),
          ...hypothesisChoiceBlocks(p.sessionId, others),
          context(`State ${progress.session.state}`),
        ],
      },
      reportPointer(p.sessionId),
    ),
  );
  return { tested: p.result.results.length };
}
