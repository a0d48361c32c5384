import EventGraph
import EventGraphLocking
import Foundation

/// Issue 6's figures: durable commits per second with 1, 8 and 64 concurrent committers
/// (group commit) against single-writer raw LMDB durable commits in the same run, and the
/// latency from a commit to its delivery to a subscriber, in the same process and across
/// processes.
enum ServiceBenchmark {
  static func model() throws -> Model {
    try Model(
      name: "ServiceBench", version: 1,
      entities: [
        EntityDescription(name: "Item", attributes: [AttributeDescription(name: "a1", type: .string, isOptional: true)])
      ])
  }

  static func run(commits: Int, latencyCommits: Int, table: inout BenchmarkTable) throws {
    let lmdbDir = try temporaryDirectory(prefix: "bench-service-lmdb")
    defer { try? removeDirectory(lmdbDir) }
    for workload in Workload.allCases {
      for committers in [1, 8, 64] {
        // The disk is shared and its fsync time drifts: each figure is compared with raw LMDB
        // measured just before and just after it, taking the faster of the two (the
        // stricter comparison).
        let before = try Baselines.lmdbDurableCommits(in: lmdbDir, commits: commits / 4)
        let (m, perBatch) = try concurrentCommits(
          committers: committers, total: committers == 1 ? commits : commits * 4, durability: .durable,
          workload: workload)
        let after = try Baselines.lmdbDurableCommits(in: lmdbDir, commits: commits / 4)
        let raw = before.rate >= after.rate ? before : after
        table.add(
          "\(workload.rawValue), \(committers) committer\(committers == 1 ? "" : "s")", m, unit: "commits/s",
          baseline: raw, baselineName: "raw LMDB durable commits")
        table.add("  commits per batch (one fsync each)", value: perBatch, unit: "commits")
      }
    }
    // The floors under the 64 committers' figures: their batches' writes alone.
    for (workload, nested) in [(Workload.insert, false), (.update, false), (.update, true)] {
      let before = try Baselines.lmdbDurableCommits(in: lmdbDir, commits: commits / 4)
      let m = try floorCommits(committers: 64, total: commits * 4, workload: workload, nested: nested)
      let after = try Baselines.lmdbDurableCommits(in: lmdbDir, commits: commits / 4)
      let what = workload == .insert ? "inserts'" : "updates'"
      table.add(
        "floor: 64 \(what) puts a transaction, direct\(nested ? ", each nested" : "")", m, unit: "commits/s",
        baseline: before.rate >= after.rate ? before : after, baselineName: "raw LMDB durable commits")
    }
    // Without fsync the figure is bound by the commit path's CPU: the ceiling of the above.
    for workload in Workload.allCases {
      let (relaxed, relaxedBatch) = try concurrentCommits(
        committers: 64, total: commits * 5, durability: .relaxed, workload: workload)
      table.add(
        "\(workload.rawValue.replacingOccurrences(of: "durable", with: "relaxed")), 64 committers (no fsync)", relaxed,
        unit: "commits/s")
      table.add("  commits per batch", value: relaxedBatch, unit: "commits")
    }

    let inProcess = try latencyInProcess(commits: latencyCommits)
    table.add("subscription latency in process, median", value: inProcess.median * 1e6, unit: "µs")
    table.add("subscription latency in process, 99th percentile", value: inProcess.p99 * 1e6, unit: "µs")
    let crossProcess = try latencyAcrossProcesses(commits: latencyCommits)
    table.add("subscription latency across processes, median", value: crossProcess.median * 1e6, unit: "µs")
    table.add("subscription latency across processes, 99th percentile", value: crossProcess.p99 * 1e6, unit: "µs")
  }

  /// The small commits of the group-commit figures.
  enum Workload: String, CaseIterable {
    /// Inserts a new object with a 100-byte attribute (2 events): what a service appending
    /// facts does; the log, the objects and the history grow at their ends.
    case insert = "durable inserts"
    /// Sets a 100-byte attribute of the committer's own object (1 event): the object records
    /// and history entries it touches are spread over the databases' pages.
    case update = "durable updates"
  }

