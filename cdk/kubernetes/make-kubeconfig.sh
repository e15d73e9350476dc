#!/usr/bin/env bash
# Produce a kubeconfig for the calmops read-only service account, for any Kubernetes cluster or OpenShift.
#
#   cdk/kubernetes/make-kubeconfig.sh --cluster prod [--context CTX] [--cli kubectl|oc]
#       [--token long-lived|short-lived] [--duration 720h] [--output FILE] [--put-secret SECRET_ID]
#
# Uses your current admin access (kubectl/oc context) once, to:
#   1. apply cdk/kubernetes/reader-rbac.yaml (namespace calmops, service account calmops-reader, a read-only
#      ClusterRole and its binding);
#   2. get a token for the service account: a long-lived token Secret (default; revoke by deleting the Secret), or
#      a short-lived one from `create token` (rotate by running this script again before it expires);
#   3. write a kubeconfig with the API server URL, its CA and that token; with --put-secret, store it in AWS
#      Secrets Manager (calmops/kubeconfig/<cluster>) instead of a file.
# The token is never printed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cluster="" context="" cli="kubectl" mode="long-lived" duration="720h" output="" secret=""
namespace="calmops" account="calmops-reader"

usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cluster) cluster="${2:?}"; shift 2 ;;
    --context) context="${2:?}"; shift 2 ;;
    --cli) cli="${2:?}"; shift 2 ;;
    --token) mode="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --output) output="${2:?}"; shift 2 ;;
    --put-secret) secret="${2:?}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown option: $1" >&2; usage ;;
  esac
done
[[ -n "$cluster" ]] || { echo "--cluster NAME is required (the name calmops uses for this cluster)" >&2; exit 2; }
[[ "$mode" == "long-lived" || "$mode" == "short-lived" ]] || { echo "--token is long-lived or short-lived" >&2; exit 2; }
[[ -n "$output" || -n "$secret" ]] || output="calmops-${cluster}.kubeconfig"
command -v "$cli" >/dev/null || { echo "$cli is not installed" >&2; exit 2; }
k=("$cli"); [[ -n "$context" ]] && k+=(--context "$context")

"${k[@]}" apply -f "$here/reader-rbac.yaml" >&2

if [[ "$mode" == "long-lived" ]]; then
  "${k[@]}" apply -f - >&2 <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: ${account}-token
  namespace: ${namespace}
  annotations:
    kubernetes.io/service-account.name: ${account}
type: kubernetes.io/service-account-token
EOF
  token=""
  for _ in $(seq 1 30); do
    token="$("${k[@]}" -n "$namespace" get secret "${account}-token" -o jsonpath='{.data.token}' | base64 -d || true)"
    [[ -n "$token" ]] && break
    sleep 1
  done
  [[ -n "$token" ]] || { echo "the token controller did not fill secret ${account}-token" >&2; exit 1; }
else
  token="$("${k[@]}" -n "$namespace" create token "$account" --duration "$duration")"
fi

server="$("${k[@]}" config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')"
ca="$("${k[@]}" config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
if [[ -z "$ca" ]]; then
  ca_file="$("${k[@]}" config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority}')"
  if [[ -n "$ca_file" ]]; then ca="$(base64 < "$ca_file" | tr -d '\n')"; fi
fi
[[ -n "$ca" ]] || echo "warning: no CA in the current context; the kubeconfig relies on publicly trusted certificates" >&2

kubeconfig="apiVersion: v1
kind: Config
clusters:
  - name: ${cluster}
    cluster:
      server: ${server}$([[ -n "$ca" ]] && printf '\n      certificate-authority-data: %s' "$ca")
users:
  - name: ${account}
    user:
      token: ${token}
contexts:
  - name: ${cluster}
    context:
      cluster: ${cluster}
      user: ${account}
current-context: ${cluster}
"

if [[ -n "$secret" ]]; then
  aws secretsmanager put-secret-value --secret-id "$secret" --secret-string "$kubeconfig" >/dev/null
  echo "stored the read-only kubeconfig for ${cluster} in ${secret}" >&2
fi
if [[ -n "$output" ]]; then
  (umask 077; printf '%s' "$kubeconfig" > "$output")
  echo "wrote ${output} (mode 600); check it with: kubectl --kubeconfig ${output} auth can-i --list" >&2
fi
