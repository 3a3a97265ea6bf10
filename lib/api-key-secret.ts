/**
 * The server-side key for API key digests: only HMAC-SHA256(secret, key) is stored, never a key.
 * Secrets Manager generates it at deploy time, so it never appears in the template, the CDK
 * output or the repository; the functions read it once per cold start.
 */
import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';

export interface ApiKeySecretProps {
  /**
   * Keep the secret when the stack is deleted. Losing it makes every issued API key unusable
   * (their stored digests can no longer be matched).
   * @default true
   */
  readonly retainOnDelete?: boolean;
}

export class ApiKeySecret extends Secret {
  constructor(scope: Construct, id: string, props: ApiKeySecretProps = {}) {
    super(scope, id, {
      description: 'HMAC-SHA256 key for API key digests (pdf render service)',
      // 64 characters from 62 symbols: about 380 bits, more than SHA-256's block needs.
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy: (props.retainOnDelete ?? true) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotating this key would silently revoke every API key: only HMAC digests of keys are stored, so ' +
        'old digests cannot be recomputed under a new key. Rotation needs a dual-key scheme in the API first.',
    });
  }
}
