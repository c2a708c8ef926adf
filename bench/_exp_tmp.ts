import { Redis } from 'ioredis';
import { freePort, RedisServer } from '../test/cache/redis-server.js';
const server = new RedisServer(await freePort());
await server.start();
const client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false, connectTimeout: 1000, retryStrategy: (t) => Math.min(25 * 2 ** Math.min(t, 10), 150), disableClientInfo: true });
client.on('error', (e) => console.log('error event', e.message));
for (const ev of ['close','end','reconnecting','ready','connect']) client.on(ev, () => console.log(Date.now()%100000, 'event', ev, client.status));
await new Promise(r => client.once('ready', r));
await server.kill();
console.log(Date.now()%100000, 'killed; status', client.status);
for (let i = 0; i < 10; i++) { await new Promise(r => setTimeout(r, 50)); console.log(Date.now()%100000, 'status', client.status); }
try { await client.mgetBuffer(['a']); } catch (e) { console.log('mget error', (e as Error).message); }
client.disconnect();
