/**
 * Where session tokens come from: a Cognito user pool and app client made for the service, or an
 * existing pool and client passed in. The API verifies the pool's RS256 ID tokens itself (with
 * aws-jwt-verify), so nothing here needs IAM: the functions only need the two ids.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  UserPool,
  type UserPoolClient,
  UserPoolEmail,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

export interface UserPoolIds {
  readonly userPoolId: string;
  /** The app client whose ID tokens the API accepts (their `aud`). */
  readonly userPoolClientId: string;
  /** More app clients whose ID tokens the API accepts: the dashboard's (lib/dashboard/dashboard.ts). */
  readonly additionalClientIds?: readonly string[];
}

/**
 * Cognito's mail (invitations, codes, password resets) through Amazon SES instead of Cognito's own
 * sender, which allows a few messages a day from no-reply@verificationemail.com. The address (or
 * its domain) must be a verified SES identity, and the SES account out of the sandbox to mail
 * anyone.
 */
export interface CognitoSesEmail {
  /** The sender, e.g. `no-reply@example.com`. */
  readonly fromEmail: string;
  /** @default none */
  readonly fromName?: string;
  /** @default the sender */
  readonly replyTo?: string;
  /**
   * The SES region, one of those Cognito supports for SES mail.
   * @default the stack's region
   */
  readonly sesRegion?: string;
  /**
   * The verified domain, when the identity is a domain rather than the address itself.
   * @default the address is the verified identity
   */
  readonly sesVerifiedDomain?: string;
}

export interface ServiceUserPoolProps {
  /**
   * Send Cognito's mail through SES.
   * @default Cognito's own sender (a few messages a day)
   */
  readonly email?: CognitoSesEmail;
  /**
   * Use this pool and app client instead of creating them. The client must issue ID tokens
   * carrying the `email` claim.
   * @default a new pool and app client
   */
  readonly existing?: UserPoolIds;
  /**
   * Let anyone sign up through the app client.
   * @default false: an administrator creates users
   */
  readonly selfSignUp?: boolean;
  /**
   * Require a second factor (TOTP) for every sign-in.
   * @default false: TOTP is offered, not required
   */
  readonly requireMfa?: boolean;
  /**
   * Keep the pool (every user account) when the stack is deleted.
   * @default true
   */
  readonly retainOnDelete?: boolean;
}

export class ServiceUserPool extends Construct implements UserPoolIds {
  readonly userPoolId: string;
  readonly userPoolClientId: string;
  /** Undefined when an existing pool was passed in. */
  readonly userPool: UserPool | undefined;
  readonly userPoolClient: UserPoolClient | undefined;

  constructor(scope: Construct, id: string, props: ServiceUserPoolProps = {}) {
    super(scope, id);
    if (props.existing) {
      this.userPoolId = props.existing.userPoolId;
      this.userPoolClientId = props.existing.userPoolClientId;
      this.userPool = undefined;
      this.userPoolClient = undefined;
      return;
    }
    const retain = props.retainOnDelete ?? true;
    const requireMfa = props.requireMfa ?? false;
    const pool = new UserPool(this, 'UserPool', {
      selfSignUpEnabled: props.selfSignUp ?? false,
      signInAliases: { email: true },
      autoVerify: { email: true },
      standardAttributes: { email: { required: true, mutable: true } },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      mfa: requireMfa ? Mfa.REQUIRED : Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      featurePlan: FeaturePlan.ESSENTIALS,
      ...(props.email ? { email: UserPoolEmail.withSES({ ...props.email }) } : {}),
      deletionProtection: retain,
      removalPolicy: retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const client = pool.addClient('AppClient', {
      // A public client (browser apps, CLIs): no secret, which they could not keep anyway.
      generateSecret: false,
      // No hosted UI or OAuth redirects: tokens come from InitiateAuth (SRP, or the admin flow).
      disableOAuth: true,
      // SRP for apps; ADMIN_USER_PASSWORD_AUTH lets an operator with IAM credentials get a
      // first token from the CLI (docs/deploy.md). No plain USER_PASSWORD_AUTH.
      authFlows: { userSrp: true, adminUserPassword: true },
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });
    this.userPool = pool;
    this.userPoolClient = client;
    this.userPoolId = pool.userPoolId;
    this.userPoolClientId = client.userPoolClientId;
    if (!requireMfa) {
      Validations.of(pool).acknowledge({
        id: 'AwsSolutions-COG2',
        reason:
          'TOTP MFA is offered to every user; requiring it is a deployment choice (requireMfa) because ' +
          'API automation uses API keys, not interactive sign-in.',
      });
    }
    Validations.of(pool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason:
        'The Plus feature plan (threat protection) is billed per monthly active user; the pool has no ' +
        'self-service sign-up by default and strong passwords. Switch featurePlan to PLUS where wanted.',
    });
  }
}
