/**
 * CORS on the HTTP API: off unless origins are configured; then API Gateway answers preflights
 * for exactly those origins with the policy the local gateway also serves (lib/cors.ts).
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { stackPropsFromContext } from '../../lib/context-props.js';
import { corsPolicy } from '../../lib/cors.js';
import { synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
const apiOf = (s: ReturnType<typeof synthServiceStack>): any =>
  Object.values(s.template.findResources('AWS::ApiGatewayV2::Api'))[0];

describe('CORS on the HTTP API', () => {
  it('is off without the dashboard and without configured origins', () => {
    expect(
      apiOf(synthServiceStack({ props: { dashboard: false } })).Properties.CorsConfiguration,
    ).toBeUndefined();
  });

  it('allows exactly the configured origins, with the methods and headers of the policy', () => {
    const origins = ['https://dashboard.example.com'];
    const s = synthServiceStack({ props: { corsAllowedOrigins: origins, dashboard: false } });
    const policy = corsPolicy(origins);
    expect(apiOf(s).Properties.CorsConfiguration).toEqual({
      AllowOrigins: origins,
      AllowMethods: policy?.allowMethods,
      AllowHeaders: policy?.allowHeaders,
      ExposeHeaders: policy?.exposeHeaders,
      MaxAge: 600,
    });
    expect(s.nagFindings).toEqual([]);
  });

  it('refuses a wildcard or a path at synth, and reads origins from context', () => {
    expect(() => synthServiceStack({ props: { corsAllowedOrigins: ['*'] } })).toThrow(/CORS origin/);
    const app = new App({ context: { corsAllowedOrigins: 'https://a.example.com, https://b.example.com' } });
    expect(stackPropsFromContext(app.node).corsAllowedOrigins).toEqual([
      'https://a.example.com',
      'https://b.example.com',
    ]);
  });
});
