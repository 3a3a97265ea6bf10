/**
 * The API's side of a renderer invoke, against a local endpoint that answers as Lambda does when
 * the renderer is at its reserved concurrency or has crashed. A refused invoke answers at once,
 * after one attempt, SERVICE_BUSY (503 with Retry-After, as the local renderer at capacity), instead
 * of retrying into the pdf function's timeout.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLambdaRenderer } from '../../functions/adapters/lambda/renderer-client.js';
import type { AwsConfig } from '../../functions/core/config.js';
import type { RenderRequest } from '../../functions/domain/common/ports.js';
import { controlMs, describeBound, type PaceBound, paceBound, since } from '../helpers/timing.js';

type Answer = (res: ServerResponse) => void;

let close: (() => void) | undefined;
afterEach(() => close?.());

/** A Lambda endpoint that gives every invoke the same answer, and counts them. */
const lambdaEndpoint = async (answer: Answer) => {
  const calls: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    calls.push(req.url ?? '');
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () => server.close();
  const aws: AwsConfig = {
    region: 'eu-west-1',
    dynamoDbEndpoint: undefined,
    s3Endpoint: undefined,
    lambdaEndpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sqsEndpoint: undefined,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  };
  return { calls, renderer: createLambdaRenderer('renderer', aws), url: aws.lambdaEndpoint as string };
};

const request = {} as RenderRequest;

describe('the Lambda renderer client', () => {
  it('answers SERVICE_BUSY after one attempt when Lambda refuses the invoke for concurrency', async () => {
    const { calls, renderer, url } = await lambdaEndpoint((res) => {
      res.writeHead(429, {
        'Content-Type': 'application/json',
        'x-amzn-errortype': 'TooManyRequestsException',
      });
      res.end(
        JSON.stringify({
          Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
          Type: 'User',
          message: 'Rate Exceeded.',
        }),
      );
    });
    // The control: one round trip to the same endpoint, without the SDK.
    const control = await controlMs(async () => (await fetch(url, { method: 'POST', body: '{}' })).text());
    calls.splice(0);
    const started = performance.now();
    expect(await renderer.render(request)).toEqual({
      ok: false,
      code: 'SERVICE_BUSY',
      message: 'The renderer is busy with other renders; try again in 1 s.',
      retryAfterSeconds: 1,
    });
    expect(calls).toHaveLength(1);
    // At once: no wait before an answer (a retry's backoff would be one).
    const ms = since(started);
    const bound: PaceBound = { expectedMs: 0, slackMs: 1000, controlMs: control, factor: 50 };
    expect(ms, describeBound(ms, bound)).toBeLessThan(paceBound(bound));
  });

  it('answers a crashed renderer as a failed render, without its error text', async () => {
    const { calls, renderer } = await lambdaEndpoint((res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Amz-Function-Error': 'Unhandled' });
      res.end(JSON.stringify({ errorType: 'Runtime.OutOfMemory', errorMessage: 'secret internals' }));
    });
    const result = await renderer.render(request);
    expect(result).toEqual({
      ok: false,
      code: 'PDF_RENDERING_FAILED',
      message: 'The renderer failed before producing a PDF.',
    });
    expect(calls).toHaveLength(1);
  });
});
