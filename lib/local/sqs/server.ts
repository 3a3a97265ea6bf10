/**
 * The SQS JSON protocol (`POST /`, `X-Amz-Target: AmazonSQS.<Action>`,
 * `application/x-amz-json-1.0`) in front of the local queues (queues.ts): the actions the service
 * and its local event source mapping use, answered as SQS answers them, so that
 * @aws-sdk/client-sqs talks to it unchanged (AWS_ENDPOINT_URL_SQS). Signatures are not checked:
 * the server listens on loopback only, like dynalite and s3rver.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOCAL_ACCOUNT, type LocalQueues, openLocalQueues, QueueError, queueArn } from './queues.js';

type Body = Record<string, unknown>;

/** The query-protocol code SDKs map JSON errors back to (the `x-amzn-query-error` header). */
const QUERY_CODES: Readonly<Record<string, string>> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
};

const readBody = async (req: IncomingMessage): Promise<Body> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 2 * 1024 * 1024) throw new QueueError('InvalidParameterValue', 'request too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Body;
  } catch {
    // answered below
  }
  throw new QueueError('InvalidParameterValue', 'the body must be a JSON object');
};

const str = (body: Body, name: string): string => {
  const v = body[name];
  if (typeof v !== 'string' || v === '') throw new QueueError('MissingParameter', `${name} is required`);
  return v;
};

const optionalNumber = (body: Body, name: string): number | undefined => {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new QueueError('InvalidParameterValue', `${name} must be a number`);
  return n;
};

const optionalString = (body: Body, name: string): string | undefined => {
  const v = body[name];
  return typeof v === 'string' ? v : undefined;
};

/** The queue a QueueUrl names: its last path segment (the host may be the endpoint's or the URL's). */
const queueName = (body: Body): string => {
  const url = str(body, 'QueueUrl');
  const name = url.split('/').filter(Boolean).at(-1);
  if (!name) throw new QueueError('QueueDoesNotExist', `The specified queue ${url} does not exist.`);
  return name;
};

interface Entry {
  readonly Id: string;
  readonly [key: string]: unknown;
}

const entries = (body: Body): Entry[] => {
  const list = body.Entries;
  if (!Array.isArray(list) || list.length === 0 || list.length > 10) {
    throw new QueueError('InvalidParameterValue', 'Entries must hold 1 to 10 entries');
  }
  return list as Entry[];
};

/** Each entry of a batch action: its own success or failure, as SQS reports them. */
const batch = (list: Entry[], each: (entry: Entry) => Record<string, unknown>) => {
  const Successful: Record<string, unknown>[] = [];
  const Failed: Record<string, unknown>[] = [];
  for (const entry of list) {
    try {
      Successful.push({ Id: entry.Id, ...each(entry) });
    } catch (e) {
      if (!(e instanceof QueueError)) throw e;
      Failed.push({ Id: entry.Id, Code: e.code, Message: e.message, SenderFault: true });
    }
  }
  return { Successful, Failed };
};

export interface LocalSqsServer {
  readonly server: Server;
  /** e.g. `http://127.0.0.1:4566`: set once listening. */
  endpoint: string;
  queueUrl(name: string): string;
  /** Ends long polls under way (the HTTP server is closed by its owner). */
  close(): Promise<void>;
}

