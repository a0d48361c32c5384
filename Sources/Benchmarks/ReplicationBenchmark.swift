import EventGraph
import EventGraphLocking
import EventGraphReplication
import Foundation
import NATSClient

/// Issue 16's figures, on a three-node JetStream cluster started on loopback for the run
/// (`Tools/nats-cluster`): quorum group commit beside local durable group commit, one quorum
/// committer's latency, the local shipper's lag, a replica's catch-up beside `rebuild` of
/// the same log, and a promotion's time.
enum ReplicationBenchmark {
  static func run(commits: Int, catchUpEvents: Int, table: inout BenchmarkTable) throws {
    let dir = try temporaryDirectory(prefix: "bench-replication")
    defer { try? removeDirectory(dir) }
    guard system("Tools/nats-cluster start '\(dir)/nats' > '\(dir)/urls' < /dev/null") == 0 else {
      throw BaselineError(workload: "replication", message: "Tools/nats-cluster start failed (run Tools/setup)")
    }
    defer { _ = system("Tools/nats-cluster stop '\(dir)/nats' < /dev/null") }
    let urls = try String(contentsOfFile: dir + "/urls", encoding: .utf8).trimmingCharacters(
      in: .whitespacesAndNewlines
    )
    .split(separator: ",").map(String.init)
    let js = try JetStream(NATSConnection(urls: urls, name: "bench"), timeout: 10)

    let local = try groupCommits(dir + "/local", committers: 64, total: commits, js: nil)
    let quorum = try groupCommits(dir + "/quorum", committers: 64, total: commits, js: js)
    table.add("local durable commits, 64 committers", local, unit: "commits/s")
    table.add(
      "quorum commits (R3, sync always), 64 committers", quorum, unit: "commits/s", baseline: local,
      baselineName: "local durable, 64 committers")
    let floor = try serialFloor(dir + "/floor", batches: max(20, commits / 64), js: js)
    table.add(
      "floor: a 64-insert durable transaction, then its publish, one after the other", floor,
      unit: "commits/s", baseline: local, baselineName: "local durable, 64 committers")

    // Local, quorum, local again: the disk's fsync time drifts while the run goes on.
    let localLatency = try latencies(dir + "/lat-local", commits: commits / 8, js: nil)
    let quorumLatency = try latencies(dir + "/lat-quorum", commits: commits / 8, js: js)
    let localAfter = try latencies(dir + "/lat-local-after", commits: commits / 8, js: nil)
    table.add("one local durable committer, median latency (before)", value: localLatency.median * 1e3, unit: "ms")
    table.add("one local durable committer, median latency (after)", value: localAfter.median * 1e3, unit: "ms")
    table.add("one quorum committer, median latency", value: quorumLatency.median * 1e3, unit: "ms")
    table.add("one quorum committer, 99th percentile", value: quorumLatency.p99 * 1e3, unit: "ms")

    let lag = try shipperLag(dir + "/lag", committers: 64, total: commits, js: js)
    table.add("local mode: the shipper's longest lag, 64 committers", value: lag * 1e3, unit: "ms")

    let (apply, rebuild, promote) = try catchUp(dir + "/catchup", events: catchUpEvents, js: js)
    table.add(
      "a replica catching up", apply, unit: "events/s", baseline: rebuild, baselineName: "rebuild of the same log")
    table.add("promote (caught-up replica: catch-up check and fenced publish)", value: promote * 1e3, unit: "ms")

    // The lease and the writers' key on the commit path: one quorum committer, as above.
    try EventStore.generateKeyFile(at: dir + "/writers.key")
    let key = try StreamKey(file: dir + "/writers.key")
    let leased = try latencies(dir + "/lat-leased", commits: commits / 8, js: js, lease: LeaseOptions(), key: key)
    table.add(
      "one quorum committer holding the lease, messages tagged, median latency", value: leased.median * 1e3,
      unit: "ms")
    table.add(
      "  the same, beside the plain quorum committer", value: leased.median / quorumLatency.median, unit: "×")

    // Over TLS, logged in, tagged: a second cluster, as production runs it.
    guard system("Tools/nats-cluster start '\(dir)/secure' --secure > '\(dir)/secure-urls' < /dev/null") == 0 else {
      throw BaselineError(workload: "replication", message: "Tools/nats-cluster start --secure failed")
    }
    defer { _ = system("Tools/nats-cluster stop '\(dir)/secure' < /dev/null") }
    var security = NATSSecurity()
    security.caFile = dir + "/secure/tls/ca.pem"
    security.user = "eventgraph"
    security.password = try String(contentsOfFile: dir + "/secure/password", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let secureURLs = try String(contentsOfFile: dir + "/secure-urls", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
    let secure = try JetStream(NATSConnection(urls: secureURLs, name: "bench", security: security), timeout: 10)
    let tls = try groupCommits(dir + "/tls", committers: 64, total: commits, js: secure, key: key)
    table.add(
      "quorum commits over TLS, logged in, tagged, 64 committers", tls, unit: "commits/s", baseline: quorum,
      baselineName: "quorum commits in plain text")

    let kills = max(5, min(20, commits / 100))
    let failover = try failovers(dir + "/failover", kills: kills, ttl: 2, js: js)
    table.add(
      "failover, lease 2 s: kill to the first acknowledged commit, median of \(kills)",
      value: failover[failover.count / 2], unit: "s")
    table.add("failover, lease 2 s: the slowest of \(kills)", value: failover[failover.count - 1], unit: "s")
    table.add("failover, lease 2 s: the fastest of \(kills)", value: failover[0], unit: "s")
  }

  /// Failovers one after another, each time in seconds, sorted.
  ///
  /// A primary holding the lease stops (its shipper and its lease's renewals end, as at a
  /// kill), two candidates race, and the time runs until the winner's first commit reaches
  /// the stream. The winner is the next primary, a new candidate takes its place.
  static func failovers(_ path: String, kills: Int, ttl: Double, js: JetStream) throws -> [Double] {
    let stream = "O\(UUID().uuidString.prefix(8))"
    let lease = LeaseOptions(ttl: ttl)
    let first = try EventStore.create(at: path + "/p", model: try model())
    try first.write { tx in try tx.insert("Item", ["a1": .string("first")]) }
    var primary = try Shipper(store: first, jetStream: js, stream: stream, lease: lease)
    primary.start()
    try primary.shipPending()
    let stop = Locked(false)
    final class Candidate: Sendable {
      let won = Locked<Shipper?>(nil)
      let replica: Replica
      init(_ replica: Replica) { self.replica = replica }
    }
    var made = 0
    func candidate() throws -> Candidate {
      made += 1
      let c = Candidate(try Replica.create(at: path + "/c\(made)", jetStream: js, stream: stream))
      let thread = Thread {
        let shipper = try? c.replica.runAsCandidate(lease: lease, until: { stop.withLock { $0 } })
        c.won.withLock { $0 = shipper }
      }
      thread.start()
      return c
    }
    var candidates = [try candidate(), try candidate()]
    var times: [Double] = []
    for round in 0..<kills {
      let end = try js.streamInfo(stream)?.lastSequence ?? 0
      while try candidates.contains(where: { try $0.replica.position() < end }) { Thread.sleep(forTimeInterval: 0.005) }
      primary.stop()
      let killed = monotonicSeconds()
      var winner: Int?
      while winner == nil {
        winner = candidates.firstIndex { $0.won.withLock { $0 } != nil }
        if winner == nil { Thread.sleep(forTimeInterval: 0.001) }
        if monotonicSeconds() - killed > 60 {
          throw BaselineError(workload: "failover", message: "no candidate took over within 60 s (round \(round))")
        }
      }
      guard let index = winner else { break }
      let next = candidates.remove(at: index)
      guard let shipper = next.won.withLock({ $0 }) else { break }
      try next.replica.store.write { tx in try tx.insert("Item", ["a1": .string("round \(round)")]) }
      let last = try next.replica.store.read { try $0.logEnd().commit }
      while (shipper.status.shipped[1] ?? 0) < last { Thread.sleep(forTimeInterval: 0.001) }
      times.append(monotonicSeconds() - killed)
      primary = shipper
      candidates.append(try candidate())
    }
    stop.withLock { $0 = true }
    primary.stop()
    return times.sorted()
  }

  static func model() throws -> Model { try ServiceBenchmark.model() }

  /// `committers` tasks committing small inserts through the service, each `total /
  /// committers`; with `js`, in quorum mode.
  static func groupCommits(_ path: String, committers: Int, total: Int, js: JetStream?, key: StreamKey? = nil) throws
    -> Measurement
  {
    let store = try EventStore.create(at: path, model: try model())
    let shipper = try quorumShipper(store, js, prefix: "B", key: key)
    defer { shipper?.stop() }
    return try groupCommitsInto(
      store, committers: committers, total: total, value: String(repeating: "v", count: Baselines.valueSize))
  }

  /// What quorum mode's design allows with 64 committers: a batch of 64 inserts committed
  /// durably, then shipped and acknowledged, then the next — the local fsync and the
  /// stream's round trip one after the other, as the writer thread and the shipper take
  /// them.
  static func serialFloor(_ path: String, batches: Int, js: JetStream) throws -> Measurement {
    let store = try EventStore.create(at: path, model: try model())
    let shipper = try Shipper(store: store, jetStream: js, stream: "F" + UUID().uuidString.prefix(8), mode: .local)
    let value = String(repeating: "v", count: Baselines.valueSize)
    return try measure(operations: batches * 64) {
      for b in 0..<batches {
        try store.write { tx in for i in 0..<64 { try tx.insert("Item", ["a1": .string("\(b)-\(i)" + value)]) } }
        try shipper.shipPending()
      }
    }
  }

  /// A started quorum-mode shipper of `store` to a new stream, when there is a `js`.
  static func quorumShipper(
    _ store: EventStore, _ js: JetStream?, prefix: String, lease: LeaseOptions? = nil, key: StreamKey? = nil
  ) throws -> Shipper? {
    let shipper = try js.map {
      try Shipper(
        store: store, jetStream: $0, stream: prefix + UUID().uuidString.prefix(8), mode: .quorum, key: key,
        lease: lease)
    }
    shipper?.start()
    return shipper
  }

  /// One committer's commit latencies (seconds), median and 99th percentile.
  static func latencies(
    _ path: String, commits: Int, js: JetStream?, lease: LeaseOptions? = nil, key: StreamKey? = nil
  ) throws -> (median: Double, p99: Double) {
    let store = try EventStore.create(at: path, model: try model())
    let shipper = try quorumShipper(store, js, prefix: "L", lease: lease, key: key)
    defer { shipper?.stop() }
    let times = try ServiceBenchmark.blocking {
      var times: [Double] = []
      for i in 0..<commits {
        let start = monotonicSeconds()
        try await store.commit { tx in try tx.insert("Item", ["a1": .string("\(i)")]) }
        times.append(monotonicSeconds() - start)
      }
      return times.sorted()
    }
    return (times[times.count / 2], times[min(times.count - 1, times.count * 99 / 100)])
  }

  /// The longest time a commit waited, committed here, before the local-mode shipper had it
  /// in the stream, while `committers` commit (sampled every 2 ms).
  static func shipperLag(_ path: String, committers: Int, total: Int, js: JetStream) throws -> Double {
    let store = try EventStore.create(at: path, model: try model())
    let shipper = try Shipper(store: store, jetStream: js, stream: "G\(UUID().uuidString.prefix(8))", mode: .local)
    shipper.start()
    defer { shipper.stop() }
    let done = Locked(false)
    let samples = Locked<[(time: Double, end: UInt64, shipped: UInt64)]>([])
    let sampler = Thread {
      while !done.withLock({ $0 }) {
        let end = (try? store.read { try $0.logEnd().commit }) ?? 0
        let shipped = shipper.status.shipped[1] ?? 0
        samples.withLock { $0.append((monotonicSeconds(), end, shipped)) }
        Thread.sleep(forTimeInterval: 0.002)
      }
    }
    sampler.start()
    _ = try groupCommitsInto(store, committers: committers, total: total, value: "")
    // Until the stream has all of it.
    let last = try store.read { try $0.logEnd().commit }
    while (shipper.status.shipped[1] ?? 0) < last { Thread.sleep(forTimeInterval: 0.002) }
    Thread.sleep(forTimeInterval: 0.01)
    done.withLock { $0 = true }
    Thread.sleep(forTimeInterval: 0.01)
    let all = samples.withLock { $0 }
    var worst = 0.0
    for s in all where s.shipped < s.end {
      // The oldest commit not yet shipped was first seen committed at this sample's time or before.
      if let seen = all.first(where: { $0.end > s.shipped }) { worst = max(worst, s.time - seen.time) }
    }
    return worst
  }

  /// `committers` tasks committing inserts of `value` (after the commit's number) into
  /// `store` through the service, each `total / committers`.
  static func groupCommitsInto(_ store: EventStore, committers: Int, total: Int, value: String) throws -> Measurement {
    let each = max(1, total / committers)
    return try ServiceBenchmark.blocking {
      let start = monotonicSeconds()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<committers {
          group.addTask {
            for i in 0..<each {
              try await store.commit { tx in try tx.insert("Item", ["a1": .string("\(i)" + value)]) }
            }
          }
        }
        try await group.waitForAll()
      }
      return Measurement(operations: committers * each, seconds: monotonicSeconds() - start)
    }
  }

  /// A store of about `events` events shipped; a replica made from the stream (events/s)
  /// beside rebuild of the primary (events/s), and then a promotion's time (seconds).
  static func catchUp(_ path: String, events: Int, js: JetStream) throws -> (Measurement, Measurement, Double) {
    let primary = try EventStore.create(at: path + "/primary", model: try model())
    let perCommit = 500
    for c in 0..<max(1, events / (2 * perCommit)) {
      try primary.write { tx in
        for i in 0..<perCommit { try tx.insert("Item", ["a1": .string("\(c)-\(i)")]) }
      }
    }
    let stream = "C\(UUID().uuidString.prefix(8))"
    try Shipper(store: primary, jetStream: js, stream: stream).shipPending()
    let total = try primary.read { Int(try $0.logEnd().sequence) }
    let start = monotonicSeconds()
    let replica = try Replica.create(at: path + "/replica", jetStream: js, stream: stream)
    try replica.catchUp()
    let apply = Measurement(operations: total, seconds: monotonicSeconds() - start)
    let rebuild = try measure(operations: total) { _ = try primary.rebuild() }
    let promoteStart = monotonicSeconds()
    try replica.promote()
    return (apply, rebuild, monotonicSeconds() - promoteStart)
  }
}
