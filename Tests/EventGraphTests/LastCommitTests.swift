import Foundation
import LMDB
import Testing

@testable import EventGraph

/// A store's `write` remembers the log's end its last commit left and trusts it only when
/// no other write transaction committed since: these tests put one in between.
@Suite("The log's end remembered between commits")
struct LastCommitTests {
  /// One commit that names an item; the log gets two events for a new one, one otherwise.
  private static func name(_ store: EventStore, _ item: ObjectID?, _ name: String) throws -> CommitInfo? {
    try store.write { tx throws in
      guard let item else { return try tx.insert("Item", ["name": .string(name)]) }
      try tx.set(item, "name", .string(name))
      return item
    }.commit
  }

  @Test("a commit by another process in between is seen: the next commit follows it in the log")
  func otherProcess() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let path = store.path
    _ = try Self.name(store, nil, "a")
    await #expect(processExitsWith: .success) { [path = path as String] in
      let other = try EventStore(path: path)
      try other.write { tx throws in try tx.insert("Item", ["name": .string("other")]) }
    }
    let info = try #require(try Self.name(store, nil, "c"))
    #expect(info.number == 3)
    #expect(info.firstSequence == 5)
    #expect(try store.verify().isOK)
  }

  @Test("a commit of the writer thread in between is seen")
  func writerThread() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let item = try store.write { tx throws in try tx.insert("Item", ["name": .string("a")]) }.value!
    try await store.commit { tx in try tx.set(item, "name", .string("b")) }
    let info = try #require(try Self.name(store, item, "c"))
    #expect(info.number == 3)
    #expect(info.firstSequence == 4)
    #expect(try store.verify().isOK)
  }

  @Test("a commit refused after its log entry was written is forgotten, even when another write follows")
  func refusedThenOtherWrite() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    try store.register(NameIndex(refuses: true))
    #expect(try Self.name(store, nil, "a")?.number == 1)
    // The inline projection refuses the commit after `finish` appended it in the transaction.
    #expect(throws: Refusal.self) { try Self.name(store, nil, "forbidden") }
    // A write of no commit at all: it moves LMDB's transaction ID on, and nothing else.
    try store.env.write { txn throws(LMDBError) in _ = try txn.put(store.dbs.meta, key: "test", value: "1") }
    let info = try #require(try Self.name(store, nil, "b"))
    #expect(info.number == 2)
    #expect(info.firstSequence == 3)
    #expect(try store.verify().isOK)
  }

  @Test("an interrupted rebuild or a version switch by another handle is seen before the next commit")
  func metadataChanged() throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    _ = try Self.name(store, nil, "a")
    try store.env.write { txn throws(LMDBError) in _ = try txn.put(store.dbs.meta, key: MetaKey.rebuilding, value: "1")
    }
    #expect {
      try Self.name(store, nil, "b")
    } throws: { error in
      guard let e = error as? StoreError, e.code == .corrupt else { return false }
      return e.detail?.contains("interrupted rebuild") == true
    }
    try store.env.write { txn throws(LMDBError) in _ = try txn.delete(store.dbs.meta, key: MetaKey.rebuilding) }
    _ = try Self.name(store, nil, "b")
    try store.env.write { txn throws(LMDBError) in
      _ = try txn.put(store.dbs.meta, key: MetaKey.activeVersion, value: "2")
    }
    #expect(throws: StoreError.versionChanged(path: store.path, opened: 1, active: 2)) {
      try Self.name(store, nil, "c")
    }
  }
}
