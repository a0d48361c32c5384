import EventGraphCrypto
import Foundation
import TestSupport
import Testing

@Suite("SubjectKeyFile: wrapped subject keys in slots written in place")
struct SubjectKeyFileTests {
  static let identity: [UInt8] = Array(1...16)

  /// The additional data a subject's key is wrapped with: the subject, big-endian.
  static func subjectData(_ subject: UInt64) -> [UInt8] { withUnsafeBytes(of: subject.bigEndian) { Array($0) } }

  @Test("a new file has its header and no slots, with mode 0600")
  func create() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      #expect(file.path == path)
      #expect(try file.slotCount == 0)
      let bytes = try fileBytes(path)
      #expect(bytes.count == 64)
      #expect(Array(bytes[0..<8]) == Array("EGKEYS01".utf8))
      #expect(Array(bytes[8..<24]) == Self.identity)
      #expect(bytes[24...].allSatisfy { $0 == 0 })
      #expect(try permissions(path) == 0o600)
    }
  }

  @Test("a missing file is not created unless asked")
  func missing() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let error = try cryptoError { _ = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: false) }
      #expect(error.code == .slotFileIO)
      #expect(error.message.contains(path))
      #expect(!FileManager.default.fileExists(atPath: path))
    }
  }

  @Test("slots read back as written, before and after reopening", arguments: stressSeeds([21, 22, 23]))
  func roundTrip(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let kek = SymmetricKey.random()
      var expected: [UInt32: (UInt64, [UInt8])] = [:]
      do {
        let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
        for _ in 0..<40 {
          let slot = UInt32(rng.int(0...30))
          let subject = UInt64(rng.int(1...Int.max))
          let wrapped = Seal.wrap(.random(), with: kek, additionalData: Self.subjectData(subject))
          try file.write(slot: slot, subject: subject, wrapped: wrapped)
          expected[slot] = (subject, wrapped)
        }
        try file.sync()
        try Self.check(file, expected)
      }
      let reopened = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: false)
      try Self.check(reopened, expected)
      // Opening with `create` does not touch an existing file.
      let again = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      try Self.check(again, expected)
    }
  }

  static func check(_ file: SubjectKeyFile, _ expected: [UInt32: (UInt64, [UInt8])]) throws {
    let highest = try #require(expected.keys.max())
    #expect(try file.slotCount == highest + 1)
    for slot in 0...(highest + 3) {
      let found = try file.read(slot: slot)
      if let (subject, wrapped) = expected[slot] {
        #expect(found?.subject == subject, "slot \(slot)")
        #expect(found?.wrapped == wrapped, "slot \(slot)")
      } else {
        #expect(found == nil, "slot \(slot)")
      }
    }
  }

  @Test("erase empties the slot and leaves neither the wrapped key nor the key anywhere in the file")
  func erase() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let kek = SymmetricKey.random()
      let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      let keys = (0..<5).map { _ in SymmetricKey.random() }
      let wrapped = keys.enumerated().map { index, key in
        Seal.wrap(key, with: kek, additionalData: Self.subjectData(UInt64(index + 100)))
      }
      for (index, bytes) in wrapped.enumerated() {
        try file.write(slot: UInt32(index), subject: UInt64(index + 100), wrapped: bytes)
      }
      try file.sync()
      let before = try fileBytes(path)
      #expect(before.contains(run: wrapped[2]))
      // Only wrapped: no data key is ever in the file in the clear.
      for key in keys { #expect(!before.contains(run: key.bytesForTesting)) }

      try file.erase(slot: 2)
      #expect(try file.read(slot: 2) == nil)
      #expect(try file.slotCount == 5)
      let after = try fileBytes(path)
      #expect(after.count == before.count)
      #expect(!after.contains(run: wrapped[2]))
      // Nor any 16-byte piece of it (a partial overwrite would leave one).
      for start in stride(from: 0, to: 72 - 16, by: 8) {
        #expect(!after.contains(run: Array(wrapped[2][start..<(start + 16)])), "piece at \(start)")
      }
      #expect(!after.contains(run: keys[2].bytesForTesting))
      #expect(after[(64 + 2 * 128)..<(64 + 3 * 128)].allSatisfy { $0 == 0 })
      // The other slots are as they were, and their keys unwrap.
      for index in [0, 1, 3, 4] {
        let slot = try #require(try file.read(slot: UInt32(index)))
        #expect(slot.subject == UInt64(index + 100))
        let key = try Seal.unwrap(slot.wrapped, with: kek, additionalData: Self.subjectData(slot.subject))
        #expect(key.bytesForTesting == keys[index].bytesForTesting)
      }
      // Reopened, the erased slot is still empty; a slot past the end erases to nothing.
      let reopened = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: false)
      #expect(try reopened.read(slot: 2) == nil)
      try reopened.erase(slot: 1000)
      #expect(try fileBytes(path).count == before.count)
    }
  }

  @Test("another store's identity is refused as foreign, naming the file")
  func foreign() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      _ = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      for create in [false, true] {
        let error = try cryptoError {
          _ = try SubjectKeyFile(path: path, storeIdentity: Array(repeating: 9, count: 16), create: create)
        }
        #expect(error.code == .slotFileForeign)
        #expect(error.path == path)
        #expect(error.message.contains(path))
      }
      // The header was not rewritten for the other store.
      #expect(Array(try fileBytes(path)[8..<24]) == Self.identity)
    }
  }

  @Test("a store identity that is not 16 bytes is refused", arguments: [0, 15, 17])
  func identityLength(length: Int) throws {
    try withTemporaryDirectory { dir in
      let error = try cryptoError {
        _ = try SubjectKeyFile(path: dir + "/k", storeIdentity: Array(repeating: 1, count: length), create: true)
      }
      #expect(error.code == .malformed)
    }
  }

  @Test(
    "a damaged header is malformed: wrong magic or reserved bytes not zero",
    arguments: [(0, [UInt8(ascii: "X")]), (7, [UInt8(ascii: "2")]), (24, [1]), (63, [0x80])])
  func damagedHeader(offset: Int, bytes: [UInt8]) throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      _ = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      try overwrite(path, at: offset, with: bytes)
      for create in [false, true] {
        let error = try cryptoError { _ = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: create) }
        #expect(error.code == .malformed, "create \(create)")
        #expect(error.message.contains(path))
      }
    }
  }

  @Test("a file shorter than its header is malformed; an empty one is given a header when creating")
  func shortHeader() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      try Data(Array("EGKEYS01".utf8) + Self.identity).write(to: URL(fileURLWithPath: path))
      let error = try cryptoError { _ = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true) }
      #expect(error.code == .malformed)
      let empty = dir + "/empty"
      #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
      let refused = try cryptoError { _ = try SubjectKeyFile(path: empty, storeIdentity: Self.identity, create: false) }
      #expect(refused.code == .malformed)
      let file = try SubjectKeyFile(path: empty, storeIdentity: Self.identity, create: true)
      #expect(try file.slotCount == 0)
      #expect(Array(try fileBytes(empty).prefix(8)) == Array("EGKEYS01".utf8))
    }
  }

  @Test(
    "a damaged slot is reported, naming it, not returned",
    arguments: [
      (8, [UInt8(1)]),  // reserved bytes after the subject
      (15, [0x40]),
      (88, [1]),  // the zeros after the wrapped key
      (127, [0xFF]),
      (0, [0, 0, 0, 0, 0, 0, 0, 0]),  // subject 0 with a wrapped key
    ])
  func damagedSlot(offset: Int, bytes: [UInt8]) throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      let wrapped = Seal.wrap(.random(), with: .random(), additionalData: [])
      for slot: UInt32 in 0..<4 { try file.write(slot: slot, subject: UInt64(slot) + 7, wrapped: wrapped) }
      try overwrite(path, at: 64 + 3 * 128 + offset, with: bytes)
      let error = try cryptoError { _ = try file.read(slot: 3) }
      #expect(error.code == .malformed)
      #expect(error.message.contains("Slot 3"))
      #expect(error.message.contains(path))
      #expect(try file.read(slot: 2)?.subject == 9)
    }
  }

  @Test("a partial slot at the end does not count and reads as absent; slots past the end read as nil")
  func partialSlot() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      let wrapped = Seal.wrap(.random(), with: .random(), additionalData: [])
      try file.write(slot: 0, subject: 1, wrapped: wrapped)
      try overwrite(path, at: 64 + 128, with: [UInt8](repeating: 0xEE, count: 100))
      #expect(try file.slotCount == 1)
      #expect(try file.read(slot: 1) == nil)
      #expect(try file.read(slot: 5) == nil)
      #expect(try file.read(slot: UInt32.max) == nil)
      // Erasing the partial slot overwrites its bytes too.
      try file.erase(slot: 1)
      #expect(try fileBytes(path)[(64 + 128)...].allSatisfy { $0 == 0 })
    }
  }

  @Test("writing subject 0 or a wrapped key of the wrong length is refused")
  func badWrites() throws {
    try withTemporaryDirectory { dir in
      let path = dir + "/subject-keys"
      let file = try SubjectKeyFile(path: path, storeIdentity: Self.identity, create: true)
      let wrapped = Seal.wrap(.random(), with: .random(), additionalData: [])
      let zero = try cryptoError { try file.write(slot: 0, subject: 0, wrapped: wrapped) }
      #expect(zero.code == .malformed)
      for length in [0, 71, 73] {
        let error = try cryptoError { try file.write(slot: 0, subject: 1, wrapped: Array(repeating: 1, count: length)) }
        #expect(error.code == .malformed)
      }
      #expect(try file.slotCount == 0)
    }
  }

  @Test("one file is used from several tasks at once")
  func concurrentSlots() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crypto-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let file = try SubjectKeyFile(path: dir + "/subject-keys", storeIdentity: Self.identity, create: true)
    let kek = SymmetricKey.random()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for worker in 0..<4 {
        group.addTask {
          for index in 0..<25 {
            let slot = UInt32(worker * 25 + index)
            let subject = UInt64(slot) + 1
            try file.write(slot: slot, subject: subject, wrapped: Seal.wrap(.random(), with: kek, additionalData: []))
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try file.slotCount == 100)
    for slot: UInt32 in 0..<100 { #expect(try file.read(slot: slot)?.subject == UInt64(slot) + 1) }
  }
}
