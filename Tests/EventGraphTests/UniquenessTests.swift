import Foundation
import LMDB
import Testing

@testable import EventGraph

@Suite("Uniqueness constraints, kept by an index in the commit's transaction")
struct UniquenessTests {
  /// People with a unique handle, and a unique (club, number); employees are people too.
  static func model() throws -> Model {
    try Model(
      name: "Clubs", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          attributes: [
            AttributeDescription(name: "handle", type: .string, isOptional: true),
            AttributeDescription(name: "club", type: .string, isOptional: true),
            AttributeDescription(name: "number", type: .int32, isOptional: true),
            AttributeDescription(name: "photo", type: .binary, isOptional: true),
          ],
          relationships: [RelationshipDescription(name: "friend", destination: "Person", copyPolicy: .deep)],
          uniquenessConstraints: [["handle"], ["club", "number"], ["photo"]]),
        EntityDescription(
          name: "Employee", parent: "Person", attributes: [AttributeDescription(name: "badge", type: .int64)],
          uniquenessConstraints: [["badge"]]),
      ])
  }

  /// The refusal of `body`, or `nil` when it commits.
  static func refusal(_ store: EventStore, _ body: (Transaction) throws -> Void) -> StoreError? {
    do {
      try store.write { tx throws in try body(tx) }
      return nil
    } catch let e as StoreError {
      return e
    } catch {
      Issue.record("unexpected \(error)")
      return nil
    }
  }

  @Test("a second object with a held value is refused, naming entity, attributes, value and holder")
  func refusesHeldValue() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let momo = try store.write { tx in try tx.insert("Person", ["handle": .string("momo")]) }.value!
    let e = try #require(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("momo")]) })
    #expect(e.code == .notUnique)
    #expect(
      e.description
        == "new Person 1 of the commit: uniqueness constraint [handle] of Person: 'momo' is already held by Person/1")
    #expect(try store.read { try $0.objects(of: "Person") } == [momo])
    // The identity the refused object would have had goes to the next object: the error never named it.
    let next = try store.write { tx in try tx.insert("Person", ["handle": .string("nana")]) }.value!
    #expect(next.rawValue == momo.rawValue + 1 && e.object?.id == next)
    // Canonically equal strings are one value.
    try store.write { tx in try tx.set(momo, "handle", .string("caf\u{E9}")) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("cafe\u{301}")]) } != nil)
  }

  @Test("over several attributes: refused only when all are equal; nil in any one is not held")
  func severalAttributes() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try store.write { tx in _ = try tx.insert("Person", ["club": .string("A"), "number": .int32(7)]) }
    let e = Self.refusal(store) { tx in _ = try tx.insert("Person", ["club": .string("A"), "number": .int32(7)]) }
    #expect(
      e?.description
        == "new Person 1 of the commit: uniqueness constraint [club, number] of Person: ('A', 7) is already held by Person/1"
    )
    #expect(
      Self.refusal(store) { tx in _ = try tx.insert("Person", ["club": .string("B"), "number": .int32(7)]) } == nil)
    #expect(
      Self.refusal(store) { tx in _ = try tx.insert("Person", ["club": .string("A"), "number": .int32(8)]) } == nil)
    // A nil among the attributes: as SQL's UNIQUE, any number of them.
    for _ in 0..<3 {
      #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["club": .string("A")]) } == nil)
      #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["number": .int32(7)]) } == nil)
    }
    #expect(try store.verify().isOK)
  }

  @Test("values exchanged in one commit, changed or deleted, free their old values")
  func changes() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let (a, b) = try store.write { tx in
      (try tx.insert("Person", ["handle": .string("a")]), try tx.insert("Person", ["handle": .string("b")]))
    }.value!
    try store.write { tx in
      try tx.set(a, "handle", .string("b"))
      try tx.set(b, "handle", .string("a"))
    }
    #expect(try store.read { try $0.value(a, "handle") } == .string("b"))
    // A change frees the old value; a nil frees it too; a delete frees it.
    try store.write { tx in try tx.set(a, "handle", .string("c")) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("b")]) } == nil)
    try store.write { tx in try tx.set(b, "handle", nil) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("a")]) } == nil)
    try store.write { tx in try tx.delete(a) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("c")]) } == nil)
    // Within one commit: taken then given back is fine; two takers are not.
    #expect(
      Self.refusal(store) { tx in
        let x = try tx.insert("Person", ["handle": .string("z")])
        try tx.set(x, "handle", .string("y"))
        _ = try tx.insert("Person", ["handle": .string("z")])
      } == nil)
    #expect(
      Self.refusal(store) { tx in
        _ = try tx.insert("Person", ["handle": .string("w")])
        _ = try tx.insert("Person", ["handle": .string("w")])
      }?.code == .notUnique)
    #expect(try store.verify().isOK)
    // A rebuild makes the same index from the log.
    _ = try store.rebuild()
    #expect(try store.verify().isOK)
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("z")]) }?.code == .notUnique)
  }

  @Test("a parent's constraint holds across its sub-entities; a sub-entity's own only among them")
  func inheritance() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try store.write { tx in _ = try tx.insert("Person", ["handle": .string("boss")]) }
    let e = Self.refusal(store) { tx in _ = try tx.insert("Employee", ["handle": .string("boss"), "badge": .int64(1)]) }
    #expect(
      e?.description
        == "new Employee 1 of the commit: uniqueness constraint [handle] of Person: 'boss' is already held by Person/1")
    try store.write { tx in _ = try tx.insert("Employee", ["badge": .int64(1)]) }
    #expect(
      Self.refusal(store) { tx in _ = try tx.insert("Employee", ["badge": .int64(1)]) }?.description
        == "new Employee 1 of the commit: uniqueness constraint [badge] of Employee: 1 is already held by Employee/2")
  }

  @Test("values too long for an LMDB key are compared by their SHA-256")
  func longValues() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let long = [UInt8](repeating: 7, count: 5000)
    try store.write { tx in _ = try tx.insert("Person", ["photo": .binary(long)]) }
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["photo": .binary(long)]) }?.code == .notUnique)
    #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["photo": .binary(long + [1])]) } == nil)
    #expect(try store.verify().isOK)
  }

  @Test("a deep copy of an object with held values is refused; nothing is written")
  func clone() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let p = try store.write { tx in try tx.insert("Person", ["handle": .string("momo")]) }.value!
    #expect(throws: StoreError.self) { try store.clone(root: p) }
    let copy = try store.clone(root: p, overrides: ["Person.handle": .value(.string("momo2"))])
    #expect(try store.read { try $0.value(copy.root, "handle") } == .string("momo2"))
    #expect(try store.read { try $0.objects(of: "Person").count } == 2)
    #expect(try store.verify().isOK)
  }

  @Test("64 tasks committing one value through the service: exactly one lands")
  func concurrentCommitters() async throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    let outcomes = await withTaskGroup(of: Bool.self) { group in
      for i in 0..<64 {
        group.addTask {
          do {
            try await store.commit { tx in
              _ = try tx.insert("Person", ["handle": .string("prize"), "number": .int32(Int32(i))])
            }
            return true
          } catch let e as StoreError where e.code == .notUnique {
            return false
          } catch {
            return false
          }
        }
      }
      var all: [Bool] = []
      for await r in group { all.append(r) }
      return all
    }
    #expect(outcomes.filter { $0 }.count == 1)
    #expect(try store.read { try $0.objects(of: "Person").count } == 1)
    #expect(try store.verify().isOK)
  }

  @Test("commits batched by the writer thread take and give back values one after another")
  func batchedChanges() async throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<32 {
        group.addTask {
          let p = try await store.commit { tx in try tx.insert("Person", ["handle": .string("h\(i)")]) }.value
          guard let p else { return }
          try await store.commit { tx in try tx.set(p, "handle", .string("g\(i)")) }
        }
      }
      try await group.waitForAll()
    }
    #expect(store.batchesCommitted < 64)
    #expect(try store.verify().isOK)
    for i in 0..<32 {
      #expect(Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("h\(i)")]) } == nil)
      #expect(
        Self.refusal(store) { tx in _ = try tx.insert("Person", ["handle": .string("g\(i)")]) }?.code == .notUnique)
    }
  }

  @Test("a store made before there was a unique database opens read-only, and a writable open adds it")
  func storeMadeBefore() throws {
    let model = try Fixtures.company()
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    do {
      let store = try EventStore.create(at: path, model: model)
      try ReplayTests.randomHistory(store, seed: 5, commits: 10)
    }
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
      let unique = try #require(try env.openDatabase("unique.v1", create: false))
      try env.write { txn in try txn.drop(unique) }
      #expect(try env.openDatabase("unique.v1", create: false) == nil)
    }
    do {
      let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
      #expect(try store.verify().isOK)
      #expect(try store.read { try $0.objects(of: "Company").count } > 0)
    }
    let store = try EventStore(path: path)
    #expect(store.dbs.unique != nil)
    #expect(try store.verify().isOK)
  }
}
