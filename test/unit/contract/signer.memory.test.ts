/** The Signer contract (test/contract/signer.contract.ts) on the memory signer: a key made in-process. */
import { createMemorySigner } from '../../../functions/adapters/memory/signer.js';
import { signerContract } from '../../contract/signer.contract.js';

signerContract({ name: 'memory', create: (options) => createMemorySigner(options) });
