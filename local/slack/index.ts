export { messageBlockProblems, viewProblems } from './block-rules.js';
export { DEMO_IDS, demoChannels } from './demo.js';
export type { StandInMessage } from './records.js';
export type { SlackStandIn } from './server.js';
export { startSlackStandIn } from './server.js';
