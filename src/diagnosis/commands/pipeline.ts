/**
 * The text filters people pipe a read into (`| grep -A 8 'Allocated resources'`, `| head`, `| wc -l`), applied to
 * the read's own text as the tools would. They only look at text, so a pipe of a read is still a read. Tools that
 * only read text but that calmops does not run (jq, less, cut, …) are left out and the answer says so; anything that
 * could run or change something (xargs, sh, tee) makes the line no read at all.
 */

export type PipeStage =
  | {
      tool: 'grep';
      patterns: RegExp[];
      invert: boolean;
      count: boolean;
      before: number;
      after: number;
      onlyMatching: boolean;
    }
  | { tool: 'head'; lines: number }
  | { tool: 'tail'; lines: number; fromStart: boolean }
  | { tool: 'wc'; what: 'lines' | 'words' | 'chars' | 'all' }
  | { tool: 'sort'; reverse: boolean; numeric: boolean; unique: boolean; key?: number }
  | { tool: 'uniq'; count: boolean }
  | { tool: 'awk'; fields: string[]; pattern?: RegExp };

export type StageParse =
  | { kind: 'stage'; stage: PipeStage }
  | { kind: 'skipped'; tool: string }
  | { kind: 'refused'; reason: string };

/** Text-only tools calmops does not run: the answer is the read without them. */
const TEXT_ONLY = new Set([
  'jq',
  'yq',
  'less',
  'more',
  'cat',
  'column',
  'cut',
  'tr',
  'nl',
  'rev',
  'fold',
  'fmt',
  'tac',
  'base64',
  'egrep',
  'fgrep',
  'sed',
  'grep',
  'head',
  'tail',
  'wc',
  'sort',
  'uniq',
  'awk',
  'gawk',
  'mawk',
  'json_pp',
  'python',
]);

const skipped = (tool: string): StageParse => ({ kind: 'skipped', tool });

function count(text: string | undefined): number | undefined {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

function grepStage(args: readonly string[], extended: boolean): StageParse {
  const patterns: string[] = [];
  let ignoreCase = false;
  let invert = false;
  let countOnly = false;
  let word = false;
  let fixed = false;
  let onlyMatching = false;
  let before = 0;
  let after = 0;
  let ere = extended;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      patterns.push(...args.slice(i + 1, i + 2));
      break;
    }
    const context = /^-([ABC])(\d*)$/.exec(arg);
    if (context) {
      const n = count(context[2] || args[++i]);
      if (n === undefined) return skipped('grep');
      if (context[1] !== 'A') before = n;
      if (context[1] !== 'B') after = n;
      continue;
    }
    const long = /^--(after|before)-context=(\d+)$/.exec(arg);
    if (long) {
      if (long[1] === 'after') after = Number(long[2]);
      else before = Number(long[2]);
      continue;
    }
    if (arg === '-e' || arg === '--regexp') {
      const pattern = args[++i];
      if (pattern === undefined) return skipped('grep');
      patterns.push(pattern);
      continue;
    }
    if (/^-[a-zA-Z]+$/.test(arg)) {
      for (const letter of arg.slice(1)) {
        if (letter === 'i') ignoreCase = true;
        else if (letter === 'v') invert = true;
        else if (letter === 'E') ere = true;
        else if (letter === 'c') countOnly = true;
        else if (letter === 'w') word = true;
        else if (letter === 'F') fixed = true;
        else if (letter === 'o') onlyMatching = true;
        else if (letter === 'n' || letter === 'H' || letter === 'h' || letter === 's') return skipped('grep');
        else return skipped('grep');
      }
      continue;
    }
    if (arg.startsWith('--')) {
      if (arg === '--ignore-case') ignoreCase = true;
      else if (arg === '--invert-match') invert = true;
      else if (arg === '--extended-regexp') ere = true;
      else if (arg === '--count') countOnly = true;
      else return skipped('grep');
      continue;
    }
    if (patterns.length > 0) return skipped('grep'); // a file operand: grep would read that file, not the read
    patterns.push(arg);
  }
  if (patterns.length === 0) return skipped('grep');
  try {
    const compiled = patterns.map((p) => {
      let source = fixed ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : ere ? p : basicToExtended(p);
      if (word) source = `(?<![A-Za-z0-9_])(?:${source})(?![A-Za-z0-9_])`;
      return new RegExp(source, ignoreCase ? 'gi' : 'g');
    });
    return {
      kind: 'stage',
      stage: { tool: 'grep', patterns: compiled, invert, count: countOnly, before, after, onlyMatching },
    };
  } catch {
    return skipped('grep');
  }
}

