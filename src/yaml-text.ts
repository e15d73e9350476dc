import { DEFAULT_SCHEMA, dump, FAILSAFE_SCHEMA, load, Type, YAMLException } from 'js-yaml';

/**
 * YAML as calmops reads and writes it: YAML 1.2's core schema, the one kubectl's output, Kubernetes manifests and
 * our own files are written for. `on`, `yes` and timestamps stay strings; only `true`/`false`, `null`, and numbers
 * spelled as the specification spells them are anything else.
 */

// Every plain scalar, keys included, is tried against each type: hundreds of thousands in a large snapshot, nearly all
// words. A first character that no match can begin with settles it before the regular expression runs.
const SIGNS_AND_DIGITS = '-+0123456789';
const startsWithOneOf = (data: unknown, first: string): boolean =>
  typeof data === 'string' && data.length > 0 && first.includes(data.charAt(0));

// Read as the YAML specification means it: `1_000`, `0b1` and `-0x1` are strings there, as are timestamps; js-yaml's
// own core schema would read the first three as numbers, and its default schema timestamps as dates.
const CORE_TYPES = [
  new Type('tag:yaml.org,2002:null', {
    kind: 'scalar',
    resolve: (data: string | null) =>
      data === null || data === '~' || data === 'null' || data === 'Null' || data === 'NULL',
    construct: () => null,
  }),
  new Type('tag:yaml.org,2002:bool', {
    kind: 'scalar',
    resolve: (data: string) => startsWithOneOf(data, 'tTfF') && /^(?:true|True|TRUE|false|False|FALSE)$/.test(data),
    construct: (data: string) => data.charCodeAt(0) === 116 || data.charCodeAt(0) === 84,
  }),
  new Type('tag:yaml.org,2002:int', {
    kind: 'scalar',
    resolve: (data: string) =>
      startsWithOneOf(data, SIGNS_AND_DIGITS) && /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/.test(data),
    // Number() reads the 0o and 0x prefixes too.
    construct: (data: string) => Number(data),
  }),
  new Type('tag:yaml.org,2002:float', {
    kind: 'scalar',
    resolve: (data: string) =>
      startsWithOneOf(data, `${SIGNS_AND_DIGITS}.`) &&
      /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/.test(
        data,
      ),
    construct: (data: string) =>
      /inf$/i.test(data) ? (data.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY) : Number(data),
  }),
];

export const CORE_SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: CORE_TYPES });

/**
 * What the writer quotes: whatever js-yaml's default schema (YAML 1.1 habits included: timestamps, `<<`) or the core
 * schema above would read as something other than the string, so the text reads back the same in either, and in
 * kubectl. The extra type only ever answers "ambiguous"; it has no predicate, so it never represents a value.
 */
const WRITE_SCHEMA = DEFAULT_SCHEMA.extend({
  implicit: [
    new Type('tag:calmops,2025:not-a-string', {
      kind: 'scalar',
      resolve: (data: string) => CORE_TYPES.some((type) => type.resolve(data)),
    }),
  ],
});

/** A YAML text that cannot be read, with the 1-based line where the parser stopped when it knows it. */
export class YamlReadError extends Error {
  override readonly name = 'YamlReadError';
  constructor(
    readonly reason: string,
    readonly line: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(line === undefined ? reason : `line ${line}: ${reason}`, options);
  }
}

/** The words YAML libraries use for a document whose aliases expand without bound. */
export const ALIAS_EXPANSION = 'Excessive alias count indicates a resource exhaustion attack';

/**
 * One document (a second one is refused, as is a repeated mapping key), read with the core schema. An empty text
 * is null. Aliases are shared by reference, so a "billion laughs" costs nothing to read but everything to walk or
 * serialize afterwards: the value is walked once here, within a budget that only such a document exceeds.
 */
export function readYaml(text: string): unknown {
  let value: unknown;
  try {
    value = load(text, { schema: CORE_SCHEMA });
  } catch (error) {
    if (error instanceof YAMLException) {
      const line = error.mark === undefined || error.mark === null ? undefined : error.mark.line + 1;
      throw new YamlReadError(error.reason, line, { cause: error });
    }
    throw new YamlReadError(error instanceof Error ? error.message : String(error), undefined, { cause: error });
  }
  if (!walkValues(value, { left: aliasBudget(text.length) })) throw new YamlReadError(ALIAS_EXPANSION, undefined);
  return value ?? null;
}

/**
 * How many values a parsed text may add up to, counted as a JSON serializer visits them (a subtree reached through
 * several aliases counts each time). Without aliases every value needs a character of its own, so only a text that
 * expands far beyond itself reaches this: the "billion laughs", or an anchor that contains itself.
 */
export function aliasBudget(textLength: number): number {
  return 2 * textLength + 10_000;
}

/**
 * Visit every value under `root` as a JSON serializer would (a subtree shared through aliases once per path),
 * spending `budget.left` one per value and handing each string to `onString`. False when the budget runs out.
 */
export function walkValues(root: unknown, budget: { left: number }, onString?: (value: string) => void): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (--budget.left < 0) return false;
    if (typeof value === 'string') onString?.(value);
    else if (typeof value === 'object' && value !== null) {
      if (Array.isArray(value)) for (const item of value) pending.push(item);
      else for (const key in value) pending.push((value as Record<string, unknown>)[key]);
    }
  }
  return true;
}

/**
 * The value as block YAML: keys in their order, long strings on one line (as kubectl prints them), multi-line
 * strings as literal blocks, double quotes where quoting is needed, shared objects written out rather than as
 * anchors. Undefined object fields are left out and undefined array items written as null, as JSON does.
 */
export function writeYaml(value: unknown): string {
  return dump(value, { schema: WRITE_SCHEMA, lineWidth: -1, noRefs: true, quotingType: '"', skipInvalid: true });
}

/** A string as one YAML scalar on one line (plain when that reads back the same, quoted otherwise). */
export function yamlScalar(text: string): string {
  return dump(text, { schema: WRITE_SCHEMA, lineWidth: -1, flowLevel: 0, quotingType: '"' }).trimEnd();
}
