/**
 * Helm charts as a third bundle format, beside registry+v1 and plain: chart sources
 * (chart-source/), values schema → CRD schema (schema/), and a chart's release model
 * (chart-render.ts: a chart, its values and a revision rendered by Helm's engine, src/helm-engine,
 * into Helm's release object). The rest of Binnacle treats the result like any other bundle: the
 * same applier, pruning, CRD safety, health and Helm release records. Talks to `helm-engine`,
 * `apply` (release types) and `kube` (lookup through the cluster client).
 */
export { findChart, renderChart, chartInputDigest, inputDigestOf, type ChartRender, type ChartRenderInput, type CrdPolicy } from './chart-render.js';
