export * from '../store/memory.js';
export * from './collect.js';
export * from './fingerprint.js';
export * from './metrics.js';
export * from './similarity.js';