export const createLocalSqsServer = (queues: LocalQueues): LocalSqsServer => {
  const aborts = new AbortController();
  // The server is made below, once the actions it answers exist.
  const self = {
    endpoint: '',
    queueUrl: (name) => `${self.endpoint}/${LOCAL_ACCOUNT}/${name}`,
    async close() {
      aborts.abort();
      await queues.close();
    },
  } as Omit<LocalSqsServer, 'server'> & { server?: Server };

  const actions: Readonly<Record<string, (body: Body) => Promise<unknown> | unknown>> = {
    CreateQueue: (b) => {
      const name = str(b, 'QueueName');
      queues.createQueue(name, b.Attributes as Record<string, string> | undefined);
      return { QueueUrl: self.queueUrl(name) };
    },
    GetQueueUrl: (b) => {
      const name = str(b, 'QueueName');
      if (!queues.has(name))
        throw new QueueError('QueueDoesNotExist', `The specified queue ${name} does not exist.`);
      return { QueueUrl: self.queueUrl(name) };
    },
    ListQueues: (b) => {
      const prefix = optionalString(b, 'QueueNamePrefix') ?? '';
      return {
        QueueUrls: queues
          .names()
          .filter((n) => n.startsWith(prefix))
          .map(self.queueUrl),
      };
    },
    DeleteQueue: (b) => {
      queues.deleteQueue(queueName(b));
      return {};
    },
    SetQueueAttributes: (b) => {
      queues.setAttributes(queueName(b), (b.Attributes ?? {}) as Record<string, string>);
      return {};
    },
    GetQueueAttributes: (b) => {
      const name = queueName(b);
      const a = queues.attributes(name);
      const counts = queues.counts(name);
      const oldest = queues.oldestSentAt(name);
      const all: Record<string, string> = {
        QueueArn: queueArn(name),
        VisibilityTimeout: String(a.VisibilityTimeout),
        DelaySeconds: String(a.DelaySeconds),
        MessageRetentionPeriod: String(a.MessageRetentionPeriod),
        ReceiveMessageWaitTimeSeconds: String(a.ReceiveMessageWaitTimeSeconds),
        ApproximateNumberOfMessages: String(counts.visible),
        ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
        ApproximateNumberOfMessagesDelayed: String(counts.delayed),
        ...(oldest !== undefined
          ? { ApproximateAgeOfOldestMessage: String(Math.floor((Date.now() - oldest) / 1000)) }
          : {}),
        ...(a.RedrivePolicy ? { RedrivePolicy: JSON.stringify(a.RedrivePolicy) } : {}),
      };
      const wanted = Array.isArray(b.AttributeNames) ? (b.AttributeNames as string[]) : ['All'];
      const Attributes = wanted.includes('All')
        ? all
        : Object.fromEntries(Object.entries(all).filter(([k]) => wanted.includes(k)));
      return { Attributes };
    },
    PurgeQueue: (b) => {
      queues.purge(queueName(b));
      return {};
    },
    SendMessage: (b) => {
      const sent = queues.send(queueName(b), str(b, 'MessageBody'), {
        delaySeconds: optionalNumber(b, 'DelaySeconds'),
        groupId: optionalString(b, 'MessageGroupId'),
      });
      return { MessageId: sent.id, MD5OfMessageBody: sent.md5 };
    },
    SendMessageBatch: (b) => {
      const name = queueName(b);
      return batch(entries(b), (e) => {
        const sent = queues.send(name, str(e, 'MessageBody'), {
          delaySeconds: optionalNumber(e, 'DelaySeconds'),
          groupId: optionalString(e, 'MessageGroupId'),
        });
        return { MessageId: sent.id, MD5OfMessageBody: sent.md5 };
      });
    },
    ReceiveMessage: async (b) => {
      const Messages = await queues.receive(queueName(b), {
        maxMessages: optionalNumber(b, 'MaxNumberOfMessages'),
        visibilityTimeout: optionalNumber(b, 'VisibilityTimeout'),
        waitSeconds: optionalNumber(b, 'WaitTimeSeconds'),
        signal: aborts.signal,
      });
      return Messages.length > 0 ? { Messages } : {};
    },
    DeleteMessage: (b) => {
      queues.delete(queueName(b), str(b, 'ReceiptHandle'));
      return {};
    },
    DeleteMessageBatch: (b) => {
      const name = queueName(b);
      return batch(entries(b), (e) => {
        queues.delete(name, str(e, 'ReceiptHandle'));
        return {};
      });
    },
    ChangeMessageVisibility: (b) => {
      queues.changeVisibility(
        queueName(b),
        str(b, 'ReceiptHandle'),
        optionalNumber(b, 'VisibilityTimeout') ?? -1,
      );
      return {};
    },
    ChangeMessageVisibilityBatch: (b) => {
      const name = queueName(b);
      return batch(entries(b), (e) => {
        queues.changeVisibility(name, str(e, 'ReceiptHandle'), optionalNumber(e, 'VisibilityTimeout') ?? -1);
        return {};
      });
    },
  };

  const answer = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': crypto.randomUUID(),
      ...headers,
    });
    res.end(text);
  };

  const fault = (res: ServerResponse, code: string, message: string, status = 400) =>
    answer(
      res,
      status,
      { __type: `com.amazonaws.sqs#${code}`, message },
      { 'x-amzn-query-error': `${QUERY_CODES[code] ?? code};${status < 500 ? 'Sender' : 'Receiver'}` },
    );

  self.server = createServer(async (req, res) => {
    try {
      const target = String(req.headers['x-amz-target'] ?? '');
      const action = target.startsWith('AmazonSQS.') ? actions[target.slice('AmazonSQS.'.length)] : undefined;
      if (req.method !== 'POST' || !action) {
        // Drain the body so the connection can be reused.
        for await (const _ of req) {
          // nothing
        }
        fault(res, 'UnknownOperationException', `unsupported operation "${target}" (the JSON protocol only)`);
        return;
      }
      answer(res, 200, await action(await readBody(req)));
    } catch (e) {
      if (e instanceof QueueError) fault(res, e.code, e.message);
      else {
        console.error('local SQS: request failed:', e);
        fault(res, 'InternalError', 'internal error', 500);
      }
    }
  });
  return self as LocalSqsServer;
};

export interface RunningLocalSqs {
  readonly endpoint: string;
  /** Tests only: to drop it without the clean close (as a SIGKILL would). */
  readonly server: Server;
  readonly queues: LocalQueues;
  queueUrl(name: string): string;
  close(): Promise<void>;
}

/** Opens the queues kept in `dir` and serves them on a free loopback port. */
export const startLocalSqs = async (dir: string): Promise<RunningLocalSqs> => {
  const queues = await openLocalQueues(dir);
  const sqs = createLocalSqsServer(queues);
  await new Promise<void>((resolve, reject) => {
    sqs.server.once('error', reject);
    sqs.server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = sqs.server.address() as AddressInfo;
  sqs.endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint: sqs.endpoint,
    server: sqs.server,
    queues,
    queueUrl: sqs.queueUrl,
    async close() {
      await sqs.close();
      sqs.server.closeAllConnections();
      await new Promise<void>((resolve) => sqs.server.close(() => resolve()));
    },
  };
};
