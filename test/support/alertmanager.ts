import { alertmanagerNotification } from '../../local/alertmanager-notification.js';

/**
 * Alertmanager webhook notifications as Alertmanager 0.2x sends them (version 4), with the label sets the
 * kube-prometheus and OpenShift rules produce: what the alert tests post.
 */

export interface AlertInput {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  status?: 'firing' | 'resolved';
  startsAt?: string;
  endsAt?: string;
  fingerprint?: string;
}

/** A notification for one alert group; the group key follows Alertmanager's `{route}:{group labels}` form. */
export function alertmanagerBody(input: {
  alerts: AlertInput[];
  groupBy?: string[];
  status?: 'firing' | 'resolved';
  receiver?: string;
  externalURL?: string;
  truncatedAlerts?: number;
}) {
  return alertmanagerNotification({
    groupBy: input.groupBy ?? ['namespace', 'alertname'],
    route: '{}/{severity=~"warning|critical"}',
    externalURL: input.externalURL ?? 'http://alertmanager-main-0:9093',
    ...(input.status === undefined ? {} : { status: input.status }),
    ...(input.receiver === undefined ? {} : { receiver: input.receiver }),
    ...(input.truncatedAlerts === undefined ? {} : { truncatedAlerts: input.truncatedAlerts }),
    alerts: input.alerts.map((a) => {
      const status = a.status ?? input.status ?? 'firing';
      return {
        ...a,
        status,
        startsAt: a.startsAt ?? '2030-03-04T02:10:07.412Z',
        ...(status === 'resolved' ? { endsAt: a.endsAt ?? '2030-03-04T03:02:37.412Z' } : {}),
        generatorURL: `http://prometheus-k8s-0:9090/graph?g0.expr=ALERTS%7Balertname%3D%22${a.labels['alertname'] ?? ''}%22%7D&g0.tab=1`,
      };
    }),
  });
}

/** kube-prometheus `KubePodCrashLooping` (kube-state-metrics labels, as the ServiceMonitor keeps them). */
export function crashLooping(namespace: string, pod: string, extra: Record<string, string> = {}): AlertInput {
  return {
    labels: {
      alertname: 'KubePodCrashLooping',
      container: 'app',
      endpoint: 'https-main',
      job: 'kube-state-metrics',
      namespace,
      pod,
      prometheus: 'monitoring/k8s',
      reason: 'CrashLoopBackOff',
      service: 'kube-state-metrics',
      severity: 'warning',
      uid: '5d1c9f0e-6c1e-4f57-9a7e-2b0f3f6c9a11',
      ...extra,
    },
    annotations: {
      description: `Pod ${namespace}/${pod} (app) is in waiting state (reason: "CrashLoopBackOff").`,
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
      summary: 'Pod is crash looping.',
    },
  };
}

/** kube-prometheus `KubeNodeNotReady`: no namespace label (the kube-state-metrics ServiceMonitor drops it). */
export function nodeNotReady(node: string): AlertInput {
  return {
    labels: {
      alertname: 'KubeNodeNotReady',
      condition: 'Ready',
      container: 'kube-rbac-proxy-main',
      endpoint: 'https-main',
      job: 'kube-state-metrics',
      node,
      prometheus: 'monitoring/k8s',
      service: 'kube-state-metrics',
      severity: 'warning',
      status: 'true',
    },
    annotations: {
      description: `${node} has been unready for more than 15 minutes.`,
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubenodenotready',
      summary: 'Node is not ready.',
    },
  };
}

/** OpenShift's `ClusterOperatorDown`, reported by the cluster version operator from its own namespace. */
export function clusterOperatorDown(name: string, reason: string): AlertInput {
  return {
    labels: {
      alertname: 'ClusterOperatorDown',
      name,
      namespace: 'openshift-cluster-version',
      reason,
      severity: 'critical',
    },
    annotations: {
      summary: 'Cluster operator has not been available for 10 minutes.',
      description: `The ${name} operator may be down or disabled because ${reason}, and the components it manages may be unavailable or degraded.  Cluster upgrades may not complete. For more information refer to 'oc get -o yaml clusteroperator ${name}'.`,
    },
  };
}

/** kube-prometheus `TargetDown` (general.rules). */
export function targetDown(namespace: string, service: string): AlertInput {
  return {
    labels: { alertname: 'TargetDown', job: service, namespace, service, severity: 'warning' },
    annotations: {
      description: `100% of the ${service}/${service} targets in ${namespace} namespace are down.`,
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/general/targetdown',
      summary: 'One or more targets are unreachable.',
    },
  };
}

/** kube-prometheus `KubePersistentVolumeFillingUp` (kubelet volume stats labels). */
export function volumeFillingUp(namespace: string, claim: string): AlertInput {
  return {
    labels: {
      alertname: 'KubePersistentVolumeFillingUp',
      endpoint: 'https-metrics',
      instance: '10.0.1.17:10250',
      job: 'kubelet',
      metrics_path: '/metrics',
      namespace,
      node: 'worker-1',
      persistentvolumeclaim: claim,
      prometheus: 'monitoring/k8s',
      service: 'kubelet',
      severity: 'critical',
    },
    annotations: {
      description: `The PersistentVolume claimed by ${claim} in Namespace ${namespace} is only 1.91% free.`,
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepersistentvolumefillingup',
      summary: 'PersistentVolume is filling up.',
    },
  };
}

/** kube-prometheus `KubeAPIErrorBudgetBurn`: a cluster-wide SLO alert without namespace. */
export function apiErrorBudgetBurn(): AlertInput {
  return {
    labels: { alertname: 'KubeAPIErrorBudgetBurn', long: '1h', severity: 'critical', short: '5m' },
    annotations: {
      description: 'The API server is burning too much error budget.',
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubeapierrorbudgetburn',
      summary: 'The API server is burning too much error budget.',
    },
  };
}

/** An application's own rule, which no triage template lists. */
export function customAlert(namespace: string): AlertInput {
  return {
    labels: { alertname: 'PaymentsQueueBacklogHigh', namespace, queue: 'settlements', severity: 'critical' },
    annotations: { summary: 'The settlements queue has more than 10k messages waiting.' },
  };
}
