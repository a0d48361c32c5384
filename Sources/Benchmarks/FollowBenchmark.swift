import EventGraph
import EventGraphLocking
import EventGraphMigration
import Foundation

/// Issue 19's following upcast: while 8 tasks commit steadily through the service, the v2
/// lag (a v1 commit's return to its v2 counterpart being readable) and the longest commit
/// latency across the switch (a refused commit's retry at v2 included).
enum FollowBenchmark {
  /// The handle committers use, moved to the new version once by the first one refused.
  final class Current: Sendable {
    private let store: Locked<EventStore>
    init(_ store: EventStore) { self.store = Locked(store) }
    var handle: EventStore { store.withLock { $0 } }
    /// The handle at the active version, made once for all committers.
    func moved(from old: EventStore) throws -> EventStore {
      try store.withLock { s in
        if s === old { s = try old.atActiveVersion() }
        return s
      }
    }
  }

  /// A value shared between the committers, the follower's closures and the watcher.
  final class Shared<T: Sendable>: Sendable {
    private let value: Locked<T>
    init(_ value: T) { self.value = Locked(value) }
    var now: T { value.withLock { $0 } }
    func update(_ body: (inout T) -> Void) { value.withLock { body(&$0) } }
  }

  /// Runs `body` on a thread of its own (it blocks: the follower, the lag watcher), not on
  /// one of the two threads of the tasks' pool, which the committers need.
  final class Background<T: Sendable>: Sendable {
    private let result = Shared<Result<T, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> T) {
      Thread { [result, done] in
        let r = Result { try body() }
        result.update { $0 = r }
        done.signal()
      }.start()
    }

    func value() throws -> T {
      done.wait()
      done.signal()
      guard let r = result.now else { throw BaselineError(workload: "follow", message: "no result") }
      return try r.get()
    }
  }

  static func run(people: Int, seconds: Double, table: inout BenchmarkTable) throws {
    let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/examples").path
    let v1 = try Model(contentsOf: examples + "/AddressBook.v1.model.json")
    let v2 = try Model(contentsOf: examples + "/AddressBook.v2.model.json")
    let mapping = try MappingModel(contentsOf: examples + "/AddressBook.v1-v2.mapping.json")
    let dir = try temporaryDirectory(prefix: "bench-follow")
    defer { try? removeDirectory(dir) }
    _ = try UpcastBenchmark.buildHistory(at: dir + "/store", model: v1, people: people)
    let store = try EventStore(path: dir + "/store")
    let switchNow = Shared(false)
    let caughtUp = Shared(false)
    let follower = Background {
      try store.followingUpcast(
        through: [v2], mappings: [mapping],
        control: FollowControl(
          switchNow: { switchNow.now },
          progress: { done, end in if done == end { caughtUp.update { $0 = true } } }))
    }
    let buildStart = monotonicSeconds()
    while !caughtUp.now { Thread.sleep(forTimeInterval: 0.01) }
    let buildSeconds = monotonicSeconds() - buildStart
    let current = Current(store)
    let stop = Shared(false)
    let lags = Shared<[Double]>([])
    let watcher = Background { try watchLag(store, stop: stop, lags: lags) }
    let committers = (0..<8).map { t in Task.detached { try await commitSteadily(current, task: t, stop: stop) } }
    Thread.sleep(forTimeInterval: seconds)
    let switchStart = monotonicSeconds()
    switchNow.update { $0 = true }
    let report = try follower.value()
    let switchEnd = monotonicSeconds()
    Thread.sleep(forTimeInterval: seconds / 2)
    stop.update { $0 = true }
    var latencies: [(Double, Double)] = []
    for c in committers { latencies += try ServiceBenchmark.blocking { try await c.value } }
    try watcher.value()
    guard report.switched else { throw BaselineError(workload: "follow", message: "the follower did not switch") }
    let before = latencies.filter { $0.0 + $0.1 < switchStart - 0.05 }.map(\.1).sorted()
    // Every commit whose call overlapped the switch, from half a second before to half after.
    let across = latencies.filter { $0.0 < switchEnd + 0.5 && $0.0 + $0.1 > switchStart - 0.5 }.map(\.1)
    let lag = lags.now.sorted()
    let label = "\(people) people of history, 8 committers"
    table.add("follow: initial build until caught up (\(label))", value: buildSeconds, unit: "s")
    table.add(
      "follow: longest commit latency across the switch (\(label))", value: (across.max() ?? 0) * 1000, unit: "ms",
      baseline: (before.last ?? 0) * 1000, baselineName: "longest before the switch")
    table.add(
      "follow: median commit latency before the switch", value: median(before) * 1000, unit: "ms")
    table.add("follow: the switch (ask to switched)", value: (switchEnd - switchStart) * 1000, unit: "ms")
    table.add(
      "follow: v2 lag, median (\(lag.count) v1 commits)", value: median(lag) * 1000, unit: "ms")
    table.add("follow: v2 lag, longest", value: (lag.last ?? 0) * 1000, unit: "ms")
    table.add(
      "follow: commits during the run", value: Double(latencies.count), unit: "commits")
  }

  static func median(_ sorted: [Double]) -> Double { sorted.isEmpty ? 0 : sorted[sorted.count / 2] }

  /// One committer: an insert every 5 ms, through the service; refused at the switch, it
  /// moves to the new version and commits again (the latency counts from its first try).
  ///
  /// - Returns: for each commit, the time its call began and the seconds it took.
  static func commitSteadily(_ current: Current, task: Int, stop: Shared<Bool>) async throws -> [(Double, Double)] {
    var latencies: [(Double, Double)] = []
    var i = 0
    while !stop.now {
      let start = monotonicSeconds()
      var store = current.handle
      while true {
        do {
          let v1 = store.model.version == 1
          let i = i
          try await store.commit { tx in
            let person = try tx.insert("AddressBook", ["firstName": .string("t\(task)"), "lastName": .string("n\(i)")])
            if v1 { try tx.set(person, "phone1", .string("03-\(i)")) }
          }
          latencies.append((start, monotonicSeconds() - start))
          break
        } catch let e as StoreError where e.code == .versionChanged {
          store = try current.moved(from: store)
        }
      }
      i += 1
      try await Task.sleep(for: .milliseconds(5))
    }
    return latencies
  }

  /// Reads both logs' new commits every millisecond and records, for each v1 commit, the
  /// time from its first sight to its v2 counterpart's.
  static func watchLag(_ store: EventStore, stop: Shared<Bool>, lags: Shared<[Double]>) throws {
    var v1Done = try store.lastSequence()
    var v2End = try store.read(version: 2) { try $0.commits().last?.lastSequence ?? 0 }
    var pending: [UInt64: Double] = [:]
    while !stop.now {
      // The v1 commits that landed since the last look, with the time first seen.
      let now = monotonicSeconds()
      let newV1 = try store.read { try $0.commits(from: v1Done + 1) }
      for c in newV1 where c.firstSequence > v1Done { pending[c.firstSequence] = now }
      v1Done = newV1.last?.lastSequence ?? v1Done
      let newV2 = try store.read(version: 2) { try $0.commits(from: v2End + 1) }
      v2End = newV2.last?.lastSequence ?? v2End
      let seen = monotonicSeconds()
      for c in newV2 {
        guard let source = c.metadata.sourceCommit, let start = pending.removeValue(forKey: source) else { continue }
        lags.update { $0.append(seen - start) }
      }
      Thread.sleep(forTimeInterval: 0.001)
    }
  }
}