  /// `committers` tasks, each making `total / committers` small commits one after the other.
  ///
  /// - Returns: the rate, and the mean number of commits per batch.
  static func concurrentCommits(
    committers: Int, total: Int, durability: StoreOptions.Durability, workload: Workload
  ) throws -> (
    Measurement, Double
  ) {
    let value = String(repeating: "v", count: Baselines.valueSize)
    let dir = try temporaryDirectory(prefix: "bench-service-\(committers)")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/store", model: try model(), options: StoreOptions(durability: durability))
    let objects = try landed(store.write { tx in try (0..<committers).map { _ in try tx.insert("Item") } })
    let each = max(1, total / committers)
    let batchesBefore = store.batchesCommitted
    let m = try blocking {
      let start = monotonicSeconds()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for object in objects {
          group.addTask {
            for i in 0..<each {
              switch workload {
              case .insert: try await store.commit { tx in try tx.insert("Item", ["a1": .string("\(i)" + value)]) }
              case .update: try await store.commit { tx in try tx.set(object, "a1", .string("\(i)" + value)) }
              }
            }
          }
        }
        try await group.waitForAll()
      }
      return Measurement(operations: committers * each, seconds: monotonicSeconds() - start)
    }
    let batches = store.batchesCommitted - batchesBefore
    return (m, Double(m.operations) / Double(max(1, batches)))
  }

  /// What the workload's batches write, made directly in a store of `committers` objects
  /// (`CommitFloor`): one durable transaction per `committers` commits, as if every batch
  /// were full; `nested` puts each update in a nested transaction.
  static func floorCommits(committers: Int, total: Int, workload: Workload, nested: Bool) throws -> Measurement {
    let value = Value.string(String(repeating: "v", count: Baselines.valueSize))
    let dir = try temporaryDirectory(prefix: "bench-service-floor")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/store", model: try model())
    let objects = try landed(
      store.write { tx in
        try (0..<committers).map { _ in try tx.insert("Item", ["a1": value]) }
      })
    let floor = try CommitFloor(store: store, targets: objects, attribute: "a1", value: value)
    let m: Measurement
    switch workload {
    case .insert: m = try measure(operations: total) { try floor.insertCommits(total, perTransaction: committers) }
    case .update:
      m = try measure(operations: total) { try floor.commits(total, perTransaction: committers, nested: nested) }
    }
    // The floor wrote what the store's own commits would have: its log replays to its projection.
    let report = try store.verify()
    guard report.isOK else {
      throw BaselineError(workload: "commit floor", message: report.problems.joined(separator: "; "))
    }
    return m
  }

  // MARK: - Latency

  struct Latencies {
    var samples: [Double]
    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
    func percentile(_ p: Double) -> Double {
      let sorted = samples.sorted()
      guard !sorted.isEmpty else { return 0 }
      return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }
  }

  /// When each commit (by number) was delivered to a subscriber.
  final class Arrivals: Sendable {
    private let times = Locked<[UInt64: Double]>([:])
    func record(_ number: UInt64) {
      let now = monotonicSeconds()
      times.withLock { $0[number] = now }
    }
    var all: [UInt64: Double] { times.withLock { $0 } }
  }

  /// Subscribes from the current end of the log and records arrival times until `count`
  /// commits arrived.
  static func subscribe(_ store: EventStore, count: Int, into arrivals: Arrivals) throws -> Task<Void, any Error> {
    let start = try store.lastSequence()
    return Task {
      var seen = 0
      for try await commit in store.events(after: start) {
        arrivals.record(commit.number)
        seen += 1
        if seen == count { return }
      }
    }
  }

  /// A commit every 2 ms from a task of this process; latency from the start of the commit
  /// call to the subscriber's wake-up (so it includes the commit itself).
  static func latencyInProcess(commits: Int) throws -> Latencies {
    let dir = try temporaryDirectory(prefix: "bench-latency")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/store", model: try model(), options: StoreOptions(durability: .relaxed))
    let target = try landed(store.write { tx in try tx.insert("Item") })
    let arrivals = Arrivals()
    let follower = try subscribe(store, count: commits, into: arrivals)
    let starts = try blocking {
      var starts: [UInt64: Double] = [:]
      try await Task.sleep(for: .milliseconds(50))
      for i in 0..<commits {
        let t0 = monotonicSeconds()
        let r = try await store.commit { tx in try tx.set(target, "a1", .string("\(i)")) }
        if let n = r.commit?.number { starts[n] = t0 }
        try await Task.sleep(for: .milliseconds(2))
      }
      try await follower.value
      return starts
    }
    let arrived = arrivals.all
    return Latencies(samples: starts.compactMap { n, t0 in arrived[n].map { $0 - t0 } })
  }

  /// A commit every 2 ms from a child process (this executable, `--latency-writer`); the
  /// child prints each commit's number and start time on CLOCK_MONOTONIC, which both
  /// processes share.
  static func latencyAcrossProcesses(commits: Int) throws -> Latencies {
    let dir = try temporaryDirectory(prefix: "bench-latency-x")
    defer { try? removeDirectory(dir) }
    let path = dir + "/store"
    let store = try EventStore.create(at: path, model: try model(), options: StoreOptions(durability: .relaxed))
    try store.write { tx in _ = try tx.insert("Item") }
    let arrivals = Arrivals()
    let follower = try subscribe(store, count: commits, into: arrivals)
    let child = Process()
    child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    child.arguments = ["--latency-writer", path, String(commits)]
    let out = Pipe()
    child.standardOutput = out
    try child.run()
    let printed = out.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    guard child.terminationStatus == 0 else {
      throw BaselineError(workload: "latency writer", message: "exit status \(child.terminationStatus)")
    }
    try blocking { try await follower.value }
    let arrived = arrivals.all
    var samples: [Double] = []
    for line in String(decoding: printed, as: UTF8.self).split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 2, let n = UInt64(fields[0]), let t0 = Double(fields[1]) else { continue }
      if let t = arrived[n] { samples.append(t - t0) }
    }
    return Latencies(samples: samples)
  }

  /// The child side of ``latencyAcrossProcesses(commits:)``: `--latency-writer STORE N`.
  static func latencyWriter(_ arguments: [String]) throws {
    guard arguments.count == 2, let commits = Int(arguments[1]) else {
      throw BaselineError(workload: "latency writer", message: "usage: --latency-writer STORE N")
    }
    let store = try EventStore(path: arguments[0], options: StoreOptions(durability: .relaxed))
    guard let target = try store.read({ try $0.objects(of: "Item").first }) else {
      throw BaselineError(workload: "latency writer", message: "no item")
    }
    Thread.sleep(forTimeInterval: 0.1)
    for i in 0..<commits {
      let t0 = monotonicSeconds()
      let info = try store.write { tx in try tx.set(target, "a1", .string("\(i)")) }.commit
      FileHandle.standardOutput.write(Data("\(info?.number ?? 0) \(t0)\n".utf8))
      Thread.sleep(forTimeInterval: 0.002)
    }
  }

  /// Runs async work from the benchmark's synchronous main code, blocking until it ends.
  static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = BlockingOutcome<T>()
    Task {
      do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
      outcome.done.signal()
    }
    outcome.done.wait()
    guard let result = outcome.result else { throw BaselineError(workload: "async", message: "no result") }
    return try result.get()
  }
}

/// The result of ``ServiceBenchmark/blocking(_:)``'s task.
private final class BlockingOutcome<T: Sendable>: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): written by the task before it signals `done`, read after.
  var result: Result<T, any Error>?
  let done = DispatchSemaphore(value: 0)
}
