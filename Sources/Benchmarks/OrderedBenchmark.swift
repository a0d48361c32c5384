import EventGraph
import Foundation

/// Issue 19's ordered relationships: one company whose ordered `employees` holds n members,
/// imported, verified and rebuilt at two sizes side by side; and a snapshot of such a
/// company beside a clone of the same subgraph.
enum OrderedBenchmark {
  static func run(members sizes: [Int], snapshotMembers: Int, table: inout BenchmarkTable) throws {
    let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/examples").path
    let model = try Model(contentsOf: examples + "/Company.model.json")
    var first: (size: Int, imported: Double, verified: Double, rebuilt: Double, changed: Double)?
    var floor: (size: Int, imported: Double, verified: Double, rebuilt: Double)?
    for n in sizes {
      // The floor: the same employees without the company and its list.
      var f = (Double.infinity, Double.infinity, Double.infinity)
      for _ in 0..<3 {
        let dir = try temporaryDirectory(prefix: "bench-ordered-floor")
        defer { try? removeDirectory(dir) }
        let (store, importing) = try company(at: dir + "/store", model: model, members: n, withList: false)
        f.0 = min(f.0, importing)
        f.1 = min(f.1, try seconds { _ = try store.verify() })
        f.2 = min(f.2, try seconds { _ = try store.rebuild() })
      }
      let fbase = floor.map { (name: "\($0.size) members", $0) }
      table.add(
        "ordered floor: import of \(n) employees, no list (best of 3)", value: f.0, unit: "s",
        baseline: fbase?.1.imported, baselineName: fbase?.name)
      table.add(
        "ordered floor: verify (\(n) employees, no list)", value: f.1, unit: "s", baseline: fbase?.1.verified,
        baselineName: fbase?.name)
      table.add(
        "ordered floor: rebuild (\(n) employees, no list)", value: f.2, unit: "s", baseline: fbase?.1.rebuilt,
        baselineName: fbase?.name)
      if floor == nil { floor = (n, f.0, f.1, f.2) }
      // The best of three runs of each: the small size's figures are a tenth of a second,
      // where a neighbour's build on this machine shows most.
      var (imported, verified, rebuilt) = (Double.infinity, Double.infinity, Double.infinity)
      for _ in 0..<3 {
        let dir = try temporaryDirectory(prefix: "bench-ordered")
        defer { try? removeDirectory(dir) }
        let (store, importing) = try company(at: dir + "/store", model: model, members: n)
        imported = min(imported, importing)
        verified = min(verified, try seconds { _ = try store.verify() })
        rebuilt = min(rebuilt, try seconds { _ = try store.rebuild() })
      }
      // Changes by position: a new member inserted, then one moved, at seeded random places.
      let changed = try changesByPosition(model: model, members: n, changes: 1000)
      let base = first.map { (name: "\(n) vs \($0.size) members", $0) }
      table.add(
        "ordered: import of one company with \(n) employees (best of 3)", value: imported, unit: "s",
        baseline: base?.1.imported, baselineName: base?.name)
      table.add(
        "ordered: verify (\(n) members)", value: verified, unit: "s", baseline: base?.1.verified,
        baselineName: base?.name)
      table.add(
        "ordered: rebuild (\(n) members)", value: rebuilt, unit: "s", baseline: base?.1.rebuilt,
        baselineName: base?.name)
      table.add(
        "ordered: a member inserted or moved at a random position (\(n) members, one commit each)",
        value: changed * 1e6, unit: "µs", baseline: base.map { $0.1.changed * 1e6 }, baselineName: base?.name)
      if first == nil { first = (n, imported, verified, rebuilt, changed) }
    }
    let dir = try temporaryDirectory(prefix: "bench-ordered-snapshot")
    defer { try? removeDirectory(dir) }
    let (store, _) = try company(at: dir + "/store", model: model, members: snapshotMembers)
    guard let root = try store.read({ try $0.objects(of: "Company").first }) else {
      throw BaselineError(workload: "ordered", message: "the company was not imported")
    }
    var (cloned, snapshot) = (Double.infinity, Double.infinity)
    for i in 0..<3 {
      cloned = min(cloned, try seconds { _ = try store.clone(root: root) })
      snapshot = min(snapshot, try seconds { _ = try store.snapshot(root: root, to: dir + "/snapshot\(i)") })
    }
    table.add(
      "ordered: snapshot of a company with \(snapshotMembers) employees vs clone of it (best of 3)", value: snapshot,
      unit: "s", baseline: cloned, baselineName: "clone")
  }

  /// A store holding `members` employees, then one company whose ordered `employees` are
  /// all of them, imported from JSON Lines (`eventtool import`'s path); and the import's time.
  static func company(at path: String, model: Model, members: Int, withList: Bool = true) throws -> (
    EventStore, Double
  ) {
    let store = try EventStore.create(at: path, model: model, options: StoreOptions(durability: .relaxed))
    var lines = ""
    for i in 0..<members {
      lines += #"{"id": "e\#(i)", "entity": "Employee", "attributes": {"name": "E\#(i)"}}"# + "\n"
    }
    let list = (0..<members).map { "\"e\($0)\"" }.joined(separator: ", ")
    if withList {
      lines +=
        #"{"id": "c", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": [\#(list)]}}"#
    }
    let bytes = Array(lines.utf8)
    let imported = try seconds { _ = try store.importObjects(bytes, batch: 10_000) }
    return (store, imported)
  }

  /// The mean time of a commit that inserts a new member at a random position of a list of
  /// `members`, or moves one to a random position (as many of each), with relaxed durability.
  static func changesByPosition(model: Model, members: Int, changes: Int) throws -> Double {
    let dir = try temporaryDirectory(prefix: "bench-ordered-positions")
    defer { try? removeDirectory(dir) }
    let (store, _) = try company(at: dir + "/store", model: model, members: members)
    guard let root = try store.read({ try $0.objects(of: "Company").first }) else {
      throw BaselineError(workload: "ordered", message: "the company was not imported")
    }
    var members = try store.read { try $0.objects(of: "Employee") }
    var random = SplitMix(seed: 19)
    let elapsed = try seconds {
      for i in 0..<changes {
        try store.write { tx in
          let e = try tx.insert("Employee", ["name": .string("N\(i)")])
          try tx.link(root, "employees", e, at: random.below(members.count + 1))
          members.append(e)
        }
        try store.write { tx in
          try tx.link(root, "employees", members[random.below(members.count)], at: random.below(members.count))
        }
      }
    }
    return elapsed / Double(2 * changes)
  }

  static func seconds(_ body: () throws -> Void) throws -> Double {
    let start = monotonicSeconds()
    try body()
    return monotonicSeconds() - start
  }
}
