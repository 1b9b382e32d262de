package dev.sluice.db.store;

import java.util.Objects;

/** A JSON column's value: the document as text, kept apart from plain strings. */
public record JsonText(String json) {
  public JsonText {
    Objects.requireNonNull(json, "json");
  }

  @Override
  public String toString() {
    return json;
  }
}
