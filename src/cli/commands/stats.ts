import { PANIC_TYPES } from '../../diagnosis/panic.js';
import { type CollectedMetrics, collectMetricsFromStore, METRICS_LIMITS } from '../../memory/collect.js';
import {
  createDocumentClient,
  createDynamoClient,
  type DynamoClient,
  TABLE_NAME_ENV,
  tableNameFromEnv,
} from '../../store/client.js';
import { StoreError } from '../../store/errors.js';
import { SessionRepository } from '../../store/sessions.js';
import { checkTable } from '../../store/table-check.js';
import { TimelineRepository } from '../../store/timeline.js';
import { parseCommandLine } from '../flags.js';
import { type CliCommand, type CliIo, UsageError, usageFailure } from '../io.js';
import { OUTPUT_FLAGS, type OutputFormat, outputFormat, renderData } from '../output.js';

export const USAGE = `Usage: calmops stats [--since ISO] [--limit N] [-o text|json|yaml]

Shows the diagnostic workflow's success metrics over the most recently resolved sessions: time to resolution,
evidence completeness at resolution, knowledge reuse, first-time fixes, panic interventions by type, break-glass
overrides and postmortem compliance.

  --since ISO      only sessions resolved at or after this time (e.g. 2025-08-01 or 2025-08-01T00:00:00Z)
  --limit N        how many recently resolved sessions to cover, 1-${METRICS_LIMITS.maxSessions} (default ${METRICS_LIMITS.defaultSessions})
  -o, --output F   text (default), json or yaml
  --json           the same as -o json

Reads the table named by ${TABLE_NAME_ENV} (default calmops) at AWS_ENDPOINT_URL_DYNAMODB, or in AWS when unset.
`;

/** A table that cannot be read: not there, not reachable, or no permission. Exit code 1. */
export class StatsSourceError extends Error {
  override readonly name = 'StatsSourceError';
}

interface StatsOptions {
  since?: Date;
  limit: number;
  output: OutputFormat;
}

/** Dates alone (`2025-08-01`) are read as midnight UTC; anything else must carry a time zone. */
const ISO_INPUT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function parse(args: string[]): StatsOptions | 'help' {
  const { values } = parseCommandLine(
    args,
    {
      since: { type: 'string' },
      limit: { type: 'string' },
      ...OUTPUT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
    { command: 'stats' },
  );
  if (values.help) return 'help';
  const output = outputFormat(values, ['text', 'json', 'yaml'], 'text');
  let since: Date | undefined;
  if (values.since !== undefined) {
    const text = values.since.trim();
    since = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
    if (!ISO_INPUT.test(text) || Number.isNaN(since.getTime())) {
      throw new UsageError(`--since: not an ISO date or time: "${values.since}" (for example 2025-08-01T00:00:00Z)`);
    }
  }
  let limit: number = METRICS_LIMITS.defaultSessions;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit.trim()) || limit < 1 || limit > METRICS_LIMITS.maxSessions) {
      throw new UsageError(
        `--limit: expected a whole number from 1 to ${METRICS_LIMITS.maxSessions}, got "${values.limit}"`,
      );
    }
  }
  return { ...(since === undefined ? {} : { since }), limit, output };
}

/** DynamoDB's own rule for table names, checked here so a typo in the environment reads as bad input. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** The client for the configured endpoint; emulators on loopback get placeholder credentials and a region. */
function dynamoClient(env: CliIo['env']): { client: DynamoClient; endpoint: string | undefined } {
  const raw = env['AWS_ENDPOINT_URL_DYNAMODB']?.trim() || undefined;
  let url: URL | undefined;
  if (raw !== undefined) {
    try {
      url = new URL(raw);
    } catch (error) {
      throw new UsageError(`AWS_ENDPOINT_URL_DYNAMODB is not a URL: "${raw}"`, { cause: error });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`AWS_ENDPOINT_URL_DYNAMODB must be an http(s) URL, got "${raw}"`);
    }
  }
  const local = url !== undefined && isLoopback(url);
  const region = env['AWS_REGION']?.trim() || env['AWS_DEFAULT_REGION']?.trim() || (local ? 'us-east-1' : undefined);
  const client = createDynamoClient({
    ...(raw === undefined ? {} : { endpoint: raw }),
    ...(region === undefined ? {} : { region }),
    ...(local && !env['AWS_ACCESS_KEY_ID'] ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 2,
    // A statistics query has nothing to wait for: an endpoint that does not answer is reported, not waited on.
    timeouts: { connectionMs: 3000, requestMs: 15_000 },
  });
  return { client, endpoint: raw };
}

function describeFailure(error: unknown): string {
  const cause = error instanceof StoreError && error.cause !== undefined ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `${cause.name === 'Error' && code ? code : cause.name}: ${cause.message || code || 'no detail'}`;
  }
  return String(cause);
}

async function requireTable(client: DynamoClient, tableName: string, where: string): Promise<void> {
  const check = await checkTable(client, tableName);
  if (check.ok) return;
  if (check.reason === 'missing') {
    throw new StatsSourceError(`table ${tableName} does not exist ${where}`, { cause: check.cause });
  }
  throw new StatsSourceError(`cannot reach table ${tableName} ${where}: ${describeFailure(check.cause)}`, {
    cause: check.cause,
  });
}

const pct = (value: number | null) => (value === null ? '-' : `${Math.round(value * 100)}%`);

