/**
 * Removes credentials and personal data from text before it leaves the analyzer layer (findings, envelopes,
 * stored memory). Patterns err on the side of redacting too much: a quoted log line that lost a value is still
 * useful evidence, a leaked token is an incident of its own.
 */

const REDACTED = '[REDACTED]';

/** Names that announce a credential: DB_PASSWORD, client_secret, X-Api-Key, aws_secret_access_key, … */
const SENSITIVE_KEY =
  '[A-Za-z0-9_.-]*(?:password|passwd|\\bpwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)';

interface Rule {
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
}

const RULES: readonly Rule[] = [
  // PEM blocks first: their bodies would otherwise be chopped up by narrower rules.
  {
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
    replace: `${REDACTED} private key`,
  },
  // Authorization headers: Bearer, Basic, token schemes.
  { pattern: /\b(authorization\s*[:=]\s*)(?:bearer|basic|token|digest)?\s*[^\s"',;]+/gi, replace: `$1${REDACTED}` },
  { pattern: /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, replace: `$1 ${REDACTED}` },
  // Credentials embedded in URLs: scheme://user:pass@host.
  { pattern: /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi, replace: `$1${REDACTED}@` },
  // JSON style "password": "value".
  {
    pattern: new RegExp(`("${SENSITIVE_KEY}[a-z_-]*"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi'),
    replace: `$1"${REDACTED}"`,
  },
  // key=value and key: value.
  {
    pattern: new RegExp(`\\b(${SENSITIVE_KEY})(\\s*[=:]\\s*)(["']?)(?!\\[REDACTED\\])[^\\s"',;&]+`, 'gi'),
    replace: `$1$2$3${REDACTED}`,
  },
  // --password value and --token=value flags.
  {
    pattern: new RegExp(`(--${SENSITIVE_KEY})(\\s+|=)(?!\\[REDACTED\\])[^\\s"',;&]+`, 'gi'),
    replace: `$1$2${REDACTED}`,
  },
  // JSON Web Tokens.
  { pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, replace: REDACTED },
  // AWS access key ids and the 40 character secrets that follow them in config dumps.
  { pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g, replace: REDACTED },
  // Well-known token formats: Slack, GitHub, GitLab, OpenShift, Stripe-like live keys.
  { pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { pattern: /\bxapp-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: REDACTED },
  { pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: REDACTED },
  { pattern: /\bsha256~[A-Za-z0-9_-]{20,}/g, replace: REDACTED },
  { pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g, replace: REDACTED },
  // Email addresses.
  { pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g, replace: '[EMAIL]' },
];

/** Scrub one piece of text. Idempotent: scrubbing scrubbed text changes nothing. */
export function scrubText(text: string): string {
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, rule.replace as (substring: string, ...args: string[]) => string);
  }
  return out;
}

const SENSITIVE_FIELD = /(?:password|passwd|secret|token|apikey|api[_-]key|private[_-]?key|credentials?)$/i;

/**
 * Scrub every string inside a JSON-like value. Values of fields whose names say they hold a credential are
 * replaced outright, whatever they look like.
 */
export function scrubDeep<T>(value: T): T {
  return scrubValue(value, undefined) as T;
}

function scrubValue(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') {
    return key !== undefined && SENSITIVE_FIELD.test(key) && value !== '' ? REDACTED : scrubText(value);
  }
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, undefined));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, k);
    return out;
  }
  return value;
}
