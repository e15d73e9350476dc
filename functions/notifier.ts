import type { Context } from 'aws-lambda';
import { createStepRuntime, type RuntimeOverrides, type StepRuntime } from '../src/app/workflow-runtime.js';
import { NOTIFIER_STEPS, runStep } from '../src/workflow/dispatch.js';

/**
 * The notifier Lambda: every `.waitForTaskToken` state. It stores the token (wait or approval item), posts the
 * question with its buttons and returns; the execution waits for the decision. Kept apart from the Slack function,
 * which decides approvals, so neither depends on the other in the deployed stack.
 */
export type NotifierHandler = (event: unknown, context?: Context) => Promise<unknown>;

export function createNotifierHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): NotifierHandler {
  let runtime: Promise<StepRuntime> | undefined;
  return async (event, context) => {
    runtime ??= createStepRuntime(env, overrides);
    runtime.catch(() => {
      runtime = undefined;
    });
    return runStep(NOTIFIER_STEPS, await (await runtime).forInvocation(event, context), event);
  };
}

export const handler: NotifierHandler = createNotifierHandler();
