import EventGraphText
import Foundation
import LMDB
import Testing

@testable import EventGraph

@Suite("Model identity: SHA-256 and a model's content hash")
struct ModelIdentityTests {
  @Test(
    "SHA-256 gives FIPS 180-4's digests",
    arguments: [
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
      (
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
      ),
    ])
  func vectors(_ text: String, _ digest: String) {
    #expect(SHA256.hex(Array(text.utf8)) == digest)
  }

  @Test("SHA-256 of a million 'a's, across block boundaries of every length")
  func longInput() {
    #expect(
      SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    // Lengths around the padding's edges all give distinct digests.
    let digests = Set((50...70).map { SHA256.hex([UInt8](repeating: 0, count: $0)) })
    #expect(digests.count == 21)
  }

  @Test("files that load as one model have one hash; any change gives another")
  func contentHash() throws {
    let members = try Fixtures.model("Members.model.json")
    // Spacing, key order and defaults written out do not count.
    let respaced = try Model(json: Array(members.jsonText.utf8))
    #expect(respaced.contentHash == members.contentHash)
    let verbose =
      #"{"entities": [{"relationships": [], "name": "A", "abstract": false, "attributes": [{"type": "string", "name": "s", "optional": false, "indexed": false}]}], "version": 1, "name": "X"}"#
    let terse =
      #"{"name": "X", "version": 1, "entities": [{"name": "A", "attributes": [{"name": "s", "type": "string"}]}]}"#
    #expect(try Model(json: Array(verbose.utf8)).contentHash == Model(json: Array(terse.utf8)).contentHash)
    #expect(members.contentHash.count == 64)
    // Each of these edits changes the hash, and the differences name the entity.
    let text = members.jsonText
    let edits = [
      (#""maxLength": 16"#, #""maxLength": 17"#), (#""version": 1"#, #""version": 2"#),
      (#""table": "members""#, #""table": "people""#),
      (#""transformer": "NSSecureUnarchiveFromData""#, #""transformer": "T""#),
      (#"["handle"]"#, #"["club"]"#),
    ]
    for (from, to) in edits {
      #expect(text.contains(from), "\(from)")
      let edited = try Model(json: Array(text.replacingOccurrences(of: from, with: to).utf8))
      #expect(edited.contentHash != members.contentHash, "\(to)")
      if from != #""version": 1"# { #expect(members.differences(from: edited) == ["Member (changed)"]) }
    }
    #expect(members.differences(from: members).isEmpty)
    let other = try Fixtures.addressBookV2()
    #expect(
      members.differences(from: other)
        == [
          "the model's name ('Members', 'AddressBook')", "the model's userInfo", "Member (only in this model)",
          "AddressBook (only in the other)", "PhoneBook (only in the other)",
        ])
  }

  @Test("a store keeps each version's hash; one whose document no longer hashes to it is refused")
  func storedHash() throws {
    let model = try Fixtures.addressBookV1()
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/store"
    do {
      let store = try EventStore.create(at: path, model: model)
      #expect(try store.statistics().models.map(\.hash) == [model.contentHash])
    }
    // A store written before there were hashes: none stored, computed from the document.
    let env = try Environment(path: path, options: EnvironmentOptions(mapSize: 256 << 20, maxDatabases: 64))
    let meta = try #require(try env.openDatabase("meta", create: false))
    let models = try #require(try env.openDatabase("models", create: false))
    try env.write { txn in _ = try txn.delete(meta, key: "modelHash.v1") }
    do {
      let store = try EventStore(path: path)
      #expect(try store.statistics().models.map(\.hash) == [model.contentHash])
    }
    // The document changed behind the store's back, its hash kept: refused.
    try env.write { txn in _ = try txn.put(meta, key: "modelHash.v1", value: model.contentHash) }
    let changed = model.jsonText.replacingOccurrences(of: "phone2", with: "phone3")
    try env.write { txn in _ = try txn.put(models, key: BigEndianKey(1), value: changed) }
    #expect(throws: StoreError.self) { _ = try EventStore(path: path) }
    do {
      _ = try EventStore(path: path, options: StoreOptions(readOnly: true))
      Issue.record("a changed model was opened")
    } catch let e as StoreError {
      #expect(e.code == .modelHashMismatch)
      #expect(e.description.contains("model version 1 does not match its content hash"), "\(e)")
    }
  }
}
