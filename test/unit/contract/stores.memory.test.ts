/** The store contracts (test/contract/*.contract.ts) on the memory stores (functions/adapters/memory). */
import { createMemoryAccountStore } from '../../../functions/adapters/memory/accounts.js';
import { createMemoryApiKeyStore } from '../../../functions/adapters/memory/api-keys.js';
import { createMemoryAssetStore } from '../../../functions/adapters/memory/assets.js';
import { createMemoryBatchWrites } from '../../../functions/adapters/memory/batch-writes.js';
import { createMemoryBatchStore } from '../../../functions/adapters/memory/batches.js';
import { createMemoryIdempotencyStore } from '../../../functions/adapters/memory/idempotency.js';
import { createMemoryJobStore } from '../../../functions/adapters/memory/jobs.js';
import {
  createMemoryBatchOrders,
  createMemoryRenderOrders,
} from '../../../functions/adapters/memory/orders.js';
import { createMemorySigningKeyStore } from '../../../functions/adapters/memory/signing-keys.js';
import { createMemoryTable } from '../../../functions/adapters/memory/table.js';
import { createMemoryTemplateStore } from '../../../functions/adapters/memory/templates.js';
import { createMemoryUsageStore } from '../../../functions/adapters/memory/usage.js';
import { createMemoryUsageLedger } from '../../../functions/adapters/memory/usage-ledger.js';
import {
  createMemoryWebhookDeliveryStore,
  createMemoryWebhookStore,
} from '../../../functions/adapters/memory/webhooks.js';
import { accountsContract } from '../../contract/accounts.contract.js';
import { apiKeysContract } from '../../contract/api-keys.contract.js';
import { assetStoreContract } from '../../contract/assets.contract.js';
import { batchesContract } from '../../contract/batches.contract.js';
import { idempotencyContract } from '../../contract/idempotency.contract.js';
import { jobsContract } from '../../contract/jobs.contract.js';
import { ordersContract } from '../../contract/orders.contract.js';
import { signingKeyStoreContract } from '../../contract/signing-keys.contract.js';
import { templatesContract } from '../../contract/templates.contract.js';
import { usageContract } from '../../contract/usage.contract.js';
import { usageLedgerContract } from '../../contract/usage-ledger.contract.js';
import { webhookStoresContract } from '../../contract/webhooks.contract.js';

accountsContract({ name: 'memory', create: (clock) => createMemoryAccountStore(clock) });
apiKeysContract({ name: 'memory', create: (clock) => createMemoryApiKeyStore(clock) });
idempotencyContract({
  name: 'memory',
  create: (clock, o) => createMemoryIdempotencyStore({ clock, ...o }),
});

webhookStoresContract({
  name: 'memory',
  create: (clock) => ({
    endpoints: createMemoryWebhookStore(),
    deliveries: createMemoryWebhookDeliveryStore(clock),
  }),
});

ordersContract({
  name: 'memory',
  create: () => ({ renders: createMemoryRenderOrders(), batches: createMemoryBatchOrders() }),
});

jobsContract({ name: 'memory', create: (clock, o) => createMemoryJobStore(clock, o) });

usageContract({ name: 'memory', create: (clock) => createMemoryUsageStore(clock) });

templatesContract({ name: 'memory', create: (clock) => createMemoryTemplateStore(clock) });

batchesContract({
  name: 'memory',
  create: (clock, o) => {
    // One table: a batch's writes make the jobs the job store renders and hold the usage store's units.
    const table = createMemoryTable();
    return {
      batches: createMemoryBatchStore(clock, o, table),
      writes: createMemoryBatchWrites(clock, o, table),
      jobs: createMemoryJobStore(clock, o, table),
      usage: createMemoryUsageStore(clock, table),
    };
  },
});

signingKeyStoreContract({ name: 'memory', create: () => createMemorySigningKeyStore() });

usageLedgerContract({ name: 'memory', create: () => createMemoryUsageLedger() });
assetStoreContract({ name: 'memory', create: () => createMemoryAssetStore() });
