import { vi } from 'vitest';

/**
 * Run before each end-to-end file in a worker that is kept between files: the file starts with the environment the
 * worker started with and with the product's modules evaluated afresh, since `npm start`'s stack writes the variables
 * the Lambda handlers read once, on first use. Only the packages (the SDKs, Bolt, the Kubernetes client) stay loaded.
 */
const first = globalThis as { calmopsWorkerEnv?: NodeJS.ProcessEnv };
first.calmopsWorkerEnv ??= { ...process.env };
for (const key of Object.keys(process.env)) if (!(key in first.calmopsWorkerEnv)) delete process.env[key];
Object.assign(process.env, first.calmopsWorkerEnv);
vi.resetModules();
