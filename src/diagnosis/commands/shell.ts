import { parse as parseShell } from 'shell-quote';

// Shell tokenising

interface ShellScan {
  /** `$(…)`, backticks or process substitution outside single quotes. */
  substitutions: string[];
  unbalancedQuote: boolean;
}

/** Walks the line as a shell would for quoting, to find what shell-quote does not report. */
function scanShell(line: string): ShellScan {
  const substitutions: string[] = [];
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      continue;
    }
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '`') substitutions.push('backticks');
    else if (ch === '$' && line[i + 1] === '(') substitutions.push('$(…)');
    else if ((ch === '<' || ch === '>') && line[i + 1] === '(' && quote === undefined) {
      substitutions.push(`${ch}(…)`);
    } else if (ch === '"' || ch === "'") {
      if (quote === undefined) quote = ch;
      else if (quote === ch) quote = undefined;
    }
  }
  return { substitutions: [...new Set(substitutions)], unbalancedQuote: quote !== undefined };
}

export interface TokenizedLine {
  /** Simple commands, split at control operators. */
  commands: string[][];
  /** Control and redirection operators in the order they appear. */
  operators: string[];
  scan: ShellScan;
}

export function tokenizeCommandLine(line: string): TokenizedLine {
  const scan = scanShell(line);
  // Keep `$VAR` literal: expanding it would hide what the user wrote.
  const entries = parseShell(line, (key) => `$${key}`);
  const commands: string[][] = [[]];
  const operators: string[] = [];
  for (const [index, entry] of entries.entries()) {
    if (typeof entry === 'string') {
      // shell-quote reads `$(` as a literal `$` followed by a `(` operator; the scan reports the substitution.
      const next = entries[index + 1];
      if (entry === '$' && next !== undefined && typeof next === 'object' && 'op' in next && next.op === '(') continue;
      commands[commands.length - 1]?.push(entry);
    } else if ('comment' in entry) {
      break;
    } else if ('op' in entry) {
      if (entry.op === 'glob') {
        commands[commands.length - 1]?.push((entry as { pattern: string }).pattern);
        continue;
      }
      operators.push(entry.op);
      if (commands[commands.length - 1]?.length) commands.push([]);
    }
  }
  return { commands: commands.filter((c) => c.length > 0), operators, scan };
}
