/**
 * Records core/v1 Events about objects, as `kubectl describe` shows them. Repeats of the same
 * event (object, reason, message) within a process bump the count instead of adding events.
 */
import type { Logger } from 'pino';
import type { ObjectWriter } from './ports.js';
import type { KubeObject } from './types.js';
import { errorMessage } from '../util/errors.js';

export type EventType = 'Normal' | 'Warning';

export class EventRecorder {
  private readonly seen = new Map<string, { name: string; namespace: string; count: number }>();

  constructor(
    private readonly client: Pick<ObjectWriter, 'create' | 'patch'>,
    private readonly component: string,
    private readonly logger: Logger,
  ) {}

  /** Never throws: an event that cannot be written is logged, not fatal. */
  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    const key = `${obj.kind}/${namespace}/${obj.metadata.name ?? ''}/${reason}/${message}`;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    try {
      const prev = this.seen.get(key);
      if (prev !== undefined) {
        prev.count++;
        await this.client.patch({ apiVersion: 'v1', kind: 'Event', namespace: prev.namespace, name: prev.name }, { count: prev.count, lastTimestamp: now });
        return;
      }
      const name = `${obj.metadata.name ?? 'object'}.${Date.now().toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
      await this.client.create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
        reason,
        message,
        type,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: this.component },
        reportingComponent: this.component,
        reportingInstance: this.component,
      });
      this.seen.set(key, { name, namespace, count: 1 });
    } catch (err) {
      this.logger.warn({ reason, err: errorMessage(err) }, 'cannot record event');
    }
  }
}
