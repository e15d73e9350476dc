export * from '../store/memory.js';
export * from '../store/memory-fingerprint.js';
export * from '../store/memory-similarity.js';
export * from './collect.js';
export * from './metrics.js';
