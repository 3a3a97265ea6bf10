/**
 * The signing-keys resource's Lambda: its routes (routes.ts) bound to one call each into the
 * signing-key use cases. Uploaded private keys are sealed with a key derived from the API-key
 * secret, as webhook secrets are.
 */
import { awsKmsPublicKey } from '../adapters/kms/kms-public-key.js';
import { type Environment, readResourceConfig } from '../core/config.js';
import { createResourceHandler, type LambdaHandler } from '../core/http.js';
import type { KmsPublicKey } from '../domain/signing/signing-keys.js';
import { wiringOf } from '../route-declaration.js';
import * as build from '../services.js';
import { uploadOf } from './request.js';
import { signingKeysResource } from './routes.js';

/** `parts.kmsPublicKey`: the local stack's, which has no KMS; in the cloud, kms:GetPublicKey. */
export const createHandler = (
  env: Environment,
  parts: { readonly kmsPublicKey?: KmsPublicKey } = {},
): LambdaHandler => {
  const services = build.createServices(readResourceConfig(wiringOf(signingKeysResource), env), {
    kmsPublicKey: parts.kmsPublicKey ?? awsKmsPublicKey,
  });
  const keys = services.get(build.signingKeyManagement);

  return createResourceHandler(signingKeysResource, services.get(build.http)(), {
    createSigningKey: ({ principal, body }) => keys.create(principal, body.name, uploadOf(body)),
    listSigningKeys: ({ principal }) => keys.list(principal),
    getSigningKey: ({ principal, pathParameters }) => keys.get(principal, pathParameters.key_id ?? ''),
    deleteSigningKey: ({ principal, pathParameters }) => keys.delete(principal, pathParameters.key_id ?? ''),
  });
};
