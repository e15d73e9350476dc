import type { KubeObject } from '../../cluster/types.js';
import type { AnalyzerContext } from '../analyze/analyzer.js';
import { scrubText } from '../scrub.js';
import { clip } from './events.js';

/** What a container's log says went wrong: the decisive line, its kind, and the host a failed lookup names. */

export interface LogVerdict {
  line: string;
  score: number;
  /** What kind of failure the line reports. */
  kind: 'config' | 'dependency' | 'permission' | 'crash' | 'oom' | 'dns' | 'platform' | 'error';
  /**
   * The lines that continue the same record right after it (Flyway's "Detected failed migration to version 42"
   * under "Validate failed"), when the program explained itself over several lines.
   */
  detail?: string;
  /** A structured (JSON) record reduced to what a person reads: level, message, error and where it was raised. */
  readable?: string;
}

interface LogPattern {
  pattern: RegExp;
  score: number;
  kind: LogVerdict['kind'];
}

/**
 * Patterns ordered by how decisive a line is for a crash: a named missing setting beats a generic "Error:", and a
 * panic message beats the goroutine dump that follows it.
 */
const LOG_PATTERNS: readonly LogPattern[] = [
  { pattern: /exec format error/i, score: 100, kind: 'platform' },
  {
    pattern:
      /\b(missing|required)\b.*\b(env(ironment)?( variable)?|config(uration)?|setting|option|key|flag|parameter)\b/i,
    score: 95,
    kind: 'config',
  },
  {
    pattern:
      /\b(env(ironment)? variable|config(uration)?( key| value)?)\b.*\b(not set|is required|missing|undefined|empty)\b/i,
    score: 95,
    kind: 'config',
  },
  {
    pattern:
      /\binvalid (configuration|config|value|argument|setting)\b|\bunknown (flag|option|field)\b|\bfailed to (load|parse|read) (config|configuration|settings)/i,
    score: 90,
    kind: 'config',
  },
  {
    pattern: /java\.lang\.OutOfMemoryError|out of memory|cannot allocate memory|JavaScript heap out of memory/i,
    score: 88,
    kind: 'oom',
  },
  { pattern: /permission denied|operation not permitted|read-only file system/i, score: 85, kind: 'permission' },
  {
    pattern: /no such file or directory|not found in \$PATH|cannot find (module|file)|ENOENT/i,
    score: 85,
    kind: 'config',
  },
  {
    pattern:
      /no such host|server misbehaving|temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|UnknownHostException|lookup \S+ on \S+:53|name or service not known|could not translate host name|could not resolve host|nodename nor servname|name does not resolve/i,
    score: 82,
    kind: 'dns',
  },
  {
    pattern:
      /connection refused|ECONNREFUSED|could not connect|unable to connect|connection reset|i\/o timeout|ETIMEDOUT|Connection timed out/i,
    score: 80,
    kind: 'dependency',
  },
  {
    pattern: /^\s*panic:|\bFATAL\b|\bfatal error\b|Unhandled(Promise)?Rejection|uncaught exception/i,
    score: 70,
    kind: 'crash',
  },
  {
    // The exception a Python traceback or a Java stack trace ends (or starts) with: `psycopg2.OperationalError: …`,
    // `java.lang.IllegalStateException: …`. The "Traceback (most recent call last):" header itself says nothing.
    pattern: /^(?:Caused by: )?(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:Error|Exception)(?::\s|$)/,
    score: 68,
    kind: 'crash',
  },
  { pattern: /\bError:|\bERROR\b|\bexception\b|\[error\]|level=error|"level":"error"/i, score: 50, kind: 'error' },
];

/** The most decisive line of a log (later lines win ties: the last words before a crash matter most). */
export function decisiveLogLine(text: string | undefined): LogVerdict | undefined {
  if (text === undefined) return undefined;
  const lines = text.split(/\r?\n/);
  let best: LogVerdict | undefined;
  let bestAt = -1;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.length > 2000) continue;
    for (const p of LOG_PATTERNS) {
      if (!p.pattern.test(line)) continue;
      if (best === undefined || p.score >= best.score) {
        const readable = readableRecord(line);
        best = {
          line: clip(scrubText(line)),
          score: p.score,
          kind: p.kind,
          ...(readable ? { readable: clip(scrubText(readable)) } : {}),
        };
        bestAt = i;
      }
      break;
    }
  }
  if (best === undefined) return undefined;
  const detail = continuation(lines, bestAt);
  return detail === undefined ? best : { ...best, detail: clip(scrubText(detail)) };
}

/**
 * What kind of failure one log line reports, as decisiveLogLine would classify it on its own; undefined when no
 * pattern matches. For callers that weigh every line of a log, without quoting (and scrubbing) each one.
 */
export function logLineKind(line: string): LogVerdict['kind'] | undefined {
  if (line.includes('\n')) return decisiveLogLine(line)?.kind;
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.length > 2000) return undefined;
  for (const p of LOG_PATTERNS) if (p.pattern.test(trimmed)) return p.kind;
  return undefined;
}