/** `45s`, `12m 30s`, `3h 05m`, `2d 4h`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

function table(rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, c) => (rightAligned.has(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

export function formatStats(collected: CollectedMetrics, source: { tableName: string; endpoint?: string }): string {
  const { metrics: m, window: w } = collected;
  const lines: string[] = [];
  lines.push(`calmops stats: table ${source.tableName}${source.endpoint ? ` at ${source.endpoint}` : ''}`);
  const range =
    w.oldestResolvedAt && w.newestResolvedAt ? `, resolved ${w.oldestResolvedAt} … ${w.newestResolvedAt}` : '';
  lines.push(
    `Window: ${w.resolvedSessions} most recently resolved session${w.resolvedSessions === 1 ? '' : 's'} (limit ${w.limit}${
      w.since ? `, since ${w.since}` : ''
    })${range}`,
  );
  if (w.resolvedSessions === 0) {
    lines.push('', 'No resolved sessions in this window yet.');
    return `${lines.join('\n')}\n`;
  }
  const t = m.timeToResolution;
  const e = m.evidenceCompletenessAtResolution;
  const k = m.knowledgeReuse;
  const f = m.firstTimeFix;
  const b = m.breakGlass;
  lines.push(
    '',
    ...table(
      [
        [
          'Time to resolution',
          `p50 ${formatDuration(t.p50Ms)}, p90 ${formatDuration(t.p90Ms)}, mean ${formatDuration(t.meanMs)} (${t.count} sessions)`,
        ],
        ['Evidence at resolution', `mean ${pct(e.mean)}, lowest ${pct(e.min)} (${e.count} sessions)`],
        [
          'Knowledge reuse',
          `${k.usedMemoryMatch} of ${k.resolved} resolved sessions used a similar past incident (${pct(k.rate)})`,
        ],
        [
          'First-time fix',
          `${f.passedFirstTime} of ${f.validatedSessions} validated fixes held the first time (${pct(f.rate)})`,
        ],
        [
          'Interventions',
          `${m.interventions.total} panic signals: ${m.interventions.blocked} blocked, ${m.interventions.warned} warned`,
        ],
        ['Break-glass', `${b.granted} override${b.granted === 1 ? '' : 's'} granted`],
        [
          'Postmortem compliance',
          `${b.reviewsCompletedOnTime} of ${b.reviewsDue} reviews due were done on time, ${b.reviewsOverdue} overdue (${pct(b.postmortemCompliance)})`,
        ],
      ],
      new Set(),
    ),
  );
  if (m.interventions.total > 0) {
    const rows = PANIC_TYPES.map((type) => {
      const s = m.interventions.byType[type];
      return [
        type,
        String(s.total),
        String(s.blocked),
        String(s.bySeverity.low),
        String(s.bySeverity.medium),
        String(s.bySeverity.high),
        String(s.bySeverity.critical),
      ];
    });
    lines.push(
      '',
      'Interventions by type',
      ...table(
        [['type', 'total', 'blocked', 'low', 'medium', 'high', 'critical'], ...rows],
        new Set([1, 2, 3, 4, 5, 6]),
      ).map((l) => `  ${l}`),
    );
  }
  const notes: string[] = [];
  if (collected.truncatedTimelines > 0) {
    notes.push(
      `${collected.truncatedTimelines} timeline(s) were longer than the events read per session; later events are not counted.`,
    );
  }
  for (const s of collected.skippedTimelines) notes.push(`timeline of session ${s.sessionId} was skipped: ${s.reason}`);
  if (m.malformedEvents > 0)
    notes.push(`${m.malformedEvents} timeline event(s) had unexpected data and were left out.`);
  if (notes.length > 0) lines.push('', ...notes.map((n) => `Note: ${n}`));
  return `${lines.join('\n')}\n`;
}

/** `calmops stats`: ADR-005's success metrics from the table, over a bounded window of resolved sessions. */
export const run: CliCommand = async (args, io) => {
  let client: DynamoClient | undefined;
  try {
    const options = parse(args);
    if (options === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    const tableName = tableNameFromEnv(io.env);
    if (!TABLE_NAME.test(tableName)) {
      throw new UsageError(
        `${TABLE_NAME_ENV}: "${tableName}" is not a DynamoDB table name (3-255 letters, digits, _ . -)`,
      );
    }
    const connection = dynamoClient(io.env);
    client = connection.client;
    const where = connection.endpoint ? `at ${connection.endpoint}` : 'in AWS';
    await requireTable(client, tableName, where);
    const ctx = { client: createDocumentClient(client), tableName };
    let collected: CollectedMetrics;
    try {
      collected = await collectMetricsFromStore(
        { sessions: new SessionRepository(ctx), timeline: new TimelineRepository(ctx) },
        { limit: options.limit, ...(options.since === undefined ? {} : { since: options.since }) },
      );
    } catch (error) {
      throw new StatsSourceError(`cannot read sessions from table ${tableName} ${where}: ${describeFailure(error)}`, {
        cause: error,
      });
    }
    const source = { tableName, ...(connection.endpoint === undefined ? {} : { endpoint: connection.endpoint }) };
    io.stdout(
      options.output === 'text'
        ? formatStats(collected, source)
        : renderData(options.output, { ...source, ...collected }),
    );
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(io, 'stats', error, USAGE);
    io.stderr(`calmops stats: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    client?.destroy();
  }
};
