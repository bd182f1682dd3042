/**
 * Operators holding back their own upgrades, through OLM's OperatorCondition API. Every
 * registry+v1 install gets an OperatorCondition (see `bundle/operator-condition.ts`); before a
 * ClusterExtension switches any installed bundle to a different one, it asks here whether that
 * bundle's operator said `Upgradeable=False`, and if so waits with the operator's own message.
 *
 * Precedence is OLM's: a cluster admin's `spec.overrides` wins; then what the operator wrote,
 * in `spec.conditions` (v2, operator-lib) or else `status.conditions` (v1 operators).
 */
import {
  OPERATOR_CONDITION_API_VERSION,
  OPERATOR_CONDITION_KIND,
  UPGRADEABLE,
  type OperatorCondition,
} from '../api/operator-condition.js';
import { LABEL_OWNER_KIND, LABEL_OWNER_NAME, LABEL_PACKAGE, type BundleDeployment } from '../api/types.js';
import type { ObjectReader } from '../kube/ports.js';
import { isNotFound } from '../kube/errors.js';
import { findCondition, type Condition } from '../kube/types.js';

/** An installed operator, as far as its OperatorCondition is concerned. */
export interface InstalledOperator {
  package: string;
  /** Install namespace, where its OperatorCondition lives. */
  namespace: string;
  /** The BundleDeployment that installed it: its objects carry it as their owner. */
  bundleDeployment: string;
  /** The bundle a resolution would switch it to, for the message. */
  replacement?: string;
}

export interface UpgradeBlocker {
  package: string;
  /** Who says so and why, in the operator's own words. */
  message: string;
}

export type UpgradeVerdict = { upgradeable: true } | { upgradeable: false; source: 'override' | 'spec' | 'status'; condition: Condition };

function upgradeableIn(list: unknown): Condition | undefined {
  return Array.isArray(list) ? findCondition(list as Condition[], UPGRADEABLE) : undefined;
}

/** Whether one OperatorCondition lets its operator be replaced (pure). */
export function upgradeVerdict(cond: OperatorCondition): UpgradeVerdict {
  const override = upgradeableIn(cond.spec?.overrides);
  if (override !== undefined) return override.status === 'False' ? { upgradeable: false, source: 'override', condition: override } : { upgradeable: true };
  const reported = upgradeableIn(cond.spec?.conditions);
  if (reported !== undefined) return reported.status === 'False' ? { upgradeable: false, source: 'spec', condition: reported } : { upgradeable: true };
  const legacy = upgradeableIn(cond.status?.conditions);
  if (legacy?.status === 'False') return { upgradeable: false, source: 'status', condition: legacy };
  return { upgradeable: true };
}

/** The sentence a ClusterExtension shows while `op` holds back its upgrade. */
export function blockerMessage(op: InstalledOperator, cond: OperatorCondition, verdict: Extract<UpgradeVerdict, { upgradeable: false }>): string {
  const where = `OperatorCondition ${cond.metadata.namespace ?? op.namespace}/${cond.metadata.name ?? ''}`;
  const who = verdict.source === 'override' ? `a cluster admin's override in ${where}` : `the operator (${where})`;
  const to = op.replacement === undefined ? '' : ` to ${op.replacement}`;
  const why = verdict.condition.message !== '' ? verdict.condition.message : verdict.condition.reason;
  return `upgrade of ${op.package}${to} is held back: ${who} says Upgradeable=False: ${why}`;
}

/**
 * Installed operators that a resolution choosing `chosen` would replace with another bundle
 * of the same package. Only installs that succeeded count: a failed one has nothing to protect.
 */
export function replacedOperators(installed: readonly BundleDeployment[], chosen: readonly { package: string; name: string; image: string }[]): InstalledOperator[] {
  const out: InstalledOperator[] = [];
  for (const bd of installed) {
    const pkg = bd.metadata.labels?.[LABEL_PACKAGE];
    const next = chosen.find((c) => c.package === pkg);
    if (pkg === undefined || next === undefined || bd.metadata.deletionTimestamp !== undefined) continue;
    if (findCondition(bd.status?.conditions, 'Installed')?.status !== 'True') continue;
    if (bd.spec.source.image?.ref === next.image) continue;
    out.push({ package: pkg, namespace: bd.spec.installNamespace, bundleDeployment: bd.metadata.name ?? '', replacement: next.name });
  }
  return out;
}

/** The operators among `installed` whose OperatorCondition says `Upgradeable=False`. */
export async function upgradeBlockers(client: Pick<ObjectReader, 'list'>, installed: readonly InstalledOperator[]): Promise<UpgradeBlocker[]> {
  const out: UpgradeBlocker[] = [];
  for (const op of installed) {
    let conds: OperatorCondition[];
    try {
      conds = (
        await client.list<OperatorCondition>(OPERATOR_CONDITION_API_VERSION, OPERATOR_CONDITION_KIND, {
          namespace: op.namespace,
          labelSelector: `${LABEL_OWNER_KIND}=BundleDeployment,${LABEL_OWNER_NAME}=${op.bundleDeployment}`,
        })
      ).items;
    } catch (err) {
      if (isNotFound(err)) return out; // the API is not served: no operator can object
      throw err;
    }
    for (const cond of conds) {
      const verdict = upgradeVerdict(cond);
      if (!verdict.upgradeable) out.push({ package: op.package, message: blockerMessage(op, cond, verdict) });
    }
  }
  return out;
}
