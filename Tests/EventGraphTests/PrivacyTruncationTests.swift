import Foundation
import Testing

@testable import EventGraph

/// An erasure leaves tombstones in the projection; a truncation past it, then a
/// compaction, leave nothing of the erased values in any file (Docs/privacy.md, "Erasing";
/// Docs/retention.md).
@Suite("Personal data after a truncation")
struct PrivacyTruncationTests {
  /// The ciphertexts of `object`'s sealed values as the projection holds them.
  static func ciphertexts(_ store: EventStore, _ object: ObjectID) throws -> [[UInt8]] {
    try store.read { s in
      let state = try #require(try s.reader.object(object))
      return state.values.compactMap { v -> [UInt8]? in
        if case .sealed(let sealed)? = v { return sealed.ciphertext }
        return nil
      }
    }
  }

  /// Whether any file of the store at `path` holds any of `needles`.
  static func filesHold(_ path: String, _ needles: [[UInt8]]) throws -> Bool {
    try PrivacyTests.files(path).contains { _, bytes in needles.contains { PrivacyTests.contains(bytes, $0) } }
  }

  @Test(
    "an erased subject's values keep no ciphertext in the projection; truncated past the erasure and compacted, no file holds it, while a living subject's stays"
  )
  func erasedCiphertextGone() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    let options = StoreOptions(keyFile: dir + "/store.key")
    var kept = ObjectID(0)
    var erasedBytes: [[UInt8]] = []
    var keptBytes: [[UInt8]] = []
    do {
      let (store, momo, phone) = try PrivacyCloneTests.momoWithPhone(dir)
      kept = try #require(
        try store.write { tx in
          try tx.insert("AddressBook", ["firstName": .string("Kiri"), "lastName": .string("Kept")])
        }.value)
      erasedBytes = try Self.ciphertexts(store, momo) + Self.ciphertexts(store, phone)
      keptBytes = try Self.ciphertexts(store, kept)
      #expect(erasedBytes.count == 2 && keptBytes.count == 1)
      #expect(erasedBytes.allSatisfy { $0.count > 16 })
      #expect(try store.write { tx in try tx.erase(momo) }.value == true)
      // The projection holds tombstones at once; the log still holds the sealed values.
      #expect(try Self.ciphertexts(store, momo) + Self.ciphertexts(store, phone) == [[], []])
      try store.read { s in
        guard case .sealed(let v)? = try s.value(phone, "phoneNumber") else {
          Issue.record("the erased number does not read as sealed")
          return
        }
        #expect(v.state == .erased)
      }
      try store.write { tx in try tx.set(kept, "firstName", .string("Kiri 2")) }
      #expect(try Self.filesHold(path, erasedBytes))
      try store.truncate(.keepCommits(1))
      #expect(try store.verify().isOK)
    }
    _ = try EventStore.compact(at: path)
    #expect(try !Self.filesHold(path, erasedBytes), "an erased value's ciphertext is still in a file")
    #expect(try Self.filesHold(path, keptBytes), "the search does not find a living value's ciphertext")
    do {
      let store = try EventStore(path: path, options: options)
      #expect(try store.verify().isOK)
      #expect(try store.read { try $0.value(kept, "lastName") } == .string("Kept"))
      // Erased after the cut: its ciphertext stays in the base until a truncation past
      // the erasure.
      #expect(try store.write { tx in try tx.erase(kept) }.value == true)
      #expect(try Self.filesHold(path, keptBytes))
      try store.write { tx in
        _ = try tx.insert("AddressBook", ["firstName": .string("Later"), "lastName": .string("L")])
      }
      try store.truncate(.keepCommits(1))
      #expect(try store.verify().isOK)
    }
    _ = try EventStore.compact(at: path)
    #expect(try !Self.filesHold(path, keptBytes), "a value erased after the first cut is still in a file")
  }
}
