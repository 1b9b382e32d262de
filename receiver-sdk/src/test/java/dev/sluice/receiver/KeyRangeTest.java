package dev.sluice.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyRangeTest {
  private static final String SYNTAX =
      "keyRange must be \"\" (every shard) or Vitess style \"-80\", \"80-\", \"40-c0\"";

  private static void rejects(String range, String why) {
    assertThatThrownBy(() -> KeyRange.check(range))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(SYNTAX + ", was \"" + range + "\": " + why);
  }

  @Test
  void acceptsVitessRanges() {
    for (String ok : List.of("-80", "80-", "40-c0", "00-01", "4000-4001", "7f-80ff", "-0001")) {
      assertThat(KeyRange.check(ok)).as(ok).isEqualTo(ok);
    }
  }

  @Test
  void everyShardIsTheEmptyRange() {
    assertThat(KeyRange.check("")).isEmpty();
    assertThat(KeyRange.check("-")).isEmpty();
    assertThat(KeyRange.check(null)).isEmpty();
  }

  @Test
  void saysWhatIsWrong() {
    rejects("80", "it must be start-end with one '-'");
    rejects("40-80-c0", "it must be start-end with one '-'");
    rejects("-8", "bound \"8\" must have an even number of hex digits");
    rejects(" -80", "bound \" \" must have an even number of hex digits");
    rejects("40-C0", "bound \"C0\" must be lowercase hex (0-9, a-f)");
    rejects("4g-", "bound \"4g\" must be lowercase hex (0-9, a-f)");
    rejects("0x40-", "bound \"0x40\" must be lowercase hex (0-9, a-f)");
  }

  @Test
  void startMustBeBelowEndAsKeysNotAsStrings() {
    rejects("c0-40", "start \"c0\" must be below end \"40\"");
    rejects("40-40", "start \"40\" must be below end \"40\"");
    // "40" is the key 0x40 followed by zero bytes, i.e. the same key as "4000".
    rejects("40-4000", "start \"40\" must be below end \"4000\"");
    rejects("-00", "start \"\" must be below end \"00\"");
    assertThat(KeyRange.check("40-4001")).isEqualTo("40-4001");
    assertThat(KeyRange.check("4000-41")).isEqualTo("4000-41");
  }
}
