/**
 * What `cdk synth` loads: the CDK app reads the route table (functions/routes.ts) and the table's
 * shape, which must not drag runtime code in with them: no DynamoDB client, which only the
 * adapters (functions/adapters/dynamodb) import. esbuild resolves the app's import graph as synth
 * would load it (the project's own files followed, packages left external but recorded); the
 * pdf Lambda's graph is the control that shows the check finds such an import where there is one.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const DYNAMODB = ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb'];

/** Every package `entry` imports through the project's own files, with the file that imports it. */
const packagesImportedBy = async (entry: string): Promise<Map<string, string>> => {
  const { metafile } = await build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const imported = new Map<string, string>();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    for (const record of input.imports) if (record.external) imported.set(record.path, file);
  }
  return imported;
};

const dynamoDbImports = (imported: Map<string, string>) =>
  [...imported].filter(([path]) => DYNAMODB.some((p) => path === p || path.startsWith(`${p}/`)));

describe('cdk synth', () => {
  it('loads no DynamoDB client code: the app reads routes and table as data', async () => {
    const imported = await packagesImportedBy('bin/app.ts');
    expect(imported.has('aws-cdk-lib')).toBe(true); // the graph was walked
    expect(dynamoDbImports(imported)).toEqual([]);
  });

  it('(control) finds the DynamoDB client in a Lambda that uses it', async () => {
    const imported = await packagesImportedBy('functions/pdf/handler.ts');
    expect(dynamoDbImports(imported).map(([path]) => path)).toEqual(expect.arrayContaining(DYNAMODB));
  });
});
