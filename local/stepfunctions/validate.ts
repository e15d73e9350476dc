import { prepareDefinition } from './definition.js';
import type { StateMachineRegistration } from './engine.js';
import { fileValidatedDefinitions } from './validated-file.js';

/**
 * Validates definitions exactly as registering them would, without starting an endpoint, and records them in
 * `validatedDefinitionsFile` so that an endpoint started later with the same file skips the work. Throws
 * StateMachineDefinitionError for the first invalid one.
 */
export function validateStateMachines(
  registrations: readonly StateMachineRegistration[],
  options: { validatedDefinitionsFile: string },
): void {
  const validated = fileValidatedDefinitions(options.validatedDefinitionsFile);
  for (const registration of registrations) {
    prepareDefinition(registration.definition, {
      ...(registration.substitutions === undefined ? {} : { substitutions: registration.substitutions }),
      validated,
    });
  }
}
