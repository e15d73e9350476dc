import { join } from 'node:path';
import { type BundlingOptions, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/**
 * How every Lambda function is bundled, in one place: the CDK construct hands these settings to esbuild through
 * NodejsFunction (`nodejsBundling`), and the bundle bench and tests build the same bundles with esbuild's API
 * (`lambdaBuildOptions`) without running `cdk synth`.
 *
 * ESM output with a `createRequire` banner (bundled CommonJS dependencies call `require` for Node built-ins), Node 24,
 * minified with names kept (StoreError and its subclasses name themselves after their class), source maps without
 * the sources, and the AWS SDK bundled: the versions in package-lock.json are the ones tested.
 */

/** Lets bundled CommonJS code `require()` Node built-ins from an ES module. */
export const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * Packages that only Bolt's Express, HTTP and Socket Mode receivers and its OAuth installer use. Bolt loads those
 * receivers whatever the app runs, and with them about 1.5 MB (Express and body-parser, raw-body with iconv-lite,
 * Socket Mode with undici, the OAuth installer with jsonwebtoken). The functions run AwsLambdaReceiver, which needs
 * none of it, so each is replaced by a stand-in that loads quietly and throws OmittedModuleError if ever called.
 */
export const OMITTED_PACKAGES = [
  'express',
  'body-parser',
  'raw-body',
  'path-to-regexp',
  '@slack/socket-mode',
  '@slack/oauth',
] as const;

/**
 * The stand-in, relative to the project root: esbuild resolves an alias's target from its working directory, which
 * is the project root for the CDK's local bundling, for its Docker bundling (the root is the mounted input) and for
 * `lambdaBuildOptions`.
 */
export const OMITTED_MODULE = './cdk/omitted-module.cjs';

const LAMBDA_BUNDLE = {
  target: 'node24',
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  keepNames: true,
  sourcesContent: false,
  alias: Object.fromEntries(OMITTED_PACKAGES.map((name) => [name, OMITTED_MODULE])) as Readonly<Record<string, string>>,
} as const;

/** The NodejsFunction bundling settings (the construct adds its own hooks); esbuild has no property there for aliases. */
export function nodejsBundling(projectRoot: string): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: LAMBDA_BUNDLE.target,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: LAMBDA_BUNDLE.banner,
    minify: LAMBDA_BUNDLE.minify,
    keepNames: LAMBDA_BUNDLE.keepNames,
    sourceMap: true,
    sourceMapMode: SourceMapMode.DEFAULT,
    sourcesContent: LAMBDA_BUNDLE.sourcesContent,
    bundleAwsSDK: true,
    externalModules: [],
    tsconfig: join(projectRoot, 'tsconfig.json'),
    esbuildArgs: Object.fromEntries(Object.entries(LAMBDA_BUNDLE.alias).map(([from, to]) => [`--alias:${from}`, to])),
  };
}

/** The same build through esbuild's API: `entry` relative to the project root, the bundle written to `outfile`. */
export function lambdaBuildOptions(input: { projectRoot: string; entry: string; outfile: string }): BuildOptions {
  return {
    absWorkingDir: input.projectRoot,
    entryPoints: [input.entry],
    outfile: input.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: LAMBDA_BUNDLE.target,
    mainFields: [...LAMBDA_BUNDLE.mainFields],
    banner: { js: LAMBDA_BUNDLE.banner },
    minify: LAMBDA_BUNDLE.minify,
    keepNames: LAMBDA_BUNDLE.keepNames,
    sourcemap: true,
    sourcesContent: LAMBDA_BUNDLE.sourcesContent,
    alias: { ...LAMBDA_BUNDLE.alias },
    tsconfig: join(input.projectRoot, 'tsconfig.json'),
    logLevel: 'error',
  };
}
