import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("eventtool snapshot of personal data")
struct SnapshotPrivacyCLITests {
  @Test(
    "snapshot --key-file copies personal values readable under the same key; without the key it is refused and writes nothing"
  )
  func snapshotWithTheKey() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let key = dir + "/people.key"
    try EventStore.generateKeyFile(at: key)
    let path = dir + "/people"
    let (kept, erased): (ObjectID, ObjectID) = try {
      let store = try EventStore.create(
        at: path, model: try EraseKillTests.model(), options: StoreOptions(keyFile: key))
      let people = try store.write { tx in
        [
          try tx.insert("Person", ["name": .string("Secret Kept"), "nick": .string("k")]),
          try tx.insert("Person", ["name": .string("Secret Gone"), "nick": .string("g")]),
        ]
      }.value!
      _ = try store.write { tx in try tx.erase(people[1]) }
      return (people[0], people[1])
    }()
    let out = dir + "/snapshot"
    let refused = try ToolRunner.eventtool(["snapshot", path, "--out", out])
    #expect(refused.status == 1, "\(refused.err)")
    #expect(refused.err.contains(path) && refused.err.contains("key"), "\(refused.err)")
    #expect(!FileManager.default.fileExists(atPath: out))
    let made = try ToolRunner.eventtool(["snapshot", path, "--out", out, "--key-file", key])
    #expect(made.status == 0, "\(made.err)")
    let shown = try ToolRunner.eventtool(["show", out, "Person/\(kept.rawValue)", "--key-file", key])
    #expect(shown.status == 0 && shown.out.contains("Secret Kept"), "\(shown.out)\(shown.err)")
    let gone = try ToolRunner.eventtool(["show", out, "Person/\(erased.rawValue)", "--key-file", key])
    #expect(gone.status == 0 && gone.out.contains("<erased>") && !gone.out.contains("Secret"), "\(gone.out)")
  }
}
