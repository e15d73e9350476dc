import { redactDeep, redactText } from '../redact/index.js';

/**
 * The analyzers' and the engine's names for the shared redaction (`src/redact`): findings, evidence lines and
 * envelopes are scrubbed by the same rules as everything else calmops shows or keeps.
 */

/** Scrub one piece of text (whole, so blocks that span lines are removed whole). Idempotent. */
export function scrubText(text: string): string {
  return redactText(text);
}

/** Scrub every string inside a JSON-like value; fields named like credentials are replaced outright. */
export function scrubDeep<T>(value: T): T {
  return redactDeep(value);
}
