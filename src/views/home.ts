import type { DiagnosisMetrics } from '../memory/metrics.js';
import type { ApprovalRecord } from '../store/approvals.js';
import type { SessionRecord } from '../store/sessions.js';
import {
  BLOCK_LIMITS,
  clip,
  context,
  divider,
  escapeMrkdwn,
  fitBlocks,
  type HomeView,
  header,
  type KnownBlock,
  section,
  slackDate,
} from './blocks.js';
import { namespaceLabel, threadLink } from './sessions.js';
import { metricsBlocks } from './stats.js';

export interface HomeData {
  userId: string;
  openSessions: readonly SessionRecord[];
  approvals: readonly ApprovalRecord[];
  resolved: readonly SessionRecord[];
  metrics: DiagnosisMetrics;
  metricsScope: string;
}

const KIND_LABELS: Record<string, string> = {
  handoff: 'Handoff to a specialist',
  'plan-review': 'Remediation plan review',
  'break-glass': 'Break-glass override',
  postmortem: 'Postmortem review',
};

function approvalLine(approval: ApprovalRecord): KnownBlock {
  const data = approval.data ?? {};
  const channelId = typeof data['channelId'] === 'string' ? data['channelId'] : undefined;
  const threadTs = typeof data['threadTs'] === 'string' ? data['threadTs'] : undefined;
  const where = channelId === undefined ? '' : ` · ${threadLink({ channelId, threadTs }, 'open thread')}`;
  const summary = approval.summary === undefined ? '' : `\n${escapeMrkdwn(clip(approval.summary, 300))}`;
  return section(
    `*${KIND_LABELS[approval.kind] ?? approval.kind}* for session \`${approval.sessionId}\`${
      approval.requester ? ` (requested by <@${approval.requester}>)` : ''
    }${summary}\nExpires ${slackDate(approval.expiresAt)}${where}`,
  );
}

/** The App Home tab: my open sessions, approvals waiting for me, recent resolved incidents and the metrics. */
export function homeView(data: HomeData): HomeView {
  const mine =
    data.openSessions.length === 0
      ? [section('_You have no open sessions._ Start one in a channel with `/triage <what is wrong> in <namespace>`.')]
      : data.openSessions
          .slice(0, 15)
          .map((s) =>
            section(
              `*\`${s.intent}\`* in ${namespaceLabel(s.namespace)} — ${s.state}, since ${slackDate(s.createdAt)} · ${threadLink(s)}`,
            ),
          );
  const waiting =
    data.approvals.length === 0
      ? [section('_Nothing is waiting for your approval._')]
      : data.approvals.slice(0, 15).map(approvalLine);
  const resolved =
    data.resolved.length === 0
      ? [section('_No resolved incidents yet._')]
      : data.resolved
          .slice(0, 10)
          .map((s) =>
            section(
              `*\`${s.intent}\`* in ${namespaceLabel(s.namespace)} — resolved ${slackDate(s.closedAt ?? s.updatedAt)} · ${threadLink(s)}`,
            ),
          );
  const blocks: KnownBlock[] = [
    header('Your open sessions'),
    ...mine,
    divider(),
    header('Waiting for your approval'),
    ...waiting,
    divider(),
    header('Recently resolved'),
    ...resolved,
    divider(),
    ...metricsBlocks(data.metrics, data.metricsScope),
    context(`Updated ${slackDate(new Date().toISOString())}. Approve from the buttons in each incident thread.`),
  ];
  return {
    type: 'home',
    callback_id: 'calmops_home',
    blocks: fitBlocks(blocks, BLOCK_LIMITS.viewBlocks, 'Open the threads for the rest.'),
  };
}
