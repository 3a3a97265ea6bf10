/**
 * The one way a function is allowed to touch the deployment's KMS signing keys (issue 34): the
 * renderer asks kms:Sign, the signing-keys function kms:GetPublicKey (to check a key against its
 * certificate when it is registered), each on this account's keys in this region that carry the
 * signing tag only. Keys are registered at run time (POST /v1/signing-keys), so they are named by
 * the tag, not by ARN; an untagged key (any other use of KMS in the account) refuses the call.
 */
import { Stack, Token, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SIGNING_KEY_TAG } from '../functions/wiring.js';

export const grantTaggedSigningKeys = (fn: LambdaFunction, action: 'kms:Sign' | 'kms:GetPublicKey'): void => {
  const keys = Stack.of(fn).formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: [action],
      resources: [keys],
      conditions: { StringEquals: { [`aws:ResourceTag/${SIGNING_KEY_TAG.key}`]: SIGNING_KEY_TAG.value } },
    }),
  );
  if (fn.role) {
    Validations.of(fn.role).acknowledge({
      // cdk-nag names the resource as the template writes it: the ARN, or its tokens' names.
      id: `AwsSolutions-IAM5[Resource::${Token.isUnresolved(keys) ? 'arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*' : keys}]`,
      reason:
        `Signing keys are registered at run time; ${action} is limited to keys of this account and region tagged ` +
        `${SIGNING_KEY_TAG.key}=${SIGNING_KEY_TAG.value} (aws:ResourceTag condition).`,
    });
  }
};