/** A line that opens a new log record (timestamp, level, JSON) or a stack trace, rather than continuing one. */
const RECORD_START =
  /^(?:\[?\d{4}-\d{2}-\d{2}|\[?\d{2}:\d{2}:\d{2}|[IWEF]\d{4} |\{|\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL|PANIC)\b|at |goroutine \d|Traceback |File "|Caused by:|\.\.\.)/i;
const MAX_CONTINUATION = 2;

/**
 * The lines right below `at` that carry on its message: not indented (a stack frame), not a new record, no blank
 * line in between. Programs such as Flyway or Spring Boot put the specific reason on the line after the headline.
 */
function continuation(lines: readonly string[], at: number): string | undefined {
  const out: string[] = [];
  for (let i = at + 1; i < lines.length && out.length < MAX_CONTINUATION; i++) {
    const raw = lines[i] as string;
    if (raw.trim() === '' || /^\s/.test(raw) || RECORD_START.test(raw) || raw.length > 2000) break;
    out.push(raw.trim());
  }
  return out.length > 0 ? out.join(' ') : undefined;
}

/** The decisive line as an engineer would quote it: the headline and, when there is one, what follows it. */
export function quoteVerdict(verdict: LogVerdict): string {
  const head = verdict.readable ?? verdict.line;
  return verdict.detail === undefined ? head : clip(`${head} — ${verdict.detail}`);
}

const MESSAGE_FIELDS = ['msg', 'message', 'MESSAGE', '@message'];
const ERROR_FIELDS = ['error', 'err', 'exception', 'error.message', 'reason'];
const LEVEL_FIELDS = ['level', 'severity', 'lvl', '@level'];
const SOURCE_FIELDS = ['caller', 'logger', 'source'];

/**
 * `{"level":"fatal","msg":"invalid configuration","error":"required key X missing value","stacktrace":…}` as
 * `fatal: invalid configuration: required key X missing value (cmd/main.go:47)`, the way zap, logrus, pino,
 * bunyan and slog records are read; undefined for anything that is not a JSON object with a message.
 */
function readableRecord(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  const fields = record as Record<string, unknown>;
  const pick = (names: readonly string[]) => {
    for (const n of names) {
      const v = fields[n];
      if (typeof v === 'string' && v.trim() !== '') return v.trim();
      if (v !== null && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string')
        return (v as { message: string }).message;
    }
    return undefined;
  };
  const message = pick(MESSAGE_FIELDS);
  const error = pick(ERROR_FIELDS);
  if (message === undefined && error === undefined) return undefined;
  const levelValue = LEVEL_FIELDS.map((n) => fields[n]).find((v) => typeof v === 'string');
  const source = pick(SOURCE_FIELDS);
  const text = [levelValue, message, error !== message ? error : undefined].filter(Boolean).join(': ');
  return source ? `${text} (${source})` : text;
}

/** Logs of a container: previous instance first (the one that crashed), then the current one. */
export function crashLog(ctx: AnalyzerContext, pod: KubeObject, container: string): string | undefined {
  const namespace = pod.metadata.namespace;
  const previous = ctx.log(pod.metadata.name, container, true, namespace);
  const current = ctx.log(pod.metadata.name, container, false, namespace);
  if (previous === undefined) return current;
  if (current === undefined) return previous;
  return `${previous}\n${current}`;
}

export interface UnresolvedHost {
  host: string;
  /**
   * The resolver answered that the name does not exist (NXDOMAIN: "no such host", "Name or service not known",
   * ENOTFOUND), as opposed to failing to get an answer (timeouts, SERVFAIL, EAI_AGAIN). A name that does not exist
   * is a wrong name; an unanswered lookup is a DNS problem.
   */
  nameDoesNotExist: boolean;
}

const HOST = '([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?)';
/** Where Go, glibc/libpq, Node, Java, curl and musl put the host name in a failed lookup. */
const UNRESOLVED_HOST: readonly RegExp[] = [
  new RegExp(`lookup ${HOST}(?: on [^:\\s]+(?::\\d+)?)?: (no such host|server misbehaving|i/o timeout|.*)`, 'i'),
  new RegExp(`could not translate host name "${HOST}" to address: (.*)`, 'i'),
  new RegExp(`getaddrinfo (ENOTFOUND|EAI_AGAIN) ${HOST}`, 'i'),
  new RegExp(`UnknownHostException: ${HOST}(?::? (.*))?`, 'i'),
  new RegExp(`Could not resolve host: ${HOST}`, 'i'),
  new RegExp(`(?:bad address|Name does not resolve)[: ']+${HOST}`, 'i'),
];
const NAME_MISSING =
  /no such host|name or service not known|ENOTFOUND|nodename nor servname|NXDOMAIN|does not resolve/i;

/** The host a failed name lookup names, and whether the answer was "no such name"; undefined for other lines. */
export function parseUnresolvedHost(line: string): UnresolvedHost | undefined {
  for (const pattern of UNRESOLVED_HOST) {
    const m = pattern.exec(line);
    if (!m) continue;
    const host = (/^(ENOTFOUND|EAI_AGAIN)$/i.test(m[1] ?? '') ? m[2] : m[1])?.replace(/\.$/, '');
    if (!host || /^\d+\.\d+\.\d+\.\d+$/.test(host)) continue;
    const temporary = /temporary failure|EAI_AGAIN|server misbehaving|i\/o timeout|timed out|SERVFAIL/i.test(line);
    return { host, nameDoesNotExist: !temporary && NAME_MISSING.test(line) };
  }
  return undefined;
}
