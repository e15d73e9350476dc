import { describe, expect, it } from 'vitest';
import { type ContainerRuntime, createSlackFunction } from '../../../src/app/slack-runtime.js';

/**
 * A server that announces itself only once it can answer in time (`npm start`) has the Slack function build, before
 * the first request, what that request would otherwise build; a build that fails then is neither thrown at the server
 * nor kept, so the first request builds again and reports what went wrong, as it always did.
 */

describe('preparing the Slack function', () => {
  it('builds the container runtime before any request, and leaves a failed build to the first request', async () => {
    let builds = 0;
    const runtimeOf: ContainerRuntime = async () => {
      builds += 1;
      throw new Error(`the Slack credentials could not be read (build ${builds})`);
    };
    const slack = createSlackFunction({}, {}, runtimeOf);
    await expect(slack.prepare()).resolves.toBeUndefined();
    expect(builds).toBe(1);
    await expect(slack({ headers: {}, body: '' })).rejects.toThrow('the Slack credentials could not be read (build 2)');
    expect(builds).toBe(2);
  });
});
