/**
 * Which LocalStackOptions a stack in a child process (child-stack.ts, stack-process.ts) takes, in
 * one place for both sides. Its own module, without child-stack.ts's imports: the stack process's
 * bundle includes it, and nothing of the code that builds that bundle.
 */
import { type LookupAll, systemLookup } from '../../functions/core/public-addresses.js';
import type { LocalStackOptions } from '../../lib/local/stack.js';

/** Settings a child's stack turns into LocalStackOptions that are not plain data. */
export interface ChildOnlyStackOptions {
  /**
   * Webhook host names the stack resolves as given, call by call (the last answer repeats once
   * they run out), others by the system's resolver: a webhookLookup written as data, e.g. a name
   * public at creation and loopback at delivery.
   */
  readonly webhookHosts?: Readonly<Record<string, readonly (readonly string[])[]>>;
}

/**
 * The LocalStackOptions a stack in a child process takes (sent as JSON in STACK_OPTIONS): plain
 * data only. The others (a renderer, a lookup function) live in the process that made them, so a
 * test that needs them starts its stack in its own process (local-stack.ts).
 */
export const CHILD_STACK_OPTIONS = [
  'env',
  'corsAllowedOrigins',
  'dashboardSessionTtlSeconds',
  'asyncConsumer',
  'rendererSpareSessions',
  'webhookHosts',
] as const satisfies readonly (keyof (LocalStackOptions & ChildOnlyStackOptions))[];

export type ChildStackOptions = Pick<
  LocalStackOptions & ChildOnlyStackOptions,
  (typeof CHILD_STACK_OPTIONS)[number]
>;

/** The lookup `webhookHosts` describes. */
export const webhookLookupOf = (hosts: NonNullable<ChildOnlyStackOptions['webhookHosts']>): LookupAll => {
  const calls = new Map<string, number>();
  return async (name) => {
    const answers = hosts[name];
    if (!answers || answers.length === 0) return systemLookup(name);
    const call = calls.get(name) ?? 0;
    calls.set(name, call + 1);
    return answers[Math.min(call, answers.length - 1)] ?? [];
  };
};

/** The LocalStackOptions a child's settings stand for. */
export const localStackOptionsOf = ({ webhookHosts, ...options }: ChildStackOptions): LocalStackOptions => ({
  ...options,
  ...(webhookHosts ? { webhookLookup: webhookLookupOf(webhookHosts) } : {}),
});

type PlainData =
  | string
  | number
  | boolean
  | undefined
  | readonly PlainData[]
  | { readonly [key: string]: PlainData };
/** A type error here when an option added to CHILD_STACK_OPTIONS is not plain data (a function, a class instance). */
const _plainData = (options: ChildStackOptions): { readonly [key: string]: PlainData } => options;

const CHILD_STACK_OPTION_NAMES: ReadonlySet<string> = new Set(CHILD_STACK_OPTIONS);

/** Whether every option set in `options` is one a child stack takes. */
export const childStackTakes = (options: Readonly<Record<string, unknown>>): options is ChildStackOptions =>
  Object.entries(options).every(([name, value]) => value === undefined || CHILD_STACK_OPTION_NAMES.has(name));

/** The options as STACK_OPTIONS carries them; throws on one a child cannot take (for callers that cast). */
export const serializeChildStackOptions = (options: ChildStackOptions): string => {
  const refused = Object.entries(options).filter(
    ([name, value]) =>
      value !== undefined && (!CHILD_STACK_OPTION_NAMES.has(name) || typeof value === 'function'),
  );
  if (refused.length > 0)
    throw new Error(
      `a stack in a child process takes only ${CHILD_STACK_OPTIONS.join(', ')}; not ${refused.map(([n]) => n).join(', ')}`,
    );
  return JSON.stringify(options);
};
