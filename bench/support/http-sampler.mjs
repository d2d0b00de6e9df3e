// A benchmark's HTTP client in its own process, as a service's clients are: the request loop's own work (sending,
// receiving and reading the answers) then runs beside the service, not on its event loop. Reads a job from stdin,
//   { "origin": "http://127.0.0.1:PORT", "headers": {…}, "cases": [{ "path": "/…", "warmup": 5, "runs": 60 }] }
// sends each case's requests (GET, or `method` with a JSON `body`) one after another on one kept-alive connection,
// each timed from send to the answer's last byte, and writes one JSON line per case to stdout:
// { path, ms: [...], answers: [{ status, body }] } where `answers` holds every timed answer's status and a digest of
// its JSON body chosen by the job's `digest` ("scim-list": totalResults, the number of Resources and the first one's
// id; "schedule-page": TotalPages, HasNextPage, the number of schedules and the first one's id; "groups": Groups),
// for the parent to check.
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
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(path, method = 'GET', body = undefined) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers = body === undefined ? job.headers : { ...job.headers, 'content-type': 'application/json' };
    const request = http.request(
      { host: origin.hostname, port: origin.port, path, method, agent, headers },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            ms: performance.now() - started,
            status: response.statusCode,
            bytes: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const digests = {
  'scim-list': (body) => ({
    totalResults: body.totalResults,
    resources: body.Resources?.length ?? 0,
    firstId: body.Resources?.[0]?.id,
  }),
  'schedule-page': (body) => ({
    totalPages: body.TotalPages,
    hasNextPage: body.HasNextPage,
    schedules: body.Result?.length ?? 0,
    firstId: body.Result?.[0]?.Id,
  }),
  groups: (body) => body.Groups ?? body,
};
const digest = digests[job.digest] ?? (() => null);

for (const { path, method, body, warmup, runs } of job.cases) {
  for (let i = 0; i < warmup; i++) await send(path, method, body);
  const ms = [];
  const answers = [];
  for (let i = 0; i < runs; i++) {
    const answer = await send(path, method, body);
    ms.push(answer.ms);
    answers.push({
      status: answer.status,
      body: job.digest ? digest(JSON.parse(answer.bytes.toString('utf8'))) : null,
    });
  }
  process.stdout.write(`${JSON.stringify({ path, ms, answers })}\n`);
}
agent.destroy();
