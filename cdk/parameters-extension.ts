import { Duration } from 'aws-cdk-lib';
import {
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsLogLevel,
  ParamsAndSecretsVersions,
} from 'aws-cdk-lib/aws-lambda';
import { POLICY_MAX_AGE_SECONDS } from '../src/policy/policy-source.js';

/**
 * The AWS Parameters and Secrets Lambda Extension, attached as a layer to every function that reads a parameter or a
 * secret (src/aws-parameters/extension.ts speaks to it). Its cache is the functions' only cache of them: the policy
 * parameter for a minute, so an edit is in force within one, and the secrets for five minutes, so a rotated Slack
 * token or kubeconfig is picked up without a redeploy.
 */

const PARAMETERS_EXTENSION_VERSION = ParamsAndSecretsVersions.V1_0_103;

const PARAMETER_TTL = Duration.seconds(POLICY_MAX_AGE_SECONDS);
const SECRET_TTL = Duration.minutes(5);

export function parametersExtensionLayer(): ParamsAndSecretsLayerVersion {
  return ParamsAndSecretsLayerVersion.fromVersion(PARAMETERS_EXTENSION_VERSION, {
    parameterStoreTtl: PARAMETER_TTL,
    secretsManagerTtl: SECRET_TTL,
    // The Slack secret, the alert token, the policy and one kubeconfig per cluster: far below this.
    cacheSize: 100,
    // Under the functions' own 3 s per request, so a slow SSM or Secrets Manager call is reported by the extension
    // (with its reason) rather than cut off by the function.
    parameterStoreTimeout: Duration.seconds(2),
    secretsManagerTimeout: Duration.seconds(2),
    logLevel: ParamsAndSecretsLogLevel.WARN,
  });
}
