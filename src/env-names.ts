/**
 * The environment variables calmops reads, named once: src/config.ts parses them, the CDK stack sets them on the
 * functions and the local stack sets them for `npm start` and the tests. Renaming one here renames it everywhere.
 */
export const ENV = {
  table: 'CALMOPS_TABLE',
  diagnosticStateMachineArn: 'CALMOPS_DIAGNOSTIC_SM_ARN',
  reviewStateMachineArn: 'CALMOPS_REVIEW_SM_ARN',
  breakGlassStateMachineArn: 'CALMOPS_BREAK_GLASS_SM_ARN',
  slackApiUrl: 'SLACK_API_URL',
  slackSecretArn: 'CALMOPS_SLACK_SECRET_ARN',
  slackSigningSecret: 'SLACK_SIGNING_SECRET',
  slackBotToken: 'SLACK_BOT_TOKEN',
  clusters: 'CALMOPS_CLUSTERS',
  /** The cluster names alone, for the functions that validate an alert's `cluster` label but never read a cluster. */
  clusterNames: 'CALMOPS_CLUSTER_NAMES',
  kubeconfig: 'KUBECONFIG',
  policyJson: 'CALMOPS_POLICY_JSON',
  policyFile: 'CALMOPS_POLICY',
  policyParameter: 'CALMOPS_POLICY_PARAMETER',
  idleTimeoutSeconds: 'CALMOPS_IDLE_TIMEOUT_SECONDS',
  approvalTimeoutSeconds: 'CALMOPS_APPROVAL_TIMEOUT_SECONDS',
  minTimeInStateSeconds: 'CALMOPS_MIN_TIME_IN_STATE_SECONDS',
  alertsToken: 'ALERTS_TOKEN',
  alertsTokenSecretArn: 'ALERTS_TOKEN_SECRET_ARN',
  /** How many alert-opened sessions may be open at once before new groups go to the overflow thread. */
  alertSessionCap: 'CALMOPS_ALERT_SESSION_CAP',
  templatesDir: 'CALMOPS_TEMPLATES_DIR',
  parametersSecretsEndpoint: 'CALMOPS_PARAMETERS_SECRETS_ENDPOINT',
} as const;
