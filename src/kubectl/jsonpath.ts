import { JSONPath } from 'jsonpath-plus';

/**
 * kubectl's JSONPath templates (k8s.io/client-go/util/jsonpath): literal text between `{…}` expressions, quoted
 * strings with escapes (`{"\n"}`), `{range EXPR}…{end}` over each result, `$` optional, `@` for the current object,
 * `\.` escaping a dot in a key, several results joined by a space, a missing field printing nothing, and maps or
 * lists printed as JSON with sorted keys. The path expressions themselves are evaluated by jsonpath-plus, whose
 * grammar (children, wildcards, slices, unions, recursive descent, `?()` filters) is the one client-go follows.
 */

export class JsonPathTemplateError extends Error {
  override readonly name = 'JsonPathTemplateError';
}

type Node =
  | { type: 'text'; text: string }
  | { type: 'expr'; path: string }
  | { type: 'range'; path: string; body: Node[] };

/** Splits a template into text and `{…}` actions; braces inside quotes in an action do not close it. */
function lex(template: string): Array<{ type: 'text' | 'action'; value: string }> {
  const parts: Array<{ type: 'text' | 'action'; value: string }> = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      parts.push({ type: 'text', value: template.slice(i) });
      break;
    }
    if (open > i) parts.push({ type: 'text', value: template.slice(i, open) });
    let j = open + 1;
    let quote: string | undefined;
    let depth = 0;
    for (; j < template.length; j++) {
      const ch = template[j] as string;
      if (quote) {
        if (ch === '\\') j++;
        else if (ch === quote) quote = undefined;
      } else if (ch === '"' || ch === "'") {
        quote = ch;
      } else if (ch === '[') {
        depth++;
      } else if (ch === ']') {
        depth--;
      } else if (ch === '}' && depth <= 0) {
        break;
      }
    }
    if (j >= template.length)
      throw new JsonPathTemplateError(`unclosed action in template ${JSON.stringify(template)}`);
    parts.push({ type: 'action', value: template.slice(open + 1, j).trim() });
    i = j + 1;
  }
  return parts;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

function unquote(text: string): string {
  return text.slice(1, -1).replace(/\\(.)/g, (_m, ch: string) => ESCAPES[ch] ?? ch);
}

function parse(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  for (const part of lex(template)) {
    const current = stack[stack.length - 1] as Node[];
    if (part.type === 'text') {
      current.push({ type: 'text', text: part.value });
      continue;
    }
    const action = part.value;
    if (/^(["']).*\1$/s.test(action)) {
      current.push({ type: 'text', text: unquote(action) });
    } else if (action === 'end') {
      if (stack.length === 1) throw new JsonPathTemplateError('not in range, nothing to end');
      stack.pop();
    } else if (action.startsWith('range ') || action.startsWith('range\t')) {
      const node: Node = { type: 'range', path: action.slice(6).trim(), body: [] };
      current.push(node);
      stack.push(node.body);
    } else {
      current.push({ type: 'expr', path: action });
    }
  }
  if (stack.length > 1) throw new JsonPathTemplateError('unclosed range: a {range} has no {end}');
  return root;
}

/**
 * A kubectl path as jsonpath-plus reads it: `$`-rooted, `@` standing for the current object, and keys holding an
 * escaped dot (`app\.kubernetes\.io/name`) or a character the dotted form does not allow written in brackets.
 */
function toJsonPathPlus(path: string): string {
  let text = path.trim();
  if (text === '' || text === '@' || text === '$') return '$';
  if (text.startsWith('@') || text.startsWith('$')) text = text.slice(1);
  if (!text.startsWith('.') && !text.startsWith('[')) text = `.${text}`;
  let out = '$';
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '[') {
      // Brackets are copied as they are: indices, slices, unions, quoted keys and filters.
      let depth = 0;
      let j = i;
      let quote: string | undefined;
      for (; j < text.length; j++) {
        const c = text[j] as string;
        if (quote) {
          if (c === '\\') j++;
          else if (c === quote) quote = undefined;
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[') depth++;
        else if (c === ']' && --depth === 0) break;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === '.') {
      if (text[i + 1] === '.') {
        out += '..';
        i += 2;
        continue;
      }
      i++;
      let key = '';
      while (i < text.length && text[i] !== '.' && text[i] !== '[') {
        if (text[i] === '\\' && i + 1 < text.length) {
          key += text[i + 1];
          i += 2;
        } else {
          key += text[i];
          i++;
        }
      }
      if (key === '*') out += '[*]';
      else if (key !== '') out += bracket(key);
      continue;
    }
    // `..name` leaves the key right after the descent.
    let key = '';
    while (i < text.length && text[i] !== '.' && text[i] !== '[') key += text[i++];
    out += key === '*' ? '*' : bracket(key);
  }
  return out;
}

/** A key in bracket notation, which takes any character the dotted form cannot. */
function bracket(key: string): string {
  return `['${key.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

function evaluate(path: string, data: unknown): unknown[] {
  try {
    return JSONPath({ path: toJsonPathPlus(path), json: data as object, wrap: true, eval: 'safe' }) as unknown[];
  } catch (error) {
    throw new JsonPathTemplateError(
      `error parsing jsonpath ${path}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedJson((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** One result as kubectl prints it: text as is, numbers and booleans as Go prints them, the rest as JSON. */
function printValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(sortedJson(value));
}

function render(nodes: readonly Node[], data: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.type === 'text') out += node.text;
    else if (node.type === 'expr') out += evaluate(node.path, data).map(printValue).join(' ');
    else for (const item of evaluate(node.path, data)) out += render(node.body, item);
  }
  return out;
}

/** Executes a kubectl JSONPath template on one object or a kubectl List. */
export function executeTemplate(template: string, data: unknown): string {
  return render(parse(template), data);
}

/** The values one path selects (for `custom-columns` and `--sort-by`). */
export function selectValues(path: string, data: unknown): unknown[] {
  const text = path.trim().replace(/^\{(.*)\}$/s, '$1');
  return evaluate(text, data);
}
