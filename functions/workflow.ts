import { runStep, WORKFLOW_STEPS } from '../src/workflow/dispatch.js';
import { createWorkflowRuntime, type RuntimeOverrides } from '../src/workflow/runtime.js';

/**
 * The workflow Lambda: the state machines' non-waiting steps, dispatched by `step`. Configuration is read once per
 * cold start; the payload is validated by the step's schema; errors keep their names for Retry and Catch.
 */
export type StepHandler = (event: unknown) => Promise<unknown>;

export function createWorkflowHandler(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): StepHandler {
  let deps: ReturnType<typeof createWorkflowRuntime> | undefined;
  return async (event) => {
    deps ??= createWorkflowRuntime(env, overrides);
    deps.catch(() => {
      deps = undefined;
    });
    return runStep(WORKFLOW_STEPS, await deps, event);
  };
}

export const handler: StepHandler = createWorkflowHandler();
