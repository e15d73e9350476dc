import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as z from 'zod';
import { RESOURCES } from '../../cluster/resources.js';
import { byCodePoint } from '../../code-point-order.js';
import { ENV } from '../../env-names.js';
import { readYaml, YamlReadError } from '../../yaml-text.js';
import { type ReadSpec, TemplateSchema, type TriageTemplate } from './template-schema.js';
import { PLAN_TEMPLATE_VARS } from './template-slots.js';

/** One problem in a template file, located by a path into the document (`rounds[0].reads[1].kind`). */
export interface TemplateIssue {
  path: string;
  message: string;
}

/** A template file that cannot be used. The message names the file and the first offending path. */
export class TemplateValidationError extends Error {
  override readonly name = 'TemplateValidationError';
  constructor(
    readonly file: string,
    readonly issues: readonly TemplateIssue[],
    options?: { cause?: unknown },
  ) {
    super(formatIssues(file, issues), options);
  }
}

export interface TemplateRegistry {
  /** The template for an intent id, or undefined when no such intent exists. */
  get(id: string): TriageTemplate | undefined;
  /** Every template, ordered by id. */
  list(): readonly TriageTemplate[];
  /** Every intent id, sorted. */
  ids(): readonly string[];
}

/**
 * The shipped `templates/` folder. `CALMOPS_TEMPLATES_DIR` overrides it for bundled deployments, where the source
 * layout (and so `import.meta.url`) no longer points at the repository.
 */
export function defaultTemplatesDir(): string {
  const override = process.env[ENV.templatesDir];
  if (override) return resolve(override);
  return fileURLToPath(new URL('../../../templates/', import.meta.url));
}

/**
 * The shipped templates as JSON, parsed and validated when the command-line bundle was built (build/cli-bundle.mjs
 * defines it), so that a command does not read and check the same YAML on every run. Undeclared when running from
 * sources.
 */
declare const CALMOPS_BUILT_TEMPLATES: string | undefined;

let defaultRegistry: TemplateRegistry | undefined;

/**
 * Load and validate every `*.yaml` template in `dir` (default: the shipped templates, loaded once and cached).
 * Throws TemplateValidationError on the first file that fails the schema or a cross-check.
 */
export function loadTemplates(dir?: string): TemplateRegistry {
  if (dir !== undefined) return loadFrom(dir);
  defaultRegistry ??=
    typeof CALMOPS_BUILT_TEMPLATES !== 'undefined' && !process.env[ENV.templatesDir]
      ? registryOf(JSON.parse(CALMOPS_BUILT_TEMPLATES) as TriageTemplate[])
      : loadFrom(defaultTemplatesDir());
  return defaultRegistry;
}

function loadFrom(dir: string): TemplateRegistry {
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
      .sort();
  } catch (cause) {
    throw new TemplateValidationError(dir, [{ path: '', message: 'cannot read the templates folder' }], { cause });
  }
  if (files.length === 0) {
    throw new TemplateValidationError(dir, [{ path: '', message: 'no *.yaml templates found' }]);
  }
  return registryOf(files.map((file) => parseTemplate(readFileSync(join(dir, file), 'utf8'), join(dir, file))));
}

function registryOf(templates: readonly TriageTemplate[]): TemplateRegistry {
  const byId = new Map<string, TriageTemplate>();
  for (const template of templates) byId.set(template.id, template);
  // An alert opens one session with one intent, so no two templates may claim the same alert.
  const alerts = new Map<string, string>();
  for (const template of byId.values()) {
    template.alerts.forEach((alert, i) => {
      const other = alerts.get(alert);
      if (other !== undefined && other !== template.id) {
        throw new TemplateValidationError(template.id, [
          { path: `alerts[${i}]`, message: `alert "${alert}" is already listed by template "${other}"` },
        ]);
      }
      alerts.set(alert, template.id);
    });
  }
  const list = [...byId.values()].sort((a, b) => byCodePoint(a.id, b.id));
  const ids = list.map((t) => t.id);
  return {
    get: (id) => byId.get(id),
    list: () => list,
    ids: () => ids,
  };
}

