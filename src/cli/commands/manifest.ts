import { ManifestUrlError, renderManifest, renderManifestJson } from '../../slack/manifest/app-manifest.js';
import { type CliCommand, parseFlags, UsageError } from '../io.js';

const USAGE = `Usage: calmops manifest --url <SlackRequestUrl> [--name NAME] [-o yaml|json]

Prints the Slack app manifest with its request URLs (the slash command, interactivity and event subscriptions) set
to your deployment's endpoint, ready to paste at https://api.slack.com/apps → Create New App → From an app manifest,
or into an existing app's App Manifest editor.

  --url URL        the stack output SlackRequestUrl (https://….execute-api.….amazonaws.com/slack/events)
  --name NAME      the app's name in Slack (default calmops), for a second install such as a staging stack
  -o, --output F   yaml (default, with comments) or json
`;

/** `calmops manifest`: the manifest, filled in for one deployment. */
export const run: CliCommand = async (args, io) => {
  const values = parseFlags(
    args,
    {
      url: { type: 'string' },
      name: { type: 'string' },
      output: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (values.url === undefined) throw new UsageError(`--url is required (the stack output SlackRequestUrl)\n${USAGE}`);
  const output = values.output ?? 'yaml';
  if (output !== 'yaml' && output !== 'json') throw new UsageError(`-o: expected yaml or json, got "${output}"`);
  const options = { requestUrl: values.url, ...(values.name === undefined ? {} : { name: values.name }) };
  try {
    io.stdout(output === 'json' ? renderManifestJson(options) : renderManifest(options));
  } catch (error) {
    if (error instanceof ManifestUrlError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return 0;
};
