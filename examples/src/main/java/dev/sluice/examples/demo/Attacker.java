package dev.sluice.examples.demo;

import dev.sluice.proto.v1.AckResult;
import dev.sluice.proto.v1.AckStatus;
import dev.sluice.proto.v1.Acks;
import dev.sluice.proto.v1.CancelRequest;
import dev.sluice.proto.v1.EventRef;
import dev.sluice.proto.v1.ListQueuesRequest;
import dev.sluice.proto.v1.ManagerMessage;
import dev.sluice.proto.v1.Nack;
import dev.sluice.proto.v1.Nacks;
import dev.sluice.proto.v1.NotifyShutdownRequest;
import dev.sluice.proto.v1.QueueStatsRequest;
import dev.sluice.proto.v1.ReceiverMessage;
import dev.sluice.proto.v1.SluiceGrpc;
import dev.sluice.proto.v1.Subscribe;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import io.grpc.util.CertificateUtils;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The secure demo's attacker: while orders flow, tries forged operations against the manager, from
 * the network (no TLS, no or bad client certificates), with bad or no credentials, and as valid
 * principals overstepping their grants (another queue, another receiver's id, another receiver's
 * deliveries). Each attack counts as denied only when it was refused the expected way; {@link
 * #run()} prints one line per attack.
 */
final class Attacker {
  private final DemoSecurity sec;
  private final String target;
  private final int httpPort;
  private final DemoDatabase db;
  private final String queue;
  private final PrintWriter err;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private int attacks;
  private int denied;

  Attacker(
      DemoSecurity sec,
      String target,
      int httpPort,
      DemoDatabase db,
      String queue,
      PrintWriter err) {
    this.sec = sec;
    this.target = target;
    this.httpPort = httpPort;
    this.db = db;
    this.queue = queue;
    this.err = err;
  }

  int attacks() {
    return attacks;
  }

  int denied() {
    return denied;
  }

  /** Runs every attack once; never throws (an attack that errs oddly counts as not denied). */
  void run() {
    try {
      ManagedChannel plain = track(ManagedChannelBuilder.forTarget(target).usePlaintext().build());
      ManagedChannel noCert = track(DemoSecurity.channel(target, sec.ca.caFile(), null));
      ManagedChannel expired =
          track(DemoSecurity.channel(target, sec.ca.caFile(), sec.expiredCert));
      ManagedChannel foreign =
          track(DemoSecurity.channel(target, sec.ca.caFile(), sec.foreignCert));
      ManagedChannel mtls = track(DemoSecurity.channel(target, sec.ca.caFile(), sec.attackerCert));

      attack("plain text against the TLS port", () -> failsTls(() -> list(plain, sec.opsToken)));
      attack("TLS without a client certificate", () -> failsTls(() -> list(noCert, sec.opsToken)));
      attack("an expired client certificate", () -> failsTls(() -> list(expired, sec.opsToken)));
      attack("a client certificate from another CA", () -> failsTls(() -> list(foreign, null)));
      attack("no token", () -> code(() -> list(mtls, null)) == Status.Code.UNAUTHENTICATED);
      attack(
          "a wrong token",
          () -> code(() -> list(mtls, sec.opsToken + "0")) == Status.Code.UNAUTHENTICATED);
      attack(
          "subscribe with a token for another queue",
          () ->
              subscribe(mtls, sec.intruderToken, queue, "intruder-1")
                  == Status.Code.PERMISSION_DENIED);
      attack(
          "cancel another queue's events",
          () ->
              code(
                      () ->
                          stub(mtls, sec.intruderToken)
                              .cancel(
                                  CancelRequest.newBuilder()
                                      .setQueue(queue)
                                      .setShard(db.shards().get(0).name())
                                      .addIds(1)
                                      .build()))
                  == Status.Code.PERMISSION_DENIED);
      attack(
          "read another queue's stats",
          () ->
              code(
                      () ->
                          stub(mtls, sec.intruderToken)
                              .queueStats(QueueStatsRequest.newBuilder().setQueue(queue).build()))
                  == Status.Code.PERMISSION_DENIED);
      // Receiver ids are scoped per principal: the intruder's NotifyShutdown of another's id
      // drains only its own streams of that id (none), and a Subscribe with that id reaches
      // the owner's queue no more than any other.
      attack(
          "NotifyShutdown for another principal's receiver",
          () ->
              stub(mtls, sec.intruderToken)
                      .notifyShutdown(
                          NotifyShutdownRequest.newBuilder()
                              .setReceiverId("receiver-flaky")
                              .build())
                      .getStreams()
                  == 0);
      attack(
          "subscribe to its queue as another's receiver id",
          () ->
              subscribe(mtls, sec.intruderToken, queue, "receiver-flaky")
                  == Status.Code.PERMISSION_DENIED);
      attack("list services by reflection", () -> reflect(mtls, sec.intruderToken));
      attack("ack an event delivered to someone else", () -> forge(mtls, true));
      attack("nack an event delivered to someone else", () -> forge(mtls, false));
      attack("read the status page without credentials", () -> http(null) == 401);
      attack("read the status page without the right", () -> http(sec.intruderToken) == 403);
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
    }
  }

  private void attack(String name, Supplier<Boolean> refused) {
    attacks++;
    boolean ok;
    try {
      ok = refused.get();
    } catch (RuntimeException e) {
      ok = false;
      name += " (" + e + ")";
    }
    if (ok) {
      denied++;
    }
    err.printf("demo: attack %2d: %-48s %s%n", attacks, name, ok ? "denied" : "NOT DENIED");
    err.flush();
  }

  private ManagedChannel track(ManagedChannel c) {
    channels.add(c);
    return c;
  }

  private static SluiceGrpc.SluiceBlockingStub stub(ManagedChannel ch, String token) {
    return DemoSecurity.withToken(
        SluiceGrpc.newBlockingStub(ch).withDeadlineAfter(10, TimeUnit.SECONDS), token);
  }

  private static Object list(ManagedChannel ch, String token) {
    return stub(ch, token).listQueues(ListQueuesRequest.getDefaultInstance());
  }

  private static Status.Code code(Supplier<Object> call) {
    try {
      call.get();
      return Status.Code.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode();
    }
  }

  /** Refused before any RPC: the TLS handshake failed (UNAVAILABLE), nothing was answered. */
  private static boolean failsTls(Supplier<Object> call) {
    return code(call) == Status.Code.UNAVAILABLE;
  }

  /** Opens a Subscribe stream; the status it ended with (OK if it subscribed). */
  private static Status.Code subscribe(ManagedChannel ch, String token, String q, String rid) {
    CompletableFuture<Status.Code> done = new CompletableFuture<>();
    StreamObserver<ReceiverMessage> req =
        DemoSecurity.withToken(SluiceGrpc.newStub(ch), token)
            .subscribe(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ManagerMessage m) {
                    if (m.hasSubscribed()) {
                      done.complete(Status.Code.OK);
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.complete(Status.fromThrowable(t).getCode());
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(Status.Code.OK);
                  }
                });
    req.onNext(
        ReceiverMessage.newBuilder()
            .setSubscribe(Subscribe.newBuilder().setQueue(q).setReceiverId(rid).setMaxInFlight(1))
            .build());
    try {
      return done.get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      return Status.Code.UNKNOWN;
    } finally {
      try {
        req.onCompleted();
      } catch (RuntimeException ignored) {
        // already ended
      }
    }
  }

  private static boolean reflect(ManagedChannel ch, String token) {
    CompletableFuture<Status.Code> done = new CompletableFuture<>();
    StreamObserver<ServerReflectionRequest> req =
        DemoSecurity.withToken(ServerReflectionGrpc.newStub(ch), token)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse r) {
                    done.complete(Status.Code.OK);
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.complete(Status.fromThrowable(t).getCode());
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(Status.Code.OK);
                  }
                });
    req.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    try {
      return done.get(10, TimeUnit.SECONDS) == Status.Code.PERMISSION_DENIED;
    } catch (Exception e) {
      return false;
    } finally {
      try {
        req.onCompleted();
      } catch (RuntimeException ignored) {
        // already ended
      }
    }
  }

  /**
   * As {@code snoop} (allowed on the queue, sent nothing), acks or nacks an event that is fired
   * right now, i.e. delivered to a legitimate receiver, with a made-up delivery token. Denied when
   * the manager answers UNKNOWN and changes nothing.
   */
  private boolean forge(ManagedChannel ch, boolean ack) {
    long[] victim = firedEvent();
    CompletableFuture<AckResult> answer = new CompletableFuture<>();
    CompletableFuture<Boolean> subscribed = new CompletableFuture<>();
    StreamObserver<ReceiverMessage> req =
        DemoSecurity.withToken(SluiceGrpc.newStub(ch), sec.snoopToken)
            .subscribe(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ManagerMessage m) {
                    if (m.hasSubscribed()) {
                      subscribed.complete(true);
                    }
                    if (m.hasAckResults() && m.getAckResults().getResultsCount() > 0) {
                      answer.complete(m.getAckResults().getResults(0));
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    subscribed.complete(false);
                    answer.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    subscribed.complete(false);
                  }
                });
    try {
      req.onNext(
          ReceiverMessage.newBuilder()
              .setSubscribe(
                  Subscribe.newBuilder()
                      .setQueue(queue)
                      .setReceiverId("snoop-" + (ack ? "a" : "n"))
                      .setMaxInFlight(1))
              .build());
      if (!subscribed.get(10, TimeUnit.SECONDS)) {
        return false;
      }
      byte[] forged = new byte[16];
      new SecureRandom().nextBytes(forged);
      EventRef ref =
          EventRef.newBuilder()
              .setId(victim[0])
              .setEpoch(victim[1])
              .setShard(db.shards().get(0).name())
              .setDeliveryToken(com.google.protobuf.ByteString.copyFrom(forged))
              .build();
      req.onNext(
          ack
              ? ReceiverMessage.newBuilder().setAcks(Acks.newBuilder().addEvents(ref)).build()
              : ReceiverMessage.newBuilder()
                  .setNacks(Nacks.newBuilder().addNacks(Nack.newBuilder().setEvent(ref)))
                  .build());
      return answer.get(10, TimeUnit.SECONDS).getStatus() == AckStatus.ACK_STATUS_UNKNOWN;
    } catch (Exception e) {
      return false;
    } finally {
      try {
        req.onCompleted();
      } catch (RuntimeException ignored) {
        // already ended
      }
    }
  }

  /** (id, epoch) of an event fired right now, or of the newest event when none is. */
  private long[] firedEvent() {
    try (Connection c = db.shards().get(0).pool().getConnection();
        Statement s = c.createStatement()) {
      for (String sql :
          new String[] {
            "SELECT id, epoch FROM " + queue + " WHERE state = 1 ORDER BY id DESC LIMIT 1",
            "SELECT id, epoch FROM " + queue + " ORDER BY id DESC LIMIT 1"
          }) {
        try (ResultSet r = s.executeQuery(sql)) {
          if (r.next()) {
            return new long[] {r.getLong(1), r.getLong(2)};
          }
        }
      }
      return new long[] {1, 1};
    } catch (java.sql.SQLException e) {
      return new long[] {1, 1};
    }
  }

  /**
   * GETs the status page over HTTPS with the attacker's client certificate (valid, of the demo's
   * CA, but no principal's: the HTTPS server requires one, as the gRPC port does) and {@code
   * token}; returns the status code, or -1 when the request failed.
   */
  private int http(String token) {
    try {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      try (InputStream in = Files.newInputStream(sec.ca.caFile())) {
        ks.setCertificateEntry("ca", CertificateUtils.getX509Certificates(in)[0]);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      KeyStore keys = KeyStore.getInstance(KeyStore.getDefaultType());
      keys.load(null, null);
      X509Certificate[] chain;
      try (InputStream in = Files.newInputStream(sec.attackerCert.cert())) {
        chain = CertificateUtils.getX509Certificates(in);
      }
      PrivateKey key;
      try (InputStream in = Files.newInputStream(sec.attackerCert.key())) {
        key = CertificateUtils.getPrivateKey(in);
      }
      char[] pass = "attacker".toCharArray();
      keys.setKeyEntry("client", key, pass, chain);
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, pass);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create("https://localhost:" + httpPort + "/api/status"))
              .timeout(Duration.ofSeconds(10));
      if (token != null) {
        b.header("Authorization", "Bearer " + token);
      }
      return HttpClient.newBuilder()
          .sslContext(ssl)
          .build()
          .send(b.build(), HttpResponse.BodyHandlers.ofString())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }
}
