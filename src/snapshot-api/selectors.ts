import { requirementHolds } from '../cluster/label-selector.js';
import { isSelectableField, selectableFieldPosition } from '../cluster/selectable-fields.js';
import type { StoredObject } from '../cluster/stored-object.js';

/**
 * Label and field selectors with the grammar and semantics of k8s.io/apimachinery (labels.Parse, fields.Parse),
 * so a query that works against a real API server works here and one that fails there fails here too.
 */

export class SelectorSyntaxError extends Error {
  override readonly name = 'SelectorSyntaxError';
}

export type LabelOperator = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';

interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export type LabelSelector = readonly LabelRequirement[];

// Label keys are an optional DNS subdomain prefix plus a name of up to 63 characters.
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX_PART = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function validateKey(key: string): void {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX_PART.test(prefix))) {
    throw new SelectorSyntaxError(`invalid label key "${key}": prefix must be a DNS subdomain`);
  }
  if (!NAME_PART.test(name)) {
    throw new SelectorSyntaxError(
      `invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

function validateValue(key: string, value: string): void {
  if (value.length > 63 || !VALUE.test(value)) {
    throw new SelectorSyntaxError(`invalid label value "${value}" for key "${key}"`);
  }
}

/** Split on commas that are not inside a `(…)` value set. */
function splitRequirements(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (depth < 0) throw new SelectorSyntaxError(`unbalanced parenthesis in "${text}"`);
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (depth !== 0) throw new SelectorSyntaxError(`unbalanced parenthesis in "${text}"`);
  parts.push(current);
  return parts;
}

const SET_REQUIREMENT = /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/;
const BINARY_REQUIREMENT = /^([^\s!=<>(),]+)\s*(==|!=|=|<|>)\s*([^\s!=<>(),]*)$/;

function parseRequirement(raw: string): LabelRequirement {
  const text = raw.trim();
  if (text === '') throw new SelectorSyntaxError('found an empty requirement');
  if (text.startsWith('!')) {
    const key = text.slice(1).trim();
    validateKey(key);
    return { key, operator: '!exists', values: [] };
  }
  const set = SET_REQUIREMENT.exec(text);
  if (set) {
    const [, key = '', op, list = ''] = set;
    validateKey(key);
    const values = list.trim() === '' ? [] : list.split(',').map((v) => v.trim());
    if (values.length === 0) throw new SelectorSyntaxError(`for '${op}' operator, values set can't be empty`);
    for (const v of values) validateValue(key, v);
    return { key, operator: op === 'in' ? 'in' : 'notin', values };
  }
  const binary = BINARY_REQUIREMENT.exec(text);
  if (binary) {
    const [, key = '', op, value = ''] = binary;
    validateKey(key);
    if (op === '<' || op === '>') {
      if (!/^-?\d+$/.test(value)) {
        throw new SelectorSyntaxError(`for 'Gt', 'Lt' operators, the value must be an integer, got "${value}"`);
      }
      return { key, operator: op === '>' ? 'gt' : 'lt', values: [value] };
    }
    validateValue(key, value);
    return { key, operator: op === '!=' ? '!=' : '=', values: [value] };
  }
  if (/^[^\s!=<>(),]+$/.test(text)) {
    validateKey(text);
    return { key: text, operator: 'exists', values: [] };
  }
  throw new SelectorSyntaxError(`unable to parse requirement: "${text}"`);
}

/** Parse a label selector (`app=web,tier in (a,b),!canary`). An empty string selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  if (text.trim() === '') return [];
  return splitRequirements(text).map(parseRequirement);
}

export function matchesLabels(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  return selector.every((req) => matchesRequirement(req, labels ?? {}));
}

/** The parsed operators in the API's own terms, so that matching is the one rule the analyzers use too. */
const API_OPERATOR: Record<LabelOperator, string> = {
  exists: 'Exists',
  '!exists': 'DoesNotExist',
  '=': 'In',
  in: 'In',
  '!=': 'NotIn',
  notin: 'NotIn',
  gt: 'Gt',
  lt: 'Lt',
};

function matchesRequirement(req: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  return requirementHolds({ key: req.key, operator: API_OPERATOR[req.operator], values: req.values }, labels);
}

interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export type FieldSelector = readonly FieldRequirement[];

/** Split on unescaped `sep`, keeping escapes for the next stage (fields.Parse escapes `\`, `,` and `=`). */
function splitUnescaped(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text[i + 1];
      i += 1;
    } else if (ch === sep) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(value: string): string {
  return value.replace(/\\(.)/g, (_match, ch: string) => {
    if (ch === '\\' || ch === ',' || ch === '=') return ch;
    throw new SelectorSyntaxError(`invalid field selector value escape sequence: \\${ch}`);
  });
}

/** Parse a field selector (`status.phase!=Running,spec.nodeName=node-1`). An empty string selects everything. */
export function parseFieldSelector(text: string): FieldSelector {
  if (text.trim() === '') return [];
  return splitUnescaped(text, ',').map((raw) => {
    const match = /^([^=!\\]+?)\s*(==|!=|=)(.*)$/s.exec(raw.trim());
    if (!match) throw new SelectorSyntaxError(`invalid selector: '${text}'; can't understand '${raw}'`);
    const [, field = '', op, value = ''] = match;
    return { field: field.trim(), operator: op === '!=' ? '!=' : '=', value: unescapeFieldValue(value) };
  });
}

/** Check every field label is one the real server accepts for this resource; unknown labels are a 400 there. */
export function validateFieldSelector(resource: string, selector: FieldSelector): void {
  for (const req of selector) {
    if (!isSelectableField(resource, req.field))
      throw new SelectorSyntaxError(`field label not supported: ${req.field}`);
  }
}

type FieldReader = (object: StoredObject) => string | undefined;

/** How a selectable field is read from an object's head (stored-object.ts); undefined for one it cannot have. */
function fieldReader(resource: string, field: string): FieldReader {
  if (field === 'metadata.name') return (object) => object.name;
  if (field === 'metadata.namespace') return (object) => object.namespace ?? '';
  const position = selectableFieldPosition(resource, field);
  return position === undefined ? () => undefined : (object) => object.field(position);
}

/**
 * A field selector made into a test of objects of `resource`: where each field sits is looked up once, not once per
 * object, since a selector is tried on every object of a resource.
 */
export function fieldMatcher(resource: string, selector: FieldSelector): (object: StoredObject) => boolean {
  const tests = selector.map((req) => {
    const read = fieldReader(resource, req.field);
    const { value } = req;
    return req.operator === '='
      ? (object: StoredObject) => read(object) === value
      : (object: StoredObject) => {
          const actual = read(object);
          return actual !== undefined && actual !== value;
        };
  });
  if (tests.length === 1) return tests[0] as (object: StoredObject) => boolean;
  // Tried on every object of a resource: a plain loop, with no closure made per object.
  return (object) => {
    for (const test of tests) if (!test(object)) return false;
    return true;
  };
}

export function matchesFields(resource: string, selector: FieldSelector, object: StoredObject): boolean {
  return fieldMatcher(resource, selector)(object);
}
