import { randomBytes } from 'node:crypto';
import {
  DEMO_IDS,
  demoChannels,
  demoUsergroups,
  demoUsers,
  type StandInChannel,
  type StandInUser,
  type StandInUsergroup,
} from './demo.js';
import type { RecordedCall, ResponseUrlContext, StandInMessage, StandInView } from './records.js';
import type { Answer, Args } from './wire.js';

export interface StandInWorkspace {
  users?: StandInUser[];
  usergroups?: StandInUsergroup[];
  channels?: StandInChannel[];
  botUserId?: string;
  botId?: string;
  teamId?: string;
}

/**
 * Everything one stand-in knows, shared by its Web API methods, its response URLs and its readouts. The workspace
 * (people, groups, channels) is fixed; calls, messages and views are what a reset forgets.
 */
export interface StandInState {
  readonly users: Map<string, StandInUser>;
  readonly usergroups: Map<string, StandInUsergroup>;
  readonly channels: Map<string, StandInChannel>;
  readonly botUserId: string;
  readonly botId: string;
  readonly teamId: string;
  calls: RecordedCall[];
  messages: StandInMessage[];
  views: Map<string, StandInView>;
  /** The App Home view id last published per user. */
  readonly homes: Map<string, string>;
  readonly responseUrls: Map<string, ResponseUrlContext>;
  /** Which user each minted trigger id belongs to, so views.open knows whom the modal is for. */
  readonly triggers: Map<string, string>;
  readonly failures: Map<string, { error: string; count: number }>;
  /** Files whose upload URL was handed out, until their upload is completed. */
  readonly uploads: Map<string, { filename: string; length: number; alt?: string; content?: string }>;
  /** Where the stand-in listens, for the upload URLs it hands out. */
  origin?: string;
  seq: number;
  tsCounter: number;
}

export function createStandInState(options: StandInWorkspace): StandInState {
  const users = new Map((options.users ?? demoUsers()).map((u) => [u.id, u]));
  const botUserId = options.botUserId ?? DEMO_IDS.botUser;
  if (!users.has(botUserId))
    users.set(botUserId, { id: botUserId, name: 'calmops', real_name: 'calmops', is_bot: true });
  return {
    users,
    usergroups: new Map((options.usergroups ?? demoUsergroups()).map((g) => [g.id, g])),
    channels: new Map((options.channels ?? demoChannels()).map((c) => [c.id, c])),
    botUserId,
    botId: options.botId ?? DEMO_IDS.botId,
    teamId: options.teamId ?? DEMO_IDS.team,
    calls: [],
    messages: [],
    views: new Map(),
    homes: new Map(),
    responseUrls: new Map(),
    triggers: new Map(),
    failures: new Map(),
    uploads: new Map(),
    seq: 0,
    tsCounter: 0,
  };
}

export function nextTs(state: StandInState): string {
  state.tsCounter += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(state.tsCounter).padStart(6, '0')}`;
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`;
}

export function recordCall(state: StandInState, method: string, args: Args, authenticated: boolean, response: Answer) {
  state.seq += 1;
  state.calls.push({ seq: state.seq, at: new Date().toISOString(), method, args, authenticated, response });
}

/** Forgets recorded calls, messages and views; users, groups and channels stay. */
export function resetState(state: StandInState): void {
  state.calls = [];
  state.messages = [];
  state.views = new Map();
  state.homes.clear();
  state.failures.clear();
  state.uploads.clear();
  state.seq = 0;
}

// Readers hand out copies: a harness that edits what it read must not change what the stand-in holds.

export function visibleMessages(state: StandInState, channel?: string): StandInMessage[] {
  return state.messages
    .filter((m) => !m.deleted && (channel === undefined || m.channel === channel))
    .map((m) => structuredClone(m));
}

export function viewsOf(state: StandInState, user?: string): StandInView[] {
  return [...state.views.values()].filter((v) => user === undefined || v.user === user).map((v) => structuredClone(v));
}

export function homeOf(state: StandInState, user: string): StandInView | undefined {
  const id = state.homes.get(user);
  const view = id === undefined ? undefined : state.views.get(id);
  return view === undefined ? undefined : structuredClone(view);
}
