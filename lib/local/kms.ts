/**
 * AWS KMS on the local stack (issue 34): there is none, so a KMS signing key cannot be registered
 * and the answer says what to do instead, unless the stack is pointed at a KMS-compatible endpoint
 * (AWS_ENDPOINT_URL_KMS, with credentials and AWS_REGION in its environment, as the AWS SDK reads
 * them): then registering and signing go through it as they go through KMS in the cloud.
 */
import { ServiceError } from '../../functions/domain/common/errors.js';
import type { KmsPublicKey } from '../../functions/domain/signing/signing-keys.js';

const refuseKmsKeys: KmsPublicKey = async () => {
  throw new ServiceError(
    'INVALID_SIGNING_KEY',
    'kms_key_arn cannot be registered on the local stack, which has no AWS KMS: register an uploaded key ' +
      '(private_key_pem and certificate_pem, or pkcs12_base64 and passphrase), or start the stack with ' +
      'AWS_ENDPOINT_URL_KMS naming a KMS-compatible endpoint',
    { details: [{ field: 'kms_key_arn', issue: 'the local stack has no AWS KMS' }] },
  );
};

/** The signing-keys handler's part: the refusal, or none (KMS's client) when an endpoint is named. */
export const localKmsParts = (env: NodeJS.ProcessEnv = process.env): { kmsPublicKey?: KmsPublicKey } =>
  env.AWS_ENDPOINT_URL_KMS ? {} : { kmsPublicKey: refuseKmsKeys };
