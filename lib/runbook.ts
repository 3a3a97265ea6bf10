/**
 * docs/runbook.md, as the alarms name it: one section per kind of alarm (what it means, what to
 * look at, what to do), each alarm's description ending with a link to its section. A consumer or
 * a queue added to the tables gets alarms of the kinds that already have sections, so it needs no
 * new one; test/unit/cdk-runbook.test.ts checks that every alarm of the synthesized template links
 * to a section that exists.
 */
export const RUNBOOK_PATH = 'docs/runbook.md';

/** The runbook's sections, by their anchors (GitHub's: the heading, lower-cased, spaces to dashes). */
export const RUNBOOK_SECTIONS = [
  'api-server-errors',
  'api-latency',
  'renderer-errors',
  'renderer-throttles',
  'renderer-duration',
  'consumer-errors',
  'consumer-heartbeat',
  'queue-dead-letter',
  'queue-depth',
  'queue-oldest-message',
  'table-throttles',
] as const;
export type RunbookSection = (typeof RUNBOOK_SECTIONS)[number];

/** CloudWatch's limit on an alarm's description. */
const MAX_DESCRIPTION_CHARS = 1024;

/** An alarm's description with its runbook link at the end, where a notification's reader finds it. */
export const withRunbook = (description: string, section: RunbookSection): string => {
  const text = `${description.replace(/\.$/, '')}. Runbook: ${RUNBOOK_PATH}#${section}`;
  if (text.length > MAX_DESCRIPTION_CHARS) {
    throw new Error(`an alarm's description is over ${MAX_DESCRIPTION_CHARS} characters: ${text}`);
  }
  return text;
};
