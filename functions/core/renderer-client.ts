/**
 * How the API side reaches the renderer in the cloud: a synchronous Lambda invoke of the
 * renderer function (RENDERER_FUNCTION_NAME). Locally the stack hands its in-process renderer to
 * the pdf resource instead, so puppeteer never enters an API bundle.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Renderer, RenderResult } from '../domain/ports.js';
import type { AwsConfig } from './config.js';
import { createLambdaClientOptions } from './runtime.js';
import { traced } from './tracing.js';

const failed = (message: string): RenderResult => ({ ok: false, code: 'PDF_RENDERING_FAILED', message });

export const createLambdaRenderer = (functionName: string, aws: AwsConfig): Renderer => {
  // One attempt. A renderer over its reserved concurrency refuses the invoke at once
  // (TooManyRequestsException); the SDK's retries would wait up to 2 s and try again, and a retry
  // that then renders for the renderer's whole timeout ends after the pdf function's. Refused, the
  // call throws and the render fails cleanly (PDF_RENDERING_FAILED, its quota unit given back),
  // which the caller may retry.
  const client = traced(new LambdaClient({ ...createLambdaClientOptions(aws), maxAttempts: 1 }));
  return {
    async render(request) {
      const out = await client.send(
        new InvokeCommand({
          FunctionName: functionName,
          Payload: new TextEncoder().encode(JSON.stringify(request)),
        }),
      );
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
  };
};
