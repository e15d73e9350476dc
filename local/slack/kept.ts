import { existsSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { StandInMessage, StandInView } from './records.js';
import type { StandInState } from './state.js';

/**
 * The conversation the stand-in keeps across restarts of `npm start`: messages, views and App Homes, written to a
 * file under the data directory a moment after each change and when the stand-in closes. A message posted before a
 * restart can then still be updated (a decided approval, a superseded plan's buttons), as in real Slack.
 */

interface KeptConversation {
  messages: StandInMessage[];
  views: Array<[string, StandInView]>;
  homes: Array<[string, string]>;
  tsCounter: number;
}

/** Loads what an earlier run kept, if anything; a file that cannot be read starts an empty conversation. */
export function loadKept(state: StandInState, file: string): void {
  if (!existsSync(file)) return;
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeptConversation>;
    state.messages = Array.isArray(kept.messages) ? kept.messages : [];
    state.views = new Map(Array.isArray(kept.views) ? kept.views : []);
    for (const [user, id] of Array.isArray(kept.homes) ? kept.homes : []) state.homes.set(user, id);
    state.tsCounter = typeof kept.tsCounter === 'number' ? kept.tsCounter : 0;
  } catch {
    // A torn or foreign file is not worth refusing to start over: the sandbox starts with an empty conversation.
  }
}

export interface Keeper {
  /** Writes soon: changes that arrive together are written once. */
  changed(): void;
  /** Writes now (on close). */
  flush(): Promise<void>;
}

export function keeper(state: StandInState, file: string): Keeper {
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const write = () => {
    timer = undefined;
    const kept: KeptConversation = {
      messages: state.messages,
      views: [...state.views.entries()],
      homes: [...state.homes.entries()],
      tsCounter: state.tsCounter,
    };
    const text = JSON.stringify(kept);
    // Written beside the file and renamed over it, so a kill mid-write leaves the previous copy whole.
    writing = writing.then(async () => {
      await writeFile(`${file}.tmp`, text, { mode: 0o600 });
      await rename(`${file}.tmp`, file);
    });
    writing = writing.catch(() => undefined);
    return writing;
  };
  return {
    changed() {
      timer ??= setTimeout(write, 50);
    },
    async flush() {
      if (timer !== undefined) clearTimeout(timer);
      await write();
    },
  };
}
