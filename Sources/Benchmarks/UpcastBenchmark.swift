import EventGraph
import EventGraphMigration
import Foundation

/// Issue 4's figures: the seed's phone split on a store with history, beside SQLite doing
/// the same migration of the same final data in place (`INSERT … SELECT`), in one run.
enum UpcastBenchmark {
  static func run(people: [Int], table: inout BenchmarkTable) throws {
    let (v1, v2, mapping) = try seedMigration()
    for n in people {
      let dir = try temporaryDirectory(prefix: "bench-upcast")
      let sqliteDir = try temporaryDirectory(prefix: "bench-upcast-sqlite")
      defer {
        try? removeDirectory(dir)
        try? removeDirectory(sqliteDir)
      }
      let events = try buildHistory(at: dir + "/store", model: v1, people: n)
      let peer = try Baselines.sqliteUpcastPeer(in: sqliteDir, people: n)
      let sourceSize = try UpcastSpace.fileSize(dir + "/store")
      let sampler = MemorySampler()
      let baseline = anonymousMemoryBytes()
      sampler.start()
      let (start, cpuStart) = (monotonicSeconds(), processCPUSeconds())
      let (report, _) = try EventStore.upcast(at: dir + "/store", to: v2, mapping: mapping)
      let (seconds, cpuSeconds) = (monotonicSeconds() - start, processCPUSeconds() - cpuStart)
      let peak = sampler.stop()
      let space = try UpcastSpace.afterUpcast(dir + "/store")
      guard report.eventsRead == events else {
        throw BaselineError(workload: "upcast", message: "read \(report.eventsRead) of \(events) events")
      }
      let label = "\(n) people, \(events) v1 events, \(report.commitsRead) commits"
      table.add("upcast: v1 events/s (\(label))", value: Double(events) / seconds, unit: "events/s")
      table.add(
        "upcast: wall time vs SQLite in-place migration (\(n) people)", value: seconds, unit: "s",
        baseline: peer.migration.seconds, baselineName: "SQLite INSERT…SELECT")
      table.add(
        "upcast: CPU time, user and system, all threads (\(n) people)", value: cpuSeconds, unit: "s")
      table.add(
        "upcast: peak anonymous memory above start (\(n) people)", value: mebibytes(max(0, peak - baseline)),
        unit: "MiB")
      table.add("upcast: v2 events written (\(n) people)", value: Double(report.eventsWritten), unit: "events")
      // A floor for any upcast that ends with the design's projections: making them alone,
      // by the store's fastest path (a rebuild replays the v2 log in batches, appending
      // where it can), without reading v1, mapping, or writing the v2 log.
      do {  // the handle closes before the space is measured
        let rebuilt = try EventStore(path: dir + "/store", options: StoreOptions(durability: .relaxed))
        let rebuildStart = monotonicSeconds()
        let replayed = try rebuilt.rebuild()
        let rebuildSeconds = monotonicSeconds() - rebuildStart
        guard replayed.events == report.eventsWritten else {
          throw BaselineError(
            workload: "upcast", message: "rebuild replayed \(replayed.events) of \(report.eventsWritten) v2 events")
        }
        table.add(
          "upcast floor: v2 projection rebuild alone vs SQLite (\(n) people)", value: rebuildSeconds, unit: "s",
          baseline: peer.migration.seconds, baselineName: "SQLite INSERT…SELECT")
      }
      // The part of the upcast a second thread can take without sharing the writer's LMDB
      // transaction: reading and decoding the v1 log (a read transaction). Everything else —
      // the scratch source state, the mapping's reads of it, of the destination and of the
      // associations, and the writes — runs in the one write transaction, so with the log
      // read ahead the upcast cannot take less than its wall time less this.
      do {
        let store = try EventStore(path: dir + "/store", options: StoreOptions(readOnly: true))
        let decodeStart = monotonicSeconds()
        var decoded = 0
        try store.read(version: 1) { snapshot in try snapshot.forEachCommit { decoded += $0.events.count } }
        let decodeSeconds = monotonicSeconds() - decodeStart
        guard decoded == events else {
          throw BaselineError(workload: "upcast", message: "decoded \(decoded) of \(events) v1 events")
        }
        table.add(
          "upcast floor: v1 log read and decoded alone, what a read-ahead thread takes off (\(n) people)",
          value: decodeSeconds, unit: "s")
        table.add(
          "upcast floor on two cores with the v1 log read ahead: wall time less the decoding vs SQLite (\(n) people)",
          value: seconds - decodeSeconds, unit: "s", baseline: peer.migration.seconds,
          baselineName: "SQLite INSERT…SELECT")
      }
      // What the upcast's scratch copy of the source state costs the writer: the v1
      // projection rebuilt alone from the v1 log (a copy of the store, switched back to v1).
      // A split that kept the source state outside the write transaction would take this
      // (and the mapping's reads of it) to the second core.
      do {
        try FileManager.default.copyItem(atPath: dir + "/store", toPath: dir + "/v1")
        try EventStore.rollback(at: dir + "/v1")
        let v1 = try EventStore(path: dir + "/v1", options: StoreOptions(durability: .relaxed))
        let rebuildStart = monotonicSeconds()
        let replayed = try v1.rebuild()
        let rebuildSeconds = monotonicSeconds() - rebuildStart
        guard replayed.events == events else {
          throw BaselineError(workload: "upcast", message: "rebuild replayed \(replayed.events) of \(events) v1 events")
        }
        table.add(
          "upcast floor: v1 projection (the scratch source state) rebuilt alone (\(n) people)", value: rebuildSeconds,
          unit: "s")
      }
      try? removeDirectory(dir + "/v1")
      try UpcastSpace.measure(dir + "/store", sourceSize: sourceSize, upcast: space, people: n, table: &table)
    }
  }

