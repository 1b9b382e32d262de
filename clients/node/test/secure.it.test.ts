/**
 * A manager with TLS and authentication on: a receiver with the token (or a client certificate)
 * over TLS gets its events and its acks apply, since it sends each delivery token back; without
 * credentials it is refused UNAUTHENTICATED, receives nothing and keeps retrying. The conformance
 * process too, from SLUICE_TLS_CA and SLUICE_TOKEN.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AckResultInfo, SluiceReceiver, type StreamEndedInfo, type TlsOptions } from '../src/index';
import { eventually, integrationSkip, ManagerProcess, queueTableSql, TestDatabase } from './support/cluster';
import { ReceiverProcess } from './support/receiver-process';

const TOKEN = 'node-client-secret-token';

/** A CA, a server certificate for localhost only, and a client certificate, in a fresh directory. */
function makeCertificates(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-node-tls-'));
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=sluice-node-test-ca');
  fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=DNS:localhost\n');
  for (const [name, subject, ext] of [
    ['server', '/CN=localhost', 'server.ext'],
    ['client', '/CN=node-client', undefined],
  ] as const) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', subject);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', ...(ext ? ['-extfile', ext] : []));
  }
  return dir;
}

describe('TLS and authentication', { timeout: 300_000 }, async () => {
  let skip = await integrationSkip();
  if (!skip) {
    try {
      execFileSync('openssl', ['version'], { stdio: 'ignore' });
    } catch {
      skip = 'no openssl to make test certificates';
    }
  }
  let db: TestDatabase;
  let manager: ManagerProcess;
  let certs: string;
  let tls: TlsOptions;
  const receivers: SluiceReceiver[] = [];
  const processes: ReceiverProcess[] = [];

  before(async () => {
    if (skip) {
      return;
    }
    certs = makeCertificates();
    tls = { caFile: path.join(certs, 'ca.pem'), serverName: 'localhost' };
    db = await TestDatabase.create('secure');
    await db.exec(
      queueTableSql('token_q', ['`n` INT NOT NULL']),
      queueTableSql('cert_q', ['`n` INT NOT NULL']),
      queueTableSql('conf_q', ['`n` INT NOT NULL']),
    );
    const sha = createHash('sha256').update(TOKEN).digest('hex');
    const yaml = [
      'tls:',
      `  cert: ${path.join(certs, 'server.pem')}`,
      `  key: ${path.join(certs, 'server-key.pem')}`,
      `  client_ca: ${path.join(certs, 'ca.pem')}`,
      '  client_auth: optional',
      'auth:',
      '  principals:',
      '    - name: node-app',
      `      token_sha256: ${sha}`,
      '      grants: [{queues: ["*"], actions: [subscribe, stats]}]',
      '    - name: node-cert',
      '      cert_subject: "CN=node-client"',
      '      grants: [{queues: [cert_q], actions: [subscribe]}]',
    ].join('\n');
    manager = await ManagerProcess.start('node-secure', {
      database: db,
      queue: 'conf_q',
      yaml,
      connection: { tls, token: TOKEN },
    });
  });

  after(async () => {
    receivers.forEach((r) => r.abort());
    await Promise.all(processes.map((p) => p.kill()));
    await manager?.stop();
    await db?.drop();
    if (certs) {
      fs.rmSync(certs, { recursive: true, force: true });
    }
  });

  function receiver(queue: string, extra: { token?: string; tls?: TlsOptions }, handled: bigint[]): SluiceReceiver {
    const r = new SluiceReceiver({
      targets: manager.target,
      queue,
      receiverId: `secure-${queue}-${receivers.length}`,
      reconnectBackoff: { minMs: 100, maxMs: 500 },
      handler: (e) => void handled.push(e.id),
      ...extra,
    });
    receivers.push(r);
    return r;
  }

  it('with the token over TLS: events flow and every ack applies', { skip }, async () => {
    const handled: bigint[] = [];
    const results: AckResultInfo[] = [];
    const r = receiver('token_q', { tls, token: TOKEN }, handled);
    r.on('ackResult', (a) => results.push(a));
    r.start();
    assert.ok(await r.awaitSubscribed(30_000));
    await db.exec('INSERT INTO token_q (n) VALUES (1), (2), (3)');
    await eventually('all acked', async () => (await db.scalar('SELECT COUNT(*) FROM token_q WHERE state = 2')) === '3');
    await eventually('all answered', () => results.length === 3);
    assert.ok(results.every((a) => a.status === 'OK'), 'acks carry their delivery tokens');
    await r.stop();
  });

  it('without the token: refused UNAUTHENTICATED, nothing received, still retrying', { skip }, async () => {
    const handled: bigint[] = [];
    const ended: StreamEndedInfo[] = [];
    const r = receiver('token_q', { tls }, handled);
    r.on('streamEnded', (s) => ended.push(s));
    r.start();
    await db.exec('INSERT INTO token_q (n) VALUES (4)');
    await eventually('refused twice', () => ended.length >= 2);
    assert.ok(ended.every((s) => s.codeName === 'UNAUTHENTICATED' && s.willRetry), JSON.stringify(ended));
    assert.deepEqual(handled, []);
    assert.equal(r.stats().streamsConnected, 0);
    r.abort();
  });

  it('with a client certificate alone (mutual TLS): events flow', { skip }, async () => {
    const handled: bigint[] = [];
    const r = receiver('cert_q', {
      tls: { ...tls, certFile: path.join(certs, 'client.pem'), keyFile: path.join(certs, 'client-key.pem') },
    }, handled);
    r.start();
    await db.exec('INSERT INTO cert_q (n) VALUES (1), (2)');
    await eventually('both acked', async () => (await db.scalar('SELECT COUNT(*) FROM cert_q WHERE state = 2')) === '2');
    await r.stop();
  });

  it('the conformance process: receives with SLUICE_TOKEN, prints UNAUTHENTICATED without', { skip }, async () => {
    const env = {
      SLUICE_TARGETS: manager.target,
      SLUICE_QUEUE: 'conf_q',
      SLUICE_MAX_IN_FLIGHT: '2',
      SLUICE_MODE: 'ack',
      SLUICE_TLS_CA: tls.caFile,
    };
    const refused = new ReceiverProcess({ ...env, SLUICE_RECEIVER_ID: 'conf-refused' });
    const allowed = new ReceiverProcess({ ...env, SLUICE_RECEIVER_ID: 'conf-allowed', SLUICE_TOKEN: TOKEN });
    processes.push(refused, allowed);
    await eventually(`an error line (stderr:\n${refused.log()})`, () => refused.of('error').length > 0, 60_000);
    assert.equal(refused.of('error')[0].code, 'UNAUTHENTICATED');
    await eventually('ready', () => allowed.of('ready').length === 1, 60_000);
    await db.exec('INSERT INTO conf_q (n) VALUES (1), (2)');
    await eventually('both acked', async () => (await db.scalar('SELECT COUNT(*) FROM conf_q WHERE state = 2')) === '2');
    assert.equal(allowed.of('handled').length, 2);
    assert.equal(refused.of('received').length, 0);
    assert.equal(refused.of('ready').length, 0);
    allowed.stop();
    assert.equal(await allowed.exited, 0);
  });
});
