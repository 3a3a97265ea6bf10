/**
 * How the API side reaches the renderer in the cloud: a synchronous Lambda invoke of the
 * renderer function (RENDERER_FUNCTION_NAME). Locally the stack hands its in-process renderer to
 * the pdf resource instead, so puppeteer never enters an API bundle.
 */
import {
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
  TooManyRequestsException,
} from '@aws-sdk/client-lambda';
import type { AwsConfig } from '../../core/config.js';
import { traced } from '../../core/tracing.js';
import type { Renderer, RenderResult, RunResults } from '../../domain/common/ports.js';
import { clientOptions } from '../client-options.js';

const failed = (message: string): RenderResult => ({ ok: false, code: 'PDF_RENDERING_FAILED', message });

/** Lambda's Retry-After when it gives one (seconds), else 1 s: a throttle clears as renders end. */
const busy = (retryAfter: string | undefined): RenderResult => {
  const given = Number(retryAfter);
  const retryAfterSeconds = Number.isInteger(given) && given >= 1 && given <= 60 ? given : 1;
  return {
    ok: false,
    code: 'SERVICE_BUSY',
    message: `The renderer is busy with other renders; try again in ${retryAfterSeconds} s.`,
    retryAfterSeconds,
  };
};

export const createLambdaRenderer = (functionName: string, aws: AwsConfig): Renderer => {
  // One attempt. A renderer over its reserved concurrency refuses the invoke at once
  // (TooManyRequestsException); the SDK's retries would wait up to 2 s and try again, and a retry
  // that then renders for the renderer's whole timeout ends after the pdf function's. Refused, the
  // render answers as the local renderer does at capacity: SERVICE_BUSY (503 with Retry-After),
  // its quota unit given back, for the caller to retry.
  const client = traced(new LambdaClient({ ...clientOptions(aws, aws.lambdaEndpoint), maxAttempts: 1 }));
  const renderer: Renderer = {
    async render(request) {
      let out: InvokeCommandOutput;
      try {
        out = await client.send(
          new InvokeCommand({
            FunctionName: functionName,
            Payload: new TextEncoder().encode(JSON.stringify(request)),
          }),
        );
      } catch (e) {
        if (e instanceof TooManyRequestsException) return busy(e.retryAfterSeconds);
        throw e;
      }
      // A FunctionError means the renderer crashed or ran out of time or memory: its payload is an
      // internal error description and is not shown to the caller. Its timeout is told apart.
      if (out.FunctionError || !out.Payload) {
        const description = out.Payload ? new TextDecoder().decode(out.Payload) : '';
        return /Task timed out|Sandbox\.Timedout/.test(description)
          ? {
              ok: false,
              code: 'PDF_RENDERING_TIMEOUT',
              message: "The render did not finish within the renderer's time limit.",
            }
          : failed('The renderer failed before producing a PDF.');
      }
      return JSON.parse(new TextDecoder().decode(out.Payload)) as RenderResult;
    },

    /**
     * A batch run (issue 43): one invoke of the renderer with `{ run }` (renderer/handler.ts), its
     * items in one warm renderer, one context. A run over Lambda's request payload renders its
     * items one invoke each. A refused invoke leaves every item unstarted (back to the queue); a
     * renderer that crashed or timed out fails every item as a single render's crash (retried):
     * which item was slow is not known, so none is failed for good by it.
     */
    async renderRun(run) {
      const payload = new TextEncoder().encode(JSON.stringify({ run }));
      if (payload.byteLength > MAX_RUN_PAYLOAD_BYTES) {
        const results: RenderResult[] = [];
        for (const request of run.requests) results.push(await renderer.render(request));
        return results;
      }
      let out: InvokeCommandOutput;
      try {
        out = await client.send(new InvokeCommand({ FunctionName: functionName, Payload: payload }));
      } catch (e) {
        if (e instanceof TooManyRequestsException) return run.requests.map(() => null);
        throw e;
      }
      if (out.FunctionError || !out.Payload) {
        return run.requests.map(() => failed('The renderer failed before producing a PDF.'));
      }
      const { results } = JSON.parse(new TextDecoder().decode(out.Payload)) as { results: RunResults };
      return results;
    },
  };
  return renderer;
};

/** Lambda's synchronous request payload is at most 6 MB. */
const MAX_RUN_PAYLOAD_BYTES = 6_000_000;
