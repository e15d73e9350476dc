import { NOTIFIER_STEPS, runStep } from '../src/workflow/dispatch.js';
import { createWorkflowRuntime, type RuntimeOverrides } from '../src/workflow/runtime.js';

/**
 * The notifier Lambda: every `.waitForTaskToken` state. It stores the token (wait or approval item), posts the
 * question with its buttons and returns; the execution waits for the decision. Kept apart from the Slack function,
 * which decides approvals, so neither depends on the other in the deployed stack.
 */
export type NotifierHandler = (event: unknown) => Promise<unknown>;

export function createNotifierHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): NotifierHandler {
  let deps: ReturnType<typeof createWorkflowRuntime> | undefined;
  return async (event) => {
    deps ??= createWorkflowRuntime(env, overrides);
    deps.catch(() => {
      deps = undefined;
    });
    return runStep(NOTIFIER_STEPS, await deps, event);
  };
}

export const handler: NotifierHandler = createNotifierHandler();
