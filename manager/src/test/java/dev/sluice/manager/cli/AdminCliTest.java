package dev.sluice.manager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.manager.Harness;
import dev.sluice.manager.security.Action;
import dev.sluice.manager.security.Authenticator;
import dev.sluice.manager.security.Grant;
import dev.sluice.manager.security.Limits;
import dev.sluice.manager.security.Principal;
import dev.sluice.manager.security.SecurityConfig;
import dev.sluice.manager.security.TlsConfig;
import dev.sluice.testkit.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice dead list|replay|purge} and {@code sluice queue pause|resume} with {@code
 * --manager}: through the Admin API over TLS with a token, no database credentials (no config file
 * at all).
 */
class AdminCliTest {
  static Harness h;
  static Path dir;
  static String manager;
  static String ca;
  static String opsToken;
  static String viewerToken;

  static Principal principal(String name, Action a) {
    return new Principal(
        name,
        Authenticator.sha256(name + "-secret"),
        null,
        List.of(new Grant(List.of("*"), Set.of(a), List.of())),
        Limits.NONE);
  }

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("sluice-admin-cli");
    TestPki pki = TestPki.create(dir, "main");
    TestPki.Issued server = pki.server("server");
    h = new Harness(AdminCliTest.class);
    h.createQueue("cli_q", "max_attempts=1 min_backoff=0s");
    for (long id = 1; id <= 3; id++) {
      h.exec(
          "INSERT INTO cli_q (id, order_id, state, epoch) VALUES (" + id + ", " + id + ", 3, 1)");
    }
    SecurityConfig sec =
        new SecurityConfig(
            new TlsConfig(
                server.cert(),
                server.key(),
                pki.caFile(),
                false,
                TlsConfig.DEFAULT_RELOAD_INTERVAL),
            List.of(principal("ops", Action.ADMIN), principal("viewer", Action.STATS)),
            true,
            true,
            false);
    h.startManager(h.configBuilder().security(sec).build(), java.time.Clock.systemUTC());
    // The manager made Sluice's own tables (sluice_dead_reason) at start.
    h.exec(
        "INSERT INTO sluice_dead_reason (queue, id, epoch, reason, time_ns) VALUES"
            + " ('cli_q', 2, 1, 'receiver nacked: no such customer', 0)");
    manager = "localhost:" + h.server().port();
    ca = pki.caFile().toString();
    opsToken = Files.writeString(dir.resolve("ops.token"), "ops-secret\n").toString();
    viewerToken = Files.writeString(dir.resolve("viewer.token"), "viewer-secret").toString();
  }

  @AfterAll
  static void stop() {
    if (h != null) {
      h.close();
    }
  }

  static Cli.Result run(String token, String... args) {
    String[] all = new String[args.length + 6];
    System.arraycopy(args, 0, all, 0, args.length);
    System.arraycopy(
        new String[] {"--manager", manager, "--ca", ca, "--token-file", token},
        0,
        all,
        args.length,
        6);
    return Cli.run(all);
  }

  @Test
  void deadListReplayAndPurgeGoThroughTheManager() throws Exception {
    Cli.Result list = run(viewerToken, "dead", "list", "cli_q", "--after", "1");
    assertThat(list.code()).as(list.toString()).isZero();
    assertThat(list.out()).contains("receiver nacked: no such customer").contains("3");
    assertThat(list.out()).doesNotContain("\n| s1 | 1 ");

    Cli.Result denied = run(viewerToken, "dead", "replay", "cli_q", "--id", "2");
    assertThat(denied.code()).as(denied.toString()).isEqualTo(CliException.BAD_INPUT);
    assertThat(denied.err()).contains("PERMISSION_DENIED").contains("may not replay");
    assertThat(h.queryLong("SELECT state FROM cli_q WHERE id = 2")).isEqualTo(3);

    Cli.Result replay = run(opsToken, "dead", "replay", "cli_q", "--id", "2,99");
    assertThat(replay.code()).as(replay.toString()).isEqualTo(CliException.FAILED);
    assertThat(replay.out()).contains("replayed 1 dead events of cli_q");
    assertThat(replay.err()).contains("id 99: unknown id");
    assertThat(h.queryLong("SELECT state FROM cli_q WHERE id = 2")).isNotEqualTo(3);

    Cli.Result purge = run(opsToken, "dead", "purge", "cli_q", "--id", "1", "--json");
    assertThat(purge.code()).as(purge.toString()).isZero();
    assertThat(purge.out()).contains("\"purged\":1");
    assertThat(h.queryLong("SELECT COUNT(*) FROM cli_q WHERE id = 1")).isZero();
  }

  @Test
  void orderingSkipNeedsTheReplayGrantAndAnOrderedQueue() throws Exception {
    Cli.Result halted = run(viewerToken, "ordering", "halted", "cli_q");
    assertThat(halted.code()).as(halted.toString()).isZero();
    assertThat(halted.err()).contains("does not halt keys at dead events");

    Cli.Result denied = run(viewerToken, "ordering", "skip", "cli_q", "3");
    assertThat(denied.code()).as(denied.toString()).isEqualTo(CliException.BAD_INPUT);
    assertThat(denied.err()).contains("PERMISSION_DENIED").contains("may not replay");

    Cli.Result unordered = run(opsToken, "ordering", "skip", "cli_q", "3");
    assertThat(unordered.code()).as(unordered.toString()).isEqualTo(CliException.BAD_INPUT);
    assertThat(unordered.err()).contains("INVALID_ARGUMENT").contains("not ordered");
    assertThat(h.queryLong("SELECT state FROM cli_q WHERE id = 3")).isEqualTo(3);
  }

  @Test
  void queuePauseAndResumeGoThroughTheManager() throws Exception {
    Cli.Result denied = run(viewerToken, "queue", "pause", "cli_q");
    assertThat(denied.code()).as(denied.toString()).isEqualTo(CliException.BAD_INPUT);
    Cli.Result pause = run(opsToken, "queue", "pause", "cli_q");
    assertThat(pause.code()).as(pause.toString()).isZero();
    assertThat(pause.out()).contains("paused cli_q on shard s1");
    assertThat(h.queryLong("SELECT paused FROM sluice_queue_control WHERE queue = 'cli_q'"))
        .isEqualTo(1);
    Cli.Result resume = run(opsToken, "queue", "resume", "cli_q");
    assertThat(resume.code()).as(resume.toString()).isZero();
    assertThat(h.queryLong("SELECT paused FROM sluice_queue_control WHERE queue = 'cli_q'"))
        .isZero();
  }

  @Test
  void aTokenIsNotSentInClearToAnotherHost() {
    Cli.Result r =
        Cli.run(
            "queue",
            "pause",
            "cli_q",
            "--manager",
            "example.invalid:443",
            "--token-file",
            opsToken);
    assertThat(r.code()).isEqualTo(CliException.BAD_INPUT);
    assertThat(r.err()).contains("--ca");
  }
}
