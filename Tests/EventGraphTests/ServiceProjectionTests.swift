import Foundation
import LMDB
import Testing

@testable import EventGraph

/// Items by name: `name → object u64 BE`, for the tests of projections of one's own.
struct NameIndex: Projection {
  let name = "name-index"
  /// Refuses a commit that names an item `forbidden`, to show an inline projection's veto.
  var refuses = false

  func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
    guard let item = storage.model.entity(named: "Item"), let attribute = item.attribute(named: "name") else { return }
    for case .set(let o, let a, let v) in commit.events where a == attribute.id {
      guard case .string(let name)? = v else { continue }
      if refuses && name == "forbidden" { throw Refusal() }
      try storage.put(Array(name.utf8), withUnsafeBytes(of: o.rawValue.bigEndian) { Array($0) })
    }
  }
}

@Suite("Projections of one's own: inline, asynchronous, rebuilt")
struct ServiceProjectionTests {
  @Test("an inline projection follows every writer of the log: clone, and commit records appended from elsewhere")
  func inlineFollowsEveryWriter() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    try store.register(EntityCountProjection())
    let item = try store.write { tx throws in try tx.insert("Item", ["name": .string("a")]) }.value!
    try store.clone(root: item)
    try store.clone(root: item)
    func current(_ s: EventStore) throws -> [String: Int] {
      try s.readProjection("entity-counts") { view in
        #expect(view.position == view.logEnd)
        return try EntityCountProjection.counts(in: view, model: s.model)
      }
    }
    #expect(try current(store)["Item"] == 3)
    let (replica, replicaDir) = try makeStore(try ServiceFixtures.model(), label: "inlineFollowsEveryWriter-replica")
    defer { removeDirectory(replicaDir) }
    try replica.register(EntityCountProjection())
    try replica.appendCommitRecords(try store.commitRecords(from: 1))
    #expect(try current(replica)["Item"] == 3)
    #expect(try replica.read { try $0.logEnd() } == store.read { try $0.logEnd() })
  }

  @Test("an inline projection catches up when registered and then follows every commit of the process")
  func inline() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    for i in 0..<10 { try store.write { tx throws in try tx.insert("Item", ["name": .string("before\(i)")]) } }
    try store.register(EntityCountProjection())
    #expect(store.registeredProjections == ["entity-counts"])
    #expect(throws: ServiceError.projectionAlreadyRegistered("entity-counts")) {
      try store.register(EntityCountProjection())
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<30 {
        group.addTask {
          try await store.commit { tx in
            let o = try tx.insert("Item", ["name": .string("async\(i)")])
            if i % 5 == 0 { try tx.delete(o) }
            if i == 7 { try tx.insert("Counter", ["value": .int64(1)]) }
          }
        }
      }
      try await group.waitForAll()
    }
    let victim = try store.read { s in try s.objects(of: "Item").first }
    try store.write { tx throws in
      if let victim { try tx.delete(victim) }
    }
    let counts = try store.readProjection("entity-counts") { view in
      #expect(view.position == view.logEnd)
      return try EntityCountProjection.counts(in: view, model: store.model)
    }
    let actual = try store.read { s in
      ["Item": try s.objects(of: "Item").count, "Counter": try s.objects(of: "Counter").count]
    }
    #expect(counts == actual)
    #expect(counts["Item"] == 10 + 30 - 6 - 1)

    // A rebuild from the log gives the same bytes.
    let before = try store.readProjection("entity-counts") { try $0.entries() }
    let rebuilt = try store.rebuild(projection: EntityCountProjection())
    #expect(rebuilt.commits == Int(try store.read { try $0.logEnd().commit }))
    let after = try store.readProjection("entity-counts") { try $0.entries() }
    #expect(after.map(\.key) == before.map(\.key))
    #expect(after.map(\.value) == before.map(\.value))
  }

  @Test("a view kept past readProjection refuses to read: its transaction has ended")
  func viewKeptPastItsRead() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    try store.register(EntityCountProjection())
    try store.write { tx throws in try tx.insert("Item", ["name": .string("one")]) }
    let kept = try store.readProjection("entity-counts") { view throws in
      #expect(try !view.entries().isEmpty)
      return view
    }
    #expect(throws: LMDBError.transactionEnded) { try kept.entries() }
  }

  @Test("an inline projection that throws refuses that commit alone")
  func inlineVeto() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    try store.register(NameIndex(refuses: true))
    let names = (0..<20).map { $0 == 11 ? "forbidden" : "n\($0)" }
    let refused = await withTaskGroup(of: String?.self) { group in
      for name in names {
        group.addTask {
          do {
            try await store.commit { tx in try tx.insert("Item", ["name": .string(name)]) }
            return nil
          } catch {
            return error is Refusal ? name : "unexpected \(error)"
          }
        }
      }
      var all: [String] = []
      for await r in group { if let r { all.append(r) } }
      return all
    }
    #expect(refused == ["forbidden"])
    #expect(throws: Refusal.self) {
      try store.write { tx throws in try tx.insert("Item", ["name": .string("forbidden")]) }
    }
    let indexed = try store.readProjection("name-index") { view in
      try view.entries().map { String(decoding: $0.key, as: UTF8.self) }
    }
    #expect(indexed.sorted() == names.filter { $0 != "forbidden" }.sorted())
    #expect(try ServiceFixtures.itemNames(store).sorted() == indexed.sorted())
  }

  @Test("an asynchronous projection follows the log in its own task and stops when cancelled")
  func asynchronous() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    for i in 0..<50 { try store.write { tx throws in try tx.insert("Item", ["name": .string("i\(i)")]) } }
    let maintainer = Task { try await store.maintain(NameIndex()) }
    for i in 50..<80 { try await store.commit { tx in try tx.insert("Item", ["name": .string("i\(i)")]) } }
    let end = try store.lastSequence()
    while try store.readProjection("name-index", { $0.position }) < end { try await Task.sleep(for: .milliseconds(5)) }
    maintainer.cancel()
    await #expect(throws: CancellationError.self) { try await maintainer.value }
    let indexed = try store.readProjection("name-index") { try $0.entries().count }
    #expect(indexed == 80)
    // Restarted, it continues from its position.
    try store.write { tx throws in try tx.insert("Item", ["name": .string("later")]) }
    let again = Task { try await store.maintain(NameIndex()) }
    let end2 = try store.lastSequence()
    while try store.readProjection("name-index", { $0.position }) < end2 { try await Task.sleep(for: .milliseconds(5)) }
    again.cancel()
    #expect(try store.readProjection("name-index") { try $0.get(Array("later".utf8)) } != nil)
  }

  @Test("a projection never built reads as empty at position 0")
  func neverBuilt() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    try store.write { tx throws in try tx.insert("Item", ["name": .string("a")]) }
    let (position, count) = try store.readProjection("nothing") { ($0.position, try $0.entries().count) }
    #expect(position == 0)
    #expect(count == 0)
  }
}
