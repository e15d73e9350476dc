/** The local servers' Host and Origin checks live beside the snapshot API server's, which ships in the product. */
export * from '../src/http/request-guard.js';
