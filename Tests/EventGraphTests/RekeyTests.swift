import Foundation
import Testing

@testable import EventGraph

/// Rotating the key-encryption key (Docs/privacy.md, "Rotating the key-encryption key").
@Suite("Personal data: the key-encryption key rotated")
struct RekeyTests {
  /// The code of the store error `body` throws; `nil` when it throws none or another error.
  static func code(_ body: () throws -> Void) -> StoreError.Code? {
    do {
      try body()
      return nil
    } catch let e as StoreError {
      return e.code
    } catch {
      return nil
    }
  }

  /// Every wrapped key in the store's subject-key file, as its bytes.
  static func wrappedKeys(_ path: String) throws -> [[UInt8]] {
    let bytes = try #require(FileManager.default.contents(atPath: path + "/subject-keys")).map { $0 }
    var found: [[UInt8]] = []
    var offset = 64
    while offset + 128 <= bytes.count {
      let slot = Array(bytes[offset..<(offset + 128)])
      if slot.contains(where: { $0 != 0 }) { found.append(Array(slot[16..<88])) }
      offset += 128
    }
    return found
  }

  @Test(
    "a rotation wraps every subject key again: the old key is refused after it, the new one reads everything, and the old wrapped keys are gone from every file"
  )
  func rotationClosed() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (path, key, markers, momo, beppo, phone, before, oldWrapped) = try {
      let s = try PrivacySnapshotTests.source(dir)
      return (
        s.store.path, s.key, s.markers, s.momo, s.beppo, s.beppoPhone, try PrivacySnapshotTests.export(s.store),
        try Self.wrappedKeys(s.store.path)
      )
    }()
    let newKey = dir + "/new.key"
    try EventStore.generateKeyFile(at: newKey)
    let report = try EventStore.rekey(at: path, options: StoreOptions(keyFile: key), newKeyFile: newKey)
    #expect(report.subjects == 1 && report.erased == 1, "\(report)")
    do {
      _ = try EventStore(path: path, options: StoreOptions(keyFile: key))
      Issue.record("the old key still opens the store")
    } catch let e as StoreError {
      #expect(e.code == .wrongKey)
    }
    let store = try EventStore(path: path, options: StoreOptions(keyFile: newKey))
    #expect(try PrivacySnapshotTests.export(store) == before)
    #expect(try store.verify().isOK)
    try store.read { s in
      #expect(try s.value(beppo, "lastName") == .string(markers[4]))
      #expect(try s.fetch("PhoneBook", where: "phoneNumber == '\(markers[3])'").objects == [phone])
      guard case .sealed(let v)? = try s.value(momo, "lastName") else {
        Issue.record("the erased subject's value was opened after the rotation")
        return
      }
      #expect(v.state == .erased)
    }
    for (name, bytes) in try PrivacyTests.files(dir) {
      for w in oldWrapped { #expect(!PrivacyTests.contains(bytes, w), "\(name) holds a key wrapped under the old key") }
    }
    #expect(!FileManager.default.fileExists(atPath: path + "/" + Keyring.rotationFileName))
    // New subjects and erasures work under the new key.
    let kiki = try #require(
      try store.write { tx in try tx.insert("AddressBook", ["firstName": .string("Kiki"), "lastName": .string("New")]) }
        .value)
    #expect(try store.read { try $0.value(kiki, "lastName") } == .string("New"))
    #expect(try store.write { tx in try tx.erase(beppo) }.value == true)
  }

  @Test("a rotation killed before its commit leaves its file, which the next open removes; the old key still opens")
  func killedBeforeTheCommit() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (path, key, before) = try {
      let s = try PrivacySnapshotTests.source(dir)
      return (s.store.path, s.key, try PrivacySnapshotTests.export(s.store))
    }()
    // What a killed rotation leaves: a slot file of its own beside the store's.
    let stray = path + "/" + Keyring.rotationFileName
    try FileManager.default.copyItem(atPath: path + "/subject-keys", toPath: stray)
    let store = try EventStore(path: path, options: StoreOptions(keyFile: key))
    #expect(!FileManager.default.fileExists(atPath: stray))
    #expect(try PrivacySnapshotTests.export(store) == before)
  }

  @Test(
    "a rotation is refused for a store without personal data, without the current key, with a wrong one, and while the store is open"
  )
  func refusals() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let newKey = dir + "/new.key"
    try EventStore.generateKeyFile(at: newKey)
    let (path, key) = try {
      let s = try PrivacySnapshotTests.source(dir)
      return (s.store.path, s.key)
    }()
    let other = dir + "/other.key"
    try EventStore.generateKeyFile(at: other)
    #expect(Self.code { try EventStore.rekey(at: path, options: StoreOptions(), newKeyFile: newKey) } == .keyRequired)
    #expect(
      Self.code { try EventStore.rekey(at: path, options: StoreOptions(keyFile: other), newKeyFile: newKey) }
        == .wrongKey)
    #expect(Self.code { try EventStore.rekey(at: path, options: StoreOptions(keyFile: key)) } == .keyRequired)
    #expect(
      Self.code {
        try EventStore.rekey(at: path, options: StoreOptions(keyFile: key), newKeyFile: dir + "/missing.key")
      }
        == .wrongKey)
    let plainPath = try makeStore(try Fixtures.company()).0.path
    #expect(
      Self.code { try EventStore.rekey(at: plainPath, options: StoreOptions(keyFile: key), newKeyFile: newKey) }
        == .keyRequired)
    // Nothing changed: the old key opens the store; while it is open, no rotation.
    let open = try EventStore(path: path, options: StoreOptions(keyFile: key))
    do {
      try EventStore.rekey(at: path, options: StoreOptions(keyFile: key), newKeyFile: newKey)
      Issue.record("a store open in this process was rekeyed")
    } catch let e as MaintenanceError {
      #expect(e.problem.contains(path), "\(e)")
    }
    #expect(try open.read { try $0.value(ObjectID(3), "lastName") } != nil)
  }

  @Test(
    "a handle opened before a rotation is refused a new subject's key and an erasure, and reads again once reopened")
  func staleHandle() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let newKey = dir + "/new.key"
    try EventStore.generateKeyFile(at: newKey)
    let (path, beppo, name) = try {
      let source = try PrivacySnapshotTests.source(dir)
      let store = source.store
      // The rotation another process would make, under this handle's feet.
      let ring = try #require(store.dbs.keyring)
      _ = try ring.rotate(store.env, to: try StoreKeySource.file(newKey).load(), newSource: newKey)
      #expect(
        Self.code {
          try store.write { tx in
            _ = try tx.insert("AddressBook", ["firstName": .string("K"), "lastName": .string("L")])
          }
        } == .wrongKey)
      #expect(Self.code { try store.write { tx in _ = try tx.erase(source.beppo) } } == .wrongKey)
      return (store.path, source.beppo, source.markers[4])
    }()
    let reopened = try EventStore(path: path, options: StoreOptions(keyFile: newKey))
    #expect(try reopened.read { try $0.value(beppo, "lastName") } == .string(name))
    #expect(try reopened.write { tx in try tx.erase(beppo) }.value == true)
  }
}
