import { escapeText } from '../mrkdwn/escape.js';
import { actions, button, code, context, fitMessage, reportPointer, section, type ThreadMessage } from './limits.js';

/** A finding the fresh triage still shows, as the thread should see it. */
interface StillPresentFinding {
  code: string;
  severity: string;
  /** e.g. `PersistentVolumeClaim student03/jupyter-data` */
  where: string;
  message: string;
  evidence: readonly string[];
}

export interface FixValidationViewInput {
  sessionId: string;
  outcome: 'validated' | 'still-present' | 'incomplete';
  /** What had to be gone, e.g. `PVC_NO_DEFAULT_STORAGECLASS on PersistentVolumeClaim student03/jupyter-data`. */
  targets: readonly string[];
  stillPresent: readonly StillPresentFinding[];
  /** The fresh triage: its findings, evidence completeness and the template's threshold. */
  findings: number;
  completeness: number;
  threshold: number;
  /** Evidence types the fresh triage could not read, with why. */
  gaps: readonly string[];
  /** The state the session is in after the verdict. */
  state: string;
  attempt: number;
}

const MAX_FINDINGS = 5;
const MAX_EVIDENCE_LINES = 3;
const pct = (value: number) => `${Math.round(value * 100)}%`;

function againButton(sessionId: string) {
  return actions(`revalidate:${sessionId}`, [button('Check the fix again', 'session_resolved', sessionId, 'primary')]);
}

/** The verdict of a fix validation: the fault is gone, still there (with its evidence), or not provable yet. */
export function fixValidationView(input: FixValidationViewInput): ThreadMessage {
  const what = input.targets.length > 0 ? input.targets.join(', ') : 'the original symptoms';
  const triage = `Fresh triage: ${input.findings} finding(s), evidence completeness ${pct(input.completeness)} (needs ${pct(input.threshold)}). Check ${input.attempt}.`;
  if (input.outcome === 'validated') {
    const text = `:white_check_mark: Fix validated: ${escapeText(what)} no longer seen`;
    return fitMessage(
      {
        text: `Fix validated: ${escapeText(what)} no longer seen`,
        blocks: [section(text), context(triage, 'Storing the incident in operational memory and closing the session.')],
      },
      reportPointer(input.sessionId),
    );
  }
  if (input.outcome === 'incomplete') {
    const gaps = input.gaps.slice(0, 8).map((g) => `• ${escapeText(g)}`);
    return fitMessage(
      {
        text: 'Fix not validated: evidence incomplete',
        blocks: [
          section(
            `:warning: *Fix not validated: evidence incomplete.* ${escapeText(what)} was not seen, but the fresh triage read only ${pct(input.completeness)} of what it needs (${pct(input.threshold)}), so that proves nothing yet.`,
          ),
          ...(gaps.length > 0 ? [section(`*Could not read*\n${gaps.join('\n')}`)] : []),
          context(
            triage,
            `The session stays open in *${input.state}*. Say \`resolved\` again (or use the button) to check once the cluster can be read.`,
          ),
          againButton(input.sessionId),
        ],
      },
      reportPointer(input.sessionId),
    );
  }
  const shown = input.stillPresent.slice(0, MAX_FINDINGS);
  const first = shown[0];
  const headline = first ? `${first.code} on ${first.where}` : what;
  const findingBlocks = shown.map((f) => {
    const lines = f.evidence.slice(0, MAX_EVIDENCE_LINES).map((e) => `> ${code(escapeText(e))}`);
    return section(
      [
        `*${escapeText(f.code)}* (${escapeText(f.severity)}) on ${escapeText(f.where)}: ${escapeText(f.message)}`,
        ...lines,
      ].join('\n'),
    );
  });
  return fitMessage(
    {
      text: `Fix not validated: ${escapeText(headline)} is still there`,
      blocks: [
        section(`:warning: *Fix not validated:* ${escapeText(headline)} is still there.`),
        ...findingBlocks,
        ...(input.stillPresent.length > shown.length
          ? [context(`…and ${input.stillPresent.length - shown.length} more still present.`)]
          : []),
        context(
          triage,
          `The session stays open in *${input.state}* with a new reasoning cycle: the earlier hypothesis and plan no longer count. Look again, and say \`resolved\` once the next fix is in.`,
        ),
        againButton(input.sessionId),
      ],
    },
    reportPointer(input.sessionId),
  );
}