/** POSIX basic regular expressions: `\|`, `\(`, `\)`, `\{`, `\}`, `\+`, `\?` are the operators; bare ones are text. */
function basicToExtended(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1] as string;
      out += '|(){}+?'.includes(next) ? next : `\\${next}`;
      i++;
    } else if ('|(){}+?'.includes(ch)) {
      out += `\\${ch}`;
    } else {
      out += ch;
    }
  }
  return out;
}

function headTail(tool: 'head' | 'tail', args: readonly string[]): StageParse {
  let lines = 10;
  let fromStart = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const short = /^-(\d+)$/.exec(arg);
    if (short) {
      lines = Number(short[1]);
      continue;
    }
    const value = arg === '-n' || arg === '--lines' ? args[++i] : /^(?:-n|--lines=)(.+)$/.exec(arg)?.[1];
    if (value === undefined) return skipped(tool);
    const match = /^([+-]?)(\d+)$/.exec(value);
    if (!match) return skipped(tool);
    if (match[1] === '+' && tool === 'tail') fromStart = true;
    lines = Number(match[2]);
  }
  return tool === 'head'
    ? { kind: 'stage', stage: { tool: 'head', lines } }
    : { kind: 'stage', stage: { tool: 'tail', lines, fromStart } };
}

function awkStage(args: readonly string[]): StageParse {
  if (args.length !== 1) return skipped('awk');
  const program = (args[0] as string).trim();
  const match = /^(?:\/((?:[^/\\]|\\.)*)\/\s*)?\{\s*print\s+([^}]*?)\s*;?\s*\}$/.exec(program);
  if (!match) return skipped('awk');
  const fields = (match[2] as string).split(/\s*,\s*/);
  if (!fields.every((f) => /^\$(\d+|NF)$/.test(f))) return skipped('awk');
  try {
    return {
      kind: 'stage',
      stage: { tool: 'awk', fields, ...(match[1] !== undefined ? { pattern: new RegExp(match[1]) } : {}) },
    };
  } catch {
    return skipped('awk');
  }
}

/** One stage after a read's `|`. */
export function parsePipeStage(words: readonly string[]): StageParse {
  const [program = '', ...args] = words;
  const tool = program.split('/').pop() ?? program;
  switch (tool) {
    case 'grep':
    case 'egrep':
      return grepStage(args, tool === 'egrep');
    case 'head':
    case 'tail':
      return headTail(tool, args);
    case 'wc': {
      if (args.length === 0) return { kind: 'stage', stage: { tool: 'wc', what: 'all' } };
      if (args.length !== 1) return skipped('wc');
      const what = { '-l': 'lines', '-w': 'words', '-c': 'chars', '-m': 'chars' }[args[0] as string] as
        | 'lines'
        | 'words'
        | 'chars'
        | undefined;
      return what ? { kind: 'stage', stage: { tool: 'wc', what } } : skipped('wc');
    }
    case 'sort': {
      let reverse = false;
      let numeric = false;
      let unique = false;
      let key: number | undefined;
      for (let i = 0; i < args.length; i++) {
        const arg = args[i] as string;
        const k = /^-k(\d+)?$/.exec(arg);
        if (k) {
          const n = count(k[1] ?? args[++i]);
          if (n === undefined) return skipped('sort');
          key = n;
          continue;
        }
        if (!/^-[rnu]+$/.test(arg)) return skipped('sort');
        reverse ||= arg.includes('r');
        numeric ||= arg.includes('n');
        unique ||= arg.includes('u');
      }
      return {
        kind: 'stage',
        stage: { tool: 'sort', reverse, numeric, unique, ...(key !== undefined ? { key } : {}) },
      };
    }
    case 'uniq':
      if (args.length === 0) return { kind: 'stage', stage: { tool: 'uniq', count: false } };
      return args.length === 1 && args[0] === '-c'
        ? { kind: 'stage', stage: { tool: 'uniq', count: true } }
        : skipped('uniq');
    case 'awk':
      return awkStage(args);
    default:
      if (tool === 'sed' && args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith('--in-place'))) {
        return { kind: 'refused', reason: '`sed -i` edits files; it is not part of a read' };
      }
      if (TEXT_ONLY.has(tool)) return skipped(tool);
      return { kind: 'refused', reason: `\`${tool}\` after a pipe can run or change things; it is not part of a read` };
  }
}

