import Foundation
import LMDB
import Testing

@testable import EventGraph
@testable import EventGraphMigration

/// A model version number names one model in a store: an upcast to a known version with
/// another model is refused, and a rollback to a version whose document was changed.
@Suite("Model identity across upcasts and rollbacks")
struct ModelIdentityUpcastTests {
  static let v2 = UniquenessUpcastTests.v2("")
  /// Another model numbered 2: a `nickname` more, and a `Pet` entity.
  static let otherV2 = v2.replacingOccurrences(
    of: #"{"name": "handle", "type": "string", "maxLength": 8}"#,
    with:
      #"{"name": "handle", "type": "string", "maxLength": 8}, {"name": "nickname", "type": "string", "optional": true}"#
  ).replacingOccurrences(of: "}]}]}", with: #"}]}, {"name": "Pet", "attributes": []}]}"#)

  @Test("after a rollback, an upcast to the same version number with another model is refused, naming the entities")
  func sameNumberOtherModel() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    try EventStore.create(at: path, model: try model(UniquenessUpcastTests.v1)).write { tx in
      _ = try tx.insert("Person", ["handle": .string("momo")])
    }
    #expect(Self.otherV2 != Self.v2)
    _ = try EventStore.upcast(at: path, to: try model(Self.v2), mapping: nil)
    #expect(try EventStore.rollback(at: path) == 1)
    let before = try dumpEverything(at: path)
    let error = try #require(throws: MigrationError.self) {
      _ = try EventStore.upcast(at: path, to: try model(Self.otherV2), mapping: nil)
    }
    let text = error.description
    #expect(text.contains("the store already has a model version 2"), "\(text)")
    #expect(text.contains("Person (changed), Pet (only in the new one)"), "\(text)")
    #expect(text.contains("give the new model another version number"), "\(text)")
    #expect(try dumpEverything(at: path) == before, "the refusal wrote something")
    // The same model again is the upcast the rollback's message suggests.
    _ = try EventStore.upcast(at: path, to: try model(Self.v2), mapping: nil)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(
      try store.statistics().models.map(\.hash) == [
        try model(UniquenessUpcastTests.v1).contentHash, try model(Self.v2).contentHash,
      ])
  }

  @Test("a version's model that was never used (no commit, never active) may be replaced")
  func unfinishedMayBeReplaced() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    // Version 2 known by its document only: no commit, never active.
    try EventStore.create(at: path, model: try model(UniquenessUpcastTests.v1)).installVersion(try model(Self.v2))
    _ = try EventStore.upcast(at: path, to: try model(Self.otherV2), mapping: nil)
    #expect(try EventStore(path: path).model == model(Self.otherV2))
  }

  @Test("a rollback to a version whose document no longer hashes to its hash is refused")
  func rollbackChecks() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    _ = try EventStore.create(at: path, model: try model(UniquenessUpcastTests.v1))
    _ = try EventStore.upcast(at: path, to: try model(Self.v2), mapping: nil)
    do {
      let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
      let models = try #require(try env.openDatabase("models", create: false))
      let changed = UniquenessUpcastTests.v1.replacingOccurrences(of: "handle", with: "name")
      try env.write { txn in _ = try txn.put(models, key: BigEndianKey(1), value: try model(changed).jsonText) }
    }
    #expect {
      try EventStore.rollback(at: path)
    } throws: { e in
      (e as? StoreError)?.code == .modelHashMismatch
    }
    #expect(try EventStore(path: path).model.version == 2)
  }
}
