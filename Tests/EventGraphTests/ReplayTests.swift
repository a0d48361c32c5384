import Foundation
import LMDB
import TestSupport
import Testing

@testable import EventGraph

@Suite("Replay: the log reproduces the projections")
struct ReplayTests {
  /// Random commits over the Company model: inserts, attribute changes, links, moves,
  /// unlinks and deletes (with cascade and deny), some of them refused.
  static func randomHistory(_ store: EventStore, seed: UInt64, commits: Int) throws {
    var g = SeededGenerator(seed: seed)
    for _ in 0..<commits {
      _ = try? store.write { tx in
        for _ in 0..<Int.random(in: 1...6, using: &g) {
          let companies = try tx.objects(of: "Company")
          let employees = try tx.objects(of: "Employee")
          let departments = try tx.objects(of: "Department")
          switch Int.random(in: 0..<10, using: &g) {
          case 0: _ = try tx.insert("Company", ["name": .string("c\(g.next() % 100)")])
          case 1, 2:
            _ = try tx.insert(
              "Employee", ["name": .string("e\(g.next() % 100)"), "salary": .decimal(Decimal(Int(g.next() % 9000)))])
          case 3: _ = try tx.insert("Department", ["name": .string("d\(g.next() % 10)")])
          case 4:
            if let c = companies.randomElement(using: &g), let e = employees.randomElement(using: &g) {
              let n = try tx.related(c, "employees").count
              try tx.link(c, "employees", e, at: Int.random(in: 0...n, using: &g))
            }
          case 5:
            if let e = employees.randomElement(using: &g), let m = employees.randomElement(using: &g) {
              try tx.setRelationship(e, "manager", to: m)
            }
          case 6:
            if let e = employees.randomElement(using: &g), let d = departments.randomElement(using: &g) {
              try tx.link(e, "department", d)
            }
          case 7:
            if let c = companies.randomElement(using: &g), let d = departments.randomElement(using: &g) {
              try tx.link(c, "departments", d)
            }
          case 8:
            if let e = employees.randomElement(using: &g) { try tx.set(e, "name", .string("renamed\(g.next() % 50)")) }
          default:
            let all = companies + employees + departments
            if let victim = all.randomElement(using: &g) { try tx.delete(victim) }
          }
        }
      }
    }
  }

  @Test(
    "for random histories, replaying the log gives the stored projections byte for byte",
    arguments: (1...UInt64(5 * stressFactor)).map { $0 })
  func replayEqualsProjection(seed: UInt64) throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try Self.randomHistory(store, seed: seed, commits: 60)
    let report = try store.verify()
    #expect(report.isOK, "\(report.problems)")
    #expect(report.commits > 0)
  }

  @Test("rebuild after deleting the projections gives an identical state")
  func rebuildAfterDroppingProjections() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    var before: [String] = []
    do {
      let store = try EventStore.create(at: path, model: try Fixtures.company())
      try Self.randomHistory(store, seed: 42, commits: 80)
      try store.export { before.append($0) }
      #expect(!before.isEmpty)
    }
    // Empty every projection with LMDB directly, as a lost or damaged projection would be.
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(maxDatabases: 64))
      try env.write { txn in
        for name in StoreDatabases.projectionNames {
          if let db = try txn.openDatabase(StoreDatabases.name(name, version: 1), create: false) { try txn.empty(db) }
        }
      }
    }
    let store = try EventStore(path: path)
    var emptied: [String] = []
    try store.export { emptied.append($0) }
    #expect(emptied.isEmpty)
    #expect(!(try store.verify().isOK))
    let counts = try store.rebuild()
    #expect(counts.events > 0)
    var after: [String] = []
    try store.export { after.append($0) }
    #expect(after == before)
    #expect(try store.verify().isOK)
  }

  @Test("rebuild in small batches equals rebuild in one batch")
  func batchedRebuild() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    try Self.randomHistory(store, seed: 7, commits: 120)
    var before: [String] = []
    try store.export { before.append($0) }
    var calls = 0
    _ = try store.rebuild { _ in calls += 1 }
    var after: [String] = []
    try store.export { after.append($0) }
    #expect(after == before)
    #expect(calls >= 1)
  }

  @Test("export as of a past sequence equals the export taken at that time")
  func exportAsOf() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    var snapshots: [(UInt64, [String])] = []
    var g = SeededGenerator(seed: 99)
    for i in 0..<8 {
      try Self.randomHistory(store, seed: g.next(), commits: 10)
      var lines: [String] = []
      try store.export { lines.append($0) }
      snapshots.append((try store.read { try $0.logEnd().sequence }, lines))
      _ = i
    }
    for (seq, lines) in snapshots {
      var past: [String] = []
      try store.export(asOf: seq) { past.append($0) }
      #expect(past == lines, "as of \(seq)")
    }
    #expect(throws: StoreError.self) { try store.export(asOf: 1_000_000) { _ in } }
  }
}