function fieldsOf(line: string): string[] {
  return line.trim() === '' ? [] : line.trim().split(/\s+/);
}

function applyGrep(stage: Extract<PipeStage, { tool: 'grep' }>, lines: readonly string[]): string[] {
  const matches = (line: string) =>
    stage.patterns.some((p) => {
      p.lastIndex = 0;
      return p.test(line);
    }) !== stage.invert;
  const hits = lines.map(matches);
  if (stage.count) return [String(hits.filter(Boolean).length)];
  if (stage.onlyMatching && !stage.invert) {
    return lines.flatMap((line) => stage.patterns.flatMap((p) => [...line.matchAll(p)].map((m) => m[0])));
  }
  if (stage.before === 0 && stage.after === 0) return lines.filter((_, i) => hits[i]);
  // GNU grep prints `--` between groups of context that do not touch.
  const keep = new Set<number>();
  hits.forEach((hit, i) => {
    if (!hit) return;
    for (let j = Math.max(0, i - stage.before); j <= Math.min(lines.length - 1, i + stage.after); j++) keep.add(j);
  });
  const out: string[] = [];
  let last = -2;
  for (const i of [...keep].sort((a, b) => a - b)) {
    if (last >= 0 && i > last + 1) out.push('--');
    out.push(lines[i] as string);
    last = i;
  }
  return out;
}

function applyStage(stage: PipeStage, lines: readonly string[]): string[] {
  switch (stage.tool) {
    case 'grep':
      return applyGrep(stage, lines);
    case 'head':
      return lines.slice(0, stage.lines);
    case 'tail':
      return stage.fromStart
        ? lines.slice(Math.max(0, stage.lines - 1))
        : stage.lines === 0
          ? []
          : lines.slice(-stage.lines);
    case 'wc': {
      const text = lines.length > 0 ? `${lines.join('\n')}\n` : '';
      const words = lines.reduce((n, l) => n + fieldsOf(l).length, 0);
      const chars = [...text].length;
      if (stage.what === 'lines') return [String(lines.length)];
      if (stage.what === 'words') return [String(words)];
      if (stage.what === 'chars') return [String(chars)];
      return [`${String(lines.length).padStart(7)} ${String(words).padStart(7)} ${String(chars).padStart(7)}`];
    }
    case 'sort': {
      const keyOf = (line: string) =>
        stage.key !== undefined
          ? fieldsOf(line)
              .slice(stage.key - 1)
              .join(' ')
          : line;
      const sorted = [...lines].sort((a, b) => {
        const ka = keyOf(a);
        const kb = keyOf(b);
        if (stage.numeric) {
          const diff = (Number.parseFloat(ka) || 0) - (Number.parseFloat(kb) || 0);
          if (diff !== 0) return diff;
        }
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      });
      if (stage.reverse) sorted.reverse();
      return stage.unique ? sorted.filter((l, i) => i === 0 || keyOf(l) !== keyOf(sorted[i - 1] as string)) : sorted;
    }
    case 'uniq': {
      const out: Array<{ line: string; n: number }> = [];
      for (const line of lines) {
        const last = out[out.length - 1];
        if (last && last.line === line) last.n++;
        else out.push({ line, n: 1 });
      }
      return out.map((o) => (stage.count ? `${String(o.n).padStart(7)} ${o.line}` : o.line));
    }
    case 'awk':
      return lines
        .filter((line) => stage.pattern === undefined || stage.pattern.test(line))
        .map((line) => {
          const fields = fieldsOf(line);
          return stage.fields
            .map((f) =>
              f === '$NF'
                ? (fields[fields.length - 1] ?? '')
                : f === '$0'
                  ? line
                  : (fields[Number(f.slice(1)) - 1] ?? ''),
            )
            .join(' ');
        });
  }
}

/** Runs the stages over the read's text, as the shell would have. */
export function applyPipeline(text: string, stages: readonly PipeStage[]): string {
  if (stages.length === 0) return text;
  let lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const stage of stages) lines = applyStage(stage, lines);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
