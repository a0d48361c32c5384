import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphMigration

/// An interrupted upcast resumes from its checkpoint and ends with the same bytes as an
/// uninterrupted one; two upcasts of the same store write the same bytes.
@Suite("Upcasts resume and are deterministic")
struct ResumeTests {
  struct Case: Sendable, CustomStringConvertible {
    var name: String
    var v1: String?
    var v2: String?
    var mapping: String?
    var history: @Sendable (EventStore, UInt64) throws -> Void
    var description: String { name }

    func models() throws -> (Model, Model, MappingModel?) {
      (
        try v1.map(model) ?? Examples.v1(), try v2.map(model) ?? Examples.v2(),
        try mapping.map(EventGraphMigrationTests.mapping) ?? (v1 == nil ? Examples.mapping() : nil)
      )
    }
  }

  static let cases: [Case] = [
    Case(name: "seed split", history: { try Histories.addressBook($0, seed: $1, commits: 60) }),
    Case(
      name: "merge", v1: Histories.staffV1, v2: Histories.staffV2, mapping: Histories.staffMapping,
      history: { try Histories.staff($0, seed: $1, commits: 60) }),
    Case(
      name: "rename", v1: Histories.shopV1, v2: Histories.shopV2, mapping: Histories.shopMapping,
      history: { try Histories.shop($0, seed: $1, commits: 60) }),
  ]

