export { stateMachineArnOf as localStateMachineArn } from './arn.js';
export type { StateMachineRegistration } from './engine.js';
export type { LocalStepFunctions, LocalStepFunctionsOptions } from './server.js';
export { startLocalStepFunctions } from './server.js';
export { validateStateMachines } from './validate.js';
