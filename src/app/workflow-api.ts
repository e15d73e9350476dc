import type { WorkflowApi } from '../workflow/api.js';
import { deliverInput } from '../workflow/deliver-input.js';
import { acknowledgeWhilePending, type ThreadPost } from '../workflow/pending-ack.js';
import { type SessionDeps, startSession } from '../workflow/session-lifecycle.js';

/**
 * The workflow's API bound to its dependencies, for the functions that call it from outside a step (the Slack
 * function and the alert route in it): only what starting sessions and delivering input need, so their bundle carries
 * no step code.
 */
export function workflowApi(deps: SessionDeps, post: ThreadPost): WorkflowApi {
  return {
    startSession: (input) => startSession(deps, input),
    async deliverInput(input) {
      const delivered = await deliverInput(deps, input);
      // A reply held behind a pending review or handoff is acknowledged now rather than when it is decided.
      await acknowledgeWhilePending(deps, post, input, delivered.outcome).catch((error: unknown) =>
        deps.logger.warn('could not acknowledge a reply held behind a pending decision', { error: String(error) }),
      );
      return delivered;
    },
    sendTaskSuccess: (taskToken, output) => deps.engine.succeed(taskToken, output),
  };
}
