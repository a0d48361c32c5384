import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphMigration

/// An upcast's destination keeps the destination model's rules: its uniqueness
/// constraints and value rules, checked on the data the mapping makes.
@Suite("Upcasts to a model with uniqueness constraints and value rules")
struct UniquenessUpcastTests {
  static let v1 = """
    {"name": "People", "version": 1, "entities": [
      {"name": "Person", "attributes": [{"name": "handle", "type": "string"}]}]}
    """
  static func v2(_ extra: String = #", "uniquenessConstraints": [["handle"]]"#) -> String {
    """
    {"name": "People", "version": 2, "entities": [
      {"name": "Person", "attributes": [{"name": "handle", "type": "string", "maxLength": 8}]\(extra)}]}
    """
  }

  @Test("data that breaks the new constraint refuses the upcast, naming both objects and the commit")
  func constraintOnExistingData() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    try EventStore.create(at: path, model: try model(Self.v1)).write { tx in
      for handle in ["momo", "kintaro", "momo"] { _ = try tx.insert("Person", ["handle": .string(handle)]) }
    }
    let before = try exportLines(at: path)
    #expect {
      _ = try EventStore.upcast(at: path, to: try model(Self.v2()), mapping: nil)
    } throws: { e in
      "\(e)".hasPrefix("source commit 1 (sequence 1): ")
        && "\(e)".hasSuffix("Person/3: uniqueness constraint [handle] of Person: 'momo' is already held by Person/1")
    }
    #expect(try EventStore(path: path).model.version == 1)
    #expect(try exportLines(at: path) == before)
    #expect(try EventStore(path: path).verify().isOK)
  }

  @Test("a value that breaks a new rule in any commit of the history refuses the upcast")
  func ruleInHistory() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    let p = try EventStore.create(at: path, model: try model(Self.v1)).write { tx in
      try tx.insert("Person", ["handle": .string("urashimataro")])
    }.value!
    try EventStore(path: path).write { tx in try tx.set(p, "handle", .string("urashima")) }
    #expect {
      _ = try EventStore.upcast(at: path, to: try model(Self.v2()), mapping: nil)
    } throws: { e in
      "\(e)".contains("source commit 1 (sequence 1)")
        && "\(e)".contains("Person/1.handle: 'urashimataro' has 12 UTF-16 code units, more than maxLength 8")
    }
    #expect(try EventStore(path: path).read { try $0.value(p, "handle") } == .string("urashima"))
  }

  @Test("an upcast of data that keeps the rules builds the destination's index")
  func indexBuilt() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/people"
    let ids = try EventStore.create(at: path, model: try model(Self.v1)).write { tx in
      try ["momo", "kintaro", "issun"].map { try tx.insert("Person", ["handle": .string($0)]) }
    }.value!
    // Values exchanged and freed in the history are followed commit by commit.
    try EventStore(path: path).write { tx in
      try tx.set(ids[0], "handle", .string("kintaro"))
      try tx.set(ids[1], "handle", .string("momo"))
    }
    try EventStore(path: path).write { tx in try tx.delete(ids[2]) }
    _ = try EventStore.upcast(at: path, to: try model(Self.v2()), mapping: nil)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(try store.verify().isOK)
    #expect {
      try store.write { tx in _ = try tx.insert("Person", ["handle": .string("kintaro")]) }
    } throws: { e in
      "\(e)"
        == "new Person 1 of the commit: uniqueness constraint [handle] of Person: 'kintaro' is already held by Person/1"
    }
    try store.write { tx in _ = try tx.insert("Person", ["handle": .string("issun")]) }
  }
}
