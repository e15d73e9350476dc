import { DEMO_IDS, demoChannels, demoUsers, type StandInChannel, type StandInUser } from '../slack/demo.js';

/** A person the sandbox lets you act as, with the role the demo gives them. */
interface SandboxPersona {
  id: string;
  name: string;
  realName: string;
  role: string;
}

export interface SandboxChannel {
  id: string;
  name: string;
  isIm: boolean;
  /** Whether the bot is in the channel: Slack delivers channel events only then. */
  botIsMember: boolean;
  /** For a direct message with the bot: the person whose DM it is (only they see it). */
  dmUser?: string;
}

/** The Slack workspace the sandbox pretends to be: who is in it, which channels it has, and the app's identity. */
export interface SandboxWorkspace {
  teamId: string;
  teamDomain: string;
  appId: string;
  botUserId: string;
  botName: string;
  personas: SandboxPersona[];
  /** Every user the page may need a display name for (personas, the bot, anyone else). */
  users: { id: string; name: string; realName: string; isBot: boolean }[];
  channels: SandboxChannel[];
  /** Slash commands the composer recognises (the manifest's). */
  commands: string[];
  /** Bot events the app subscribes to (the manifest's `bot_events`); others are never sent. */
  botEvents: string[];
}

const PAYMENTS_ONCALL_CHANNEL: StandInChannel = {
  id: 'CPAYMENTSONCALL',
  name: 'payments-oncall',
  is_member: true,
};

/**
 * The channels the local stack's stand-in knows: the demo ones, a second incident channel, and a direct message
 * with the bot for each person (Slack gives every user their own DM with an app).
 */
export function sandboxChannels(): StandInChannel[] {
  const channels = demoChannels();
  if (!channels.some((c) => c.id === PAYMENTS_ONCALL_CHANNEL.id)) channels.splice(1, 0, PAYMENTS_ONCALL_CHANNEL);
  for (const user of [DEMO_IDS.senior, DEMO_IDS.engineer]) {
    const id = `D${user.slice(1)}`;
    if (!channels.some((c) => c.id === id)) channels.push({ id, name: id, is_member: true, is_im: true, user });
  }
  return channels;
}

const ROLES: Record<string, string> = {
  [DEMO_IDS.requester]: 'on call, requester',
  [DEMO_IDS.senior]: 'senior approver',
  [DEMO_IDS.engineer]: 'another engineer',
};

const DEFAULT_BOT_EVENTS = ['app_mention', 'message.channels', 'message.im', 'app_home_opened'];

export function buildWorkspace(
  input: {
    users?: StandInUser[];
    channels?: StandInChannel[];
    commands?: string[];
    botEvents?: string[];
    botUserId?: string;
  } = {},
): SandboxWorkspace {
  const users = input.users ?? demoUsers();
  const channels = input.channels ?? sandboxChannels();
  const botUserId = input.botUserId ?? DEMO_IDS.botUser;
  const bot = users.find((u) => u.id === botUserId);
  return {
    teamId: DEMO_IDS.team,
    teamDomain: 'calmops-sandbox',
    appId: 'ACALMOPS',
    botUserId,
    botName: bot?.name ?? 'calmops',
    personas: users
      .filter((u) => !u.is_bot)
      .map((u) => ({ id: u.id, name: u.name, realName: u.real_name, role: ROLES[u.id] ?? 'engineer' })),
    users: [
      ...users.map((u) => ({ id: u.id, name: u.name, realName: u.real_name, isBot: u.is_bot ?? false })),
      ...(bot === undefined ? [{ id: botUserId, name: 'calmops', realName: 'calmops', isBot: true }] : []),
    ],
    channels: channels.map((c) => ({
      id: c.id,
      name: c.is_im ? botNameFor(users, botUserId) : c.name,
      isIm: c.is_im ?? false,
      botIsMember: c.is_member,
      ...(c.is_im && c.user !== undefined ? { dmUser: c.user } : {}),
    })),
    commands: input.commands ?? ['/triage'],
    botEvents: input.botEvents ?? DEFAULT_BOT_EVENTS,
  };
}

function botNameFor(users: StandInUser[], botUserId: string): string {
  return users.find((u) => u.id === botUserId)?.name ?? 'calmops';
}
