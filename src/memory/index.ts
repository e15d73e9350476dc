export * from './collect.js';
export * from './fingerprint.js';
export * from './metrics.js';
export * from './repository.js';
export * from './similarity.js';
