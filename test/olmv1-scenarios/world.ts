/**
 * Each scenario's context, as hooks.go's scenarioContext: its id, namespace `ns-<id>`,
 * ClusterExtension name `ce-<id>`, ClusterObjectSet name `cos-<id>`, the catalogs and packages it
 * built, what it applied (for cleanup), the last apply's stderr (warning steps), the objects
 * removed (restore steps) and the installed objects gathered by "is rolled out".
 */
import { execFile } from 'node:child_process';
import { setWorldConstructor, World } from '@cucumber/cucumber';

export const OLM_NAMESPACE = process.env.OLMV1_SCENARIOS_OLM_NAMESPACE ?? 'olmv1-scenarios-system';
/**
 * The namespace of a manager install-self put in the cluster (real-node.sh), which the scenarios
 * then use instead of starting one in this process; undefined: the manager runs here.
 */
export const IN_CLUSTER = process.env.OLMV1_SCENARIOS_IN_CLUSTER === '' ? undefined : process.env.OLMV1_SCENARIOS_IN_CLUSTER;

/** E2E_STEP_TIMEOUT as steps.go reads it (Go duration: `5m`, `90s`, `1m30s`); default 5 minutes. */
export const STEP_TIMEOUT_MS = ((): number => {
  const s = process.env.E2E_STEP_TIMEOUT;
  if (s === undefined || s === '') return 5 * 60_000;
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return ms > 0 ? ms : 5 * 60_000;
})();
export const TICK_MS = 1000;

export interface Resource {
  kind: string;
  name: string;
  namespace?: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

export interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

/** The `kubectl` binary with KUBECONFIG, as steps.go's k8sClient / k8scliWithInput. */
export function kubectlRun(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.env.OLMV1_SCENARIOS_KUBECTL ?? 'kubectl', args, { env: { ...process.env, KUBECONFIG: process.env.BINNACLE_E2E_KUBECONFIG }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1;
      resolve({ stdout, stderr, code });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** k8sClient: stdout, or an error carrying stderr. */
export async function k8s(...args: string[]): Promise<string> {
  const r = await kubectlRun(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

export class ScenarioWorld extends World {
  id = '';
  featureName = '';
  scenarioName = '';
  namespace = '';
  clusterExtensionName = '';
  clusterObjectSetName = '';
  /** Table catalog name → ClusterCatalog name. */
  catalogs = new Map<string, string>();
  /** Table package name → `<pkg>-<id>`. */
  catalogPackageNames = new Map<string, string>();
  addedResources: Resource[] = [];
  removedResources: Record<string, unknown>[] = [];
  extensionObjects: ObjectRef[] = [];
  /** ComponentIsReadyToReconcile's leader Pods (scenarioContext.leaderPods): component → Pod name. */
  leaderPods = new Map<string, string>();
  /** SendMetricsRequest's answers: Pod name → body. */
  metricsResponse = new Map<string, string>();
  /** Deployments whose `manager` args a step patched, with the args to put back (hooks.go's deploymentRestores). */
  deploymentRestores: { name: string; namespace: string; originalArgs: string[] }[] = [];
  lastApplyStderr = '';

  /** substituteScenarioVars (steps.go) through templateContent (os.Expand). */
  substitute(content: string): string {
    const vars = new Map<string, string>([
      ['TEST_NAMESPACE', this.namespace],
      ['NAME', this.clusterExtensionName],
      ['COS_NAME', this.clusterObjectSetName],
      ['SCENARIO_ID', this.id],
      ['OLM_NAMESPACE', OLM_NAMESPACE],
    ]);
    for (const [orig, param] of this.catalogPackageNames) vars.set(`PACKAGE:${orig}`, param);
    for (const [name, catalog] of this.catalogs) vars.set(`CATALOG:${name}`, catalog);
    return expand(content, (k) => vars.get(k) ?? `\${${k}}`);
  }
}

/**
 * Go's os.Expand: `${name}` (anything up to `}`) and `$name` (letters, digits, `_`), a special
 * one-character name (`*#$@!?-` or a digit); a `$` followed by anything else is kept; `${` with
 * no `}` is dropped with the rest of its name (bad syntax, os.Expand's rule).
 */
export function expand(s: string, mapping: (k: string) => string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i] ?? '';
    if (c !== '$' || i + 1 >= s.length) {
      out += c;
      i++;
      continue;
    }
    const n = s[i + 1] ?? '';
    if (n === '{') {
      const end = s.indexOf('}', i + 2);
      if (end < 0) {
        i = s.length; // bad syntax: os.Expand eats "${..."
        continue;
      }
      const name = s.slice(i + 2, end);
      if (name !== '') out += mapping(name);
      i = end + 1;
    } else if ('*#$@!?-0123456789'.includes(n)) {
      out += mapping(n);
      i += 2;
    } else {
      let j = i + 1;
      while (j < s.length && /[A-Za-z0-9_]/.test(s[j] ?? '')) j++;
      if (j === i + 1) {
        out += '$'; // not a name: os.Expand keeps the '$' (w=1, name="")
        i++;
        continue;
      }
      out += mapping(s.slice(i + 1, j));
      i = j;
    }
  }
  return out;
}

setWorldConstructor(ScenarioWorld);

/** waitFor (steps.go): require.Eventually with the step timeout and a 1 s tick; `describe` tells what was last seen. */
export async function waitFor(what: string, check: () => Promise<boolean>, describe?: () => string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  let lastErr = '';
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      lastErr = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  const seen = describe?.() ?? '';
  throw new Error(`condition never satisfied in ${STEP_TIMEOUT_MS / 1000} s: ${what}${seen === '' ? '' : `; last seen: ${seen}`}${lastErr === '' ? '' : `; last error: ${lastErr}`}`);
}
