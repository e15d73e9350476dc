import { ManifestUrlError, renderManifest, renderManifestJson } from '../../slack/manifest/app-manifest.js';
import { parseCommandLine } from '../flags.js';
import { type CliCommand, UsageError } from '../io.js';
import { OUTPUT_FLAGS, outputFormat } from '../output.js';

export const USAGE = `Usage: calmops manifest --url <SlackRequestUrl> [--name NAME] [-o yaml|json]

Prints the Slack app manifest with its request URLs (the slash command, interactivity and event subscriptions) set
to your deployment's endpoint, ready to paste at https://api.slack.com/apps → Create New App → From an app manifest,
or into an existing app's App Manifest editor.

  --url URL        the stack output SlackRequestUrl (https://….execute-api.….amazonaws.com/slack/events)
  --name NAME      the app's name in Slack (default calmops), for a second install such as a staging stack
  -o, --output F   yaml (default, with comments) or json
  --json           the same as -o json
`;

/**
 * `calmops manifest`: the manifest, filled in for one deployment. Bad input is thrown as a UsageError, which the
 * command line answers with this usage and exit code 2.
 */
export const run: CliCommand = async (args, io) => {
  const { values } = parseCommandLine(
    args,
    {
      url: { type: 'string' },
      name: { type: 'string' },
      ...OUTPUT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
    { command: 'manifest' },
  );
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (values.url === undefined) throw new UsageError('--url is required (the stack output SlackRequestUrl)');
  const output = outputFormat(values, ['yaml', 'json'], 'yaml');
  const options = { requestUrl: values.url, ...(values.name === undefined ? {} : { name: values.name }) };
  try {
    io.stdout(output === 'json' ? renderManifestJson(options) : renderManifest(options));
  } catch (error) {
    if (error instanceof ManifestUrlError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return 0;
};
