import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';

export interface ClientAssets {
  html: string;
  css: string;
  script: string;
}

class SandboxAssetsError extends Error {
  override readonly name = 'SandboxAssetsError';
}

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The page, its stylesheet, and its script bundled from `client/` with esbuild in memory: nothing is fetched from
 * the network, so the sandbox works offline, and there is no build step to forget.
 */
export async function loadClientAssets(): Promise<ClientAssets> {
  try {
    const [html, css, bundle] = await Promise.all([
      readFile(`${here}public/index.html`, 'utf8'),
      readFile(`${here}public/sandbox.css`, 'utf8'),
      build({
        entryPoints: [`${here}client/main.ts`],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        write: false,
        sourcemap: 'inline',
        logLevel: 'silent',
      }),
    ]);
    const script = bundle.outputFiles[0]?.text;
    if (script === undefined) throw new SandboxAssetsError('esbuild produced no output for the sandbox script');
    return { html, css, script };
  } catch (error) {
    if (error instanceof SandboxAssetsError) throw error;
    throw new SandboxAssetsError(`could not build the sandbox page: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Ends esbuild's service process. It runs in calmops' process group, and one caught mid-build by Ctrl-C would
 * otherwise outlive calmops by a second or so.
 */
export async function stopClientBuilds(): Promise<void> {
  await stop();
}
