/**
 * node:http, taken as its CommonJS exports. Every server and client of Binnacle's takes it from
 * here, not by an ES import: an ES import of node:http (named or whole) builds the module's
 * namespace, which reads every export, and on Node 24 three of them (WebSocket, CloseEvent,
 * MessageEvent) are getters that load undici, Node's fetch: 750 KB of source, about 2 MB of V8's
 * heap and 3 to 5 MiB of RSS in every process, those that never fetch (a manager serving Helm
 * kinds from local charts, `helm-operator run`) as the others. Required, the getters stay unread.
 */
import { createRequire } from 'node:module';
import type * as Http from 'node:http';

export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof Http;
