/**
 * How the API side reaches the renderer. In the cloud: a synchronous Lambda invoke of the
 * renderer function (named by RENDERER_FUNCTION_NAME). Locally: the local stack registers an
 * in-process renderer before it loads any handler, so puppeteer never enters an API bundle.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Renderer, RenderRequest, RenderResult } from '../renderer/contract.js';
import type { AwsConfig } from './config.js';

let localRenderer: Renderer | undefined;

/** Local stack only: the renderer that handlers use when no renderer function is configured. */
export const registerLocalRenderer = (renderer: Renderer): void => {
  localRenderer = renderer;
};

const failed = (message: string): RenderResult => ({ ok: false, code: 'PDF_RENDERING_FAILED', message });

export const createLambdaRenderer = (functionName: string, aws: AwsConfig): Renderer => {
  const client = new LambdaClient({
    region: aws.region,
    ...(aws.lambdaEndpoint ? { endpoint: aws.lambdaEndpoint } : {}),
  });
  return {
    async render(request: RenderRequest): Promise<RenderResult> {
      const out = await client.send(
        new InvokeCommand({
          FunctionName: functionName,
          Payload: new TextEncoder().encode(JSON.stringify(request)),
        }),
      );
      // A FunctionError means the renderer crashed or ran out of time or memory: its payload is an
      // internal error description and is not shown to the caller.
      if (out.FunctionError || !out.Payload) return failed('The renderer failed before producing a PDF.');
      return JSON.parse(new TextDecoder().decode(out.Payload)) as RenderResult;
    },
  };
};

/** The renderer for this process: the Lambda when configured, else the registered local one. */
export const resolveRenderer = (functionName: string | undefined, aws: AwsConfig): Renderer => {
  if (functionName) return createLambdaRenderer(functionName, aws);
  return {
    render(request) {
      if (!localRenderer) {
        throw new Error('no renderer: set RENDERER_FUNCTION_NAME, or register a local renderer first');
      }
      return localRenderer.render(request);
    },
  };
};
