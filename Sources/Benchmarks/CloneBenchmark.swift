import EventGraph
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// Deep copy by replay (issue 5): `EventStore.clone` of a 10,000-object and a
// 100,000-object subgraph, beside the second seed's way of copying, done in the same
// run on the same data: read every object and relationship through the public API and
// insert the copies one by one, in one commit.
//
// The subgraph is a tree of `Node`s (fan-out 10) with five attributes each and two
// relationships set on each: `parent` (the inverse of the ordered, cascading
// `children`) and `peer`, a to-one pointing at another node of the same tree (inverse
// `peeredBy`), so every copy has both re-pointed inside the copy. Both stores use
// relaxed durability, so the figures compare the work, not the fsyncs.

/// Runs the clone benchmark and adds its rows to `table`; see ``CloneBenchmark/run(sizes:table:)``.
func runCloneBenchmark(table: inout BenchmarkTable, sizes: [Int] = [10_000, 100_000]) throws {
  try CloneBenchmark.run(sizes: sizes, table: &table)
}

enum CloneBenchmark {
  /// Runs the clone benchmark and adds its rows to `table`: for each size, the clone and
  /// the one-by-one copy, best of a few runs each (every run adds a copy to the same
  /// store), as wall-clock rates and as rates of the process's CPU time, which a busy
  /// machine disturbs less.
  static func run(sizes: [Int] = [10_000, 100_000], table: inout BenchmarkTable) throws {
    for size in sizes {
      let directory = try temporaryDirectory(prefix: "eventgraph-clone")
      defer { try? removeDirectory(directory) }
      let store = try EventStore.create(
        at: directory + "/store", model: try CloneBenchmark.model(), options: StoreOptions(durability: .relaxed))
      let root = try CloneBenchmark.fill(store, size: size)
      let runs = size <= 10_000 ? 3 : 2
      var replay = CloneBenchmark.Best()
      var baseline = CloneBenchmark.Best()
      for _ in 0..<runs {
        try replay.run(size, "clone") { try store.clone(root: root).count }
        try baseline.run(size, "read and insert") { try CloneBenchmark.copyOneByOne(store, root: root) }
      }
      let name = "clone \(formatNumber(Double(size)))-object subgraph"
      table.add(name, replay.wall, unit: "objects/s", baseline: baseline.wall, baselineName: "read + insert one by one")
      table.add(
        name + " (CPU time)", replay.cpu, unit: "objects/s", baseline: baseline.cpu,
        baselineName: "read + insert one by one")
    }
  }

  /// The fastest of several runs, by wall clock and by CPU time.
  struct Best {
    var wall = Measurement(operations: 0, seconds: .infinity)
    var cpu = Measurement(operations: 0, seconds: .infinity)

    /// Runs `body`, which copies `size` objects and returns how many it copied.
    mutating func run(_ size: Int, _ workload: String, _ body: () throws -> Int) throws {
      var copied = 0
      let cpuStart = processCPUSeconds()
      let m = try measure(operations: size) { copied = try body() }
      let cpuSeconds = processCPUSeconds() - cpuStart
      guard copied == size else {
        throw BaselineError(workload: workload, message: "copied \(copied) objects, expected \(size)")
      }
      if m.seconds < wall.seconds { wall = m }
      if cpuSeconds < cpu.seconds { cpu = Measurement(operations: size, seconds: cpuSeconds) }
    }
  }

  static let attributes = ["name", "index", "weight", "created", "tag"]

  /// `Node`: five attributes; `children` (ordered, cascade) ↔ `parent`, `peer` ↔ `peeredBy`.
  static func model() throws -> Model {
    try Model(
      name: "CloneBenchmark", version: 1,
      entities: [
        EntityDescription(
          name: "Node",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "index", type: .int64),
            AttributeDescription(name: "weight", type: .double),
            AttributeDescription(name: "created", type: .date),
            AttributeDescription(name: "tag", type: .uuid),
          ],
          relationships: [
            RelationshipDescription(
              name: "children", destination: "Node", isToMany: true, isOrdered: true, inverse: "parent",
              deleteRule: .cascade),
            RelationshipDescription(name: "parent", destination: "Node", inverse: "children"),
            RelationshipDescription(name: "peer", destination: "Node", inverse: "peeredBy"),
            RelationshipDescription(name: "peeredBy", destination: "Node", isToMany: true, inverse: "peer"),
          ])
      ])
  }

  /// A tree of `size` nodes, built breadth first in commits of 10,000; returns the root.
  static func fill(_ store: EventStore, size: Int) throws -> ObjectID {
    var nodes: [ObjectID] = []
    nodes.reserveCapacity(size)
    var generator = SplitMix(seed: 0x5EED)  // reproducible peers
    func random() -> UInt64 { generator.next() }
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    while nodes.count < size {
      try store.write { tx in
        for _ in 0..<min(10_000, size - nodes.count) {
          let i = nodes.count
          let n = try tx.insert(
            "Node",
            [
              "name": .string("node \(i)"), "index": .int64(Int64(i)), "weight": .double(Double(i) / 3),
              "created": .date(start.addingTimeInterval(Double(i))), "tag": .uuid(UUID()),
            ])
          if i > 0 { try tx.link(nodes[(i - 1) / 10], "children", n) }
          nodes.append(n)
        }
      }
    }
    try store.write { tx in
      for (i, n) in nodes.enumerated() {
        var p = Int(random() % UInt64(size))
        if p == i { p = (p + 1) % size }
        try tx.setRelationship(n, "peer", to: nodes[p])
      }
    }
    return nodes[0]
  }

  /// The second seed's deep copy: every object and relationship read through the public
  /// API, each copy inserted and linked one by one, in one commit.
  static func copyOneByOne(_ store: EventStore, root: ObjectID) throws -> Int {
    try landed(
      store.write { tx in
        var copies: [ObjectID: ObjectID] = [:]
        // Depth first, keeping each parent's children in order.
        func copy(_ o: ObjectID) throws -> ObjectID {
          let n = try tx.insert("Node")
          for a in attributes { try tx.set(n, a, try tx.value(o, a)) }
          copies[o] = n
          for child in try tx.related(o, "children") { try tx.link(n, "children", try copy(child)) }
          return n
        }
        _ = try copy(root)
        // Peers point inside the copy, or at the original when outside it.
        for (o, n) in copies {
          for p in try tx.related(o, "peer") { try tx.link(n, "peer", copies[p] ?? p) }
        }
        return copies.count
      })
  }
}

/// CPU time of this process (user and system), in seconds.
func processCPUSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}
