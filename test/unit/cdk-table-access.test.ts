/**
 * Least privilege on the table, per function (issue 42): each API function's role allows exactly
 * the actions its resource declares (functions/<resource>/routes.ts) plus what authentication
 * needs, scoped to partition families where declared; each consumer's exactly its entry's. Read
 * from the synthesized template, for every resource of the route table and every consumer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { consumers } from '../../functions/consumers.js';
import { meResource } from '../../functions/me/routes.js';
import { AUTHENTICATION_TABLE_ACCESS, tableAccessOf } from '../../functions/route-declaration.js';
import { resources } from '../../functions/routes.js';
import { PARTITION_PREFIXES, TABLE_WRITE_ACTIONS } from '../../functions/table.js';
import { usageResource } from '../../functions/usage/routes.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

/** What grantReadWriteData allows on a table (aws-cdk-lib's dynamodb perms). */
const READ_WRITE = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
  'dynamodb:DescribeTable',
  'dynamodb:GetItem',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:UpdateItem',
];

describe('table access per function', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack();
  });

  /** The role's statements that name a dynamodb action. */
  const tableStatements = (fnId: string): Json[] => {
    const fn: Json = s.template.findResources('AWS::Lambda::Function')[fnId];
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    return Object.values(s.template.findResources('AWS::IAM::Policy'))
      .filter((p: Json) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
      .flatMap((p: Json) => p.Properties.PolicyDocument.Statement)
      .filter((st: Json) => [st.Action].flat().some((a: string) => a.startsWith('dynamodb:')));
  };
  const actionsOf = (statements: Json[]): string[] =>
    [...new Set(statements.flatMap((st) => [st.Action].flat() as string[]))].sort();
  const apiFunctionId = (name: string) => s.logicalId(s.stack.api.functions.get(name) as never);

  it.each(resources.map((r) => [r.name, r] as const))(
    '%s: exactly the actions its declaration and authentication need',
    (_name, r) => {
      const access = tableAccessOf(r);
      const statements = tableStatements(apiFunctionId(r.name));
      if (access === undefined) return expect(statements).toEqual([]);
      if (access === 'readWrite') return expect(actionsOf(statements)).toEqual(READ_WRITE);
      expect(actionsOf(statements)).toEqual([...access.actions].sort());
      if (access.partitions) {
        // Every statement on the table is held to the partition families, on the table alone.
        const table = { 'Fn::GetAtt': [s.logicalId(s.stack.table), 'Arn'] };
        for (const st of statements) {
          expect(st.Resource).toEqual(table);
          expect(st.Condition).toEqual({
            'ForAllValues:StringLike': {
              'dynamodb:LeadingKeys': access.partitions.map((p) => `${p}*`),
            },
          });
        }
      }
    },
  );

  it.each([meResource, usageResource].map((r) => [r.name, r] as const))(
    "%s reads only: no write of its own, only authentication's (an account's first session, a key's last use), on an account's and the API keys' partitions",
    (_name, r) => {
      const own = r.needs.table;
      expect(own).not.toBe('readWrite');
      if (own === 'readWrite') return;
      expect(own.actions.filter((a) => TABLE_WRITE_ACTIONS.includes(a))).toEqual([]);
      const actions = actionsOf(tableStatements(apiFunctionId(r.name)));
      expect(
        actions.filter((a) => !(AUTHENTICATION_TABLE_ACCESS.actions as readonly string[]).includes(a)),
      ).toEqual(
        own.actions.filter((a) => !(AUTHENTICATION_TABLE_ACCESS.actions as readonly string[]).includes(a)),
      );
      expect(actions).not.toContain('dynamodb:DeleteItem');
      expect(actions).not.toContain('dynamodb:BatchWriteItem');
      expect(actions).not.toContain('dynamodb:Scan');
      const [statement] = tableStatements(apiFunctionId(r.name));
      expect(statement.Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys'].sort()).toEqual(
        [`${PARTITION_PREFIXES.account}*`, `${PARTITION_PREFIXES.apiKey}*`].sort(),
      );
    },
  );

  it.each(consumers.map((c) => [c.name, c] as const))(
    'consumer %s: exactly its entry’s actions',
    (_name, c) => {
      const statements = tableStatements(s.logicalId(s.stack.consumer(c.name).function));
      if (c.needs.table === undefined) return expect(statements).toEqual([]);
      expect(actionsOf(statements)).toEqual(
        c.needs.table === 'readWrite' ? READ_WRITE : [...c.needs.table].sort(),
      );
    },
  );

  it('passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});
