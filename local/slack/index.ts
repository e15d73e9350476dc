export { messageBlockProblems, SLACK_LIMITS, viewProblems } from './block-rules.js';
export type { StandInChannel, StandInUser, StandInUsergroup } from './demo.js';
export { DEMO_IDS, demoChannels, demoUsergroups, demoUsers } from './demo.js';
export type {
  RecordedCall,
  ResponseUrlContext,
  SlackStandIn,
  SlackStandInOptions,
  StandInMessage,
  StandInView,
} from './server.js';
export { startSlackStandIn } from './server.js';
