import {
  classifyCommandLine,
  extractCommandLines,
  normalizeSlackText,
  redactCredentials,
} from '../diagnosis/commands/index.js';
import { clip, SUMMARY_MAX } from '../limits.js';
import { matchPlanStep } from '../review/match.js';
import type { PlanStep } from '../review/plan.js';
import type { ResolutionStep } from '../store/memory.js';
import type { TimelineEvent } from '../store/timeline.js';

/**
 * What an incident's memory says fixed it: the approved plan's changes (with the cluster's real names), each marked
 * when someone reported running it in the thread, followed by the changes people reported that were not in the
 * plan. A later incident is then shown what was done, not a template of what could have been.
 */

export interface ResolutionInput {
  /** The approved plan's steps, when there was one. */
  steps?: readonly PlanStep[];
  /** The session's timeline, oldest first: approvals and the messages people sent. */
  timeline: readonly TimelineEvent[];
  /** How the fix was reported ("Reported resolved by U1: …"), when it was. */
  fixReport?: string;
}

const APPROVED = new Set(['human_review_approved', 'review_autonomous_approved']);
const MAX_STEPS = 30;

/** Memory keeps what was done, not who did it: a recall in another incident must not name or ping people. */
interface Reported {
  command: string;
}

/** Commands people typed after the plan was approved (all of the thread when nothing was approved). */
function reportedCommands(input: ResolutionInput): Reported[] {
  const approvedAt = [...input.timeline].reverse().find((e) => APPROVED.has(e.type));
  const after = approvedAt
    ? input.timeline.filter((e) => e.at > approvedAt.at || (e.at === approvedAt.at && e.seq > approvedAt.seq))
    : input.timeline;
  const out: Reported[] = [];
  for (const event of after) {
    if (event.type !== 'input.consumed' || !event.summary) continue;
    for (const line of extractCommandLines(normalizeSlackText(event.summary))) {
      out.push({ command: redactCredentials(line) });
    }
  }
  if (input.fixReport) {
    for (const line of extractCommandLines(normalizeSlackText(input.fixReport))) {
      out.push({ command: redactCredentials(line) });
    }
  }
  return out;
}

function changes(command: string): boolean {
  const request = classifyCommandLine(command);
  return request !== undefined && request.toolClass !== 'read';
}

export function resolutionFromSession(input: ResolutionInput): ResolutionStep[] {
  const steps = input.steps ?? [];
  const completed: number[] = [];
  const ranBy = new Map<number, Reported>();
  const extra: Reported[] = [];
  for (const reported of reportedCommands(input)) {
    const match = steps.length > 0 ? matchPlanStep({ steps }, reported.command, { completed }) : undefined;
    if (match && match.via === 'command') {
      if (!completed.includes(match.stepIndex)) completed.push(match.stepIndex);
      if (!ranBy.has(match.stepIndex)) ranBy.set(match.stepIndex, reported);
    } else if (changes(reported.command) && !extra.some((e) => e.command === reported.command)) {
      extra.push(reported);
    }
  }
  const readOnly = steps.every((s) => s.mode === 'read');
  const planned: ResolutionStep[] = steps
    .map((step, index) => ({ step, index }))
    .filter(({ step, index }) => step.mode === 'write' || readOnly || ranBy.has(index))
    .map(({ step, index }) => {
      const ran = ranBy.get(index);
      // What was run names what the plan may have left open (`<storageclass>`), so it is what memory keeps.
      const same = !ran || ran.command === step.command;
      return {
        command: clip(ran?.command ?? step.command, SUMMARY_MAX),
        description: clip(
          `${step.description}${ran ? ` Reported run${same ? '' : `; approved as step ${index + 1}: ${step.command}`}.` : ''}`,
          1000,
        ),
        ...(step.rollback ? { rollback: clip(step.rollback, SUMMARY_MAX) } : {}),
      };
    });
  const unplanned: ResolutionStep[] = extra.map((e) => ({
    command: clip(e.command, SUMMARY_MAX),
    description: clip(
      `Reported run after ${steps.length > 0 ? 'approval; not a step of the approved plan' : 'the diagnosis'}.`,
      1000,
    ),
  }));
  const all = [...planned, ...unplanned].slice(0, MAX_STEPS);
  if (all.length > 0) return all;
  return [
    {
      command: 'manual fix (no approved plan)',
      description: clip(input.fixReport ?? 'Reported resolved in the thread', 1000),
    },
  ];
}
