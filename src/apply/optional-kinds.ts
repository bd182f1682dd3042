/**
 * Kinds a bundle may carry that a working operator does not need: when the cluster does not
 * serve their API, the applier skips them (and says so) instead of failing the install, and
 * applies them once the API appears. The one list of them, each with the reason.
 *
 * Only kinds that other software reads belong here: configuration for a monitoring stack or a
 * web console the cluster does not run. A kind the operator itself watches or needs to work is
 * never optional, however often bundles ship it.
 */
import { parseApiVersion } from '../kube/types.js';

export interface OptionalApi {
  group: string;
  /** The kinds of `group` that are optional. */
  kinds: readonly string[];
  /** Why an operator works without them, shown when they are skipped. */
  reason: string;
}

export const OPTIONAL_APIS: readonly OptionalApi[] = [
  {
    group: 'monitoring.coreos.com',
    kinds: ['ServiceMonitor', 'PodMonitor', 'PrometheusRule', 'Probe', 'AlertmanagerConfig', 'ScrapeConfig'],
    reason: 'scrape targets and alerting rules for the Prometheus operator, which this cluster does not run; only Prometheus reads them',
  },
  {
    group: 'console.openshift.io',
    kinds: [
      'ConsoleYAMLSample',
      'ConsoleQuickStart',
      'ConsoleCLIDownload',
      'ConsoleLink',
      'ConsoleNotification',
      'ConsoleExternalLogLink',
      'ConsolePlugin',
    ],
    reason: 'samples, quick starts, links and plugins for the OpenShift web console, which this cluster does not run; only the console reads them',
  },
  {
    group: 'route.openshift.io',
    kinds: ['Route'],
    reason: "external host names for OpenShift's router, which this cluster does not run; only the router reads them, and the Services they expose work without them",
  },
  {
    group: 'image.openshift.io',
    kinds: ['ImageStream', 'ImageStreamTag'],
    reason: "tags for OpenShift's image registry and image triggers, which this cluster does not run; only OpenShift's image controllers read them, and workloads name their images directly",
  },
  {
    group: 'autoscaling.k8s.io',
    kinds: ['VerticalPodAutoscaler'],
    reason: 'resource recommendations for the Vertical Pod Autoscaler, which this cluster does not run; the operator runs with the resources it asks for',
  },
];

/** The entry that makes `apiVersion`/`kind` optional, if any. */
export function optionalApi(apiVersion: string, kind: string): OptionalApi | undefined {
  const { group } = parseApiVersion(apiVersion);
  return OPTIONAL_APIS.find((a) => a.group === group && a.kinds.includes(kind));
}
