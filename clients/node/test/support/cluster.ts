/**
 * Integration tests' world: a fresh database on the local MySQL/MariaDB server and real managers
 * started from the operator's jar (`java -jar sluice.jar serve`), as a user starts them.
 *
 * - The server: SLUICE_TEST_DB_HOST (127.0.0.1), SLUICE_TEST_DB_PORT (3306), SLUICE_TEST_DB_USER
 *   (root), SLUICE_TEST_DB_PASSWORD (empty).
 * - The jar: SLUICE_JAR, or the repository's examples/target/sluice.jar (build it with
 *   `./mvnw -o -B -q -pl examples -am -DskipTests package`).
 *
 * {@link integrationSkip} says why the tests cannot run here (then they skip, saying so).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as mysql from 'mysql2/promise';
import { ManagerClient, type ConnectionOptions } from '../../src/index';

/** The package's root (this file runs from dist/test/support). */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');
export const REPO_ROOT = path.resolve(PACKAGE_ROOT, '..', '..');

export const DB = {
  host: process.env.SLUICE_TEST_DB_HOST ?? '127.0.0.1',
  port: Number(process.env.SLUICE_TEST_DB_PORT ?? 3306),
  user: process.env.SLUICE_TEST_DB_USER ?? 'root',
  password: process.env.SLUICE_TEST_DB_PASSWORD ?? '',
};

export function jarPath(): string {
  return process.env.SLUICE_JAR ?? path.join(REPO_ROOT, 'examples', 'target', 'sluice.jar');
}

let skipReason: Promise<string | undefined> | undefined;

/** Why integration tests cannot run here, or undefined when they can. */
export function integrationSkip(): Promise<string | undefined> {
  if (skipReason === undefined) {
    skipReason = (async () => {
      if (!fs.existsSync(jarPath())) {
        return `no operator jar at ${jarPath()} (set SLUICE_JAR, or build it: ./mvnw -o -B -q -pl examples -am -DskipTests package)`;
      }
      try {
        const c = await mysql.createConnection({ ...DB, connectTimeout: 3000 });
        await c.end();
      } catch (e) {
        return `no database at ${DB.host}:${DB.port} as ${DB.user}: ${(e as Error).message}`;
      }
      return undefined;
    })();
  }
  return skipReason;
}

/** A fresh database for one test file, dropped at the end. */
export class TestDatabase {
  readonly name: string;
  private constructor(name: string) {
    this.name = name;
  }

  static async create(prefix: string): Promise<TestDatabase> {
    const name = `sluice_node_${prefix}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
    const c = await mysql.createConnection(DB);
    try {
      await c.query(`CREATE DATABASE \`${name}\``);
    } finally {
      await c.end();
    }
    return new TestDatabase(name);
  }

  connect(): Promise<mysql.Connection> {
    return mysql.createConnection({ ...DB, database: this.name });
  }

  /** Runs statements on a connection of their own. */
  async exec(...statements: string[]): Promise<void> {
    const c = await this.connect();
    try {
      for (const s of statements) {
        await c.query(s);
      }
    } finally {
      await c.end();
    }
  }

  /** The first column of the first row, as a string (exact for any number). */
  async scalar(sql: string, values: unknown[] = []): Promise<string | null> {
    const c = await this.connect();
    try {
      const [rows] = await c.query({ sql, values, rowsAsArray: true });
      const row = (rows as unknown[][])[0];
      return row === undefined || row[0] === null ? null : String(row[0]);
    } finally {
      await c.end();
    }
  }

  async drop(): Promise<void> {
    const c = await mysql.createConnection(DB);
    try {
      await c.query(`DROP DATABASE IF EXISTS \`${this.name}\``);
    } finally {
      await c.end();
    }
  }
}

