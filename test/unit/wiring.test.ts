/**
 * The wiring declaration (functions/wiring.ts) and the handler map the local stack makes its
 * handlers from (functions/handlers.ts): data both sides read, checked without AWS.
 */
import { describe, expect, it } from 'vitest';
import { readResourceConfig } from '../../functions/core/config.js';
import { handlerFactories, servedResources } from '../../functions/handlers.js';
import { wiringOf } from '../../functions/route-declaration.js';
import { FALLBACK_RESOURCE, resources } from '../../functions/routes.js';
import { BINDING_NAMES, BINDINGS, bindingEnvironment } from '../../functions/wiring.js';
import { readLocalOptions } from '../../lib/local/options.js';

describe('the handler map', () => {
  it('has a factory for every resource of the route table and the fallback, and nothing else', () => {
    expect([...handlerFactories.keys()].sort()).toEqual(
      [...resources.map((r) => r.name), FALLBACK_RESOURCE].sort(),
    );
    expect(servedResources().sort()).toEqual([...handlerFactories.keys()].sort());
  });
});

describe('the wiring declaration', () => {
  it('writes a binding’s variables by the value each carries', () => {
    expect(bindingEnvironment('userPool', { userPoolId: 'pool', clientIds: 'a,b' })).toEqual({
      COGNITO_USER_POOL_ID: 'pool',
      COGNITO_CLIENT_ID: 'a,b',
    });
    expect(bindingEnvironment('table', { tableName: 't' })).toEqual({ TABLE_NAME: 't' });
  });

  it('is what the handlers read back: each binding a resource has is read from its variables', () => {
    const pdf = resources.find((r) => r.name === 'pdf');
    if (!pdf) throw new Error('no pdf resource');
    const wiring = wiringOf(pdf);
    expect(BINDING_NAMES.every((b) => typeof wiring[b] === 'boolean')).toBe(true);
    const env = {
      ...bindingEnvironment('table', { tableName: 'the-table' }),
      ...bindingEnvironment('userPool', { userPoolId: 'us-east-1_pool', clientIds: 'client' }),
      ...bindingEnvironment('apiKeySecret', { secretId: 'arn:secret' }),
      ...bindingEnvironment('pdfBucket', { bucketName: 'the-bucket' }),
      ...bindingEnvironment('renderer', { functionName: 'the-renderer' }),
      ...bindingEnvironment('renderQueue', { queueUrl: 'https://sqs.example/1/the-queue' }),
    };
    const config = readResourceConfig(wiring, env);
    expect(config).toMatchObject({
      tableName: 'the-table',
      bucketName: 'the-bucket',
      rendererFunctionName: 'the-renderer',
      renderQueueUrl: 'https://sqs.example/1/the-queue',
      auth: { userPoolId: 'us-east-1_pool', clientIds: ['client'] },
      apiKeySecret: { kind: 'secretsManager', secretId: 'arn:secret' },
    });
    // A missing binding variable fails fast with its name.
    const { [BINDINGS.table.tableName]: _dropped, ...withoutTable } = env;
    expect(() => readResourceConfig(wiring, withoutTable)).toThrow(BINDINGS.table.tableName);
  });
});

describe('the local options', () => {
  it('reads RENDERER_SPARE_SESSIONS as 0 or 1, and refuses anything else with its name', () => {
    expect(readLocalOptions({}).rendererSpareSessions).toBe(1);
    expect(readLocalOptions({ RENDERER_SPARE_SESSIONS: '0' }).rendererSpareSessions).toBe(0);
    expect(readLocalOptions({ RENDERER_SPARE_SESSIONS: '1' }).rendererSpareSessions).toBe(1);
    expect(() => readLocalOptions({ RENDERER_SPARE_SESSIONS: 'yes' })).toThrow('RENDERER_SPARE_SESSIONS');
  });
});
