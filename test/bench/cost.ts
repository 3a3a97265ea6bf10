/**
 * The cost model: what 1,000 PDFs cost on AWS at list prices (us-east-1), from the measured
 * durations and the memory sizes the CDK stack sets. Prices are inputs, not fetched.
 *
 * Memory sizes are read from the stack's source (lib/renderer-function.ts's default and
 * lib/service-function.ts's default for API functions), so the model follows the stack without
 * importing CDK; cdk.json's `rendererMemorySizeMiB` context overrides the renderer's, as it does
 * in the stack.
 */
import { readFileSync } from 'node:fs';

export const PRICES = {
  region: 'us-east-1',
  lambdaX86PerGbSecond: 0.0000166667,
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  httpApiPerMillionRequests: 1.0,
  dynamoDbPerMillionWriteUnits: 0.625,
  dynamoDbPerMillionReadUnits: 0.125,
  s3PutPer1000: 0.005,
  s3GetPer1000: 0.0004,
  s3StoragePerGbMonth: 0.023,
} as const;

const ROOT = new URL('../..', import.meta.url);

const fromSource = (file: string, pattern: RegExp, fallback: number): { value: number; source: string } => {
  try {
    const match = pattern.exec(readFileSync(new URL(file, ROOT), 'utf8'));
    if (match?.[1]) return { value: Number(match[1]), source: file };
  } catch {
    // fall through
  }
  return { value: fallback, source: `${file} not readable: assumed` };
};

export interface MemorySettings {
  readonly rendererMiB: number;
  readonly apiMiB: number;
  readonly sources: readonly string[];
}

export const readMemorySettings = (): MemorySettings => {
  const renderer = fromSource(
    'lib/renderer-function.ts',
    /memorySizeMiB:\s*props\.memorySizeMiB\s*\?\?\s*(\d+)/,
    2048,
  );
  const api = fromSource(
    'lib/service-function.ts',
    /memorySize:\s*props\.memorySizeMiB\s*\?\?\s*(\d+)/,
    1024,
  );
  const sources = [
    `renderer ${renderer.value} MiB from ${renderer.source}`,
    `API ${api.value} MiB from ${api.source}`,
  ];
  let rendererMiB = renderer.value;
  try {
    const context = JSON.parse(readFileSync(new URL('cdk.json', ROOT), 'utf8')).context ?? {};
    if (typeof context.rendererMemorySizeMiB === 'number') {
      rendererMiB = context.rendererMemorySizeMiB;
      sources.push(`renderer ${rendererMiB} MiB from cdk.json context`);
    }
  } catch {
    // no cdk.json: the construct default holds
  }
  return { rendererMiB, apiMiB: api.value, sources };
};

export interface CostInputs {
  /** Renderer Lambda billed duration per PDF (ms): its render() wall time plus the invoke overhead. */
  readonly rendererMs: number;
  /** pdf Lambda billed duration per PDF (ms): the API's time for the request, renderer wait included. */
  readonly apiMs: number;
  readonly rendererMiB: number;
  readonly apiMiB: number;
  /** DynamoDB writes and reads per render, and their size in units (items under 1 KB: 1 WRU each). */
  readonly dynamoDbWrites: number;
  readonly dynamoDbReads: number;
  readonly pdfBytes: number;
  /** Days a PDF is kept (the bucket's lifecycle rule). */
  readonly retentionDays: number;
}

export interface CostPer1000 {
  readonly rendererCompute: number;
  readonly apiCompute: number;
  readonly lambdaRequests: number;
  /** Both Lambdas: compute and requests (the "modelled Lambda cost"). */
  readonly lambda: number;
  readonly apiGateway: number;
  readonly dynamoDb: number;
  readonly s3Requests: number;
  /** Lambda + API Gateway + DynamoDB + S3 requests. */
  readonly allIn: number;
  /** Not in allIn: storing each PDF for the retention period. */
  readonly s3Storage: number;
}

const billedMs = (ms: number): number => Math.max(1, Math.ceil(ms));

export const costPer1000 = (i: CostInputs): CostPer1000 => {
  const n = 1000;
  const rendererCompute =
    n * (billedMs(i.rendererMs) / 1000) * (i.rendererMiB / 1024) * PRICES.lambdaX86PerGbSecond;
  const apiCompute = n * (billedMs(i.apiMs) / 1000) * (i.apiMiB / 1024) * PRICES.lambdaArmPerGbSecond;
  // Two invocations per PDF: the pdf function and the renderer.
  const lambdaRequests = (2 * n * PRICES.lambdaPerMillionRequests) / 1e6;
  const lambda = rendererCompute + apiCompute + lambdaRequests;
  const apiGateway = (n * PRICES.httpApiPerMillionRequests) / 1e6;
  const dynamoDb =
    (n *
      (i.dynamoDbWrites * PRICES.dynamoDbPerMillionWriteUnits +
        i.dynamoDbReads * PRICES.dynamoDbPerMillionReadUnits)) /
    1e6;
  // The renderer's PUT and one download (GET) per PDF.
  const s3Requests = PRICES.s3PutPer1000 + PRICES.s3GetPer1000;
  const s3Storage = ((n * i.pdfBytes) / 1024 ** 3) * PRICES.s3StoragePerGbMonth * (i.retentionDays / 30);
  return {
    rendererCompute,
    apiCompute,
    lambdaRequests,
    lambda,
    apiGateway,
    dynamoDb,
    s3Requests,
    allIn: lambda + apiGateway + dynamoDb + s3Requests,
    s3Storage,
  };
};

export const COST_ASSUMPTIONS = [
  'us-east-1 list prices: Lambda x86 $0.0000166667/GB-s (renderer), arm64 $0.0000133334/GB-s (API), $0.20 per 1M requests; HTTP API $1.00 per 1M; DynamoDB on-demand $0.625 per 1M WRU, $0.125 per 1M RRU; S3 PUT $0.005 and GET $0.0004 per 1,000, storage $0.023 per GB-month',
  'renderer billed duration = its measured render() wall time (fresh context, load, print, page count, PUT to a loopback sink) + 5 ms invoke overhead; Lambda CPU per GB differs from this machine (a full vCPU from 1,769 MiB): durations are taken as measured here',
  'pdf function billed duration = the API request time measured in the local stack (it waits for the renderer synchronously), at its memory size',
  'DynamoDB: the writes and reads counted per render in the local stack (every item under 1 KB: 1 WRU per write, 0.5 RRU per eventually consistent read); the account read is cached for a minute per warm container',
  'S3: one PUT by the renderer and one GET (the client downloads the PDF once) per PDF; storage for the retention period and data transfer out are shown apart, not in all-in',
  'not included: free tiers, CloudWatch Logs ingestion (~1 KB of log lines per render), data transfer, Cognito, Secrets Manager, provisioned concurrency',
];
