/** The usage event bus contract on the memory fake and on the local stack's JSON-lines file. */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryUsageBus } from '../../../functions/adapters/memory/usage-bus.js';
import { createJsonLinesUsageBus, readUsageEvents } from '../../../lib/local/usage-events.js';
import { usageBusContract } from '../../contract/usage-bus.contract.js';

usageBusContract({
  name: 'memory',
  create: async () => {
    const bus = createMemoryUsageBus();
    return { bus, read: async () => bus.events };
  },
});

usageBusContract({
  name: 'a JSON-lines file (the local stack)',
  create: async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'usage-bus-')), 'usage-events.jsonl');
    return { bus: createJsonLinesUsageBus(file), read: () => readUsageEvents(file) };
  },
});
