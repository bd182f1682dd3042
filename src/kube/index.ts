/**
 * The Kubernetes layer: one thin layer over @kubernetes/client-node. Kubeconfig loading
 * (`config`), a REST client with discovery, server-side apply under one field manager, watch
 * and impersonation (`client`), informers (`informer`), a rate-limited work queue
 * (`workqueue`), the controller runner (`controller`), Lease leader election
 * (`leader-election`), events (`events`), controller metrics (`metrics`) and the server's
 * published OpenAPI v3 schemas (`openapi`). Everything that talks to an API server goes
 * through here.
 */
export { KubeClient, FIELD_MANAGER, type ApplyOptions, type DeleteOptions, type ListOptions, type ResourceInfo, type WatchEvent, type WatchOptions, type Impersonation } from './client.js';
export { loadKubeConfig, type LoadKubeConfigOptions } from './config.js';
export { KubeApiError, isNotFound, isConflict, isAlreadyExists, isForbidden, isGone, isInvalid } from './errors.js';
export { Informer, type InformerHandlers, type InformerOptions } from './informer.js';
export { WorkQueue, ExponentialBackoff, DEFAULT_BACKOFF, type BackoffOptions } from './workqueue.js';
export { Controller, reconcilerFunc, specOrMetadataChanged, type Reconciler, type ReconcileRequest, type ReconcileResult, type ReconcileContext, type KeyMapper, type UpdatePredicate } from './controller.js';
export { LeaderElector, microTime, type LeaderElectionOptions, type Lease } from './leader-election.js';
export { EventRecorder, type EventType } from './events.js';
export { ControllerMetrics } from './metrics.js';
export { OpenApiSchemas, OpenApiDocument, StaticSchemas, OBJECT_META_SCHEMA, groupVersionPath, type JsonSchema, type KindSchema, type SchemaSnapshot, type SchemaSource } from './openapi.js';
export * from './types.js';