  /// Two stores with the same seeded history (the same bytes, commit times included).
  func twins(_ c: Case, seed: UInt64, in dir: String) throws -> (String, String) {
    let (v1, _, _) = try c.models()
    for name in ["a", "b"] {
      let store = try EventStore.create(at: "\(dir)/\(name)", model: v1)
      try c.history(store, seed)
    }
    #expect(
      try dumpDatabases(at: "\(dir)/a", versionDatabases(1)) == dumpDatabases(at: "\(dir)/b", versionDatabases(1)))
    return ("\(dir)/a", "\(dir)/b")
  }

  @Test("an upcast stopped after k batches, run again, ends byte-identical", arguments: cases, stressSeeds([1, 2, 3]))
  func killAndResume(_ c: Case, seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (a, b) = try twins(c, seed: seed, in: dir)
    let (v1, v2, m) = try c.models()
    let compiled = try CompiledMapping(m, from: v1, to: v2)
    var g = SeededGenerator(seed: seed &* 7919)
    let batchEvents = g.int(1...12)
    // Stop at random points, more than once, then finish.
    var stops = 0
    var reports: [UpcastReport] = []
    while true {
      let store = try EventStore(path: a)
      if store.model.version == v2.version { break }
      let upcaster = try Upcaster(store: store, mapping: compiled)
      upcaster.batchEvents = batchEvents
      upcaster.stopAfterBatches = stops < 3 ? g.int(1...6) : nil
      let report = try upcaster.run()
      reports.append(report)
      if stops > 0 { #expect(report.resumed, "run \(stops + 1) did not resume") }
      stops += 1
    }
    // Up to three stops: a short history may end before the later ones.
    #expect(reports.count >= 2, "the upcast ended before its first stop: nothing was resumed")
    #expect(reports.dropLast().allSatisfy { !$0.switched } && reports.last?.switched == true)
    let commits = try EventStore(path: b).read { try $0.commits().count }
    #expect(reports.map(\.commitsRead).reduce(0, +) == commits)
    _ = try EventStore.upcast(at: b, to: v2, mapping: m)
    let names = versionDatabases(2)
    let resumed = try dumpDatabases(at: a, names)
    let straight = try dumpDatabases(at: b, names)
    for name in names {
      #expect(resumed[name] == straight[name], "\(name) differs (batchEvents \(batchEvents))")
    }
    // And the whole environment, but for the store's own identity.
    #expect(try withoutStoreID(dumpEverything(at: a)) == withoutStoreID(dumpEverything(at: b)))
  }

  @Test("a chain v1 → v2 → v3 stopped after k batches, run again, ends byte-identical", arguments: stressSeeds([4, 5]))
  func chainKillAndResume(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (a, b) = try twins(Self.cases[0], seed: seed, in: dir)
    let v1 = try Examples.v1()
    let chain = [
      try CompiledMapping(try Examples.mapping(), from: v1, to: try Examples.v2()),
      try CompiledMapping(try ChainTests.mapping23(), from: try Examples.v2(), to: try ChainTests.v3()),
    ]
    var g = SeededGenerator(seed: seed)
    // Up to three stops: a short history may end before the later ones.
    var switched = false
    for stop in 0..<3 where !switched {
      let store = try EventStore(path: a)
      let upcaster = try Upcaster(store: store, chain: chain)
      upcaster.batchEvents = g.int(1...12)
      upcaster.stopAfterBatches = g.int(1...5)
      switched = try upcaster.run().switched
      if stop == 0 { #expect(!switched, "the upcast ended before its first stop: nothing was resumed") }
    }
    if !switched {
      let upcaster = try Upcaster(store: try EventStore(path: a), chain: chain)
      upcaster.batchEvents = 7
      #expect(try upcaster.run().switched)
    }
    _ = try EventStore.upcast(
      at: b, through: [try Examples.v2(), try ChainTests.v3()],
      mappings: [try Examples.mapping(), try ChainTests.mapping23()])
    #expect(try dumpDatabases(at: a, versionDatabases(3)) == dumpDatabases(at: b, versionDatabases(3)))
    #expect(try withoutStoreID(dumpEverything(at: a)) == withoutStoreID(dumpEverything(at: b)))
  }

  @Test("two upcasts of identical stores write identical logs", arguments: cases)
  func determinism(_ c: Case) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (a, b) = try twins(c, seed: 99, in: dir)
    let (_, v2, m) = try c.models()
    _ = try EventStore.upcast(at: a, to: v2, mapping: m)
    _ = try EventStore.upcast(at: b, to: v2, mapping: m)
    #expect(try dumpDatabases(at: a, versionDatabases(2)) == dumpDatabases(at: b, versionDatabases(2)))
  }

  @Test("v1 commits made while an upcast is interrupted are carried over, with their identities")
  func writesWhileInterrupted() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let twin = dir + "/twin"
    var added: [ObjectID] = []
    // The same final v1 log in both stores; `path` is upcast in two runs with v1 commits
    // in between, `twin` in one run at the end.
    for p in [path, twin] {
      let store = try EventStore.create(at: p, model: try Examples.v1())
      try Histories.addressBook(store, seed: 8, commits: 20)
      if p == path {
        let upcaster = try Upcaster(
          store: store, mapping: try CompiledMapping(try Examples.mapping(), from: store.model, to: try Examples.v2()))
        upcaster.batchEvents = 10
        upcaster.stopAfterBatches = 3
        let report = try upcaster.run()
        #expect(!report.switched && report.commitsWritten > 0)
      }
      added = []
      for i in 0..<3 {
        added.append(
          try store.write(time: historyTime(100 + i)) { tx in
            return try tx.insert(
              "AddressBook",
              [
                "firstName": .string("金"), "lastName": .string("\(i)"), "phone1": .string("0\(i)"),
                "phone2": .string("9\(i)"),
              ])
          }.value!)
      }
    }
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    _ = try EventStore.upcast(at: twin, to: try Examples.v2(), mapping: try Examples.mapping())
    let store = try EventStore(path: path)
    try store.read { s throws in
      for (i, p) in added.enumerated() {
        // The people inserted after the interruption keep their identities…
        #expect(try s.object(p).map { _ in try s.entity(of: p).name } == "AddressBook", "AddressBook/\(p.rawValue)")
        #expect(try s.object(p).map { _ in try s.value(p, "lastName") } == .string("\(i)"), "AddressBook/\(p.rawValue)")
      }
    }
    // … and the result is the one an upcast run at the end gives.
    #expect(try canonicalForm(exportLines(store)) == canonicalForm(exportLines(at: twin)))
    #expect(try dumpDatabases(store, versionDatabases(2)) == dumpDatabases(at: twin, versionDatabases(2)))
  }

  @Test("a dry run writes nothing and shows a sample of the result")
  func dryRun() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    _ = try seedStore(path)
    let before = try dumpEverything(at: path)
    let (report, sample) = try EventStore.upcast(
      at: path, to: try Examples.v2(), mapping: try Examples.mapping(), dryRun: true)
    #expect(report.switched)
    #expect(report.objectsPerEntity.map { "\($0.entity)=\($0.count)" } == ["AddressBook=3", "PhoneBook=3"])
    #expect(sample.contains { $0.contains("\"PhoneBook\"") && $0.contains("090-1234-5678") }, "\(sample)")
    #expect(try dumpEverything(at: path) == before)
    #expect(try EventStore(path: path).model.version == 1)
  }

  @Test("re-running an upcast after a rollback writes the same log again")
  func rerunAfterRollback() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    do {
      let store = try EventStore.create(at: path, model: try Examples.v1())
      try Histories.addressBook(store, seed: 5, commits: 30)
    }
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    let first = try dumpDatabases(at: path, versionDatabases(2))
    try EventStore.rollback(at: path)
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    #expect(try dumpDatabases(at: path, versionDatabases(2)) == first)
  }
}
