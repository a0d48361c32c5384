import EventGraph
import Foundation

/// Issue 2's figures: batched appends, durable single commits, rebuild and a decoding scan,
/// each beside raw LMDB from C (and SQLite from C) in the same run.
enum StoreBenchmark {
  static func model() throws -> Model { try model(unique: false) }

  static func run(events: Int, durableCommits: Int, unsyncedCommits: Int, table: inout BenchmarkTable) throws {
    let value = String(repeating: "v", count: Baselines.valueSize)
    let lmdbDir = try temporaryDirectory(prefix: "bench-lmdb")
    let sqliteDir = try temporaryDirectory(prefix: "bench-sqlite")
    let storeDir = try temporaryDirectory(prefix: "bench-store")
    defer {
      try? removeDirectory(lmdbDir)
      try? removeDirectory(sqliteDir)
      try? removeDirectory(storeDir)
    }

    // Batched appends: 1,000 events a commit = 100 objects × (insert + 9 sets of 100 bytes).
    // In four rounds whose order turns (raw, raw append, SQLite, store; raw append, SQLite,
    // store, raw; …), each side a quarter of the events: one shot each swung with the
    // machine's mood (the store against SQLite 1.15× to 1.91× over nine runs of one build). Each C
    // baseline starts afresh every round; the store grows to all the events, which the
    // figures after this one read.
    let appendRounds = 4
    let eventsPerRound = max(1000, events / appendRounds / 1000 * 1000)
    let storedEvents = eventsPerRound * appendRounds
    let storePath = storeDir + "/store"
    let store = try EventStore.create(at: storePath, model: try model())
    var (raw, rawAppend, sqlite, batched) = (
      Measurement(operations: 0, seconds: 0), Measurement(operations: 0, seconds: 0),
      Measurement(operations: 0, seconds: 0), Measurement(operations: 0, seconds: 0)
    )
    var (rawRatios, sqliteRatios): ([Double], [Double]) = ([], [])
    // The store's side again, over the CPU time of the thread that commits.
    var batchedCPU = 0.0
    for round in 0..<appendRounds {
      var (r, sq, st) = (
        Measurement(operations: 0, seconds: 0), Measurement(operations: 0, seconds: 0),
        Measurement(operations: 0, seconds: 0)
      )
      for side in (0..<4).map({ ($0 + round) % 4 }) {
        switch side {
        case 0: r = try Baselines.lmdbBatchedPuts(in: lmdbDir, events: eventsPerRound, append: false)
        case 1: rawAppend += try Baselines.lmdbBatchedPuts(in: lmdbDir, events: eventsPerRound, append: true)
        case 2: sq = try Baselines.sqliteBatched(in: sqliteDir, events: eventsPerRound)
        default:
          let cpu = threadCPUSeconds()
          defer { batchedCPU += threadCPUSeconds() - cpu }
          st = try measure(operations: eventsPerRound) {
            try appendBatches(eventsPerRound / 1000, to: store, value: value)
          }
        }
      }
      raw += r
      sqlite += sq
      batched += st
      rawRatios.append(st.rate / r.rate)
      sqliteRatios.append(st.rate / sq.rate)
    }
    table.add(
      "batched appends (1,000 events/commit)", batched, unit: "events/s", baseline: raw, baselineName: "raw LMDB puts")
    table.add(
      "batched appends vs MDB_APPEND puts", batched, unit: "events/s", baseline: rawAppend,
      baselineName: "raw LMDB append")
    table.add(
      "batched appends vs SQLite (WAL, FULL)", batched, unit: "events/s", baseline: sqlite, baselineName: "SQLite")
    table.add(
      "batched appends vs raw LMDB puts, median of \(appendRounds) rounds' ratios", value: median(rawRatios.sorted()),
      unit: "x")
    table.add(
      "batched appends vs SQLite, median of \(appendRounds) rounds' ratios", value: median(sqliteRatios.sorted()),
      unit: "x")
    table.add("anonymous memory after appends", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")
    // The import through the call `eventtool import --batch 1000` makes, beside them.
    try ImportBenchmark.run(
      events: events, batched: batched, batchedCPU: Measurement(operations: storedEvents, seconds: batchedCPU),
      in: storeDir, table: &table)
    // The same appends with a uniqueness constraint, beside the same without.
    try runUniqueness(events: events, in: storeDir, table: &table)

    // A decoding scan: what a subscriber catching up does. The raw scan reads what the last
    // LMDB writer left: all the events, as the store holds (not timed).
    _ = try Baselines.lmdbBatchedPuts(in: lmdbDir, events: storedEvents, append: true)
    let rawScan = try Baselines.lmdbCursorScan(in: lmdbDir)
    var decoded = 0
    let scan = try measure(operations: storedEvents) {
      try store.read { s in try s.forEachCommit { decoded += $0.events.count } }
    }
    guard decoded == storedEvents else {
      throw BaselineError(workload: "scan", message: "decoded \(decoded) of \(storedEvents)")
    }
    table.add(
      "scan decoding every event", scan, unit: "events/s", baseline: rawScan, baselineName: "raw LMDB cursor scan")

    // Rebuild: replay of the whole log into fresh projections.
    let rebuild = try measure(operations: storedEvents) { try store.rebuild() }
    table.add("rebuild (full replay)", rebuild, unit: "events/s")
    table.add("anonymous memory after rebuild", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")

    // Durable single-event commits, fsync-bound on all three sides, in rounds whose order
    // turns (raw LMDB, SQLite, store; SQLite, store, raw; …) so that no side always runs
    // right after the same neighbour's burst of fsyncs.
    let target = try store.read { try $0.objects(of: "Item").first }
    guard let target else { throw BaselineError(workload: "durable", message: "no object") }
    let rounds = 6
    let perRound = max(1, durableCommits / rounds)
    // The floor: the store's writes alone, made directly (EventGraph/Store/CommitFloor.swift).
    try store.write { tx in try tx.set(target, "a1", .string(value)) }
    let floor = try CommitFloor(store: store, targets: [target], attribute: "a1", value: .string(value))
    var floorDurable = Measurement(operations: 0, seconds: 0)
    var floorRatios: [Double] = []
    var rawDurable = Measurement(operations: 0, seconds: 0)
    var sqliteDurable = Measurement(operations: 0, seconds: 0)
    var durable = Measurement(operations: 0, seconds: 0)
    var committed = 0
    var (rawCPU, storeCPU) = ((user: 0.0, kernel: 0.0), (user: 0.0, kernel: 0.0))
    // Each round's own ratio too: neighbours in time share the machine's mood.
    var roundRatios: [Double] = []
    for round in 0..<rounds {
      var (rawRound, storeRound) = (Measurement(operations: 0, seconds: 0), Measurement(operations: 0, seconds: 0))
      var floorRound = Measurement(operations: 0, seconds: 0)
      for side in (0..<4).map({ ($0 + round) % 4 }) {
        switch side {
        case 3: floorRound = try measure(operations: perRound) { try floor.commits(perRound) }
        case 0:
          rawRound = try addingProcessorTime(to: &rawCPU) {
            try Baselines.lmdbDurableCommits(in: lmdbDir, commits: perRound)
          }
        case 1: sqliteDurable += try Baselines.sqliteDurableCommits(in: sqliteDir, commits: perRound)
        default:
          storeRound = try addingProcessorTime(to: &storeCPU) {
            try measure(operations: perRound) {
              for _ in 0..<perRound {
                committed += 1
                try store.write { tx in try tx.set(target, "a1", .string("\(committed)" + value)) }
              }
            }
          }
        }
      }
      rawDurable += rawRound
      durable += storeRound
      roundRatios.append(storeRound.rate / rawRound.rate)
      floorDurable += floorRound
      floorRatios.append(floorRound.rate / rawRound.rate)
    }
    roundRatios.sort()
    floorRatios.sort()
    table.add(
      "durable single-event commits", durable, unit: "commits/s", baseline: rawDurable, baselineName: "raw LMDB commits"
    )
    table.add(
      "durable commits vs SQLite", durable, unit: "commits/s", baseline: sqliteDurable, baselineName: "SQLite commits")
    let n = roundRatios.count
    table.add("durable commits vs raw LMDB, median of \(n) rounds' ratios", value: median(roundRatios), unit: "x")
    table.add("durable commits vs raw LMDB, lowest round's ratio", value: roundRatios[0], unit: "x")
    table.add("durable commits vs raw LMDB, highest round's ratio", value: roundRatios[n - 1], unit: "x")
    table.add(
      "floor: the store's 3 puts per commit, direct", floorDurable, unit: "commits/s", baseline: rawDurable,
      baselineName: "raw LMDB commits")
    table.add(
      "floor vs raw LMDB, median of \(n) rounds' ratios", value: median(floorRatios), unit: "x")
    table.add(
      "durable single-event commits vs the floor", durable, unit: "commits/s", baseline: floorDurable,
      baselineName: "the store's puts, direct")
    // Where a durable commit's time goes besides waiting for the disk: this process's CPU
    // per commit, in user space and in the kernel (writing the pages, fsync).
    let perStoreCommit = 1e6 / Double(durable.operations)
    let perRawCommit = 1e6 / Double(rawDurable.operations)
    table.add(
      "user CPU per durable commit", value: storeCPU.user * perStoreCommit, unit: "µs",
      baseline: rawCPU.user * perRawCommit, baselineName: "raw LMDB commit")
    table.add(
      "kernel CPU per durable commit", value: storeCPU.kernel * perStoreCommit, unit: "µs",
      baseline: rawCPU.kernel * perRawCommit, baselineName: "raw LMDB commit")

    // The same commits without fsync, on both sides, each in a fresh environment: what a
    // commit costs in CPU.
    let rawUnsynced = try Baselines.lmdbUnsyncedCommits(in: lmdbDir, commits: unsyncedCommits)
    let relaxed = try EventStore.create(
      at: storeDir + "/relaxed", model: try model(), options: StoreOptions(durability: .relaxed))
    let object = try landed(relaxed.write { tx in try tx.insert("Item") })
    let unsynced = try measure(operations: unsyncedCommits) {
      for i in 0..<unsyncedCommits {
        try relaxed.write { tx in try tx.set(object, "a1", .string("\(i)" + value)) }
      }
    }
    table.add(
      "single-event commits without fsync", unsynced, unit: "commits/s", baseline: rawUnsynced,
      baselineName: "raw LMDB, MDB_NOSYNC")
  }

  /// The median of sorted values.
  static func median(_ sorted: [Double]) -> Double {
    let m = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2
  }

  /// Single-event commits alone, for profilers: not a figure.
  ///
  /// `Benchmarks commit-profile N [--durable] [--tasks T]` runs it, under `perf` or under
  /// `valgrind --tool=callgrind` (which cannot map the C baselines' 64 GiB environments):
  /// 10,000 objects like the batched appends', then `commits` single-event commits through
  /// `store.write`, without fsync unless `durable`. With `tasks`, the service benchmark's
  /// update workload instead: that many tasks at once, each setting its own object through
  /// `store.commit` (group commit).
  /// The batched appends' commits: 1,000 events each, 100 objects × (insert + 9 sets).
  static func appendBatches(_ commits: Int, to store: EventStore, value: String) throws {
    for _ in 0..<commits {
      try store.write { tx in
        for _ in 0..<100 {
          let o = try tx.insert("Item")
          for a in 1...9 { try tx.set(o, "a\(a)", .string(value)) }
        }
      }
    }
  }

  /// `commits` single-event commits, each setting `target`'s `a1` to a value of its own.
  static func singleCommits(_ commits: Int, to store: EventStore, target: ObjectID, value: String) throws {
    for i in 0..<commits { try store.write { tx in try tx.set(target, "a1", .string("\(i)" + value)) } }
  }

  /// The first `Item` of a store the batched appends filled: the object single commits set.
  static func firstItem(of store: EventStore) throws -> ObjectID {
    guard let target = try store.read({ try $0.objects(of: "Item").first }) else {
      throw BaselineError(workload: "single commits", message: "no object")
    }
    return target
  }

  static func profileCommits(_ commits: Int, durable: Bool, tasks: Int?, inserts: Bool, batched: Bool) throws {
    if batched {
      // The batched appends of `run`, alone (for an instruction count under callgrind).
      let dir = try temporaryDirectory(prefix: "bench-commits")
      defer { try? removeDirectory(dir) }
      let store = try EventStore.create(at: dir + "/store", model: try model())
      let m = try measure(operations: commits * 1000) {
        try appendBatches(commits, to: store, value: String(repeating: "v", count: Baselines.valueSize))
      }
      print("\(commits) commits of 1,000 events: \(Int(m.rate)) events/s")
      return
    }
    if let tasks {
      // The service benchmark's workload, whose commit path this profiles.
      let (m, perBatch) = try ServiceBenchmark.concurrentCommits(
        committers: tasks, total: commits, durability: durable ? .durable : .relaxed,
        workload: inserts ? .insert : .update)
      print(
        "\(m.operations) \(inserts ? "inserting" : "single-event") commits from \(tasks) tasks\(durable ? ", durable" : ""): \(Int(m.rate)) commits/s, \(String(format: "%.1f", perBatch)) a batch"
      )
      return
    }
    let value = String(repeating: "v", count: Baselines.valueSize)
    let dir = try temporaryDirectory(prefix: "bench-commits")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/store", model: try model(), options: StoreOptions(durability: durable ? .durable : .relaxed))
    try appendBatches(100, to: store, value: value)
    let target = try firstItem(of: store)
    let m = try measure(operations: commits) { try singleCommits(commits, to: store, target: target, value: value) }
    print("\(commits) single-event commits\(durable ? ", durable" : ""): \(Int(m.rate)) commits/s")
  }
}
