import Foundation
import LMDB
import Testing

@testable import EventGraph

/// Every code of ``StoreError``, met as a user meets it.
///
/// Each is made by the operation that refuses, through the public API (and LMDB directly
/// where the test plays a damaged or older file). A code that stops being made fails here; a code added without an operation that
/// makes it fails too (the switch has no case for it), and so does one left out of
/// `ErrorCode.all` (read from the source of the codes).
@Suite("Every StoreError code is met by the operation that makes it")
struct ErrorCodeCoverageTests {
  /// A small model with a bit of everything the refusals need: an abstract entity, a
  /// uniqueness constraint, a required attribute, an ordered to-many with a deny rule.
  static func model() throws -> Model {
    let text = #"""
      {"name": "Codes", "version": 1, "entities": [
        {"name": "Shape", "abstract": true, "attributes": [{"name": "label", "type": "string", "optional": true}]},
        {"name": "Team", "uniquenessConstraints": [["handle"]],
         "attributes": [{"name": "name", "type": "string"}, {"name": "handle", "type": "string", "optional": true}],
         "relationships": [{"name": "players", "destination": "Player", "toMany": true, "ordered": true,
                            "inverse": "team", "deleteRule": "deny"}]},
        {"name": "Player", "attributes": [{"name": "number", "type": "int16", "default": 0}],
         "relationships": [{"name": "team", "destination": "Team", "optional": true, "inverse": "players",
                            "deleteRule": "nullify"}]}
      ]}
      """#
    return try Model(json: Array(text.utf8), file: "codes.model.json")
  }

  /// A store of ``model()`` holding a team `Reds` (handle `reds`) with one player.
  struct Fixture {
    let store: EventStore
    let dir: String
    let team: ObjectID
    let player: ObjectID

    init(_ label: String = #function) throws {
      (store, dir) = try makeStore(try ErrorCodeCoverageTests.model(), label: label)
      (team, player) = try #require(
        try store.write { tx in
          let team = try tx.insert("Team", ["name": .string("Reds"), "handle": .string("reds")])
          let player = try tx.insert("Player")
          try tx.link(team, "players", player)
          return (team, player)
        }.value)
    }
  }

  /// The error `body` throws, `nil` when it throws none or another kind.
  static func refusal(_ body: () throws -> Void) -> StoreError? {
    do {
      try body()
      return nil
    } catch {
      return error as? StoreError
    }
  }

  @Test("the list of codes is the codes declared")
  func listIsComplete() throws {
    let declared = try DomainCodeCoverageTests.declaredCodes("EventGraph/Store/StoreError.swift")
    #expect(declared.count > 40)
    #expect(declared == StoreError.Code.all.map(\.name))
  }

  @Test("each code is made by its operation", arguments: StoreError.Code.all)
  func meets(_ code: StoreError.Code) throws {
    let e = try #require(try Self.meet(code), "no StoreError for \(code)")
    #expect(e.code == code, "\(e)")
    // The message says something of its own: no code falls through to the generic words.
    #expect(!e.problem.hasPrefix("store error "), "\(e)")
  }

  /// Does what meets `code`, returning the error it gets.
  static func meet(_ code: StoreError.Code) throws -> StoreError? {
    let f = try Fixture("meet-\(code.name)")
    defer { removeDirectory(f.dir) }
    let store = f.store
    switch code {
    case .notAStore:
      let path = f.dir + "/plain"
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
      try Data("not lmdb".utf8).write(to: URL(fileURLWithPath: path + "/data.mdb"))
      return refusal { _ = try EventStore(path: path) }
    case .alreadyExists:
      return refusal { _ = try EventStore.create(at: store.path, model: store.model) }
    case .newerFormat, .olderFormat:
      let path = f.dir + "/format"
      _ = try EventStore.create(at: path, model: try model())
      try withDatabase(path, "meta") { txn, meta in
        try txn.put(meta, key: "format", value: code == .newerFormat ? "99" : "2")
      }
      return refusal { _ = try EventStore(path: path, options: StoreOptions(readOnly: true)) }
    case .unknownEntity: return refusal { try store.write { tx in _ = try tx.insert("Coach") } }
    case .abstractEntity: return refusal { try store.write { tx in _ = try tx.insert("Shape") } }
    case .unknownProperty: return refusal { try store.write { tx in try tx.set(f.team, "colour", .string("red")) } }
    case .notAnAttribute: return refusal { try store.write { tx in try tx.set(f.team, "players", nil) } }
    case .notARelationship: return refusal { try store.write { tx in try tx.link(f.team, "name", f.player) } }
    case .wrongType: return refusal { try store.write { tx in try tx.set(f.player, "number", .string("ten")) } }
    case .noSuchObject: return refusal { try store.write { tx in try tx.set(ObjectID(99), "name", .string("x")) } }
    case .invalidIdentity: return refusal { try store.read { s in _ = try s.resolve("Team-1") } }
    case .wrongDestination: return refusal { try store.write { tx in try tx.link(f.team, "players", f.team) } }
    case .invalidPosition:
      return refusal {
        try store.write { tx in try tx.link(f.team, "players", try tx.insert("Player"), at: 5) }
      }
    case .validation: return refusal { try store.write { tx in try tx.delete(f.team) } }
    case .modelHashMismatch:
      let path = f.dir + "/hash"
      let m = try model()
      _ = try EventStore.create(at: path, model: m)
      try withDatabase(path, "models") { txn, models in
        try txn.put(models, key: BigEndianKey(1), value: m.jsonText.replacingOccurrences(of: "number", with: "digits"))
      }
      return refusal { _ = try EventStore(path: path, options: StoreOptions(readOnly: true)) }
    case .invalidSortKey:
      return refusal { _ = try store.fetch("Team", sortedBy: [SortDescriptor("players.number")]) }
    case .notUnique:
      return refusal {
        try store.write { tx in _ = try tx.insert("Team", ["name": .string("B"), "handle": .string("reds")]) }
      }
    case .corrupt:
      try store.env.write { txn throws(LMDBError) in
        _ = try txn.put(store.dbs.meta, key: MetaKey.rebuilding, value: "1")
      }
      return refusal { try store.write { tx in try tx.set(f.team, "name", .string("Blues")) } }
    case .transactionEnded:
      var escaped: Transaction?
      try store.write { tx in escaped = tx }
      return refusal { try escaped?.set(f.team, "name", .string("late")) }
    case .readOnly:
      let path = f.dir + "/read-only"
      do { _ = try EventStore.create(at: path, model: try model()) }
      let r = try EventStore(path: path, options: StoreOptions(readOnly: true))
      return refusal { try r.write { tx in _ = try tx.insert("Player") } }
    case .unknownModelVersion: return refusal { _ = try store.model(version: 7) }
    case .alreadyOpen: return refusal { _ = try EventStore(path: store.path) }
    case .versionChanged:
      try store.env.write { txn throws(LMDBError) in
        _ = try txn.put(store.dbs.meta, key: MetaKey.activeVersion, value: "2")
      }
      return refusal { try store.write { tx in try tx.set(f.team, "name", .string("x")) } }
    case .sequenceBeyondLog: return refusal { try store.clone(root: f.team, asOf: 99) }
    case .commitBeyondLog: return refusal { try store.read { s in _ = try s.lastSequence(ofCommit: 9) } }
    case .sequenceInsideCommit: return refusal { try store.read { s in _ = try s.commitEnd(at: 2) } }
    case .deletedObject:
      let p = try #require(try store.write { tx in try tx.insert("Player") }.value)
      try store.write { tx in try tx.delete(p) }
      return refusal { try store.clone(root: p) }
    case .modelMismatch:
      let (other, otherDir) = try makeStore(try Fixtures.addressBookV1(), label: "meet-other")
      defer { removeDirectory(otherDir) }
      return refusal { try store.clone(root: f.team, into: other) }
    case .referenceWouldMove:
      return refusal { try store.clone(root: f.team, policy: ["players": .reference]) }
    case .referenceOutsideStore:
      let (other, otherDir) = try makeStore(try model(), label: "meet-other")
      defer { removeDirectory(otherDir) }
      return refusal { try store.clone(root: f.player, policy: ["team": .reference], into: other) }
    case .referenceToDeleted:
      let asOf = try store.lastSequence()
      try store.write { tx in
        try tx.unlink(f.team, "players", f.player)
        try tx.delete(f.team)
      }
      return refusal { try store.clone(root: f.player, policy: ["team": .reference], asOf: asOf) }
    case .versionExists: return refusal { try store.installVersion(store.model) }
    case .versionInUse: return refusal { try store.dropVersion(1) }
    case .invalidCheckpointName: return refusal { try store.setCheckpoint(Checkpoint(name: "", value: [1])) }
    case .damaged:
      let path = f.dir + "/damaged"
      do { _ = try EventStore.create(at: path, model: try model()) }
      // The first page's magic number: LMDB no longer knows the file.
      let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path + "/data.mdb"))
      try handle.seek(toOffset: 16)
      try handle.write(contentsOf: Data(repeating: 0xA5, count: 8))
      try handle.close()
      return refusal { _ = try EventStore(path: path) }
    case .projectionDamaged:
      // An object's record changed behind the checksum it was written with.
      try store.env.write { txn throws(LMDBError) in
        guard let raw = try txn.openDatabase("objects.v1", create: false) else { return }
        try txn.put(raw, key: StoreKey.object(f.team), value: [UInt8](repeating: 7, count: 24))
      }
      return refusal { try store.read { s in _ = try s.object(f.team) } }
    case .replica, .fenced:
      try store.setReplicationRole(ReplicationRole(code == .replica ? .replica : .fenced, stream: "s", detail: "test"))
      return refusal { try store.write { tx in try tx.set(f.team, "name", .string("x")) } }
    case .storage:
      // A projection's key longer than LMDB takes (511 bytes): LMDB refuses the put, the
      // commit is refused whole, and the error is the store's with LMDB's underneath.
      // (Only for commits after the fixture's, which registering catches up on.)
      struct LongKeys: Projection {
        let name = "long-keys"
        func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
          try storage.put([UInt8](repeating: 1, count: commit.number > 1 ? 600 : 8), [1])
        }
      }
      try store.register(LongKeys())
      let e = refusal { try store.write { tx in try tx.set(f.team, "name", .string("x")) } }
      #expect(e?.underlying as? LMDBError == .badValueSize)
      #expect(try store.read { s in try s.value(f.team, "name") } == .string("Reds"))
      return e
    case .keyRequired, .wrongKey, .erasedSubject, .notASubject, .noSubject, .personalDataAcrossStores:
      return try meetPersonal(code, dir: f.dir)
    case .historyTruncated:
      try store.write { tx in try tx.set(f.team, "name", .string("Blues")) }
      try store.truncate(.keepCommits(1))
      return refusal { try store.read { s in _ = try s.object(f.team, asOf: 1) } }
    case .invalidTruncation:
      return refusal { try store.truncate(.before(sequence: 0)) }
    default:
      Issue.record("no operation meets \(code): add one to this switch")
      return nil
    }
  }

  /// The codes of personal data, on the privacy tests' address book.
  static func meetPersonal(_ code: StoreError.Code, dir: String) throws -> StoreError? {
    let key = try PrivacyTests.keyFile(in: dir)
    let path = dir + "/personal"
    let options = StoreOptions(keyFile: key)
    if code == .keyRequired { return refusal { _ = try EventStore.create(at: path, model: try PrivacyTests.model()) } }
    let store = try EventStore.create(at: path, model: try PrivacyTests.model(), options: options)
    let made = try store.write { tx in
      let person = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string("Taro")])
      let phone = try tx.insert("PhoneBook", ["phoneNumber": .string("123")])
      try tx.link(person, "phones", phone)
      return (person, phone)
    }
    let (person, phone) = try #require(made.value)
    switch code {
    case .wrongKey:
      let other = dir + "/other.key"
      try EventStore.generateKeyFile(at: other)
      do { _ = try EventStore.create(at: dir + "/other", model: store.model, options: StoreOptions(keyFile: other)) }
      return refusal { _ = try EventStore(path: dir + "/other", options: StoreOptions(keyFile: key)) }
    case .erasedSubject:
      try store.write { tx in try tx.erase(person) }
      return refusal { try store.write { tx in try tx.set(person, "lastName", .string("again")) } }
    case .notASubject: return refusal { try store.write { tx in try tx.erase(phone) } }
    case .personalDataAcrossStores:
      let other = try EventStore.create(at: dir + "/target", model: store.model, options: options)
      return refusal { try store.clone(root: person, policy: ["phones": .deep], into: other) }
    default:
      return refusal { try store.write { tx in _ = try tx.insert("PhoneBook", ["phoneNumber": .string("9")]) } }
    }
  }

  /// Runs `body` on database `name` of the store at `path`, opened by LMDB alone (the
  /// store closed), in one write transaction.
  static func withDatabase(
    _ path: String, _ name: String, _ body: (borrowing WriteTransaction, Database) throws -> Void
  )
    throws
  {
    let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
    let db = try #require(try env.openDatabase(name, create: false))
    try env.write { txn in try body(txn, db) }
  }
}
