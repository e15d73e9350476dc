import { tokenizeCommandLine } from '../diagnosis/commands/index.js';

/** Step ids say what a step does to what, so a reviewer's note, the audit trail and the matcher can name them. */

export function kebab(text: string, max = 60): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, max)
      .replace(/-+$/, '') || 'step'
  );
}

const SUBVERBS = new Set(['rollout', 'set', 'adm', 'create', 'auth']);
const VALUE_FLAGS = new Set(['-n', '-c', '-o', '-p', '-l', '-f', '--namespace', '--container', '--output', '--type']);

/** `rollout-undo-deployment-order-worker`: what a step does to what, readable in a reviewer's note and the audit. */
export function idFromCommand(command: string): string {
  // `<placeholders>` would read as shell redirections.
  const words = tokenizeCommandLine(command.replace(/<([a-z][a-z0-9-]*)>/g, '$1')).commands[0] ?? [];
  const args: string[] = [];
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as string;
    // The file a step applies names what it changes as well as a kind and name would.
    if (word === '-f' || word === '--filename') args.push((words[i + 1] ?? '').replace(/\.ya?ml$/, ''));
    if (VALUE_FLAGS.has(word)) i += 1;
    else if (!word.startsWith('-')) args.push(word);
  }
  const verb = SUBVERBS.has(args[0] ?? '') ? args.slice(0, 2) : args.slice(0, 1);
  const rest = args.slice(verb.length, verb.length + 2).map((w) => w.replace('/', ' '));
  return kebab([...verb, ...rest].join(' '), 48);
}

export class StepIds {
  private readonly seen = new Set<string>();
  constructor(taken: Iterable<string> = []) {
    for (const id of taken) this.seen.add(id);
  }
  take(base: string): string {
    let id = base;
    for (let n = 2; this.seen.has(id); n += 1) id = `${base}-${n}`;
    this.seen.add(id);
    return id;
  }
}
