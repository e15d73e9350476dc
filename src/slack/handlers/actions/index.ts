import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { SlackAppDeps } from '../../deps.js';
import { approveClicked, denyClicked } from './approval-buttons.js';
import { openBreakGlass } from './break-glass.js';
import { type ClickHandler, handleClick } from './click.js';
import { chooseHypothesis } from './hypothesis.js';
import { ACTIONS } from './ids.js';
import { chooseNamespace } from './namespace.js';
import { openRequestChanges } from './request-changes.js';
import { resolveSession } from './resolved.js';
import { answerUnknownButton } from './unknown-button.js';

/**
 * Every button calmops puts on a message and the handler that answers it. A button that only opens a modal is not
 * deduplicated: opening a modal is not a decision, so a second click may open it again.
 */
const BUTTONS: ReadonlyArray<{ actionId: string | RegExp; handler: ClickHandler; dedupe: boolean }> = [
  { actionId: ACTIONS.approve, handler: approveClicked, dedupe: true },
  { actionId: ACTIONS.deny, handler: denyClicked, dedupe: true },
  { actionId: ACTIONS.requestChanges, handler: openRequestChanges, dedupe: false },
  { actionId: ACTIONS.hypothesis, handler: chooseHypothesis, dedupe: true },
  { actionId: ACTIONS.namespace, handler: chooseNamespace, dedupe: true },
  { actionId: ACTIONS.resolved, handler: resolveSession, dedupe: true },
  { actionId: ACTIONS.breakGlassOpen, handler: openBreakGlass, dedupe: false },
];

export function registerActions(app: App, deps: SlackAppDeps): void {
  for (const button of BUTTONS) {
    app.action<BlockAction<ButtonAction>>(button.actionId, (args) => handleClick(deps, button, args));
  }
  // Registered last: Bolt runs every matching listener, and only this one answers ids none of the above knows.
  app.action<BlockAction>({ type: 'block_actions' }, (args) => answerUnknownButton(deps, args));
}
