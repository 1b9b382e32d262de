package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The core knows no transport: no source file of it imports gRPC, protobuf or the generated API,
 * and none of them is on its class path. Destinations plug in through the outlet port.
 */
class TransportFreeTest {
  private static final Pattern FORBIDDEN =
      Pattern.compile(
          "^\\s*import\\s+(static\\s+)?(io\\.grpc|com\\.google\\.protobuf|dev\\.sluice\\.proto)\\b.*$",
          Pattern.MULTILINE);

  @Test
  void noCoreSourceImportsGrpcProtobufOrTheGeneratedApi() throws IOException {
    Path main = Path.of("src/main/java");
    assertThat(main).isDirectory();
    List<String> offenders;
    try (Stream<Path> files = Files.walk(main)) {
      offenders =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .filter(
                  p -> {
                    try {
                      return FORBIDDEN.matcher(Files.readString(p)).find()
                          || Files.readString(p).contains("io.grpc.")
                          || Files.readString(p).contains("com.google.protobuf.");
                    } catch (IOException e) {
                      throw new IllegalStateException(e);
                    }
                  })
              .map(Path::toString)
              .toList();
    }
    assertThat(offenders).as("core sources that reach for a transport").isEmpty();
  }

  @Test
  void grpcAndProtobufAreNotOnTheCoreClassPath() {
    assertThat(onClassPath("io.grpc.Status")).isFalse();
    assertThat(onClassPath("com.google.protobuf.Message")).isFalse();
  }

  private static boolean onClassPath(String name) {
    try {
      Class.forName(name, false, TransportFreeTest.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