/** Parse and validate one template document. `file` names it in errors; its base name must equal the id. */
export function parseTemplate(text: string, file: string): TriageTemplate {
  const display = displayName(file);
  let raw: unknown;
  try {
    raw = readYaml(text);
  } catch (cause) {
    const where = cause instanceof YamlReadError && cause.line !== undefined ? `line ${cause.line}` : '';
    const message = cause instanceof YamlReadError ? cause.reason : String(cause);
    throw new TemplateValidationError(display, [{ path: where, message: `invalid YAML: ${message}` }], { cause });
  }
  const parsed = TemplateSchema.safeParse(raw);
  if (!parsed.success) {
    throw new TemplateValidationError(display, zodIssues(parsed.error), { cause: parsed.error });
  }
  const issues = crossCheck(parsed.data, file);
  if (issues.length > 0) throw new TemplateValidationError(display, issues);
  return parsed.data;
}

const CODE = /^[A-Z][A-Z0-9_]*$/;
const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const COMMAND_VARS = new Set([
  'namespace',
  'resource.name',
  'resource.kind',
  'resource.namespace',
  'owner.name',
  'owner.kind',
  'owner.namespace',
]);
/** Remediation steps are plan steps: they may name every object the plan synthesizer resolves. */
const REMEDIATION_VARS = new Set([...COMMAND_VARS, ...PLAN_TEMPLATE_VARS]);
/** Where each forEach `where` filter has a meaning. */
const WHERE_KINDS: Record<string, readonly string[]> = {
  pending: ['pods'],
  'not-running': ['pods'],
  'not-ready': ['pods', 'nodes'],
  restarting: ['pods'],
  waiting: ['pods'],
  'terminated-nonzero': ['pods'],
  unbound: ['persistentvolumeclaims'],
  'one-per-workload': ['pods'],
  'second-of-workload': ['pods'],
};

/** Rules the schema alone cannot express: references between reads, evidence coverage, placeholder scope. */
function crossCheck(t: TriageTemplate, file: string): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const stem = basename(file).replace(/\.ya?ml$/, '');
  if (stem !== t.id) issues.push({ path: 'id', message: `id "${t.id}" must equal the file name "${stem}"` });

  const seen = new Map<string, { round: number; read: ReadSpec }>();
  const ids = new Set<string>();
  const produced = new Set<string>();
  t.rounds.forEach((round, r) => {
    round.reads.forEach((read, i) => {
      const at = `rounds[${r}].reads[${i}]`;
      if (ids.has(read.id)) issues.push({ path: `${at}.id`, message: `duplicate read id "${read.id}"` });
      ids.add(read.id);
      issues.push(...checkRead(read, at, r, seen));
      produced.add(read.evidence);
    });
    // Registered after the whole round: reads in one round run in parallel and cannot depend on each other.
    for (const read of round.reads) if (!seen.has(read.id)) seen.set(read.id, { round: r, read });
  });

  t.evidence.required.forEach((type, i) => {
    if (!produced.has(type)) {
      issues.push({ path: `evidence.required[${i}]`, message: `no read produces evidence type "${type}"` });
    }
    if (t.evidence.required.indexOf(type) !== i) {
      issues.push({ path: `evidence.required[${i}]`, message: `evidence type "${type}" is listed twice` });
    }
  });
  t.alerts.forEach((alert, i) => {
    if (t.alerts.indexOf(alert) !== i)
      issues.push({ path: `alerts[${i}]`, message: `alert "${alert}" is listed twice` });
  });
  t.analyzers.forEach((name, i) => {
    if (t.analyzers.indexOf(name) !== i) {
      issues.push({ path: `analyzers[${i}]`, message: `analyzer "${name}" is listed twice` });
    }
  });

  t.nextActions.forEach((action, i) => {
    const at = `nextActions[${i}]`;
    if (action.when !== 'always' && !CODE.test(action.when)) {
      issues.push({ path: `${at}.when`, message: 'must be a finding code (UPPER_SNAKE) or "always"' });
    }
    // An `always` action has no finding, hence no resource to name.
    const allowed = action.when === 'always' ? new Set(['namespace']) : COMMAND_VARS;
    issues.push(...checkPlaceholders(action.command, allowed, `${at}.command`));
  });
  t.remediation.forEach((entry, i) => {
    const at = `remediation[${i}]`;
    if (!CODE.test(entry.when)) issues.push({ path: `${at}.when`, message: 'must be a finding code (UPPER_SNAKE)' });
    entry.steps.forEach((step, s) => {
      issues.push(...checkPlaceholders(step.command, REMEDIATION_VARS, `${at}.steps[${s}].command`));
      issues.push(...checkPlaceholders(step.description, REMEDIATION_VARS, `${at}.steps[${s}].description`));
      if (step.rollback !== undefined) {
        issues.push(...checkPlaceholders(step.rollback, REMEDIATION_VARS, `${at}.steps[${s}].rollback`));
      }
    });
  });
  t.promptSuggestions.forEach((text, i) => {
    issues.push(...checkPlaceholders(text, new Set(), `promptSuggestions[${i}]`));
  });
  return issues;
}

