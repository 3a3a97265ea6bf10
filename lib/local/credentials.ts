/**
 * Dummy credentials: the SDK insists on signing. Neither emulator checks SigV4 signatures, but
 * s3rver knows exactly one access key id, `S3RVER`. A module of its own (stack.ts re-exports it),
 * so that a test process that only talks to a stack elsewhere does not load the stack's modules.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
