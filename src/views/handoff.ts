import { MAX_HANDOFFS } from '../limits.js';
import { escapeText, mention } from '../mrkdwn/escape.js';
import { actions, button, context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

const SPECIALIST: Record<string, string> = {
  compute: 'Compute specialist (nodes, pods, container runtime)',
  storage: 'Storage specialist (PVCs, volumes, StorageClasses)',
  networking: 'Network specialist (DNS, Services, Ingress and Routes)',
  platform: 'Platform specialist',
};

export function specialistName(domain: string): string {
  return SPECIALIST[domain] ?? `${domain} specialist`;
}

export interface HandoffProposal {
  sessionId: string;
  approvalId: string;
  domain: string;
  reason: string;
  /** Who asked for it, shown as a mention before the reason; absent when calmops proposes it. */
  askedBy?: string;
  /** Handoffs left in this session after this one. */
  remaining: number;
  expiresAt: string;
}

/** Ask-first: the specialist runs only after someone says yes. */
export function handoffProposalView(p: HandoffProposal): ThreadMessage {
  return fitMessage(
    {
      text: `Shall I consult the ${specialistName(p.domain)}?`,
      blocks: [
        section(
          `:raising_hand: *Shall I consult the ${specialistName(p.domain)}?*\n${p.askedBy ? `${mention(p.askedBy)} ` : ''}${escapeText(p.reason)}`,
        ),
        context(
          `It reads only its own domain and adds its findings to the shared context. ${p.remaining} handoff(s) left after this one. Expires ${p.expiresAt.slice(11, 16)} UTC. Reads and questions are answered meanwhile; only a change waits for this answer.`,
        ),
        actions(`handoff:${p.approvalId}`, [
          button('Yes, consult', 'approval_approve', p.approvalId, 'primary'),
          button('No, thanks', 'approval_deny', p.approvalId),
        ]),
      ],
    },
    reportPointer(p.sessionId),
  );
}

export function handoffOutcomeView(
  sessionId: string,
  domain: string,
  outcome: 'denied' | 'expired' | 'limit',
  by?: string,
): ThreadMessage {
  const text =
    outcome === 'denied'
      ? `OK, not consulting the ${specialistName(domain)}${by ? ` (<@${by}> said no)` : ''}. Carry on in the thread.`
      : outcome === 'expired'
        ? `Nobody answered the handoff to the ${specialistName(domain)} in time, so it was not consulted.`
        : `This session already used its ${MAX_HANDOFFS} handoffs; carry on with the evidence at hand.`;
  return fitMessage({ text, blocks: [context(`:information_source: ${text}`)] }, reportPointer(sessionId));
}
