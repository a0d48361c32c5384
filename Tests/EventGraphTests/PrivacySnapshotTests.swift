import Foundation
import Testing

@testable import EventGraph

/// Snapshots of personal data (Docs/privacy.md, "Snapshots"): the sealed values are copied
/// as they are, with the keys of their subjects, so the snapshot reads them under the same
/// key-encryption key, keeps erased subjects erased, and is erased on its own.
@Suite("Personal data in snapshots")
struct PrivacySnapshotTests {
  struct Source {
    let store: EventStore
    let key: String
    let momo: ObjectID
    let beppo: ObjectID
    let beppoPhone: ObjectID
    let markers: [String]
    /// Momo's data key, learned before the erasure.
    let erasedKey: [UInt8]
    /// The log's end before Momo was erased.
    let beforeErasure: UInt64
  }

  /// Momo and Beppo with a phone each, personal values unique markers; Momo erased; a
  /// later change of Beppo's name.
  static func source(_ dir: String) throws -> Source {
    let key = try PrivacyTests.keyFile(in: dir)
    let markers = (0..<5).map { "MARKER-\($0)-\(UUID().uuidString)" }
    let store = try EventStore.create(
      at: dir + "/store", model: try PrivacyTests.model(), options: StoreOptions(keyFile: key))
    let written = try store.write { tx in
      let m = try tx.insert("AddressBook", ["firstName": .string("Momo"), "lastName": .string(markers[0])])
      let mp = try tx.insert("PhoneBook", ["phoneNumber": .string(markers[1])])
      try tx.link(m, "phones", mp)
      let b = try tx.insert("AddressBook", ["firstName": .string("Beppo"), "lastName": .string(markers[2])])
      let bp = try tx.insert("PhoneBook", ["phoneNumber": .string(markers[3])])
      try tx.link(b, "phones", bp)
      return (m, b, bp)
    }
    let (momo, beppo, phone) = try #require(written.value)
    let erasedKey = try #require(try store.env.read { try store.dbs.keyring?.testingDataKey(momo, in: $0) })
    let before = try store.read { try $0.reader.logEnd().sequence }
    _ = try store.write { tx in try tx.erase(momo, reason: "request") }
    try store.write { tx in try tx.set(beppo, "lastName", .string(markers[4])) }
    return Source(
      store: store, key: key, momo: momo, beppo: beppo, beppoPhone: phone, markers: markers, erasedKey: erasedKey,
      beforeErasure: before)
  }

  static func export(_ store: EventStore) throws -> [String] {
    var lines: [String] = []
    try store.export { lines.append($0) }
    return lines
  }

  @Test(
    "a snapshot with or without history reads every personal value its source reads, keeps the erased subject erased, and holds neither plaintext nor the erased key",
    arguments: [false, true])
  func carriesKeys(withHistory: Bool) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let source = try Self.source(dir)
    let out = dir + "/snapshot"
    try source.store.snapshot(to: out, withHistory: withHistory)
    let snap = try EventStore(path: out, options: StoreOptions(keyFile: source.key))
    #expect(try Self.export(snap) == Self.export(source.store))
    #expect(try snap.verify().isOK)
    try snap.read { s in
      #expect(try s.value(source.beppo, "lastName") == .string(source.markers[4]))
      guard case .sealed(let v)? = try s.value(source.momo, "lastName") else {
        Issue.record("the erased subject's value was opened in the snapshot")
        return
      }
      #expect(v.state == .erased)
      // The blind index answers in the snapshot: its blind-hash key is its source's.
      #expect(try s.fetch("PhoneBook", where: "phoneNumber == '\(source.markers[3])'").objects == [source.beppoPhone])
      #expect(try s.fetch("PhoneBook", where: "phoneNumber == '\(source.markers[1])'").objects.isEmpty)
    }
    for (name, bytes) in try PrivacyTests.files(out) {
      #expect(!PrivacyTests.contains(bytes, source.erasedKey), "\(name) holds the erased subject's data key")
      for m in source.markers {
        for e in PrivacyTests.encodings(m) { #expect(!PrivacyTests.contains(bytes, e), "\(name) holds \(m)") }
      }
    }
    // Erased on its own: erasing Beppo in the snapshot leaves the source's Beppo readable.
    let beppoKey = try #require(try snap.env.read { try snap.dbs.keyring?.testingDataKey(source.beppo, in: $0) })
    #expect(try snap.write { tx in try tx.erase(source.beppo) }.value == true)
    try snap.read { s in
      guard case .sealed(let v)? = try s.value(source.beppo, "lastName") else {
        Issue.record("Beppo's value was opened after his erasure in the snapshot")
        return
      }
      #expect(v.state == .erased)
    }
    #expect(try source.store.read { try $0.value(source.beppo, "lastName") } == .string(source.markers[4]))
    for (name, bytes) in try PrivacyTests.files(out) {
      #expect(!PrivacyTests.contains(bytes, beppoKey), "\(name) holds Beppo's data key after his erasure")
    }
  }

  @Test("a snapshot as of before an erasure still shows the subject erased: its key is gone")
  func beforeTheErasure() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let source = try Self.source(dir)
    for withHistory in [false, true] {
      let out = dir + "/snapshot-\(withHistory)"
      try source.store.snapshot(asOf: source.beforeErasure, to: out, withHistory: withHistory)
      let snap = try EventStore(path: out, options: StoreOptions(keyFile: source.key))
      try snap.read { s in
        guard case .sealed(let v)? = try s.value(source.momo, "lastName") else {
          Issue.record("with history \(withHistory): the erased subject's value was opened")
          return
        }
        #expect(v.state == .erased)
        #expect(try s.value(source.beppo, "lastName") == .string(source.markers[2]))
      }
      // No new key can be made there for the erased subject.
      #expect(throws: StoreError.self) {
        try snap.write { tx in try tx.set(source.momo, "lastName", .string("again")) }
      }
    }
  }

  @Test("a subgraph's snapshot takes the keys of its own subjects only")
  func subgraphKeys() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let source = try Self.source(dir)
    let out = dir + "/snapshot"
    try source.store.snapshot(root: source.beppo, to: out)
    let snap = try EventStore(path: out, options: StoreOptions(keyFile: source.key))
    try snap.env.read { txn in
      let ring = try #require(snap.dbs.keyring)
      #expect(try ring.entry(source.beppo, in: txn) != nil)
      #expect(try ring.entry(source.momo, in: txn) == nil)
    }
    #expect(try snap.read { try $0.value(source.beppo, "lastName") } == .string(source.markers[4]))
  }

  @Test("a store of personal data opened without its key cannot be snapshotted, and nothing is written")
  func needsTheKey() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    // The source is closed before it opens again, without the key.
    let path = try Self.source(dir).store.path
    let locked = try EventStore(path: path)
    let out = dir + "/snapshot"
    do {
      try locked.snapshot(to: out)
      Issue.record("a snapshot was made without the key")
    } catch let e as StoreError {
      #expect(e.code == .keyRequired)
      #expect(e.path == path)
    }
    #expect(!FileManager.default.fileExists(atPath: out))
  }
}
