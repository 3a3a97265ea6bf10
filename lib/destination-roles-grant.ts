/**
 * The one way a function may reach into a customer's AWS account (issue 36): sts:AssumeRole on
 * IAM roles, and only with an external id of the service's (DESTINATION_EXTERNAL_ID_PREFIX, a
 * condition on sts:ExternalId). The customer's role trusts the service's account with the exact
 * id of their destination (their trust policy, docs/api/destinations.md): the two conditions
 * together are AWS's confused-deputy pattern. Nothing else of the customer's account is granted
 * here: S3 rights in their bucket come with the assumed role's temporary credentials.
 */
import { Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { DESTINATION_EXTERNAL_ID_PREFIX } from '../functions/wiring.js';

/** Roles of any account: a customer's role is named at run time (POST /v1/destinations). */
export const DESTINATION_ROLES_RESOURCE = 'arn:aws:iam::*:role/*';

export const grantDestinationRoles = (fn: LambdaFunction): void => {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['sts:AssumeRole'],
      resources: [DESTINATION_ROLES_RESOURCE],
      conditions: {
        // Both: a request with no external id at all matches no StringLike, and Null refuses it
        // explicitly, so the grant never assumes a role that trusts the account without one.
        StringLike: { 'sts:ExternalId': `${DESTINATION_EXTERNAL_ID_PREFIX}*` },
        Null: { 'sts:ExternalId': 'false' },
      },
    }),
  );
  if (fn.role) {
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${DESTINATION_ROLES_RESOURCE}]`,
      reason:
        "Destinations' roles are customers' roles in their own accounts, named at run time; sts:AssumeRole " +
        `is allowed only with an external id starting ${DESTINATION_EXTERNAL_ID_PREFIX} (sts:ExternalId ` +
        "condition), which the customer's trust policy requires exactly.",
    });
  }
};
