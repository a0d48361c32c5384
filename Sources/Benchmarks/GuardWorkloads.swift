import EventGraph
import EventGraphMigration
import Foundation

// The performance guard's workloads (`Tools/bench guard`, Docs/benchmarks.md, "The guard"):
// small runs of the benchmarks' own work, with fixed sizes and seeds and no clock, whose
// instructions callgrind counts. A count does not move with the machine's load, so a rise
// of a few percent is a change of the code, not of the neighbours.

/// Runs `body`, the setup of a guard workload or its cleanup: the work callgrind leaves out.
///
/// Never inlined, so that it keeps a symbol of its own (`$s10Benchmarks10guardSetup…`),
/// which `Tools/bench guard` hands to `valgrind --toggle-collect`: the thread that runs it
/// stops counting on the way in and starts again on the way out. It holds no closure of
/// its own, so nothing inside it has a name that matches and toggles back.
@inline(never)
func guardSetup(_ body: () throws -> Void) rethrows {
  try body()
}

/// Runs `body`, the measured part of a guard workload.
///
/// Never inlined, like ``guardSetup(_:)``, so that a profiler can find the measured part
/// alone by its symbol (`$s10Benchmarks13guardMeasured…`), e.g. `callgrind_annotate` of a
/// run with `--toggle-collect='*13guardMeasured*'`. The guard itself counts the other way
/// round (all but the setup), which also takes in the threads the measured part starts.
@inline(never)
func guardMeasured(_ body: () throws -> Void) rethrows {
  try body()
}

/// One of the guard's workloads, named as on the command line
/// (`Benchmarks guard-workload NAME`).
///
/// Each makes what it reads with the benchmark's builder (``StoreBenchmark``,
/// ``QueryBenchmark``, ``CloneBenchmark``, …), so the guard watches the code the figures
/// measure, at sizes callgrind runs in a few seconds (it is about 50 times slower than the
/// processor) and a measured part of 120 to 600 million instructions, several times the
/// process's start and end (29 million, mostly the dynamic loader's), which the guard
/// counts alone (`guard-workload --none`) and subtracts.
enum GuardWorkload: String, CaseIterable, Sendable {
  /// Batched appends: commits of 1,000 events (100 objects × insert + 9 sets of 100 bytes).
  case appends
  /// Single-event commits into a store opened without fsync (`.relaxed`).
  case unsyncedCommits = "unsynced-commits"
  /// A full rebuild: the log replayed into fresh projections.
  case rebuild
  /// A scan decoding every event of the log, as a subscriber catching up reads it.
  case scan
  /// A clone of the clone benchmark's subgraph: a tree of `Node`s with peers.
  case clone
  /// The seed's upcast: phone1 and phone2 split into PhoneBook objects, on a store with
  /// history.
  case upcast
  /// Indexed equality fetches (`zip == n`) on a store of address-book entries.
  case indexedFetch = "indexed-fetch"
  /// The query benchmark's two predicates, evaluated over in-memory rows.
  case predicate
  /// An import of the import benchmark's Company/Employee JSON Lines, 1,000 objects a
  /// commit.
  case importLines = "import"
  /// A typed fetch of every object as ``Record``s, decoded by `Decoder` and by
  /// `init(reading:)` as `eventtool codegen` writes it.
  case recordFetch = "record-fetch"

  /// The environment variable that slows one workload on purpose, for the guard's
  /// self-test: `EVENTGRAPH_GUARD_SLOWDOWN=NAME` makes workload NAME do about 10% more of
  /// its measured work.
  static let slowdownVariable = "EVENTGRAPH_GUARD_SLOWDOWN"

  /// Runs the workload: its setup and cleanup inside ``guardSetup(_:)``, the measured part
  /// inside ``guardMeasured(_:)``; with `slowdown`, the measured part is about 10% larger.
  func run(slowdown: Bool) throws {
    var directory = ""
    var measured: () throws -> Void = {}
    try guardSetup {
      directory = try temporaryDirectory(prefix: "guard-\(rawValue)")
      measured = try prepare(in: directory, size: { slowdown ? $0 + $0 / 10 : $0 })
    }
    try guardMeasured { try measured() }
    guardSetup {
      measured = {}  // the stores close here, not in the measured part
      try? removeDirectory(directory)
    }
  }

