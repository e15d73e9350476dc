import { isPlaceholder, REDACTED } from './marker.js';
import { isSensitiveName, isVendorKeyName, nameWords } from './names.js';

/**
 * Credentials recognisable by the name they are assigned to: `DB_PASS=…`, `"api_token": "…"`, `password: …`,
 * `--token=…`, YAML block scalars, Kubernetes env entries (`name: DB_PASSWORD` / `value: …`), command-line flags
 * and the `PASSWORD hunter2` of SQL and shell scripts.
 */

/** `name<sep>`: a name, optionally quoted or dashed like a flag, then `=`, `:`, `=>` or `:=`. */
const ASSIGNMENT = /(?<![A-Za-z0-9_.-])-{0,2}(["'`]?)([A-Za-z_][A-Za-z0-9_.-]*)\1[ \t]*(=>|:=|=|:)(?![:=/])[ \t]*/g;

/** Words that follow "password:" or "token:" in error messages rather than a credential. */
const PROSE = new Set([
  'a',
  'an',
  'the',
  'is',
  'was',
  'are',
  'not',
  'for',
  'of',
  'in',
  'to',
  'and',
  'or',
  'with',
  'without',
  'from',
  'has',
  'have',
  'had',
  'does',
  'did',
  'must',
  'should',
  'cannot',
  'can',
  'will',
  'authentication',
  'incorrect',
  'wrong',
  'denied',
  'rejected',
  'mismatch',
  'provided',
  'found',
  'length',
  'policy',
  'reset',
  'change',
  'changed',
  'update',
  'updated',
  'rotation',
  'rotated',
  'prompt',
  'please',
  'again',
  'supplied',
  'too',
  'strength',
  'file',
  'hash',
  'field',
  'auth',
  'login',
  'failed',
  'failure',
  'error',
  'unknown',
  'verification',
  'refresh',
  'request',
  'requested',
  'lookup',
  'review',
  'exchange',
]);

function isProse(value: string): boolean {
  return PROSE.has(value.toLowerCase());
}

/**
 * What stands between the start of the line and a key, when that is only indentation (and a YAML list's `- `);
 * undefined when anything else does. It looks back over whitespace only, so every key costs the length of its own
 * indentation, never the length of its line.
 */
function indentBefore(text: string, keyStart: number): string | undefined {
  let i = keyStart;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  if (i > 0 && text[i - 1] === '-' && i < keyStart) {
    i--;
    while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  }
  return i === 0 || text[i - 1] === '\n' ? text.slice(i, keyStart) : undefined;
}

/** The longest value any rule looks at: a value is cut here, and the search for its closing quote stops here. */
const MAX_VALUE = 4096;

function lineEndOf(text: string, index: number): number {
  const end = text.indexOf('\n', index);
  const stop = end === -1 ? text.length : end;
  return text[stop - 1] === '\r' ? stop - 1 : stop;
}

/** Where the assigned value is: inside quotes, to the end of a YAML line, over a block scalar, or one word. */
function valueSpan(
  text: string,
  at: number,
  separator: string,
  keyStart: number,
): { start: number; end: number; quoted: boolean; yamlLine: boolean; replacement?: string } | undefined {
  const first = text[at];
  if (first === undefined || first === '\n' || first === '\r') return undefined;
  if (first === '"' || first === "'" || first === '`') {
    const limit = Math.min(text.length, at + 1 + MAX_VALUE);
    let i = at + 1;
    for (; i < limit; i++) {
      const c = text[i];
      if (c === '\\' && first === '"') {
        i++;
        continue;
      }
      if (c === first) return { start: at + 1, end: i, quoted: true, yamlLine: false };
      if (c === '\n') break;
    }
    const end = Math.min(i, limit);
    return { start: at + 1, end: text[end - 1] === '\r' ? end - 1 : end, quoted: true, yamlLine: false };
  }
  const lead = separator === ':' ? indentBefore(text, keyStart) : undefined;
  const yamlLine = lead !== undefined;
  if (lead !== undefined) {
    const end = lineEndOf(text, at);
    const rest = text.slice(at, end);
    if (/^[|>][+-]?\d?[ \t]*(?:#.*)?$/.test(rest)) {
      // A block scalar: every following line indented deeper than the key belongs to the value.
      const indent = lead.replace(/-[ \t]+$/, '').length;
      let stop = end;
      let next = end + (text[end] === '\r' ? 2 : 1);
      while (next < text.length) {
        const nextEnd = lineEndOf(text, next);
        const line = text.slice(next, nextEnd);
        const depth = line.match(/^[ \t]*/)?.[0].length ?? 0;
        if (line.trim() !== '' && depth <= indent) break;
        stop = nextEnd;
        next = nextEnd + (text[nextEnd] === '\r' ? 2 : 1);
      }
      const replacement = `\n${' '.repeat(indent + 2)}${REDACTED}`;
      return stop > end ? { start: end, end: stop, quoted: false, yamlLine, replacement } : undefined;
    }
    const value = rest.replace(/[ \t]+#.*$/, '').trimEnd();
    return { start: at, end: at + value.length, quoted: false, yamlLine };
  }
  const word = /^[^\s"'`,;&<>(){}[\]|]+/.exec(text.slice(at, at + MAX_VALUE));
  return word ? { start: at, end: at + word[0].length, quoted: false, yamlLine } : undefined;
}

/** A value kept elsewhere: `${VAR}`, `$(cmd)`, `{{ .Values.x }}`, `<set to the key … in secret …>`. */
const REFERENCE = /^(?:\$[{(]|\{\{|<)/;

/** `shop/db-creds`: klog names the Secret object a message is about, not its content. */
const OBJECT_REFERENCE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function keepsValue(name: string, value: string, separator: string, quoted: boolean, yamlLine = false): boolean {
  const v = value.trim();
  if (OBJECT_REFERENCE.test(v)) return true;
  if (isPlaceholder(v)) return true;
  // References to a value kept elsewhere: ${VAR}, $(cmd), {{ .Values.x }}, <set to the key … in secret …>.
  if (/^(?:\$[{(A-Za-z_]|\{\{|<|%[sdv]\b|\{|\[)/.test(v)) return true;
  // `PWD=/app` is the shell's working directory, not a password.
  if (nameWords(name).join('_') === 'pwd' && /^[/~]/.test(v)) return true;
  if (separator !== ':' || quoted || !/^[A-Za-z]+$/.test(v)) return false;
  // Inside a sentence (`Invalid token: token is expired`, `*v1.Secret: secrets is forbidden`) a plain word after
  // a colon is prose; on a line of its own (YAML, `kubectl describe`) it is the value. After "password:" a plain
  // word is the password unless it reads as prose (`password: incorrect`).
  if (PASSWORD_WORDS.has(nameWords(name).at(-1) ?? '')) return isProse(v) || PASSWORD_PROSE.has(v.toLowerCase());
  return !yamlLine || isProse(v);
}

const PASSWORD_WORDS = new Set(['password', 'passwd', 'passphrase', 'pwd', 'pass', 'pw']);

/** A value that could be a key: one long word mixing letters and digits, not a path or a name. */
function isCredentialLike(value: string): boolean {
  return /^[A-Za-z0-9+/=_.~-]{16,}$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value) && !/[/.]/.test(value);
}

export function redactAssignments(text: string): string {
  let out = '';
  let from = 0;
  ASSIGNMENT.lastIndex = 0;
  for (let m = ASSIGNMENT.exec(text); m !== null; m = ASSIGNMENT.exec(text)) {
    const name = m[2] as string;
    const separator = m[3] as string;
    const valueAt = m.index + m[0].length;
    const sensitive = isSensitiveName(name);
    if (!sensitive && !isVendorKeyName(name)) continue;
    // `arn:aws:secretsmanager:…:secret:name`, `urn:…:token:…`: a segment of a colon-separated identifier.
    if (separator === ':' && text[m.index - 1] === ':') continue;
    if (REFERENCE.test(text.slice(valueAt, valueAt + 3))) continue;
    const span = valueSpan(text, valueAt, separator, m.index);
    if (span === undefined) continue;
    const value = text.slice(span.start, span.end);
    if (keepsValue(name, value, separator, span.quoted, span.yamlLine)) continue;
    if (!sensitive && !isCredentialLike(value)) continue;
    out += text.slice(from, span.start) + (span.replacement ?? REDACTED);
    from = span.end;
    ASSIGNMENT.lastIndex = Math.max(span.end, valueAt);
  }
  return out + text.slice(from);
}

/** Kubernetes env entries name the variable in one field and hold its value in the next (JSON or flow YAML). */
const ENV_INLINE =
  /(["']?name["']?[ \t]*:[ \t]*(["']?))([A-Za-z0-9_.-]{1,256})(\2[ \t]*,[ \t]*["']?value["']?[ \t]*:[ \t]*)(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s,}\]]+))/g;
const ENV_YAML = /^([ \t]*(?:-[ \t]+)?name:[ \t]*(["']?)([A-Za-z0-9_.-]{1,256})\2[ \t]*\r?\n[ \t]*value:[ \t]*)(.*)$/gm;

export function redactEnvEntries(text: string): string {
  return text
    .replace(
      ENV_INLINE,
      (match, head: string, _q: string, name: string, middle: string, dq?: string, sq?: string, bare?: string) => {
        const value = dq ?? sq ?? bare ?? '';
        if (!isSensitiveName(name) || isPlaceholder(value)) return match;
        const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : '';
        return `${head}${name}${middle}${quote}${REDACTED}${quote}`;
      },
    )
    .replace(ENV_YAML, (match, head: string, _quote: string, name: string, value: string) => {
      const quote = /^["']/.test(value) ? (value[0] as string) : '';
      return isSensitiveName(name) && !isPlaceholder(value) ? `${head}${quote}${REDACTED}${quote}` : match;
    });
}

/** `<password>hunter2</password>` in XML configuration and SOAP faults. */
const XML_ELEMENT = /<([A-Za-z_][A-Za-z0-9_.:-]*)>([^<\r\n]+)<\/\1>/g;

export function redactXmlElements(text: string): string {
  return text.replace(XML_ELEMENT, (match, name: string, value: string) =>
    isSensitiveName(name.replace(/^.*:/, '')) && !isPlaceholder(value) ? `<${name}>${REDACTED}</${name}>` : match,
  );
}

/** `--password hunter2`, `--requirepass hunter2`: a flag whose name announces a credential, and its value. */
const FLAG_WITH_SPACE = /(?<![\w-])(--[A-Za-z][A-Za-z0-9-]*)([ \t]+)(["']?)([^\s"'-][^\s"']*)\3/g;

export function redactFlags(text: string): string {
  if (!text.includes('--')) return text;
  return text.replace(FLAG_WITH_SPACE, (match, flag: string, space: string, quote: string, value: string) =>
    isSensitiveName(flag) && !isPlaceholder(value) && !keepsValue(flag, value, '=', quote !== '')
      ? `${flag}${space}${quote}${REDACTED}${quote}`
      : match,
  );
}

/** `PASSWORD hunter2`, `WITH PASSWORD 'x'`, `password is s3cret`, `IDENTIFIED BY 'x'`. */
const PASSWORD_PHRASE =
  /(?<![A-Za-z0-9_-])(password|passwd|passphrase|pwd)([ \t]+(?:(?:is|was|set to|to)[ \t]+)?)(["']?)([^\s"',;)]+)\3/gi;
const IDENTIFIED_BY = /\b(IDENTIFIED[ \t]+(?:WITH[ \t]+\S+[ \t]+)?BY[ \t]+)(["'])(.*?)\2/gi;

/**
 * Words that follow "password" in messages about passwords (`password will be stored`, `password at next login`,
 * `password complexity requirements`) rather than a password itself. A letters-only word after "password" that is
 * none of these, nor prose, is taken for the password: `using password velvetharbor`.
 */
const PASSWORD_PROSE = new Set([
  'at',
  'on',
  'by',
  'as',
  'be',
  'been',
  'being',
  'if',
  'when',
  'while',
  'this',
  'that',
  'it',
  'its',
  'you',
  'your',
  'we',
  'our',
  'my',
  'may',
  'might',
  'could',
  'would',
  'shall',
  'will',
  'used',
  'using',
  'needs',
  'need',
  'expires',
  'hashing',
  'hashed',
  'complexity',
  'history',
  'manager',
  'protected',
  'protection',
  'based',
  'grant',
  'flow',
  'attempt',
  'attempts',
  'retries',
  'characters',
  'minimum',
  'maximum',
  'entry',
  'hint',
  'recovery',
  'check',
  'checks',
  'validation',
  'validated',
  'verified',
  'matches',
  'match',
  'accepted',
  'successful',
  'succeeded',
  'sent',
  'stored',
  'saved',
  'generated',
  'loaded',
  'read',
  'requirements',
  'requirement',
  'rules',
  'rule',
  'store',
  'storage',
  'encryption',
  'encrypted',
  'secrets',
  'salt',
  'salted',
  'expiration',
  'expiry',
  'age',
  'strong',
  'weak',
  'short',
  'long',
  'contains',
  'contain',
  'should',
  'must',
  'into',
  'via',
  'reuse',
  'reused',
  'unchanged',
  'only',
  'also',
  'then',
  'here',
  'there',
  'again',
  'now',
  'not',
]);

export function redactPasswordPhrases(text: string): string {
  if (!/pass|pwd|identified/i.test(text)) return text;
  return text
    .replace(PASSWORD_PHRASE, (match, word: string, gap: string, quote: string, value: string) => {
      if (isPlaceholder(value) || isProse(value) || !/[A-Za-z0-9]/.test(value)) return match;
      if (PASSWORD_PROSE.has(value.toLowerCase())) return match;
      const lettersOnly = /^[A-Za-z]+$/.test(value);
      return !lettersOnly || value.length >= 4 || quote !== '' ? `${word}${gap}${quote}${REDACTED}${quote}` : match;
    })
    .replace(IDENTIFIED_BY, (match, head: string, quote: string, value: string) =>
      isPlaceholder(value) ? match : `${head}${quote}${REDACTED}${quote}`,
    );
}
