/**
 * What has changed on the built-in prototypes of a process, in its main thread and in every
 * worker thread it runs (the renderer's templating workers, the API's parse workers): the
 * evidence a prototype-pollution attack leaves where the templates ran. A template never runs in
 * the test's own process, so looking there proves nothing (issue 33).
 *
 * The workers are reached through the inspector's NodeWorker domain from the process's main
 * thread, as a debugger attaches to them: no code of the service takes part, and none is needed.
 * Each thread compares its prototypes with those of a fresh realm (node:vm), so the answer needs
 * no snapshot taken before the attack. Only Runtime.evaluate is used (no Debugger domain), so the
 * workers' code is not deoptimised; the session is closed after each probe.
 */
import { Session } from 'node:inspector/promises';

/** A thread's changed prototypes: `Object.prototype` → the keys added or replaced there. */
export interface ThreadPrototypes {
  /** `main`, or the worker's inspector title (`[worker 3] templating`). */
  readonly thread: string;
  readonly changed: Readonly<Record<string, readonly string[]>>;
}

/**
 * Evaluated in each thread: the own keys of each built-in prototype that a fresh realm's does not
 * have, or whose value is no longer of the same type, or no longer a native function where the
 * fresh realm's is one. A string, not a function's source: the test process compiles its own
 * functions with helpers a worker does not have.
 */
const PROBE = `(() => {
  const NAMES = ['Object', 'Array', 'Function', 'String', 'Number', 'Boolean', 'Symbol', 'RegExp', 'Date', 'Error', 'Promise', 'Map', 'Set'];
  const fresh = process.getBuiltinModule('node:vm').runInNewContext(
    '({' + NAMES.map((n) => n + ': ' + n + '.prototype').join(', ') + '})',
  );
  const here = { Object, Array, Function, String, Number, Boolean, Symbol, RegExp, Date, Error, Promise, Map, Set };
  const nativeSource = fresh.Function.toString;
  const isNative = (f) => { try { return nativeSource.call(f).includes('[native code]'); } catch { return false; } };
  const changed = {};
  for (const name of NAMES) {
    const proto = here[name].prototype;
    const pristine = fresh[name];
    const keys = [];
    for (const key of Reflect.ownKeys(proto)) {
      const now = Object.getOwnPropertyDescriptor(proto, key);
      const was = Object.getOwnPropertyDescriptor(pristine, key);
      if (!was) { keys.push(String(key)); continue; }
      if (typeof now.value !== typeof was.value) { keys.push(String(key)); continue; }
      if (typeof was.value === 'function' && isNative(was.value) && !isNative(now.value)) keys.push(String(key));
      if (typeof was.get === 'function' && (typeof now.get !== 'function' || !isNative(now.get))) keys.push(String(key));
    }
    if (keys.length > 0) changed[name + '.prototype'] = keys;
  }
  return JSON.stringify(changed);
})()`;

type Evaluated = { result?: { value?: unknown }; exceptionDetails?: { text?: string } };

const parse = (thread: string, evaluated: Evaluated): ThreadPrototypes => {
  const value = evaluated.result?.value;
  if (typeof value !== 'string')
    throw new Error(`the prototype probe failed in ${thread}: ${JSON.stringify(evaluated).slice(0, 500)}`);
  return { thread, changed: JSON.parse(value) };
};

/** This process's main thread and each of its worker threads, with what changed on their prototypes. */
export const probeBuiltInPrototypes = async (): Promise<ThreadPrototypes[]> => {
  const session = new Session();
  session.connect();
  try {
    const main = parse(
      'main',
      (await session.post('Runtime.evaluate', { expression: PROBE, returnByValue: true })) as Evaluated,
    );

    const workers: { sessionId: string; title: string }[] = [];
    session.on('NodeWorker.attachedToWorker', (message) => {
      const { sessionId, workerInfo } = message.params as {
        sessionId: string;
        workerInfo: { title: string };
      };
      workers.push({ sessionId, title: workerInfo.title });
    });
    const pending = new Map<string, (answer: Evaluated) => void>();
    const gone = new Map<string, () => void>();
    session.on('NodeWorker.detachedFromWorker', (message) => {
      gone.get((message.params as { sessionId: string }).sessionId)?.();
    });
    session.on('NodeWorker.receivedMessageFromWorker', (message) => {
      const { sessionId, message: text } = message.params as { sessionId: string; message: string };
      const answer = JSON.parse(text) as { id?: number; result?: Evaluated };
      if (answer.id === 1) pending.get(sessionId)?.(answer.result ?? {});
    });
    // Every worker alive now is reported as attached before enable answers.
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    try {
      const answers = await Promise.all(
        workers.map(
          ({ sessionId, title }) =>
            new Promise<ThreadPrototypes | undefined>((resolve, reject) => {
              const timer = setTimeout(
                () => reject(new Error(`${title} did not answer the prototype probe`)),
                30_000,
              );
              // A worker that exits meanwhile (a pool replacing one) has nothing left to look at.
              gone.set(sessionId, () => {
                clearTimeout(timer);
                resolve(undefined);
              });
              pending.set(sessionId, (answer) => {
                clearTimeout(timer);
                try {
                  resolve(parse(title, answer));
                } catch (e) {
                  reject(e);
                }
              });
              session
                .post('NodeWorker.sendMessageToWorker', {
                  sessionId,
                  message: JSON.stringify({
                    id: 1,
                    method: 'Runtime.evaluate',
                    params: { expression: PROBE, returnByValue: true },
                  }),
                })
                .catch(reject);
            }),
        ),
      );
      return [main, ...answers.filter((a) => a !== undefined)];
    } finally {
      await session.post('NodeWorker.disable').catch(() => {});
    }
  } finally {
    session.disconnect();
  }
};
