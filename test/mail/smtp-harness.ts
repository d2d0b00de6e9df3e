// Real SMTP servers on 127.0.0.1 random ports for the mail e2e specs: smtp-server instances that record what they
// receive (with or without AUTH, with or without STARTTLS), a server that accepts connections and never speaks,
// and a port that refuses connections.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMessage {
  /** MAIL FROM. */
  from: string;
  /** RCPT TO, in order: the envelope, BCC recipients included. */
  to: string[];
  /** The message as transmitted (headers and body). */
  data: string;
  user: string | undefined;
  /** Whether the session ran over TLS when the message arrived. */
  secure: boolean;
}

export interface SmtpTestServer {
  port: number;
  messages: ReceivedMessage[];
  /** Every AUTH attempt, accepted or not. */
  logins: Array<{ username: string; accepted: boolean }>;
  /** What every AUTH carried, as a server (or anyone on the path, without TLS) reads it. */
  credentials: Array<{ username: string; password: string; secure: boolean }>;
  close(): Promise<void>;
}

export interface SmtpTestServerOptions {
  /** username → password; without it the server offers no AUTH. */
  users?: Record<string, string>;
  /** Offer STARTTLS with this certificate; without it the server offers no STARTTLS. */
  tls?: { key: string; cert: string };
  /** RCPT TO addresses the server refuses permanently (550). */
  rejectRecipients?: string[];
}

export async function startSmtpServer(options: SmtpTestServerOptions = {}): Promise<SmtpTestServer> {
  const messages: ReceivedMessage[] = [];
  const logins: SmtpTestServer['logins'] = [];
  const credentials: SmtpTestServer['credentials'] = [];
  const disabled = [...(options.tls ? [] : ['STARTTLS']), ...(options.users ? [] : ['AUTH'])];
  const rejected = new Set((options.rejectRecipients ?? []).map((address) => address.toLowerCase()));
  const server = new SMTPServer({
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    disabledCommands: disabled,
    authOptional: options.users === undefined,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, session, callback) {
      credentials.push({
        username: auth.username ?? '',
        password: auth.password ?? '',
        secure: session.secure,
      });
      const users = options.users ?? {};
      const username = auth.username ?? '';
      const accepted = Object.hasOwn(users, username) && users[username] === auth.password;
      logins.push({ username, accepted });
      if (!accepted) {
        callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
        return;
      }
      callback(null, { user: auth.username });
    },
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mailFrom = session.envelope.mailFrom;
        messages.push({
          from: mailFrom === false ? '' : mailFrom.address,
          to: session.envelope.rcptTo.map((address) => address.address),
          data: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
        });
        callback();
      });
    },
  });
  const port = await listen(server.server);
  return {
    port,
    messages,
    logins,
    credentials,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Accepts TCP connections and never sends a greeting: the client must give up on its own. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  const port = await listen(server);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A listener that is not an SMTP server: it greets with `banner` (a NATS `INFO {...}` line, a database's handshake)
 * and records what clients send it.
 */
export async function startBannerServer(
  banner: string | Buffer,
  host = '127.0.0.1',
): Promise<{ port: number; connections: number; received: string[]; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { connections: 0, received: [] as string[] };
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => state.received.push(chunk.toString('latin1')));
    socket.write(banner);
  });
  const port = await listen(server, host);
  return {
    port,
    get connections() {
      return state.connections;
    },
    received: state.received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A throw-away self-signed certificate for 127.0.0.1/localhost (node:crypto cannot make X.509 certificates). */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-tls-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function listen(server: net.Server, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no TCP address'));
      else resolve(address.port);
    });
  });
}
