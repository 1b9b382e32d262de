/**
 * The Node.js client's receiver process for the receiver conformance suite: implements
 * conformance/CONTRACT.md (environment, modes, JSON lines on stdout, stop on stdin) with the
 * package's public API only. Started by the `receiver` script beside this file.
 */
import * as readline from 'node:readline';
import { type ReceivedEvent, RetryLater, SluiceReceiver, Snooze, stderrLogger } from '../src/index';
import { canonical } from './canonical';

type Mode =
  | { kind: 'ack' }
  | { kind: 'nack-first' }
  | { kind: 'snooze-first' }
  | { kind: 'slow'; ms: number; autoExtend: boolean }
  | { kind: 'hold' };

/** One JSON object per line on stdout: nothing else goes there (logs go to stderr). */
function out(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function env(name: string, required = true): string | undefined {
  const v = process.env[name];
  if (required && (v === undefined || v === '')) {
    throw new Error(`${name} is required (conformance/CONTRACT.md)`);
  }
  return v === '' ? undefined : v;
}

function parseMode(text: string): Mode {
  if (text === 'ack' || text === 'nack-first' || text === 'snooze-first' || text === 'hold') {
    return { kind: text } as Mode;
  }
  const slow = /^(slow|slow-noextend):(\d+)$/.exec(text);
  if (slow) {
    return { kind: 'slow', ms: Number(slow[2]), autoExtend: slow[1] === 'slow' };
  }
  throw new Error(
    `SLUICE_MODE must be ack, nack-first, snooze-first, slow:<ms>, slow-noextend:<ms> or hold, was '${text}'`,
  );
}

function columnsOf(event: ReceivedEvent): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const name of event.columnNames()) {
    columns[name] = canonical(event.column(name));
  }
  return columns;
}

function main(): void {
  const targets = (env('SLUICE_TARGETS') as string).split(',').map((t) => t.trim()).filter((t) => t !== '');
  const maxInFlight = Number(env('SLUICE_MAX_IN_FLIGHT'));
  const mode = parseMode(env('SLUICE_MODE') as string);
  const ca = env('SLUICE_TLS_CA', false);
  const token = env('SLUICE_TOKEN', false);

  const seen = new Set<string>();
  const held: Array<() => void> = [];
  let stopping = false;
  let ready = false;

  const receiver = new SluiceReceiver({
    targets,
    queue: env('SLUICE_QUEUE') as string,
    receiverId: env('SLUICE_RECEIVER_ID') as string,
    maxInFlight,
    concurrency: Math.max(1, Math.min(8, maxInFlight)),
    shutdownTimeoutMs: 3000,
    autoExtend: mode.kind !== 'slow' || mode.autoExtend,
    tls: ca === undefined ? undefined : { caFile: ca, serverName: 'localhost' },
    token,
    logger: stderrLogger('info'),
    handler: async (event) => {
      out({
        type: 'received',
        id: event.id.toString(),
        epoch: event.epoch.toString(),
        shard: event.shard,
        last_attempt: event.lastAttempt,
        columns: columnsOf(event),
      });
      switch (mode.kind) {
        case 'nack-first':
        case 'snooze-first': {
          const key = `${event.shard}/${event.id}`;
          if (!seen.has(key)) {
            seen.add(key);
            throw mode.kind === 'snooze-first'
              ? new Snooze(100, 'conformance')
              : new RetryLater(100, 'conformance');
          }
          return;
        }
        case 'slow':
          await new Promise((resolve) => setTimeout(resolve, mode.ms));
          return;
        case 'hold':
          if (!stopping) {
            await new Promise<void>((resolve) => held.push(resolve));
          }
          return;
        default:
          return;
      }
    },
  });

  receiver.on('subscribed', () => {
    if (!ready) {
      ready = true;
      out({ type: 'ready' });
    }
  });
  receiver.on('handled', (h) => {
    out({
      type: 'handled',
      id: h.id.toString(),
      epoch: h.epoch.toString(),
      shard: h.shard,
      outcome: h.outcome === 'nack' ? 'nack' : 'ack',
    });
  });
  receiver.on('ackResult', (r) => {
    if (r.status !== 'OK') {
      out({ type: 'ack_result', id: r.id.toString(), epoch: r.epoch.toString(), shard: r.shard, status: r.status });
    }
  });
  receiver.on('streamEnded', (s) => {
    if (s.codeName !== 'OK') {
      out({ type: 'error', code: s.codeName, message: s.details });
    }
  });

  const stop = async (): Promise<void> => {
    if (stopping) {
      return;
    }
    stopping = true;
    // stop() sends NotifyShutdown to every manager first; then the held handlers finish (acking).
    const stopped = receiver.stop();
    held.splice(0).forEach((release) => release());
    await stopped;
    out({ type: 'stopped' });
    process.stdout.write('', () => process.exit(0));
  };

  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === 'stop') {
      void stop();
    }
  });
  lines.on('close', () => void stop());

  receiver.start();
}

try {
  main();
} catch (e) {
  // A bad environment: say what is wrong, without a stack trace.
  process.stderr.write(`conformance receiver: ${(e as Error).message ?? e}\n`);
  process.exit(2);
}