/** CREATE TABLE of a queue with the system columns and the given user columns. */
export function queueTableSql(table: string, userColumns: string[], comment = 'sluice_queue'): string {
  const now = "((TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000))";
  return [
    `CREATE TABLE \`${table}\` (`,
    '  `id` BIGINT NOT NULL AUTO_INCREMENT,',
    `  \`time_next\` BIGINT NOT NULL DEFAULT ${now},`,
    '  `state` TINYINT NOT NULL DEFAULT 0,',
    '  `epoch` INT NOT NULL DEFAULT 0,',
    '  `priority` TINYINT NOT NULL DEFAULT 0,',
    "  `tenant` VARCHAR(64) NOT NULL DEFAULT '',",
    `  \`time_created\` BIGINT NOT NULL DEFAULT ${now},`,
    '  `time_acked` BIGINT NULL,',
    ...userColumns.map((c) => `  ${c},`),
    '  PRIMARY KEY (`id`),',
    '  KEY `sluice_poll` (`state`, `time_next`),',
    '  KEY `sluice_tenant` (`state`, `tenant`, `time_next`)',
    `) ENGINE=InnoDB COMMENT='${comment}'`,
  ].join('\n');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ManagerSettings {
  database: TestDatabase;
  /** Extra YAML appended to the configuration (tls:, auth:). */
  yaml?: string;
  /** What the readiness check connects with (TLS and a token with stats on every queue). */
  connection?: ConnectionOptions;
  /** A queue to wait for until this manager serves it. */
  queue: string;
  /**
   * `serving` (the default): wait until the queue is SERVING here; `answering`: only until the
   * manager answers (a standby, whose shards another manager leads).
   */
  ready?: 'serving' | 'answering';
  env?: Record<string, string>;
}

/** One manager process (`sluice serve`) on free ports, its log in a file of its own. */
export class ManagerProcess {
  readonly target: string;
  readonly logFile: string;
  private readonly child: ChildProcess;
  private exited: Promise<number | null>;
  private lastLog: string | undefined; // the log's tail, kept when its directory goes

  private constructor(target: string, dir: string, child: ChildProcess) {
    this.target = target;
    this.logFile = path.join(dir, 'manager.log');
    this.child = child;
    // Its directory (configuration and log) goes with it, unless SLUICE_TEST_KEEP_LOGS is set.
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        if (!process.env.SLUICE_TEST_KEEP_LOGS) {
          this.lastLog = this.tail();
          fs.rmSync(dir, { recursive: true, force: true });
        }
        resolve(code);
      }),
    );
  }

  static async start(id: string, s: ManagerSettings): Promise<ManagerProcess> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `sluice-node-${id}-`));
    const grpcPort = await freePort();
    const httpPort = await freePort();
    const config = [
      `manager_id: ${id}`,
      `grpc_port: ${grpcPort}`,
      `http_port: ${httpPort}`,
      'discovery_interval: 500ms',
      'shutdown_timeout: 4s',
      // Generous on a busy machine: a lease lost to a slow renewal stops dispatch for a while.
      'lease_ttl: 6s',
      'lease_renew: 1s',
      'shards:',
      '  - name: main',
      `    url: jdbc:mysql://${DB.host}:${DB.port}/${s.database.name}`,
      `    user: ${DB.user}`,
      `    password: "${DB.password}"`,
      '    binlog: "off"',
      s.yaml ?? '',
    ].join('\n');
    const configFile = path.join(dir, 'sluice.yaml');
    fs.writeFileSync(configFile, config);
    const log = fs.openSync(path.join(dir, 'manager.log'), 'a');
    const child = spawn(
      'java',
      ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-jar', jarPath(), 'serve', '-c', configFile],
      { cwd: dir, stdio: ['ignore', log, log], env: { ...process.env, ...(s.env ?? {}) } },
    );
    fs.closeSync(log);
    const m = new ManagerProcess(`127.0.0.1:${grpcPort}`, dir, child);
    try {
      await m.awaitServing(s.queue, s.connection ?? {}, s.ready ?? 'serving');
    } catch (e) {
      m.kill();
      throw e;
    }
    return m;
  }

  /** Waits until ListQueues shows the queue SERVING (the manager started and found it). */
  private async awaitServing(
    queue: string,
    connection: ConnectionOptions,
    ready: 'serving' | 'answering',
  ): Promise<void> {
    const deadline = Date.now() + 90_000;
    const client = new ManagerClient(this.target, connection);
    let last = 'not reached yet';
    try {
      while (Date.now() < deadline) {
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          const how = this.child.signalCode ?? `exit code ${this.child.exitCode}`;
          throw new Error(`manager ended (${how}) before serving; log:\n${this.tail()}`);
        }
        try {
          const queues = await client.listQueues(2000);
          const q = queues.find((x) => x.name === queue);
          if (ready === 'answering' || q?.status === 'SERVING') {
            return;
          }
          last = q === undefined ? `queue ${queue} not listed yet` : `${q.status} ${q.problem}`;
        } catch (e) {
          last = (e as Error).message;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`manager ${this.target} did not serve ${queue} within 90 s (${last}); log:\n${this.tail()}`);
    } finally {
      client.close();
    }
  }

  tail(lines = 40): string {
    if (this.lastLog !== undefined) {
      return this.lastLog;
    }
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** SIGTERM: a graceful stop. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
      await this.exited;
      clearTimeout(timer);
    }
  }

  /** SIGKILL: the manager dies without notice. */
  kill(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
    }
    return this.exited;
  }
}

/** Polls `check` every 100 ms until it holds; throws with `what` after timeoutMs. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