  /// The seed's address book, version 1 and 2, and the mapping that splits phone1 and phone2
  /// into PhoneBook objects: Docs/examples, found from this file's path.
  static func seedMigration() throws -> (v1: Model, v2: Model, mapping: MappingModel) {
    let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/examples").path
    return (
      try Model(contentsOf: examples + "/AddressBook.v1.model.json"),
      try Model(contentsOf: examples + "/AddressBook.v2.model.json"),
      try MappingModel(contentsOf: examples + "/AddressBook.v1-v2.mapping.json")
    )
  }

  /// A v1 store whose final state is `Baselines.upcastPerson(1...n)`, reached through
  /// history: people inserted 100 a commit with provisional phones, then two rounds of
  /// commits setting phone1 and phone2 to their final values.
  static func buildHistory(at path: String, model: Model, people n: Int) throws -> Int {
    let store = try EventStore.create(at: path, model: model, options: StoreOptions(durability: .relaxed))
    var ids: [ObjectID] = []
    ids.reserveCapacity(n)
    var events = 0
    var i = 1
    while i <= n {
      let end = min(n, i + 99)
      let range = i...end
      let result = try store.write { tx in
        try range.map { id in
          let p = Baselines.upcastPerson(id)
          return try tx.insert(
            "AddressBook",
            [
              "firstName": .string(p.firstName), "lastName": .string(p.lastName),
              "phone1": .string("03-0000-\(id)"), "phone2": .string("090-0000-\(id)"),
            ])
        }
      }
      ids += result.value ?? []
      if let c = result.commit { events += Int(c.lastSequence - c.firstSequence + 1) }
      i = end + 1
    }
    for attribute in ["phone1", "phone2"] {
      var start = 0
      while start < ids.count {
        let slice = ids[start..<min(ids.count, start + 100)]
        let c = try store.write { tx in
          for (k, id) in slice.enumerated() {
            let p = Baselines.upcastPerson(start + k + 1)
            try tx.set(id, attribute, (attribute == "phone1" ? p.phone1 : p.phone2).map { .string($0) })
          }
        }.commit
        if let c { events += Int(c.lastSequence - c.firstSequence + 1) }
        start += 100
      }
    }
    try store.flush()
    return events
  }
}

/// Samples anonymous resident memory on a background thread and keeps the maximum.
final class MemorySampler: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): `peak` and `running` are only touched under `lock`.
  private let lock = NSLock()
  private var peak = 0
  private var running = false
  private var thread: Thread?

  func start() {
    lock.withLock {
      running = true
      peak = anonymousMemoryBytes()
    }
    let t = Thread { [self] in
      while lock.withLock({ running }) {
        let now = anonymousMemoryBytes()
        lock.withLock { peak = max(peak, now) }
        Thread.sleep(forTimeInterval: 0.005)
      }
    }
    thread = t
    t.start()
  }

  func stop() -> Int {
    lock.withLock {
      running = false
      return max(peak, anonymousMemoryBytes())
    }
  }
}
