/**
 * The conformance receiver process (`conformance/receiver`), started as the conformance suite
 * starts it: from the repository's root, configured by the environment, read line by line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { PACKAGE_ROOT, REPO_ROOT } from './cluster';

export type Line = Record<string, unknown> & { type: string };

export class ReceiverProcess {
  readonly lines: Line[] = [];
  /** stdout lines that were not one JSON object: the contract allows none. */
  readonly garbage: string[] = [];
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(env: Record<string, string>) {
    this.child = spawn(path.join(PACKAGE_ROOT, 'conformance', 'receiver'), [], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    readline.createInterface({ input: this.child.stdout! }).on('line', (text) => {
      try {
        const parsed = JSON.parse(text);
        if (parsed === null || typeof parsed !== 'object' || typeof parsed.type !== 'string') {
          throw new Error('not an object with a type');
        }
        this.lines.push(parsed as Line);
      } catch {
        this.garbage.push(text);
      }
    });
    this.child.stderr!.on('data', (d) => {
      this.stderr += String(d);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  of(type: string): Line[] {
    return this.lines.filter((l) => l.type === type);
  }

  /** Writes "stop" on stdin: a graceful stop. */
  stop(): void {
    this.child.stdin!.write('stop\n');
  }

  kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** The last lines of stderr, for failure messages. */
  log(): string {
    return this.stderr.split('\n').slice(-30).join('\n');
  }
}
