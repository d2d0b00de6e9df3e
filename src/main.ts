// The service's entry point (`node dist/src/main.js`): Node's compile cache first, then the service itself.
// Dynamic import on purpose: everything statically imported here would be compiled before the cache is on.
import { enableCompileCache } from './compile-cache.js';

enableCompileCache();
const { startServer } = await import('./server.js');
await startServer();
