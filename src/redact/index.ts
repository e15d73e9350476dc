import {
  redactAssignments,
  redactEnvEntries,
  redactFlags,
  redactPasswordPhrases,
  redactXmlElements,
} from './assignments.js';
import { capLines } from './cap.js';
import { redactCommandLines } from './command-line.js';
import { redactContextValues } from './context.js';
import { redactHighEntropy } from './entropy.js';
import { isPlaceholder, REDACTED } from './marker.js';
import { isSensitiveName } from './names.js';
import { redactPrivateKeys } from './private-keys.js';
import { redactTokens } from './tokens.js';

/**
 * The one place credentials are removed from text calmops shows or keeps: read results and envelopes posted to
 * Slack, thread messages, stored evidence, error messages and logs. It works on whole texts, not lines, because
 * credentials span lines (private keys, YAML block scalars, an env entry's name and value). Rules err on the side of
 * redacting too much: a log line that lost a value is still evidence, a leaked token is an incident of its own.
 * Redacting redacted text changes nothing.
 */

export { REDACTED } from './marker.js';
export { isSensitiveName } from './names.js';

export interface RedactOptions {
  /** Exact values to remove wherever they appear (the credentials a client put on a request). */
  secrets?: readonly string[];
}

/** Shorter values are too likely to occur by chance to be replaced everywhere they appear. */
const MIN_EXACT_SECRET = 8;

/** Anchored on the start of its run and bounded, so a long run of address characters is looked at once. */
const EMAIL =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b/g;

export function redactText(text: string, options: RedactOptions = {}): string {
  let out = capLines(text);
  for (const secret of options.secrets ?? []) {
    if (secret.length >= MIN_EXACT_SECRET) out = out.split(secret).join(REDACTED);
  }
  out = redactPrivateKeys(out);
  out = redactTokens(out);
  out = redactEnvEntries(out);
  out = redactXmlElements(out);
  out = redactAssignments(out);
  out = redactFlags(out);
  out = redactCommandLines(out);
  out = redactPasswordPhrases(out);
  out = redactContextValues(out);
  out = redactHighEntropy(out);
  // Personal data: email addresses (not the `git@host` of SSH remotes).
  if (out.includes('@')) out = out.replace(EMAIL, (address) => (address.startsWith('git@') ? address : '[EMAIL]'));
  // A marker is longer than many values it replaces: cut again, so what comes out is within the cap too and a
  // second pass finds nothing to do.
  return capLines(out);
}

/**
 * Redacts every string inside a JSON-like value. Fields whose names say they hold a credential are replaced
 * outright, whatever they look like, and so is the `value` of a `{ name: 'DB_PASSWORD', value }` env entry.
 */
export function redactDeep<T>(value: T, options: RedactOptions = {}): T {
  return redactValue(value, undefined, options) as T;
}

function redactValue(value: unknown, key: string | undefined, options: RedactOptions): unknown {
  if (typeof value === 'string') {
    if (key !== undefined && isSensitiveName(key) && !isPlaceholder(value)) return REDACTED;
    return redactText(value, options);
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, undefined, options));
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const envName = typeof record['name'] === 'string' && isSensitiveName(record['name']);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(record)) {
      out[k] =
        envName && k === 'value' && typeof v === 'string' && !isPlaceholder(v) ? REDACTED : redactValue(v, k, options);
    }
    return out;
  }
  return value;
}