  /// Makes what the workload reads in `dir` and returns its measured part.
  ///
  /// `size` gives the measured part's size from its normal size (10% more under the
  /// slowdown); where the measured part reads the whole store (rebuild, scan, clone,
  /// upcast, import, typed fetch) the store is made that much larger.
  private func prepare(in dir: String, size: (Int) -> Int) throws -> () throws -> Void {
    let value = String(repeating: "v", count: Baselines.valueSize)
    let relaxed = StoreOptions(durability: .relaxed)
    switch self {
    case .appends:
      // The store benchmark's store: durable, as its figure is (the fsyncs cost no
      // instructions of this process).
      let store = try EventStore.create(at: dir + "/store", model: try StoreBenchmark.model())
      let commits = size(50)
      return { try StoreBenchmark.appendBatches(commits, to: store, value: value) }
    case .unsyncedCommits:
      let store = try EventStore.create(at: dir + "/store", model: try StoreBenchmark.model(), options: relaxed)
      try StoreBenchmark.appendBatches(20, to: store, value: value)
      let target = try StoreBenchmark.firstItem(of: store)
      let commits = size(4_000)
      return { try StoreBenchmark.singleCommits(commits, to: store, target: target, value: value) }
    case .rebuild, .scan:
      let store = try EventStore.create(at: dir + "/store", model: try StoreBenchmark.model(), options: relaxed)
      let commits = size(self == .rebuild ? 60 : 100)
      try StoreBenchmark.appendBatches(commits, to: store, value: value)
      return self == .rebuild
        ? {
          let replayed = try store.rebuild()
          try expect(replayed.events, commits * 1000, "events replayed")
        }
        : {
          var decoded = 0
          try store.read { s in try s.forEachCommit { decoded += $0.events.count } }
          try expect(decoded, commits * 1000, "events decoded")
        }
    case .clone:
      let store = try EventStore.create(at: dir + "/store", model: try CloneBenchmark.model(), options: relaxed)
      let nodes = size(5_000)
      let root = try CloneBenchmark.fill(store, size: nodes)
      return { try expect(try store.clone(root: root).count, nodes, "objects cloned") }
    case .upcast:
      let (v1, v2, mapping) = try UpcastBenchmark.seedMigration()
      let path = dir + "/store"
      let events = try UpcastBenchmark.buildHistory(at: path, model: v1, people: size(1_000))
      return {
        let (report, _) = try EventStore.upcast(at: path, to: v2, mapping: mapping)
        try expect(report.eventsRead, events, "v1 events read")
      }
    case .indexedFetch:
      let store = try EventStore.create(at: dir + "/store", model: try QueryBenchmark.model(), options: relaxed)
      try QueryBenchmark.fill(store, objects: 10_000)
      let fetches = size(4_000)
      return { try QueryBenchmark.indexedFetches(store, from: 5_000, count: fetches) }
    case .predicate:
      let source = QueryBenchmark.Rows(rows: QueryBenchmark.rows())
      let predicates = try QueryBenchmark.predicates(try QueryBenchmark.model()).map(\.predicate)
      // The benchmark's mix: 20 cheap evaluations to one of three clauses.
      let cheap = size(1_000_000)
      return {
        for (p, times) in zip(predicates, [cheap, cheap / 20]) {
          try QueryBenchmark.evaluate(p, times: times, in: source)
        }
      }
    case .importLines:
      let file = dir + "/company.jsonl"
      let lines = try ImportBenchmark.companyFile(file, events: size(20_000))
      let store = try EventStore.create(
        at: dir + "/import", model: try Model(contentsOf: ImportBenchmark.companyModelPath()))
      return {
        let result = try store.importObjects(from: try JSONLinesInput(path: file), options: ImportOptions(batch: 1_000))
        try expect(result.objects, lines, "objects imported")
      }
    case .recordFetch:
      let store = try EventStore.create(at: dir + "/store", model: try QueryBenchmark.model(), options: relaxed)
      let count = size(5_000)
      try RecordBenchmark.fill(store, count: count)
      return {
        try expect(try store.fetch(RecordBenchmark.Person.self, where: "zip >= 0").count, count, "records")
        try expect(try store.fetch(RecordBenchmark.GeneratedPerson.self, where: "zip >= 0").count, count, "records")
      }
    }
  }

  /// Throws unless the workload did what it was meant to: a count that comes out wrong
  /// means the instructions counted are not those of the work named.
  private func expect(_ count: Int, _ expected: Int, _ what: String) throws {
    guard count == expected else {
      throw BaselineError(workload: "guard \(rawValue)", message: "\(count) \(what), expected \(expected)")
    }
  }
}
