/**
 * The asset routes (issue 40): an account's images and fonts, which its templates name with
 * `asset('<name>')`. Writing takes a session (the dashboard); reading and listing take a session
 * or an API key (a deploy script can check what a template will find). The body of a PUT is the
 * file itself, with its Content-Type.
 */
import { z } from 'zod';
import { ASSET_TYPES } from '../domain/assets/assets.js';
import { KEY_OR_SESSION, resource, route, SESSION_ONLY } from '../route-declaration.js';
import { PARTITION_PREFIXES } from '../table.js';

const timestamp = z.string().describe('ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z');

export const assetSchema = z.object({
  name: z.string().describe("what a template names it by: {{ asset('<name>') }}"),
  kind: z.enum(['image', 'font']),
  content_type: z
    .enum(Object.keys(ASSET_TYPES) as [keyof typeof ASSET_TYPES])
    .describe('as read from the bytes'),
  size_bytes: z.number().int(),
  sha256: z.string().describe('SHA-256 of the bytes, hex'),
  created_at: timestamp,
});

const asset = { name: 'Asset', schema: assetSchema };
const assetWithLink = {
  name: 'AssetWithLink',
  schema: assetSchema.extend({
    download_url: z.string().describe('a presigned link to the file, valid 15 minutes'),
  }),
};

export const assetsResource = resource({
  name: 'assets',
  description: "The assets API: an account's images and fonts, named by templates with asset()",
  needs: {
    // Asset items and the account's asset usage (ASSET#, ASSET_USAGE), in the account's partition.
    table: {
      actions: [
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
      ],
      partitions: [PARTITION_PREFIXES.account],
    },
    assets: 'manage',
  },
  routes: {
    putAsset: route({
      method: 'PUT',
      path: '/v1/assets/{name}',
      credentials: SESSION_ONLY,
      rawBody: {
        description:
          'The file itself (at most 4 MiB; 50 MiB an account): its type is read from its bytes and must match Content-Type. An SVG with a script, an event attribute or a link to another file is refused.',
        mediaTypes: Object.keys(ASSET_TYPES),
      },
      summary: 'Upload an image or a font under a name (replacing one of that name)',
      success: { status: 200, description: 'the asset', body: asset },
      errors: ['INVALID_ASSET', 'ASSET_TOO_LARGE', 'ASSET_QUOTA_EXCEEDED', 'ASSET_LIMIT_REACHED'],
    }),
    listAssets: route({
      method: 'GET',
      path: '/v1/assets',
      credentials: KEY_OR_SESSION,
      summary: "The caller's assets, by name",
      success: { status: 200, description: 'assets', body: { ...asset, array: true } },
      errors: [],
    }),
    getAsset: route({
      method: 'GET',
      path: '/v1/assets/{name}',
      credentials: KEY_OR_SESSION,
      summary: "An asset, with a link to its file (another account's is not found)",
      success: { status: 200, description: 'the asset', body: assetWithLink },
      errors: ['ASSET_NOT_FOUND'],
    }),
    deleteAsset: route({
      method: 'DELETE',
      path: '/v1/assets/{name}',
      credentials: SESSION_ONLY,
      summary: 'Delete an asset: renders naming it find nothing from now on',
      success: { status: 200, description: 'the asset as it was', body: asset },
      errors: ['ASSET_NOT_FOUND'],
    }),
  },
});
