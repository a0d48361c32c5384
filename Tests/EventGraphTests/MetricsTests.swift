import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// `metrics()` and `health()`: figures that move as commits are made, and an exposition
/// that Prometheus' own checker accepts.
@Suite("Metrics and health")
struct MetricsTests {
  /// Debian's promtool (package `prometheus`, installed by Tools/setup).
  static let promtool = "/usr/bin/promtool"

  /// `promtool check metrics` on `text`: its exit status and what it printed.
  static func check(_ text: String) throws -> (status: Int32, output: String) {
    let r = try runProgram(at: URL(fileURLWithPath: promtool), ["check", "metrics"], input: text)
    return (r.status, r.out + r.err)
  }

  /// The value of the sample `name` (with its labels as written) in an exposition.
  static func sample(_ text: String, _ name: String) -> Double? {
    for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
      return Double(line.dropFirst(name.count + 1))
    }
    return nil
  }

  @Test("the counters and histograms count each write transaction, its commits and its events")
  func countsMove() async throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    let before = try store.metrics()
    #expect(before.commitsAppended == 0 && before.transactionDuration.count == 0)
    for i in 0..<5 {
      try store.write { tx in
        try tx.insert("AddressBook", ["firstName": .string("F\(i)"), "lastName": .string("L")])
      }
    }
    // Concurrent commits: group commit may put several in one transaction.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<20 {
        group.addTask {
          _ = try await store.commit { tx in
            try tx.insert("AddressBook", ["firstName": .string("G\(i)"), "lastName": .string("L")])
          }
        }
      }
      try await group.waitForAll()
    }
    let after = try store.metrics()
    let end = try store.read { try $0.logEnd() }
    #expect(after.commitsAppended == 25)
    #expect(after.eventsAppended == end.sequence)
    #expect(after.logCommits == end.commit && after.logEvents == end.sequence)
    for h in [after.transactionDuration, after.lmdbCommitDuration, after.commitsPerTransaction] {
      #expect(h.count >= 6 && h.count <= 25, "one observation per transaction")
      #expect(h.cumulativeCounts == h.cumulativeCounts.sorted(), "cumulative counts never fall")
      #expect((h.cumulativeCounts.last ?? 0) <= h.count)
    }
    #expect(after.transactionDuration.count == after.commitsPerTransaction.count)
    #expect(after.commitsPerTransaction.sum == 25)
    #expect(after.lmdbCommitDuration.sum <= after.transactionDuration.sum)
    #expect(after.mapSize >= after.usedSize && after.usedSize > 0 && after.fileSize > 0)
    #expect(after.readers <= after.maxReaders && after.maxReaders > 0)
  }

  @Test("the exposition passes promtool check metrics, and says what metrics() says")
  func exposition() async throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    for i in 0..<3 {
      try store.write { tx in try tx.insert("AddressBook", ["firstName": .string("\(i)"), "lastName": .string("L")]) }
    }
    let mailer = try store.consumer("mail \"daily\"\\n")
    try await mailer.acknowledge(through: 2)
    let m = try store.metrics()
    let text = m.prometheusText()
    #expect(FileManager.default.isExecutableFile(atPath: Self.promtool), "promtool is missing: run Tools/setup")
    let checked = try Self.check(text)
    #expect(checked.status == 0 && checked.output.isEmpty, "\(checked.output)")
    #expect(Self.sample(text, "eventgraph_commits_total") == 3)
    #expect(Self.sample(text, "eventgraph_commit_transaction_duration_seconds_count") == 3)
    #expect(Self.sample(text, "eventgraph_commit_transaction_duration_seconds_bucket{le=\"+Inf\"}") == 3)
    #expect(Self.sample(text, "eventgraph_log_events") == Double(m.logEvents))
    let lag = m.logEvents - 2
    #expect(Self.sample(text, "eventgraph_consumer_lag_events{consumer=\"mail \\\"daily\\\"\\\\n\"}") == Double(lag))
    let storeOnly = m.prometheusText(includingProcess: false)
    #expect(!storeOnly.contains("eventgraph_commits_total") && storeOnly.contains("eventgraph_log_events"))
    #expect(try Self.check(storeOnly).status == 0)
  }

  @Test("health: a writable store is healthy; a consumer too far behind is not, with why")
  func health() async throws {
    let (store, dir) = try makeStore(try Fixtures.addressBookV1())
    defer { removeDirectory(dir) }
    try store.write { tx in try tx.insert("AddressBook", ["firstName": .string("a"), "lastName": .string("b")]) }
    let c = try store.consumer("slow")
    // A consumer is known to the store from its first acknowledgement.
    try await c.acknowledge(through: 1)
    #expect(try store.health().isHealthy)
    let tight = try store.health(maxConsumerLag: 0)
    #expect(!tight.isHealthy)
    #expect(tight.problems.map(\.name) == ["consumer:slow"])
    #expect(tight.problems.first?.detail.contains("behind the log's end") == true)
    try await c.acknowledge(through: try store.read { try $0.logEnd().sequence })
    #expect(try store.health(maxConsumerLag: 0).isHealthy)
  }

  @Test("health: a store opened read-only takes no commits, and says so")
  func readOnlyHealth() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    _ = try EventStore.create(at: path, model: try Fixtures.addressBookV1())
    let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
    let health = try reader.health()
    #expect(!health.isHealthy)
    #expect(health.problems.map(\.name) == ["writer"] && health.problems.first?.detail == "the store is open read-only")
  }
}
