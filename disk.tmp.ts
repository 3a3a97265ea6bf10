import { loadOrCreateIssuer } from './lib/local/issuer.js';
const dataDir = process.argv[2]!; const base = process.argv[3]!;
const issuer = await loadOrCreateIssuer(dataDir);
const token = await issuer.issueToken({ sub: 'u1', email: 'u1@example.com' });
for (let i = 0; i < Number(process.argv[4] ?? 1); i++) {
  const t = performance.now();
  try {
    const r = await fetch(`${base}/v1/pdf`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ html: '<h1>hi</h1>' }), signal: AbortSignal.timeout(30000) });
    console.log(r.status, r.headers.get('retry-after'), (await r.text()).slice(0, 200), Math.round(performance.now() - t));
  } catch (e) { console.log('ERR', (e as Error).message, String((e as any).cause)); }
}
