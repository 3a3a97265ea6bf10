/**
 * The store contracts (test/contract/*.contract.ts) on the DynamoDB adapters
 * (functions/adapters/dynamodb) against dynalite, one table for the file.
 */
import { createAccountStore } from '../../../functions/adapters/dynamodb/accounts.js';
import { createApiKeyStore } from '../../../functions/adapters/dynamodb/api-keys.js';
import { createAssetStore } from '../../../functions/adapters/dynamodb/assets.js';
import { createBatchWrites } from '../../../functions/adapters/dynamodb/batch-writes.js';
import { createBatchStore } from '../../../functions/adapters/dynamodb/batches.js';
import { createIdempotencyStore } from '../../../functions/adapters/dynamodb/idempotency.js';
import { createJobStore } from '../../../functions/adapters/dynamodb/jobs.js';
import { createSigningKeyStore } from '../../../functions/adapters/dynamodb/signing-keys.js';
import { createTemplateStore } from '../../../functions/adapters/dynamodb/templates.js';
import { createUsageStore } from '../../../functions/adapters/dynamodb/usage.js';
import { createUsageLedger } from '../../../functions/adapters/dynamodb/usage-ledger.js';
import {
  createWebhookDeliveryStore,
  createWebhookStore,
} from '../../../functions/adapters/dynamodb/webhooks.js';
import { accountsContract } from '../../contract/accounts.contract.js';
import { apiKeysContract } from '../../contract/api-keys.contract.js';
import { assetStoreContract } from '../../contract/assets.contract.js';
import { batchesContract } from '../../contract/batches.contract.js';
import { idempotencyContract } from '../../contract/idempotency.contract.js';
import { jobsContract } from '../../contract/jobs.contract.js';
import { signingKeyStoreContract } from '../../contract/signing-keys.contract.js';
import { templatesContract } from '../../contract/templates.contract.js';
import { usageContract } from '../../contract/usage.contract.js';
import { usageLedgerContract } from '../../contract/usage-ledger.contract.js';
import { webhookStoresContract } from '../../contract/webhooks.contract.js';
import { useTable } from '../../helpers/dynalite.js';

const table = useTable('contract-stores');

accountsContract({ name: 'dynalite', create: (clock) => createAccountStore(table.db, table.name, clock) });
apiKeysContract({
  name: 'dynalite',
  create: (clock) =>
    createApiKeyStore(table.db, table.name, clock, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    }),
});
idempotencyContract({
  name: 'dynalite',
  create: (clock, o) => createIdempotencyStore(table.db, table.name, clock, o.leaseMs, o.maxWaitMs),
});

webhookStoresContract({
  name: 'dynalite',
  create: (clock) => ({
    endpoints: createWebhookStore(table.db, table.name, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    }),
    deliveries: createWebhookDeliveryStore(table.db, table.name, clock),
  }),
});

jobsContract({ name: 'dynalite', create: (clock, o) => createJobStore(table.db, table.name, clock, o) });

usageContract({ name: 'dynalite', create: (clock) => createUsageStore(table.db, table.name, clock) });

templatesContract({ name: 'dynalite', create: (clock) => createTemplateStore(table.db, table.name, clock) });

batchesContract({
  name: 'dynalite',
  create: (clock, o) => ({
    batches: createBatchStore(table.db, table.name, clock, o),
    writes: createBatchWrites(table.db, table.name, clock, o),
    jobs: createJobStore(table.db, table.name, clock, o),
    usage: createUsageStore(table.db, table.name, clock),
  }),
});

signingKeyStoreContract({
  name: 'dynalite',
  create: () =>
    createSigningKeyStore(table.db, table.name, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    }),
});

usageLedgerContract({
  name: 'dynalite',
  create: () => createUsageLedger(table.db, table.name, { retentionSeconds: 400 * 86_400 }),
});
assetStoreContract({
  name: 'dynalite',
  create: () =>
    createAssetStore(table.db, table.name, (message, error) => {
      throw new Error(`${message}: ${String(error)}`);
    }),
});
