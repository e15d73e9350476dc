import { readFile, rename, writeFile } from 'node:fs/promises';
import type { DemoClusterView } from '../demo/control.js';
import type { RecordedCall, StandInMessage, StandInView } from '../slack/records.js';
import type { SlackStandIn } from '../slack/server.js';
import { SandboxRequestError } from './routes/requests.js';
import type { SampleAlertsView } from './sample-alerts.js';
import type { SandboxWorkspace } from './workspace.js';

/** A message shown by Slack itself rather than the app: a slash command that failed, an unknown command. */
export interface SandboxNotice {
  user: string;
  channel: string;
  ts: string;
  text: string;
}

/** Everything the page shows, for every person (the page filters to the person it acts as). */
export interface SandboxState {
  version: string;
  messages: StandInMessage[];
  notices: SandboxNotice[];
  /** Open modals per user, bottom of the stack first. */
  modals: Record<string, StandInView[]>;
  homes: Record<string, StandInView>;
  /** The demo cluster's namespaces and whether each one's fix was run, or why there is nothing to fix here. */
  demoCluster: DemoClusterView;
  /** The demo namespaces' sample alerts and which of them fire, or why there are none. */
  alerts: SampleAlertsView;
}

export interface PageStateOptions {
  standIn: SlackStandIn;
  workspace: SandboxWorkspace;
  /** How long a state request waits for something to change before answering unchanged (long poll). */
  pollWaitMs: number;
  /** Where the conversation is kept across restarts; absent: nowhere. */
  historyFile?: string;
  /** The parts of the state that live outside the conversation, read on every state request. */
  outside: () => Pick<SandboxState, 'demoCluster' | 'alerts'>;
}

/**
 * What the page shows, beyond what the Web API stand-in recorded: what Slack shows without the Web API (slash command
 * acks, its own notices, views a view_submission ack replaced or pushed), the modal stack of each person, and the
 * conversation of earlier runs. Its version moves with every change, so a waiting state request can answer at once.
 */
