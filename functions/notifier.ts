import { createStepHandler, type RuntimeOverrides, type StepHandler } from '../src/app/workflow-runtime.js';
import { NOTIFIER_STEPS } from '../src/workflow/dispatch.js';

/**
 * The notifier Lambda: every `.waitForTaskToken` state. It stores the token (wait or approval item), posts the
 * question with its buttons and returns; the execution waits for the decision. Kept apart from the Slack function,
 * which decides approvals, so neither depends on the other in the deployed stack.
 */
export function createNotifierHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): StepHandler {
  return createStepHandler(NOTIFIER_STEPS, env, overrides);
}

export const handler: StepHandler = createNotifierHandler();