function checkRead(
  read: ReadSpec,
  at: string,
  round: number,
  earlier: ReadonlyMap<string, { round: number; read: ReadSpec }>,
): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const vars = new Set(['namespace']);
  let source: ReadSpec | undefined;
  if (read.forEach) {
    const ref = earlier.get(read.forEach.read);
    if (!ref || ref.round >= round) {
      issues.push({
        path: `${at}.forEach.read`,
        message: `"${read.forEach.read}" is not a read of an earlier round`,
      });
    } else {
      source = ref.read;
      const kinds = WHERE_KINDS[read.forEach.where];
      if (kinds && !kinds.includes(source.kind)) {
        issues.push({
          path: `${at}.forEach.where`,
          message: `"${read.forEach.where}" does not apply to ${source.kind} (only ${kinds.join(', ')})`,
        });
      }
      if (read.forEach.each === 'container' && source.kind !== 'pods') {
        issues.push({ path: `${at}.forEach.each`, message: '"container" iterates pods only' });
      }
    }
    vars.add('item.*');
    if (read.forEach.each === 'container') {
      vars.add('pod');
      vars.add('container');
    }
  }

  if (read.kind === 'logs') {
    const fromPods = source?.kind === 'pods';
    if (!fromPods && read.name === undefined) {
      issues.push({ path: at, message: 'a logs read needs a pod: forEach over a pods read, or name' });
    }
    if (read.forEach && read.forEach.each !== 'container' && read.container === undefined) {
      issues.push({ path: `${at}.container`, message: 'name the container, or use forEach.each: container' });
    }
  } else {
    if (read.container !== undefined) {
      issues.push({ path: `${at}.container`, message: 'container applies to logs reads only' });
    }
    const info = RESOURCES[read.kind];
    if (!info.namespaced && read.scope !== 'cluster') {
      issues.push({ path: `${at}.scope`, message: `${read.kind} are cluster-scoped: set scope: cluster` });
    }
    // A cluster-wide list of a namespaced kind can be enormous; it must be narrowed on the server.
    if (
      info.namespaced &&
      read.scope === 'cluster' &&
      !read.labelSelector &&
      !read.fieldSelector &&
      read.name === undefined
    ) {
      issues.push({ path: `${at}.scope`, message: `a cluster-wide ${read.kind} read needs a label or field selector` });
    }
  }

  for (const field of ['name', 'labelSelector', 'fieldSelector', 'container'] as const) {
    const value = read[field];
    if (value !== undefined) issues.push(...checkPlaceholders(value, vars, `${at}.${field}`));
  }
  return issues;
}

function checkPlaceholders(text: string, allowed: ReadonlySet<string>, path: string): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    const ok = allowed.has(name) || (allowed.has('item.*') && /^item(\.[A-Za-z0-9_-]+)+$/.test(name));
    if (!ok) {
      const list = [...allowed].map((v) => `{{${v}}}`).join(', ') || 'none';
      issues.push({ path, message: `placeholder {{${name}}} is not available here (allowed: ${list})` });
    }
  }
  return issues;
}

function zodIssues(error: z.ZodError): TemplateIssue[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function formatIssues(file: string, issues: readonly TemplateIssue[]): string {
  const [first, ...rest] = issues;
  if (!first) return `${file}: invalid template`;
  const head = `${file}: ${first.path ? `${first.path}: ` : ''}${first.message}`;
  if (rest.length === 0) return head;
  const more = rest.map((i) => `  ${i.path ? `${i.path}: ` : ''}${i.message}`).join('\n');
  return `${head}\n${more}`;
}

function displayName(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') ? rel : file;
}
