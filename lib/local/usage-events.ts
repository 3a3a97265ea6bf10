/**
 * The local stack's stand-in for the stack's EventBridge bus of usage events (issue 39): every
 * event appended to a JSON-lines file in DATA_DIR (USAGE_EVENTS_FILE), one event per line in
 * EventBridge's envelope (source, detail-type, time, detail). Held to the UsageEventBus contract
 * (test/contract/usage-bus.contract.ts) as the memory fake is. One append per publish (O_APPEND):
 * lines of two publishers never interleave.
 */
import { appendFile, readFile } from 'node:fs/promises';
import type { UsageEvent, UsageEventBus } from '../../functions/domain/accounts/usage-events.js';

/** The file's name in DATA_DIR. */
export const USAGE_EVENTS_FILE = 'usage-events.jsonl';

export const createJsonLinesUsageBus = (file: string): UsageEventBus => ({
  async publish(events) {
    if (events.length > 10) throw new Error('at most 10 events per publish');
    if (events.length === 0) return [];
    await appendFile(file, events.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    return events.map(() => true);
  },
});

/** Every event the file holds, in the order published (none: no file yet). */
export const readUsageEvents = async (file: string): Promise<UsageEvent[]> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as UsageEvent);
};
