/**
 * The deliverer's reach into customers' accounts (issue 36), in the synthesized template: only the
 * destinations function may call STS, only sts:AssumeRole, only with an external id of the
 * service's prefix; no role of the stack has anything else outside the stack's account.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DESTINATION_EXTERNAL_ID_PREFIX } from '../../functions/wiring.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const statementsOfRole = (s: Synthesized, roleId: string): Json[] => {
  const attached = Object.values(s.template.findResources('AWS::IAM::Policy')).filter((p: Json) =>
    (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId),
  );
  const inline = s.template.findResources('AWS::IAM::Role')[roleId]?.Properties.Policies ?? [];
  return [...attached, ...inline.map((p: Json) => ({ Properties: p }))].flatMap(
    (p: Json) => p.Properties.PolicyDocument.Statement,
  );
};

describe("the deliverer's role", () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthServiceStack();
  });

  it("may sts:AssumeRole only with the service's external id, and it alone may call STS", () => {
    const functions = s.template.findResources('AWS::Lambda::Function');
    const roleOf = (resource: string) =>
      functions[s.logicalId(s.stack.api.functions.get(resource) as never)]?.Properties.Role['Fn::GetAtt'][0];
    const stsStatements = Object.keys(s.template.findResources('AWS::IAM::Role'))
      .map(
        (roleId) =>
          [
            roleId,
            statementsOfRole(s, roleId).filter((st) =>
              [st.Action].flat().some((a: string) => a.startsWith('sts:')),
            ),
          ] as const,
      )
      .filter(([, statements]) => statements.length > 0);
    expect(Object.fromEntries(stsStatements)).toEqual({
      [roleOf('destinations')]: [
        {
          Effect: 'Allow',
          Action: 'sts:AssumeRole',
          Resource: 'arn:aws:iam::*:role/*',
          Condition: {
            StringLike: { 'sts:ExternalId': `${DESTINATION_EXTERNAL_ID_PREFIX}*` },
            Null: { 'sts:ExternalId': 'false' },
          },
        },
      ],
    });
  });

  it('passes cdk-nag: the wildcard role resource is acknowledged with its reason, nothing else is found', () => {
    expect(s.nagFindings).toEqual([]);
  });

  it('has no S3 or other grant outside the stack: every other statement names the stack’s own resources', () => {
    const functions = s.template.findResources('AWS::Lambda::Function');
    const roleId =
      functions[s.logicalId(s.stack.api.functions.get('destinations') as never)]?.Properties.Role[
        'Fn::GetAtt'
      ][0];
    const statements = statementsOfRole(s, roleId);
    const s3 = statements.filter((st) => [st.Action].flat().some((a: string) => a.startsWith('s3:')));
    expect(s3).toEqual([]);
    // Wildcard account resources: only the AssumeRole statement.
    const anyAccount = statements.filter((st) => JSON.stringify(st.Resource ?? '').includes('::*:'));
    expect(anyAccount.map((st) => st.Action)).toEqual(['sts:AssumeRole']);
  });
});
