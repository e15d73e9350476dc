import { type ExtensionAccess, parametersExtension } from '../aws-parameters/extension.js';
import { type Policy, PolicyError, parsePolicyText } from './channel-policy.js';

/**
 * The channel policy: parsed by config.ts when it comes inline or from a file, or the SSM parameter that holds it (read, and
 * re-read when it changes, at run time through the Parameters and Secrets extension).
 */
export interface PolicyConfig {
  policy: Policy | undefined;
  parameter?: { name: string; extension: ExtensionAccess };
}

/**
 * Where the functions get the channel policy each invocation. Deployed, it is an SSM parameter read through the
 * Parameters and Secrets extension, which caches it for POLICY_MAX_AGE_SECONDS (the stack sets that TTL), so an
 * edited policy is in force within a minute without a redeploy, and a policy is not bounded by Lambda's 4 KB of
 * environment variables. Inline (CALMOPS_POLICY_JSON) or file (CALMOPS_POLICY) policies are parsed once at cold start
 * and never change.
 */

/** How long the extension serves a fetched policy before it asks SSM again. */
export const POLICY_MAX_AGE_SECONDS = 60;

export interface PolicySource {
  /** The policy in force now; undefined when none is configured (every channel is then refused). */
  current(): Promise<Policy | undefined>;
}

/** What the source needs to read the parameter: the extension's client (src/aws-parameters/extension.ts). */
export interface ParameterProvider {
  parameter(name: string): Promise<string>;
}

export class PolicyParameterError extends Error {
  override readonly name = 'PolicyParameterError';
}

export interface ParameterSourceOptions {
  knownIntents?: readonly string[];
  /**
   * Told when a fetch or parse fails while an earlier policy is still at hand: that policy stays in force, so a bad
   * edit or an SSM hiccup does not turn every channel away.
   */
  onStale?: (error: Error) => void;
}

function staticPolicySource(policy: Policy | undefined): PolicySource {
  return { current: async () => policy };
}

export function parameterPolicySource(
  name: string,
  provider: ParameterProvider,
  options: ParameterSourceOptions = {},
): PolicySource {
  let last: { text: string; policy: Policy } | undefined;
  // A rejected edit is reported once, not on every invocation until someone fixes it.
  let rejected: string | undefined;

  const fetchText = async (): Promise<string> => {
    let value: string;
    try {
      value = await provider.parameter(name);
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new PolicyParameterError(`the channel policy parameter ${name} could not be read: ${reason}`, { cause });
    }
    if (value.trim() === '') {
      throw new PolicyParameterError(`the channel policy parameter ${name} is empty`);
    }
    return value;
  };

  return {
    async current() {
      try {
        const text = await fetchText();
        // The extension hands back the same text until the parameter changes; parsing it again would only cost time.
        if (last?.text === text) return last.policy;
        if (last !== undefined && text === rejected) return last.policy;
        let policy: Policy;
        try {
          policy = parsePolicyText(text, {
            source: `SSM parameter ${name}`,
            ...(options.knownIntents === undefined ? {} : { knownIntents: options.knownIntents }),
          });
        } catch (error) {
          rejected = text;
          throw error;
        }
        last = { text, policy };
        rejected = undefined;
        return policy;
      } catch (error) {
        if (last === undefined || !(error instanceof PolicyParameterError || error instanceof PolicyError)) throw error;
        options.onStale?.(error);
        return last.policy;
      }
    },
  };
}

/** The source a function's configuration names. */
export function policySourceFor(config: PolicyConfig, options: ParameterSourceOptions = {}): PolicySource {
  return config.parameter === undefined
    ? staticPolicySource(config.policy)
    : parameterPolicySource(config.parameter.name, parametersExtension(config.parameter.extension), options);
}
