/**
 * The floors of functions/, lowest first. A file imports from its own floor or from lower ones,
 * never from a higher one: what is low (the rules, the plumbing) can be read, tested and reused
 * without what is built on it, and what is high (entry points, tables of routes) can change
 * without reaching down into every floor. `npm run lint` refuses an import that runs upward
 * (bin/floors.ts), as it refuses a cycle; a file on no floor is refused too, so a new folder or
 * top-level file is placed here first. Like routes.ts and table.ts this is data, so it imports
 * nothing.
 *
 * A path is a file (`routes.ts`) or a folder (`domain/`), relative to functions/; a file is on
 * the floor of the longest path that holds it, so `pdf/index.ts` (an entry point) sits above
 * the rest of `pdf/`.
 */

export interface Floor {
  readonly name: string;
  /** What lives here, and why it sits at this height. */
  readonly holds: string;
  readonly paths: readonly string[];
}

/** One Lambda each: a folder entered through index.ts (createHandler) and handler.ts. */
const LAMBDAS = [
  'api-keys',
  'batches',
  'fallback',
  'me',
  'pdf',
  'templates',
  'usage',
  'webhooks',
  'merges',
  'signing-keys',
  'assets',
  'render-worker',
  'sweeper',
  'webhook-sender',
  'batch-outputs',
  'renderer',
  'usage-events',
  'destinations',
  'deliveries',
] as const;

export const FLOORS: readonly Floor[] = [
  {
    name: 'declarations',
    holds: 'data that the CDK app, the local stack and the handlers all read; imports nothing of ours',
    paths: ['settings.ts', 'table.ts', 'wiring.ts', 'floors.ts', 'queues.ts', 'consumers.ts'],
  },
  {
    name: 'templating',
    holds: 'the Jinja2 engine and its worker pool: a library the domain and the renderer use',
    paths: ['templating/'],
  },
  {
    name: 'domain',
    holds: 'use cases, rules and ports: no AWS SDK, zod, middy or HTTP',
    paths: ['domain/'],
  },
  {
    name: 'plumbing',
    holds: "the ports' adapters and the plumbing they and the handlers share (config, clients, HTTP stack)",
    paths: ['adapters/', 'core/', 'route-declaration.ts'],
  },
  {
    name: 'resources',
    holds: 'each Lambda: its wire schemas, its routes, its renderer or consumer code',
    paths: LAMBDAS.map((lambda) => `${lambda}/`),
  },
  {
    name: 'entry points',
    holds: 'what puts the floors together: Lambda entries, the route table and what derives from it',
    paths: [
      'routes.ts',
      'handlers.ts',
      'openapi.ts',
      'services.ts',
      'services-stores.ts',
      'service-parts.ts',
      'webhook-payloads.ts',
      ...LAMBDAS.flatMap((lambda) => [`${lambda}/index.ts`, `${lambda}/handler.ts`]),
    ],
  },
];
