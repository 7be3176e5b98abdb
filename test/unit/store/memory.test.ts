/** The memory store: the shared Store contract (including cas). */
import { MemoryStore } from '../../../src/store/index.js';
import { storeContract } from './store-contract.js';

storeContract('MemoryStore', async () => new MemoryStore());
