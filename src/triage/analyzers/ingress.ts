import type { KubeObject } from '../../cluster/types.js';
import type { Analyzer, AnalyzerContext } from '../analyzer.js';
import type { FindingInput } from '../findings.js';
import { canSee, describeEvent, findEvents, formatAge, MINUTE } from './events.js';
import { inNamespace, isoAge, ref } from './pods.js';
import { endpointState, findService, networkingEmitter, whyNoEndpoints } from './services.js';

const NAME = 'ingress';

/** An Ingress without an address after this long is not "still being reconciled". */
const ADDRESS_GRACE_MS = 5 * MINUTE;

function isDefaultClass(ic: KubeObject): boolean {
  return ic.metadata.annotations?.['ingressclass.kubernetes.io/is-default-class'] === 'true';
}

function className(ing: KubeObject): string | undefined {
  return ing.spec?.ingressClassName ?? ing.metadata.annotations?.['kubernetes.io/ingress.class'];
}

function hasAddress(ing: KubeObject): boolean {
  const lb = ing.status?.loadBalancer?.ingress;
  return Array.isArray(lb) && lb.some((i: { ip?: string; hostname?: string }) => i.ip || i.hostname);
}

/** Controller pods that serve a class: their args name the class or the controller, or the image is the controller. */
function controllerPods(ctx: AnalyzerContext, cls: string, controller: string): KubeObject[] {
  return ctx.objects('pods').filter((pod) => {
    const cs: { image?: string; args?: string[]; command?: string[] }[] = Array.isArray(pod.spec?.containers)
      ? pod.spec.containers
      : [];
    return cs.some((c) => {
      const args = [...(c.command ?? []), ...(c.args ?? [])].join(' ');
      return (
        args.includes(`--ingress-class=${cls}`) ||
        args.includes(`--controller-class=${controller}`) ||
        (controller === 'k8s.io/ingress-nginx' &&
          /ingress-nginx\/controller/.test(c.image ?? '') &&
          !/--controller-class=/.test(args))
      );
    });
  });
}

interface Backend {
  service: string;
  port: string;
  path: string;
}

function backends(ing: KubeObject): Backend[] {
  const out: Backend[] = [];
  const add = (
    b: { service?: { name?: string; port?: { number?: number; name?: string } } } | undefined,
    path: string,
  ) => {
    if (b?.service?.name)
      out.push({ service: b.service.name, port: String(b.service.port?.number ?? b.service.port?.name ?? ''), path });
  };
  add(ing.spec?.defaultBackend, '(default backend)');
  for (const rule of ing.spec?.rules ?? []) {
    for (const p of rule.http?.paths ?? []) add(p.backend, `${rule.host ?? '*'}${p.path ?? '/'}`);
  }
  const seen = new Set<string>();
  return out.filter((b) => !seen.has(b.service) && seen.add(b.service));
}

