package dev.sluice.examples.demo;

/**
 * One event across shards: ids are unique per shard's table only, so the shard's name is part of
 * the key (it is what receivers see as {@code event.shard()}).
 */
record EventKey(String shard, long id) {
  @Override
  public String toString() {
    return shard + "/" + id;
  }
}
