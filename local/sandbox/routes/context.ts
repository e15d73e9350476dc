import * as z from 'zod';
import type { SlackStandIn } from '../../slack/server.js';
import type { BotClient } from '../bot-client.js';
import type { PageState } from '../page-state.js';
import type { SandboxChannel, SandboxWorkspace } from '../workspace.js';
import { SandboxRequestError } from './requests.js';

/** What the page's actions work with: Slack's side (the stand-in, the workspace), the app, and the page's state. */
export interface ActionContext {
  standIn: SlackStandIn;
  workspace: SandboxWorkspace;
  /** Sends a signed request to the app's `/slack/events`. */
  bot: BotClient;
  page: PageState;
}

export const slackId = z.string().regex(/^[A-Z0-9]{2,32}$/, 'a Slack id');
export const slackTs = z.string().regex(/^\d+\.\d+$/, 'a Slack timestamp');

/** The page names the person it acts as: only the workspace's people, never the bot. */
export function checkPersona(workspace: SandboxWorkspace, user: string): void {
  if (!workspace.users.some((u) => u.id === user && !u.isBot)) {
    throw new SandboxRequestError(`unknown user ${user}`, 400);
  }
}

/** A channel of the workspace the person may act in (a direct message only its own person). */
export function channelFor(workspace: SandboxWorkspace, channelId: string, user: string): SandboxChannel {
  const channel = workspace.channels.find((c) => c.id === channelId);
  if (channel === undefined) throw new SandboxRequestError(`unknown channel ${channelId}`, 400);
  if (channel.dmUser !== undefined && channel.dmUser !== user) {
    throw new SandboxRequestError(`${channelId} is another person's direct message`, 403);
  }
  return channel;
}
