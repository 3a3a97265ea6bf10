/**
 * The Signer contract (test/contract/signer.contract.ts) on pemSigner (functions/renderer/pades.ts):
 * a PEM key and a self-signed certificate made by the openssl command, as an uploaded key would be.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { pemSigner } from '../../../functions/renderer/pades.js';
import { signerContract } from '../../contract/signer.contract.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

signerContract({
  name: 'pem',
  async create({ algorithm, commonName }) {
    const dir = await mkdtemp(join(tmpdir(), 'pem-signer-'));
    dirs.push(dir);
    const key =
      algorithm === 'RSA'
        ? ['-newkey', 'rsa:2048']
        : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
    await run(
      'openssl',
      [
        'req',
        '-x509',
        ...key,
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-days',
        '2',
        '-subj',
        `/CN=${commonName}`,
      ],
      { cwd: dir },
    );
    return pemSigner(
      await readFile(join(dir, 'key.pem'), 'utf8'),
      await readFile(join(dir, 'cert.pem'), 'utf8'),
    );
  },
});