export function createPageState(options: PageStateOptions) {
  const { standIn, workspace } = options;
  let localVersion = 0;
  let lastSeq = 0;
  let refreshing: Promise<void> | undefined;
  let closed = false;
  const notices: SandboxNotice[] = [];
  /** Slash command answers Slack shows straight from the ack; they never pass through the Web API. */
  const ackMessages: StandInMessage[] = [];
  const modalStacks = new Map<string, string[]>();
  /** Views replaced or pushed by a `response_action` in a view_submission ack (never seen by the Web API). */
  const ackViews = new Map<string, StandInView>();
  let tsCounter = 0;
  let history: StandInMessage[] | undefined;
  let savedVersion = '';
  let saveTimer: NodeJS.Timeout | undefined;

  const version = () => `${lastSeq}.${localVersion}`;
  const bump = () => {
    localVersion += 1;
  };
  const nextTs = (): string => {
    tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(900_000 + tsCounter).padStart(6, '0')}`;
  };

  const loadHistory = async (): Promise<StandInMessage[]> => {
    if (history !== undefined) return history;
    let loaded: StandInMessage[] = [];
    if (options.historyFile !== undefined) {
      try {
        const parsed: unknown = JSON.parse(await readFile(options.historyFile, 'utf8'));
        if (Array.isArray(parsed)) loaded = parsed as StandInMessage[];
      } catch {
        // No history yet, or an unreadable one: start with an empty conversation rather than not at all.
      }
    }
    history ??= loaded;
    return history;
  };

  const conversation = (): StandInMessage[] => {
    const live = [...standIn.messages(), ...ackMessages.map((m) => structuredClone(m))];
    const liveKeys = new Set(live.map((m) => `${m.channel}/${m.ts}`));
    const old = (history ?? []).filter((m) => !liveKeys.has(`${m.channel}/${m.ts}`));
    return [...old, ...live].sort((a, b) => Number(a.ts) - Number(b.ts));
  };

  const saveHistory = async () => {
    if (options.historyFile === undefined || history === undefined) return;
    const current = version();
    if (current === savedVersion) return;
    savedVersion = current;
    const kept = conversation().filter((m) => m.ephemeral_to === undefined);
    const temporary = `${options.historyFile}.tmp`;
    await writeFile(temporary, JSON.stringify(kept));
    await rename(temporary, options.historyFile);
  };

  const scheduleSave = () => {
    if (options.historyFile === undefined || saveTimer !== undefined) return;
    saveTimer = setTimeout(() => {
      saveTimer = undefined;
      void saveHistory().catch(() => undefined);
    }, 500);
  };

  const applyCalls = (calls: RecordedCall[]) => {
    for (const call of calls) {
      lastSeq = Math.max(lastSeq, call.seq);
      if ((call.method === 'views.open' || call.method === 'views.push') && call.response['ok'] === true) {
        const view = call.response['view'] as StandInView | undefined;
        if (view?.user === undefined) continue;
        const stack = call.method === 'views.open' ? [] : [...(modalStacks.get(view.user) ?? [])];
        stack.push(view.id);
        modalStacks.set(view.user, stack);
      }
    }
  };

  /** Reads the stand-in's new calls over its HTTP readout, so a poll costs only what changed. */
  const refresh = (): Promise<void> => {
    refreshing ??= (async () => {
      try {
        const response = await fetch(`${standIn.origin}/_calls?after=${lastSeq}`);
        applyCalls((await response.json()) as RecordedCall[]);
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  };

  const state = async (): Promise<SandboxState> => {
    await refresh();
    const modals: Record<string, StandInView[]> = {};
    const homes: Record<string, StandInView> = {};
    for (const user of workspace.personas) {
      const views = standIn.views(user.id);
      const stack = (modalStacks.get(user.id) ?? [])
        .map((viewId) => ackViews.get(viewId) ?? views.find((v) => v.id === viewId))
        .filter((v): v is StandInView => v !== undefined && v.type === 'modal');
      if (stack.length > 0) modals[user.id] = stack;
      const home = standIn.home(user.id);
      if (home !== undefined) homes[user.id] = home;
    }
    await loadHistory();
    const messages = conversation();
    if (version() !== savedVersion) scheduleSave();
    return { version: version(), messages, notices: [...notices], modals, homes, ...options.outside() };
  };

  return {
    state,
    /** Answers once something changed since version `since`, or unchanged when the wait is over. */
    async poll(since: string | null): Promise<SandboxState> {
      const deadline = Date.now() + options.pollWaitMs;
      await refresh();
      while (!closed && since !== null && version() === since && Date.now() < deadline) {
        await sleep(120);
        await refresh();
      }
      return state();
    },
    /** Something outside the conversation changed (the demo cluster, the sample alerts): waiting pages answer. */
    changed: bump,
    notice(user: string, channel: string, text: string) {
      notices.push({ user, channel, ts: nextTs(), text });
      bump();
    },
    /** Shows a message from a slash command's ack, which Slack shows without the Web API. */
    showAckMessage(message: Omit<StandInMessage, 'ts'>) {
      const { channel, ...content } = message;
      ackMessages.push({ channel, ts: nextTs(), ...content });
      bump();
    },
    /** A message by channel and ts, from the stand-in, the acks or an earlier run's conversation. */
    async findMessage(channel: string, ts: string): Promise<StandInMessage | undefined> {
      return (
        standIn.messages(channel).find((m) => m.ts === ts) ??
        ackMessages.find((m) => m.ts === ts) ??
        (await loadHistory()).find((m) => m.channel === channel && m.ts === ts)
      );
    },
    findView(user: string, viewId: string): StandInView {
      const view = ackViews.get(viewId) ?? standIn.views(user).find((v) => v.id === viewId);
      if (view === undefined) throw new SandboxRequestError(`no view ${viewId} for ${user}`, 404);
      return view;
    },
    /** Closes a modal and the ones above it, or the whole stack (`all`, or the bottom one closed). */
    closeView(user: string, viewId: string, all = false) {
      const stack = modalStacks.get(user) ?? [];
      const index = stack.indexOf(viewId);
      modalStacks.set(user, all || index <= 0 ? [] : stack.slice(0, index));
      bump();
    },
    /** Shows a view a view_submission ack gave: in place of the submitted one, or pushed on top of it. */
    showAckView(user: string, view: StandInView, push: boolean) {
      ackViews.set(view.id, view);
      if (push) modalStacks.set(user, [...(modalStacks.get(user) ?? []), view.id]);
      bump();
    },
    /** Ends waiting state requests and writes the history file one last time. */
    async close() {
      closed = true;
      if (saveTimer !== undefined) clearTimeout(saveTimer);
      saveTimer = undefined;
      await saveHistory().catch(() => undefined);
    },
  };
}

export type PageState = ReturnType<typeof createPageState>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
