// A load of concurrent clients in its own process, for figures taken while the service is busy. Reads a job from
// stdin,
//   { "origin": "http://127.0.0.1:PORT", "headers": {…}, "clients": 8, "durationMs": 6000, "path": "/…",
//     "pauseMs": 0, "startAt": <epoch ms>, "body": {…}?, "sentAt": false }
// waits until `startAt` (so a load and a probe started as two processes begin together), then runs `clients`
// loops for `durationMs`, each on its own kept-alive connection sending GET `path` (POST of `body` as JSON when a
// body is given) as soon as its previous answer has fully arrived (after `pauseMs`), and writes one JSON line:
// { served, statuses: {status: count}, ms: [...], sentAt?: [...] } with each answer's time from send to its last
// byte (and with `sentAt`, each request's send time in epoch ms). The answer's body is counted, not parsed.
import http from 'node:http';

const job = JSON.parse(
  await new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => (text += chunk));
    process.stdin.on('end', () => resolve(text));
  }),
);
const origin = new URL(job.origin);

const payload = job.body === undefined ? undefined : JSON.stringify(job.body);
const headers = payload === undefined ? job.headers : { ...job.headers, 'content-type': 'application/json' };

function send(agent) {
  return new Promise((resolve) => {
    const started = performance.now();
    const request = http.request(
      {
        host: origin.hostname,
        port: origin.port,
        path: job.path,
        method: payload === undefined ? 'GET' : 'POST',
        agent,
        headers,
      },
      (response) => {
        response.on('data', () => undefined);
        response.on('end', () => resolve({ ms: performance.now() - started, status: response.statusCode }));
        response.on('error', () => resolve({ ms: performance.now() - started, status: 'error' }));
      },
    );
    request.on('error', () => resolve({ ms: performance.now() - started, status: 'error' }));
    request.end(payload);
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
await sleep(Math.max(0, (job.startAt ?? Date.now()) - Date.now()));
const until = performance.now() + job.durationMs;
const ms = [];
const sentAt = [];
const statuses = {};
await Promise.all(
  Array.from({ length: job.clients }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    while (performance.now() < until) {
      const at = Date.now();
      const answer = await send(agent);
      ms.push(answer.ms);
      if (job.sentAt) sentAt.push(at);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (job.pauseMs) await sleep(job.pauseMs);
    }
    agent.destroy();
  }),
);
process.stdout.write(
  `${JSON.stringify({ served: ms.length, statuses, ms, ...(job.sentAt ? { sentAt } : {}) })}\n`,
);
