import type { App } from '@slack/bolt';
import type { SlackAppDeps } from '../deps.js';
import { registerActions } from './actions/index.js';
import { registerCommand } from './command.js';
import { registerEvents } from './events.js';
import { registerSubmissions } from './submissions.js';

/**
 * Registers every Slack listener calmops has: the `/triage` slash command, Events API events, button clicks and
 * modal submissions. The one call both the Lambda receiver and the Socket Mode sandbox make.
 */
export function registerListeners(app: App, deps: SlackAppDeps): void {
  registerCommand(app, deps);
  registerEvents(app, deps);
  registerActions(app, deps);
  registerSubmissions(app, deps);
}
