import EventGraph
import Foundation

/// Issue 2's figures: batched appends, durable single commits, rebuild and a decoding scan,
/// each beside raw LMDB from C (and SQLite from C) in the same run.
enum StoreBenchmark {
  static func model() throws -> Model {
    let attrs = (1...9).map { AttributeDescription(name: "a\($0)", type: .string, isOptional: true) }
    return try Model(name: "Bench", version: 1, entities: [EntityDescription(name: "Item", attributes: attrs)])
  }

  static func run(events: Int, durableCommits: Int, table: inout BenchmarkTable) throws {
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
    let raw = try Baselines.lmdbBatchedPuts(in: lmdbDir, events: events, append: false)
    let rawAppend = try Baselines.lmdbBatchedPuts(in: lmdbDir, events: events, append: true)
    let sqlite = try Baselines.sqliteBatched(in: sqliteDir, events: events)
    let storePath = storeDir + "/store"
    let store = try EventStore.create(at: storePath, model: try model())
    let commits = events / 1000
    let batched = try measure(operations: commits * 1000) {
      for _ in 0..<commits {
        try store.write { tx in
          for _ in 0..<100 {
            let o = try tx.insert("Item")
            for a in 1...9 { try tx.set(o, "a\(a)", .string(value)) }
          }
        }
      }
    }
    table.add(
      "batched appends (1,000 events/commit)", batched, unit: "events/s", baseline: raw, baselineName: "raw LMDB puts")
    table.add(
      "batched appends vs MDB_APPEND puts", batched, unit: "events/s", baseline: rawAppend,
      baselineName: "raw LMDB append")
    table.add(
      "batched appends vs SQLite (WAL, FULL)", batched, unit: "events/s", baseline: sqlite, baselineName: "SQLite")
    table.add("anonymous memory after appends", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")

    // A decoding scan: what a subscriber catching up does.
    let rawScan = try Baselines.lmdbCursorScan(in: lmdbDir)
    var decoded = 0
    let scan = try measure(operations: events) {
      try store.read { s in try s.forEachCommit { decoded += $0.events.count } }
    }
    guard decoded == events else { throw BaselineError(workload: "scan", message: "decoded \(decoded) of \(events)") }
    table.add(
      "scan decoding every event", scan, unit: "events/s", baseline: rawScan, baselineName: "raw LMDB cursor scan")

    // Rebuild: replay of the whole log into fresh projections.
    let rebuild = try measure(operations: events) { try store.rebuild() }
    table.add("rebuild (full replay)", rebuild, unit: "events/s")
    table.add("anonymous memory after rebuild", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")

    // Durable single-event commits (fsync bound on both sides).
    let rawDurable = try Baselines.lmdbDurableCommits(in: lmdbDir, commits: durableCommits)
    let sqliteDurable = try Baselines.sqliteDurableCommits(in: sqliteDir, commits: durableCommits)
    let target = try store.read { try $0.objects(of: "Item").first }
    guard let target else { throw BaselineError(workload: "durable", message: "no object") }
    let durable = try measure(operations: durableCommits) {
      for i in 0..<durableCommits {
        try store.write { tx in try tx.set(target, "a1", .string("\(i)" + value)) }
      }
    }
    table.add(
      "durable single-event commits", durable, unit: "commits/s", baseline: rawDurable, baselineName: "raw LMDB commits"
    )
    table.add(
      "durable commits vs SQLite", durable, unit: "commits/s", baseline: sqliteDurable, baselineName: "SQLite commits")
  }
}
