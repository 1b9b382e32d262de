import * as fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { sluiceStub, type SluiceStub } from './proto';

/** TLS to the managers: the CA to trust, and a client certificate for mutual TLS. */
export interface TlsOptions {
  /** PEM CA certificates to trust. */
  caFile: string;
  /** PEM client certificate chain (mutual TLS), with keyFile. */
  certFile?: string;
  /** PEM private key of certFile. */
  keyFile?: string;
  /**
   * The name to check the managers' certificate against, when it is not the target's host (for
   * instance targets given as 127.0.0.1 and a certificate for localhost).
   */
  serverName?: string;
}

/** How to reach the managers: plain text or TLS, and a bearer token sent with every call. */
export interface ConnectionOptions {
  tls?: TlsOptions;
  /** Sent as `authorization: Bearer <token>` with every call; never logged. */
  token?: string;
  /** More gRPC channel options, over the client's own (keepalive, message size, backoff). */
  channelOptions?: grpc.ChannelOptions;
}

/**
 * The channel settings of every client-made channel, as the Java SDK's: messages up to 4 MiB (the
 * manager sizes its event messages to that), a keepalive ping after 10 s without reads and the
 * connection dropped if it goes 5 s unanswered, also while no call is open (the manager permits
 * pings every 5 s), and gRPC's own reconnect backoff kept within the receiver's (100 ms to 5 s).
 */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 5_000,
};

/** Checked connection settings; opens stubs and makes each call's metadata. */
export class ChannelSecurity {
  private readonly tls: TlsOptions | undefined;
  private readonly token: string | undefined;
  private readonly extra: grpc.ChannelOptions;

  constructor(options: ConnectionOptions = {}) {
    const tls = options.tls;
    if (tls !== undefined) {
      if (!tls.caFile) {
        throw new TypeError('tls.caFile is required with tls');
      }
      if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
        throw new TypeError('tls.certFile and tls.keyFile go together (mutual TLS)');
      }
    }
    if (options.token !== undefined && options.token.trim() === '') {
      throw new TypeError('token must not be blank');
    }
    this.tls = tls;
    this.token = options.token;
    this.extra = options.channelOptions ?? {};
  }

  credentials(): grpc.ChannelCredentials {
    const tls = this.tls;
    if (tls === undefined) {
      return grpc.credentials.createInsecure();
    }
    const files = `ca ${tls.caFile}${tls.certFile === undefined ? '' : `, cert ${tls.certFile}`}`;
    try {
      return grpc.credentials.createSsl(
        fs.readFileSync(tls.caFile),
        tls.keyFile === undefined ? null : fs.readFileSync(tls.keyFile),
        tls.certFile === undefined ? null : fs.readFileSync(tls.certFile),
      );
    } catch (e) {
      throw new Error(`cannot read the TLS files (${files}): ${(e as Error).message}`);
    }
  }

  channelOptions(): grpc.ChannelOptions {
    const o: grpc.ChannelOptions = { ...CHANNEL_OPTIONS };
    if (this.tls?.serverName !== undefined) {
      o['grpc.ssl_target_name_override'] = this.tls.serverName;
      o['grpc.default_authority'] = this.tls.serverName;
    }
    return { ...o, ...this.extra };
  }

  /** A new metadata for one call, with the token when there is one. */
  metadata(): grpc.Metadata {
    const m = new grpc.Metadata();
    if (this.token !== undefined) {
      m.set('authorization', `Bearer ${this.token}`);
    }
    return m;
  }

  /** A stub of `sluice.v1.Sluice` on its own channel to `target` (`host:port`). */
  open(target: string): SluiceStub {
    const Stub = sluiceStub();
    return new Stub(target, this.credentials(), this.channelOptions());
  }

  toString(): string {
    return `ChannelSecurity[tls=${this.tls === undefined ? 'off' : this.tls.caFile}, token=${
      this.token === undefined ? 'none' : '(hidden)'
    }]`;
  }
}

/** The gRPC status name of a code (`UNAUTHENTICATED` for 16). */
export function statusName(code: number): string {
  return grpc.status[code] ?? String(code);
}

/** "CODE (details)", for logs. */
export function describeStatus(status: { code: number; details?: string }): string {
  return status.details ? `${statusName(status.code)} (${status.details})` : statusName(status.code);
}
