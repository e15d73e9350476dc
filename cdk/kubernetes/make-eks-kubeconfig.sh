#!/usr/bin/env bash
# Grant the calmops cluster-reader's IAM role read-only access to an EKS cluster, and produce its kubeconfig.
#
#   cdk/kubernetes/make-eks-kubeconfig.sh --eks-cluster NAME --region REGION --role-arn ARN
#       [--cluster prod] [--context CTX] [--output FILE] [--put-secret SECRET_ID]
#
#   --role-arn     the stack output ClusterReaderRoleArn
#   --cluster      the name calmops uses for this cluster (default: the EKS cluster name)
#
# What it does, with your current AWS and kubectl admin access:
#   1. applies reader-rbac.yaml (the read-only ClusterRole) and eks-group-binding.yaml (binds the Kubernetes group
#      calmops-readers to it);
#   2. creates an EKS access entry for the role, mapped to the group calmops-readers and to no access policy, so the
#      role can do exactly what the ClusterRole allows (no Secrets, no exec) and nothing else;
#   3. writes a kubeconfig whose user runs the token helper shipped in the cluster-reader bundle
#      (/var/task/eks-token.mjs): the function signs its own EKS token with its role, no static credential exists.
#      --put-secret stores it through your default AWS region, which must be the stack's.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
eks="" region="" role="" cluster="" context="" output="" secret=""
usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --eks-cluster) eks="${2:?}"; shift 2 ;;
    --region) region="${2:?}"; shift 2 ;;
    --role-arn) role="${2:?}"; shift 2 ;;
    --cluster) cluster="${2:?}"; shift 2 ;;
    --context) context="${2:?}"; shift 2 ;;
    --output) output="${2:?}"; shift 2 ;;
    --put-secret) secret="${2:?}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown option: $1" >&2; usage ;;
  esac
done
[[ -n "$eks" && -n "$region" && -n "$role" ]] || { echo "--eks-cluster, --region and --role-arn are required" >&2; exit 2; }
cluster="${cluster:-$eks}"
[[ -n "$output" || -n "$secret" ]] || output="calmops-${cluster}.kubeconfig"
k=(kubectl); [[ -n "$context" ]] && k+=(--context "$context")

mode="$(aws eks describe-cluster --name "$eks" --region "$region" --query 'cluster.accessConfig.authenticationMode' --output text)"
if [[ "$mode" == "CONFIG_MAP" ]]; then
  echo "cluster $eks authenticates with the aws-auth ConfigMap only; enable access entries first:" >&2
  echo "  aws eks update-cluster-config --name $eks --region $region --access-config authenticationMode=API_AND_CONFIG_MAP" >&2
  exit 1
fi

"${k[@]}" apply -f "$here/reader-rbac.yaml" -f "$here/eks-group-binding.yaml" >&2

if aws eks describe-access-entry --cluster-name "$eks" --region "$region" --principal-arn "$role" >/dev/null 2>&1; then
  aws eks update-access-entry --cluster-name "$eks" --region "$region" --principal-arn "$role" \
    --kubernetes-groups calmops-readers >/dev/null
else
  aws eks create-access-entry --cluster-name "$eks" --region "$region" --principal-arn "$role" \
    --type STANDARD --kubernetes-groups calmops-readers >/dev/null
fi
policies="$(aws eks list-associated-access-policies --cluster-name "$eks" --region "$region" --principal-arn "$role" \
  --query 'associatedAccessPolicies[].policyArn' --output text)"
if [[ -n "$policies" && "$policies" != "None" ]]; then
  echo "warning: the role also has access policies associated ($policies); they grant more than calmops needs." >&2
  echo "  remove them with: aws eks disassociate-access-policy --cluster-name $eks --principal-arn $role --policy-arn ARN" >&2
fi

server="$(aws eks describe-cluster --name "$eks" --region "$region" --query 'cluster.endpoint' --output text)"
ca="$(aws eks describe-cluster --name "$eks" --region "$region" --query 'cluster.certificateAuthority.data' --output text)"

kubeconfig="apiVersion: v1
kind: Config
clusters:
  - name: ${cluster}
    cluster:
      server: ${server}
      certificate-authority-data: ${ca}
users:
  - name: calmops-reader
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1beta1
        command: node
        args: [/var/task/eks-token.mjs, --cluster-name, ${eks}, --region, ${region}]
        interactiveMode: Never
contexts:
  - name: ${cluster}
    context:
      cluster: ${cluster}
      user: calmops-reader
current-context: ${cluster}
"

if [[ -n "$secret" ]]; then
  aws secretsmanager put-secret-value --secret-id "$secret" --secret-string "$kubeconfig" >/dev/null
  echo "stored the kubeconfig for ${cluster} in ${secret}" >&2
fi
if [[ -n "$output" ]]; then
  (umask 077; printf '%s' "$kubeconfig" > "$output")
  echo "wrote ${output}; it holds no credential (the function signs its own token)" >&2
fi
