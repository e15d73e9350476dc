export { messageBlockProblems, SLACK_LIMITS, viewProblems } from './block-rules.js';
export type { StandInChannel, StandInUser, StandInUsergroup } from './demo.js';
export { DEMO_IDS, demoChannels, demoUsergroups, demoUsers } from './demo.js';
export type { RecordedCall, ResponseUrlContext, StandInMessage, StandInView } from './records.js';
export type { SlackStandIn, SlackStandInOptions } from './server.js';
export { startSlackStandIn } from './server.js';