export const ingressAnalyzer: Analyzer = {
  name: NAME,
  domain: 'networking',
  description:
    'Ingresses without a class or default class, classes nobody serves, missing or empty backends, no address.',
  needs: ['ingresses', 'ingressclasses', 'services', 'endpoints', 'pods', 'events'],
  analyze(ctx: AnalyzerContext): FindingInput[] {
    if (!canSee(ctx, 'ingresses')) return [];
    const findings: FindingInput[] = [];
    const classes = ctx.objects('ingressclasses');
    const seeClasses = canSee(ctx, 'ingressclasses');
    for (const ing of inNamespace(ctx, ctx.objects('ingresses'))) {
      const namespace = ing.metadata.namespace ?? ctx.namespace;
      const resource = ref('Ingress', ing.metadata.name, namespace);
      const age = isoAge(ctx.now, ing.metadata.creationTimestamp);
      const addressed = hasAddress(ing);
      const state = `Ingress ${ing.metadata.name} ${addressed ? 'has an address' : 'has no address'} after ${formatAge(age)}`;
      const emit = networkingEmitter(findings, NAME, resource);
      const events = findEvents(ctx, { kind: 'Ingress', name: ing.metadata.name, namespace });
      const eventLine = events.find((e) => e.type === 'Warning') ?? events[0];
      const cls = className(ing);
      let classProblem = false;
      if (cls === undefined && seeClasses) {
        const defaults = classes.filter(isDefaultClass);
        if (defaults.length === 0) {
          classProblem = true;
          emit(
            'INGRESS_NO_CLASS',
            'high',
            `Ingress ${ing.metadata.name} names no IngressClass and no class is marked default, so no controller picks it up.`,
            [
              state,
              'spec.ingressClassName unset, no kubernetes.io/ingress.class annotation',
              `IngressClasses: ${classes.map((c) => `${c.metadata.name} (${c.spec?.controller})`).join(', ') || 'none'}; none annotated ingressclass.kubernetes.io/is-default-class=true`,
            ],
            addressed ? 0.5 : 0.92,
            [],
            ['set-ingress-class', 'mark-default-ingressclass'],
          );
        }
      } else if (cls !== undefined && seeClasses) {
        const ic = classes.find((c) => c.metadata.name === cls);
        if (!ic) {
          classProblem = true;
          emit(
            'INGRESS_CLASS_NOT_FOUND',
            'high',
            `Ingress ${ing.metadata.name} asks for IngressClass "${cls}", which does not exist.`,
            [state, `IngressClasses: ${classes.map((c) => c.metadata.name).join(', ') || 'none'}`],
            addressed ? 0.5 : 0.93,
            [ref('IngressClass', cls)],
            ['set-ingress-class'],
          );
        } else if (!addressed && age >= ADDRESS_GRACE_MS) {
          const controller = String(ic.spec?.controller ?? '');
          const pods = controllerPods(ctx, cls, controller);
          const running = pods.filter((p) => p.status?.phase === 'Running');
          const servedElsewhere = ctx.objects('ingresses').filter((o) => className(o) === cls && hasAddress(o));
          if (running.length === 0 && servedElsewhere.length === 0) {
            classProblem = true;
            emit(
              'INGRESS_CLASS_NO_CONTROLLER',
              'high',
              `IngressClass ${cls} names controller ${controller}, but nothing serves it: no controller pod is running and no Ingress of this class has an address.`,
              [
                state,
                `IngressClass ${cls} spec.controller=${controller}`,
                pods.length > 0
                  ? `controller pods not running: ${pods.map((p) => `${p.metadata.namespace}/${p.metadata.name} ${p.status?.phase}`).join(', ')}`
                  : `no controller pod for ${controller} among ${ctx.objects('pods').length} pods read`,
                `0 Ingresses of class ${cls} have an address`,
              ],
              pods.length > 0 || canSee(ctx, 'pods') ? 0.88 : 0.7,
              [ref('IngressClass', cls)],
              ['install-ingress-controller', 'set-ingress-class'],
            );
          }
        }
      }
      let backendProblem = false;
      for (const b of backends(ing)) {
        const svc = findService(ctx, b.service, namespace);
        if (!svc) {
          if (!canSee(ctx, 'services')) continue;
          backendProblem = true;
          emit(
            'INGRESS_BACKEND_SERVICE_MISSING',
            'high',
            `Ingress ${ing.metadata.name} routes ${b.path} to Service ${b.service}, which does not exist.`,
            [
              state,
              `backend ${b.path} → Service ${b.service}:${b.port}`,
              `Service ${b.service} not found in ${namespace}`,
            ],
            0.93,
            [ref('Service', b.service, namespace)],
            ['fix-ingress-backend'],
          );
          continue;
        }
        const eps = endpointState(ctx, svc);
        if (!eps.known || eps.ready > 0) continue;
        backendProblem = true;
        const why = whyNoEndpoints(ctx, svc);
        emit(
          'INGRESS_BACKEND_NO_ENDPOINTS',
          'high',
          `Ingress ${ing.metadata.name} routes ${b.path} to Service ${b.service}, which has no ready endpoints: requests get 503.`,
          [state, `backend ${b.path} → Service ${b.service}:${b.port}`, ...why.evidence],
          0.85,
          [ref('Service', b.service, namespace)],
          why.code === 'SELECTS_NO_PODS' ? ['fix-service-selector'] : ['fix-readiness'],
        );
      }
      if (!addressed && !classProblem && age >= ADDRESS_GRACE_MS) {
        emit(
          'INGRESS_NO_ADDRESS',
          backendProblem ? 'low' : 'medium',
          `Ingress ${ing.metadata.name} has had no address for ${formatAge(age)}.`,
          [state, ...(cls ? [`class ${cls}`] : []), ...(eventLine ? [describeEvent(eventLine, ctx.now)] : [])],
          0.5,
          [],
          ['check-ingress-controller-logs'],
        );
      }
    }
    return findings;
  },
};
