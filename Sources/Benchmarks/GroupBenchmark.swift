import EventGraph
import Foundation

/// Consumer groups (issue 28, item 1): four members sharing a log beside one durable
/// consumer reading the same log, each handler doing nothing, so that what is measured is
/// the delivery and the acknowledgements.
enum GroupBenchmark {
  static func run(commits: Int, table: inout BenchmarkTable) async throws {
    for pairs in [false, true] { try await run(commits: commits, pairs: pairs, table: &table) }
  }

  /// With `pairs`, a third of the commits touch two accounts, whose partitions then wait
  /// for each other.
  static func run(commits: Int, pairs: Bool, table: inout BenchmarkTable) async throws {
    let directory = try temporaryDirectory(prefix: "eventgraph-groups")
    defer { try? removeDirectory(directory) }
    let model = try Model(
      json: Array(
        #"{"name": "G", "version": 1, "entities": [{"name": "Account", "attributes": [{"name": "n", "type": "int64"}]}]}"#
          .utf8),
      file: "group benchmark")
    let store = try EventStore.create(
      at: directory + "/store", model: model, options: StoreOptions(durability: .relaxed))
    let accounts =
      try store.write { tx in try (0..<64).map { _ in try tx.insert("Account", ["n": .int64(0)]) } }
      .value ?? []
    var rng = SplitMix(seed: 0x6A0)
    for i in 0..<commits {
      let a = accounts[Int(rng.next() % UInt64(accounts.count))]
      let b = accounts[Int(rng.next() % UInt64(accounts.count))]
      let two = pairs && rng.next() % 3 == 0
      try store.write { tx in
        try tx.set(a, "n", .int64(Int64(i)))
        if two { try tx.set(b, "n", .int64(Int64(-i))) }
      }
    }
    let end = try store.lastSequence()

    // One durable consumer, acknowledging every 100 commits while it catches up.
    let consumer = try store.consumer("one")
    let started = monotonicSeconds()
    let single = Task { try await consumer.run { _ in } }
    while try consumer.position() < end { try await Task.sleep(for: .milliseconds(1)) }
    let singleSeconds = monotonicSeconds() - started
    single.cancel()
    _ = await single.result

    // Four members of one group started together on the same log: the first to look takes
    // every partition, and they even out as they see each other (every third of a lease).
    let options = GroupOptions(lease: 0.5, partitions: 16)
    let members = try (0..<4).map { try store.consumerGroup("bench", member: "m\($0)", options: options) }
    let groupStarted = monotonicSeconds()
    let tasks = members.map { m in Task { try await m.run { _ in } } }
    while try store.consumerGroups().first?.partitions.allSatisfy({ $0.position >= end }) != true {
      try await Task.sleep(for: .milliseconds(1))
    }
    let groupSeconds = monotonicSeconds() - groupStarted
    for t in tasks { t.cancel() }
    for t in tasks { _ = await t.result }
    table.add(
      "consumer group, 4 members, catching up \(commits) commits\(pairs ? ", a third touching two objects" : "")",
      value: Double(commits) / groupSeconds,
      unit: "commits/s", baseline: Double(commits) / singleSeconds, baselineName: "one durable consumer, the same")
  }
}
