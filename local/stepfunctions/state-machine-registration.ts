import { type AccountScope, assertValidName, stateMachineArnOf } from './arn.js';
import { type PreparedDefinition, prepareDefinition, type ValidatedDefinitions } from './definition.js';
import { SfnServiceError, StateMachineDefinitionError } from './errors.js';
import type { TaskHandler } from './task-runner.js';

export interface StateMachineRegistration {
  name: string;
  definition: object | string;
  roleArn?: string;
  /** `${Name}` placeholders to replace in the definition (like CloudFormation DefinitionSubstitutions). */
  substitutions?: Readonly<Record<string, string>>;
}

export interface RegistrationOptions extends AccountScope {
  taskHandlers: Readonly<Record<string, TaskHandler>>;
  retryIntervalScale: number;
  validated: ValidatedDefinitions;
}

/** A state machine ready to register: named, validated and bound to the handlers that serve it. */
export interface PreparedRegistration {
  arn: string;
  roleArn: string;
  prepared: PreparedDefinition;
}

const DEFAULT_ROLE_ARN_NAME = 'calmops-local-states';

/** Validates a registration the way CreateStateMachine does; an invalid definition is InvalidDefinition. */
export function prepareRegistration(
  registration: StateMachineRegistration,
  options: RegistrationOptions,
): PreparedRegistration {
  assertValidName(registration.name, 'state machine');
  const arn = stateMachineArnOf(options, registration.name);
  const roleArn = registration.roleArn ?? `arn:aws:iam::${options.accountId}:role/${DEFAULT_ROLE_ARN_NAME}`;
  let prepared: PreparedDefinition;
  try {
    prepared = prepareDefinition(registration.definition, {
      substitutions: registration.substitutions,
      retryIntervalScale: options.retryIntervalScale,
      validated: options.validated,
    });
    assertResourcesServed(prepared, options.taskHandlers);
  } catch (error) {
    if (error instanceof StateMachineDefinitionError) {
      throw new SfnServiceError('InvalidDefinition', `Invalid State Machine Definition: '${error.message}'`, {
        cause: error,
      });
    }
    throw error;
  }
  return { arn, roleArn, prepared };
}

/** Custom resources can never run without a handler, so they are refused when the machine is registered. */
function assertResourcesServed(
  prepared: PreparedDefinition,
  taskHandlers: Readonly<Record<string, TaskHandler>>,
): void {
  for (const info of prepared.runnable.values()) {
    if (info.kind === 'task' && info.spec.integration.kind === 'custom') {
      const { key } = info.spec.integration;
      if (!taskHandlers[key]) {
        throw new StateMachineDefinitionError(
          `State '${info.stateName}': resource '${info.spec.resource}' is not supported locally and no task handler is registered for '${key}'`,
        );
      }
    }
  }
}
