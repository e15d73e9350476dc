import { escapeText, mention } from '../mrkdwn/escape.js';
import {
  actions,
  button,
  code,
  context,
  fitMessage,
  header,
  reportPointer,
  section,
  type ThreadMessage,
} from './limits.js';

export interface BreakGlassRequestFacts {
  sessionId: string;
  requestId: string;
  requester: string;
  approver: string;
  justification: string;
  targetState: string;
  timeLimitMinutes: number;
  /** The change the override is for: it unlocks that and nothing else. */
  change?: string;
}

/** The red warning every break-glass request gets in the thread before anyone decides. */
export function breakGlassWarningView(r: BreakGlassRequestFacts): ThreadMessage {
  return fitMessage(
    {
      text: `:rotating_light: Break-glass requested by <@${r.requester}>: skip to ${r.targetState} for ${r.timeLimitMinutes} min`,
      blocks: [
        header(':rotating_light: BREAK-GLASS REQUESTED'),
        section(
          `:red_circle: *<@${r.requester}> asks to skip the diagnostic workflow to ${r.targetState} for ${r.timeLimitMinutes} minute(s)${r.change ? ` to run ${code(escapeText(r.change))}` : ''}.*\n>${escapeText(r.justification)}`,
        ),
        context(
          ':warning: Changes will be allowed before the evidence supports them. Every action under the override is audited, and a post-incident review is mandatory.',
          `Request ${code(r.requestId)} · approver <@${r.approver}>`,
        ),
      ],
    },
    reportPointer(r.sessionId),
  );
}

/** The named senior's decision buttons. */
export function breakGlassApprovalView(
  r: BreakGlassRequestFacts & { approvalId: string; expiresAt: string },
): ThreadMessage {
  return fitMessage(
    {
      text: `<@${r.approver}>, break-glass approval needed`,
      blocks: [
        section(
          `:red_circle: <@${r.approver}>, do you approve the break-glass override for ${r.timeLimitMinutes} minute(s) (skip to *${r.targetState}*${r.change ? `, for ${code(escapeText(r.change))} only` : ''})?`,
        ),
        context(`Only <@${r.approver}> can decide. Expires ${r.expiresAt.slice(11, 16)} UTC.`),
        actions(`break-glass:${r.approvalId}`, [
          button('Approve override', 'approval_approve', r.approvalId, 'danger'),
          button('Deny', 'approval_deny', r.approvalId),
        ]),
      ],
    },
    reportPointer(r.sessionId),
  );
}

export function breakGlassGrantedView(
  r: BreakGlassRequestFacts & { expiresAt: string; approvedBy: string },
): ThreadMessage {
  return fitMessage(
    {
      text: `Break-glass granted until ${r.expiresAt.slice(11, 16)} UTC`,
      blocks: [
        section(
          `:rotating_light: *Override granted* by <@${r.approvedBy}>: the session acts as *${r.targetState}* until ${r.expiresAt.slice(11, 19)} UTC. It is revoked automatically.`,
        ),
        context('calmops still never runs changes; it answers change requests from the approved plan.'),
      ],
    },
    reportPointer(r.sessionId),
  );
}

export function breakGlassRevokedView(sessionId: string, requestId: string): ThreadMessage {
  return fitMessage(
    {
      text: 'Break-glass override revoked',
      blocks: [
        section(':lock: *The break-glass override ended* and was revoked automatically. The workflow applies again.'),
        context(`Request ${code(requestId)} · a post-incident review is now due.`),
      ],
    },
    reportPointer(sessionId),
  );
}

/** `by`, when given, is the Slack user the detail is about; the view mentions them ahead of it. */
export function breakGlassOutcomeView(
  sessionId: string,
  outcome: 'refused' | 'denied' | 'expired',
  detail: string,
  by?: string,
): ThreadMessage {
  const title = {
    refused: ':no_entry_sign: Break-glass request refused',
    denied: ':no_entry_sign: Break-glass denied',
    expired: ':hourglass: Break-glass request expired',
  }[outcome];
  const said = `${by ? `${mention(by)} ` : ''}${escapeText(detail)}`;
  return fitMessage({ text: `${title}: ${said}`, blocks: [section(`*${title}*\n${said}`)] }, reportPointer(sessionId));
}

/** Offered when someone asks for break-glass in words: the form takes the justification and the approver. */
export function breakGlassFormOffer(sessionId: string, guidance: string): ThreadMessage {
  return fitMessage(
    {
      text: 'Break-glass goes through the override form.',
      blocks: [
        section(`:rotating_light: ${escapeText(guidance)}`),
        actions(`breakglass:${sessionId}`, [button('Open break-glass form', 'breakglass_open', sessionId, 'danger')]),
      ],
    },
    reportPointer(sessionId),
  );
}

/** What the break-glass audit trail records of one event, as the timeline stores it. */
export interface BreakGlassAuditRecord {
  type: string;
  at: string;
  actor?: string;
  data?: Record<string, unknown>;
}

const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * One line of the post-incident review, composed from the audit entry's fields rather than its summary: people are
 * Slack mentions, the command is shown as code, and who did it is said once.
 */
export function breakGlassAuditLine(e: BreakGlassAuditRecord): string {
  const d = e.data ?? {};
  const details = (d['details'] ?? {}) as Record<string, unknown>;
  const event = e.type.replace(/^break-glass\./, '');
  const who = (id: unknown) => (str(id) ? mention(id as string) : 'calmops');
  const change = str(d['change']) ?? str(details['grantedFor']);
  const cmd = (c: string) => code(escapeText(c.slice(0, 300)));
  const time = e.at.slice(11, 19);
  switch (event) {
    case 'requested':
      return `${time} requested by ${who(d['requester'] ?? e.actor)}: skip to ${escapeText(String(d['targetState'] ?? d['skipToState'] ?? '?'))} for ${escapeText(String(d['timeLimitMinutes'] ?? details['timeLimitMinutes'] ?? '?'))} min${change ? ` to run ${cmd(change)}` : ''}${str(d['approver']) ? `, senior approver ${who(d['approver'])}` : ''}`;
    case 'granted':
      return `${time} granted by ${who(d['approver'] ?? e.actor)}${str(d['expiresAt']) ? ` until ${String(d['expiresAt']).slice(11, 16)} UTC` : ''}${change ? ` for ${cmd(change)}` : ''}`;
    case 'request-under-override': {
      const request = str(details['request']);
      return `${time} ${who(e.actor)} asked for ${request ? cmd(request) : 'a change'} under the override: ${details['allowed'] === false ? 'refused' : 'allowed'}${change && request !== change ? ` (granted for ${cmd(change)})` : ''}`;
    }
    default:
      return `${time} ${escapeText(event)}${e.actor && e.actor !== 'calmops' ? ` by ${who(e.actor)}` : ''}`;
  }
}
