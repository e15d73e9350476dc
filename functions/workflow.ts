import { createStepHandler, type RuntimeOverrides, type StepHandler } from '../src/app/workflow-runtime.js';
import { WORKFLOW_STEPS } from '../src/workflow/dispatch.js';

/**
 * The workflow Lambda: the state machines' non-waiting steps, dispatched by `step`. Configuration is read once per
 * cold start (the channel policy is re-read, cached, per invocation); the payload is validated by the step's schema;
 * errors keep their names for Retry and Catch. Every log line carries the invocation's session and execution.
 */
export function createWorkflowHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): StepHandler {
  return createStepHandler(WORKFLOW_STEPS, env, overrides);
}

export const handler: StepHandler = createWorkflowHandler();
