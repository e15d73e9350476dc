export { stateMachineArnOf as localStateMachineArn } from './arn.js';
export type {
  ExecutionStatus,
  StateMachineRegistration,
  TaskHandler,
  TaskHandlerContext,
} from './engine.js';
export {
  ExecutionJournalError,
  SfnServiceError,
  StateMachineDefinitionError,
  TaskFailureError,
} from './errors.js';
export type { LocalStepFunctions, LocalStepFunctionsOptions } from './server.js';
export { startLocalStepFunctions } from './server.js';
export { validateStateMachines } from './validate.js';
