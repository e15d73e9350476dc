import type { TriageEnvelope } from '../triage/envelope/index.js';
import { type Finding, refKey } from '../triage/envelope/index.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import type { PlanSynthesisInput, RemediationEntry } from './template-synthesizer.js';

/**
 * What a plan is synthesized from: the confirmed (or first ranked) root cause of the session's envelope, the finding
 * behind it, the other ranked causes, and remediation knowledge with the session intent's template first.
 */

export interface PlanSession {
  sessionId: string;
  namespace: string;
  intent: string;
  author: string;
  /** The root cause the person confirmed, when they did. */
  confirmedCode?: string;
  feedback?: readonly string[];
}

function remediationFor(templates: TemplateRegistry, intent: string): RemediationEntry[] {
  return [
    ...(templates.get(intent)?.remediation ?? []),
    ...templates
      .list()
      .filter((t) => t.id !== intent)
      .flatMap((t) => t.remediation),
  ];
}

export function planInputFrom(
  envelope: TriageEnvelope,
  session: PlanSession,
  templates: TemplateRegistry,
): PlanSynthesisInput | undefined {
  const cause = envelope.rootCause.find((c) => c.code === session.confirmedCode) ?? envelope.rootCause[0];
  if (!cause) return undefined;
  const entity = (f: Finding) => f.owner ?? f.resource;
  const finding =
    envelope.findings.find((f) => f.code === cause.code && refKey(entity(f)) === refKey(cause.resource)) ??
    envelope.findings.find((f) => f.code === cause.code);
  return {
    sessionId: session.sessionId,
    namespace: session.namespace,
    intent: session.intent,
    author: session.author,
    rootCause: {
      code: cause.code,
      summary: cause.summary,
      resource: cause.resource,
      ...(cause.chain ? { chain: cause.chain } : {}),
      ...(cause.change ? { change: cause.change } : {}),
      ...(cause.impact && cause.impact.length > 0
        ? { impact: cause.impact.map((i) => ({ resource: i.resource, code: i.code })) }
        : {}),
      ...(cause.alternatives && cause.alternatives.length > 0 ? { alternatives: cause.alternatives } : {}),
    },
    ...(finding ? { finding } : {}),
    findingCodes: envelope.findings.map((f) => f.code),
    remediation: remediationFor(templates, session.intent),
    otherCauses: envelope.rootCause.filter((c) => c !== cause).map((c) => ({ code: c.code, resource: c.resource })),
    ...(session.feedback && session.feedback.length > 0 ? { feedback: session.feedback } : {}),
  };
}
