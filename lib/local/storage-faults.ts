/**
 * A full DATA_DIR, as a laptop's disk fills: the emulators' writes fail, and the stack must answer
 * for it and keep running, then work again once space is freed. As shipped, neither emulator
 * survives it:
 * - dynalite throws a failed LevelDB write from the request's callback (`if (err) throw err`,
 *   dynalite/index.js): an uncaught `IO error: … No space left on device` ended the process. An
 *   error carrying `statusCode` and `body` is answered instead (the way dynalite answers its own
 *   API errors), so LevelDB's errors are given those. LevelDB also keeps a write error for good
 *   (its background error), so the store is reopened after one; operations wait for the reopen.
 * - s3rver writes an object through a stream without an 'error' listener: ENOSPC was an uncaught
 *   'error' event. Its putObject is replaced by one that pipes with stream.pipeline, and that
 *   answers once the object is on disk (s3rver's own answered before its write stream finished,
 *   so a GET right after the PUT could read part of the object: S3 reads after writes).
 * The faults are told to a StorageWatch, which the local API Gateway asks when an answer is a 5xx
 * (507 INSUFFICIENT_STORAGE, lib/local/http-server.ts).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, statfs, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Level } from 'level';

/** Under this much free space DATA_DIR counts as full: LevelDB's log and a PDF need about that. */
const MIN_FREE_BYTES = 1024 * 1024;
/** A write that failed for want of space this recently explains a 5xx. */
const FAULT_MEMORY_MS = 15_000;

export interface StorageWatch {
  readonly dataDir: string;
  /** An emulator's write failed: remembered when it is for want of space (or a LevelDB I/O error). */
  noteFault(error: unknown): void;
  /** DATA_DIR has (almost) no space left, or a write failed for want of it moments ago. */
  isFull(): Promise<boolean>;
}

const isOutOfSpace = (e: unknown): boolean => {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  return (
    code === 'ENOSPC' ||
    code === 'EDQUOT' ||
    code === 'LEVEL_IO_ERROR' ||
    (typeof message === 'string' && /No space left on device/i.test(message))
  );
};

export const createStorageWatch = (dataDir: string): StorageWatch => {
  let lastFaultAt = Number.NEGATIVE_INFINITY;
  return {
    dataDir: resolve(dataDir),
    noteFault(error) {
      if (isOutOfSpace(error)) lastFaultAt = Date.now();
    },
    async isFull() {
      if (Date.now() - lastFaultAt < FAULT_MEMORY_MS) return true;
      const fs = await statfs(dataDir).catch(() => undefined);
      return fs !== undefined && fs.bavail * fs.bsize < MIN_FREE_BYTES;
    },
  };
};

// ---------------------------------------------------------------------------------------------
// dynalite's LevelDB

/** Stacks' watches by their DATA_DIR: a store reports to the one whose directory holds it. */
const watches = new Set<StorageWatch>();

const watchOf = (location: string): StorageWatch | undefined => {
  for (const watch of watches) if (location.startsWith(watch.dataDir + sep)) return watch;
  return undefined;
};

/** An InternalServerError as DynamoDB answers it: the SDK retries it, then the handler fails. */
const DYNAMODB_INTERNAL_ERROR = {
  __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
  message: 'The local DynamoDB store could not complete the request',
};

type LevelDb = InstanceType<typeof Level> & { readonly location: string };
type Method = (this: LevelDb, ...args: unknown[]) => unknown;

/** The reopen in progress per store, which operations wait for. */
const reopening = new WeakMap<LevelDb, Promise<void>>();

const reopen = (db: LevelDb): Promise<void> => {
  const running = reopening.get(db);
  if (running) return running;
  // The prototype's close and open: dynalite's own close on the instance ends the store for good.
  const proto = Level.prototype as unknown as { close: Method; open: Method };
  const done = (async () => {
    await Promise.resolve(proto.close.call(db)).catch(() => {});
    await Promise.resolve(proto.open.call(db)).catch((e: unknown) => watchOf(db.location)?.noteFault(e));
  })().finally(() => reopening.delete(db));
  reopening.set(db, done);
  return done;
};

let levelGuarded = false;

/**
 * Makes LevelDB's failures answerable by dynalite and reopens a store after an I/O error. Patches
 * the Level class dynalite uses, once per process (several stacks share it); call before dynalite().
 */
export const guardLevelDb = (watch: StorageWatch): (() => void) => {
  watches.add(watch);
  const stop = () => {
    watches.delete(watch);
  };
  if (levelGuarded) return stop;
  levelGuarded = true;
  const proto = Level.prototype as unknown as Record<string, Method>;
  for (const name of ['put', 'del', 'batch', 'get', 'getMany'] as const) {
    const original = proto[name];
    if (typeof original !== 'function') continue;
    proto[name] = function (this: LevelDb, ...args: unknown[]): unknown {
      // batch() without operations is a chained batch, not a promise: left as it is.
      if (name === 'batch' && args.length === 0) return original.apply(this, args);
      const store = watchOf(this.location);
      const run = (): Promise<unknown> => Promise.resolve(original.apply(this, args));
      // A reopen in progress is waited for; a store that a reopen left closed (the disk was still
      // full) is reopened first.
      const waiting = reopening.get(this) ?? (store && this.status === 'closed' ? reopen(this) : undefined);
      const result = waiting ? waiting.then(run) : run();
      return result.catch((e: unknown) => {
        if (store && isOutOfSpace(e)) {
          store.noteFault(e);
          void reopen(this);
        }
        // dynalite turns LEVEL_DATABASE_NOT_OPEN into a plain Error it throws: never hand it that.
        const error =
          (e as { code?: unknown } | null)?.code === 'LEVEL_DATABASE_NOT_OPEN'
            ? new Error('The local DynamoDB store is closed for a reopen', { cause: e })
            : (e as object);
        throw Object.assign(error, { statusCode: 500, body: DYNAMODB_INTERNAL_ERROR });
      });
    };
  }
  return stop;
};

// ---------------------------------------------------------------------------------------------
// s3rver

interface S3rverObject {
  readonly bucket: string;
  readonly key: string;
  readonly metadata: unknown;
  readonly content: Buffer | Readable;
}

interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

/** s3rver's FilesystemStore.putObject, with its write errors handled (and the partial object removed). */
export const guardS3rverWrites = (s3: unknown, watch: StorageWatch): void => {
  const store = (s3 as { store: S3rverStore }).store;
  store.putObject = async (object) => {
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    const md5 = createHash('md5');
    let size = 0;
    try {
      await mkdir(dirname(objectPath), { recursive: true });
      if (Buffer.isBuffer(object.content)) {
        md5.update(object.content);
        size = object.content.length;
        await writeFile(objectPath, object.content);
      } else {
        const count = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            md5.update(chunk);
            size += chunk.length;
            callback(null, chunk);
          },
        });
        await pipeline(object.content, count, createWriteStream(objectPath));
      }
    } catch (e) {
      watch.noteFault(e);
      await rm(objectPath, { force: true });
      throw e;
    }
    const digest = md5.digest('hex');
    await store.putMetadata(object.bucket, object.key, object.metadata, digest).catch((e: unknown) => {
      watch.noteFault(e);
      throw e;
    });
    return { size, md5: digest };
  };
};
