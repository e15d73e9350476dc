import { MAX_STEP_BUDGET } from '../triage/index.js';
import { UsageError } from './io.js';
import { shown } from './text.js';

/** `--step-budget N` and `--timeout S`, as every command that runs a triage reads them. */

/** Rounds of reads, a whole number from 1 to MAX_STEP_BUDGET. */
export function parseStepBudget(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_STEP_BUDGET) {
    throw new UsageError(
      `--step-budget: expected a whole number from 1 to ${MAX_STEP_BUDGET}, got "${shown(text, 40)}"`,
    );
  }
  return Number(text);
}

/** Seconds, more than 0 and at most 300, as milliseconds. */
export function parseTimeoutSeconds(text: string): number {
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 300) {
    throw new UsageError(`--timeout: expected seconds between 0 and 300, got "${shown(text, 40)}"`);
  }
  return Math.round(seconds * 1000);
}
