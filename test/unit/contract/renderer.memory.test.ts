/** The renderer contract (test/contract/renderer.contract.ts) on the memory renderer, uploading to the memory storage. */
import { createMemoryPdfStorage } from '../../../functions/adapters/memory/pdf-storage.js';
import { createMemoryRenderer } from '../../../functions/adapters/memory/renderer.js';
import { rendererContract } from '../../contract/renderer.contract.js';

rendererContract({
  name: 'memory',
  async create() {
    const storage = createMemoryPdfStorage({ downloadUrlTtlSeconds: 60, uploadUrlTtlSeconds: 60 });
    return { renderer: createMemoryRenderer(), storage, close: () => storage.close() };
  },
});
