import EventGraph
import Foundation
import Testing

@testable import EventGraphMigration

@Suite("Rolling an upcast back and forward")
struct RollbackTests {
  @Test("rollback makes v1 active with all its data; forward again; a v1 commit since makes v2 stale")
  func rollbackAndForward() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    do {
      let store = try EventStore.create(at: path, model: try Examples.v1())
      try Histories.addressBook(store, seed: 31, commits: 25)
    }
    let v1Export = try exportLines(at: path)
    let v1Bytes = try dumpDatabases(at: path, versionDatabases(1))
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    // A v2 commit after the upcast: it must survive a rollback and a roll forward.
    do {
      let store = try EventStore(path: path)
      try store.write { tx in
        let p = try tx.insert("AddressBook", ["firstName": .string("花咲"), "lastName": .string("爺")])
        let phone = try tx.insert("PhoneBook", ["phoneNumber": .string("0120-000-000"), "type": .int16(1)])
        try tx.link(p, "phones", phone)
      }
    }
    let v2Export = try exportLines(at: path)
    #expect(v2Export != v1Export)
    #expect(v2Export.contains { $0.contains("0120-000-000") })

    // Back: v1 is active, its data and log untouched.
    #expect(try EventStore.rollback(at: path) == 1)
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 1)
      #expect(try exportLines(store) == v1Export)
      #expect(try dumpDatabases(store, versionDatabases(1)) == v1Bytes)
      #expect(try store.verify().isOK)
    }
    // Forward again: the same v2.
    #expect(try EventStore.rollback(at: path, to: 2) == 2)
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 2)
      #expect(try exportLines(store) == v2Export)
    }
    // Back, then a v1 commit: the v2 log no longer follows v1, so forward is refused.
    #expect(try EventStore.rollback(at: path) == 1)
    var newPerson: ObjectID?
    do {
      let store = try EventStore(path: path)
      newPerson = try store.write { tx in
        try tx.insert("AddressBook", ["firstName": .string("金"), "lastName": .string("太郎"), "phone1": .string("1")])
      }.value!
    }
    let error = try #require(throws: MigrationError.self) { try EventStore.rollback(at: path, to: 2) }
    #expect(error.description.contains("stale"), "\(error)")
    #expect(error.description.contains("upcast again"), "\(error)")
    do {
      let store = try EventStore(path: path)
      #expect(store.model.version == 1)
      #expect(try store.read { s in try s.value(try #require(newPerson), "phone1") } == .string("1"))
    }
    // Upcasting again would lose v2's own commit (花咲): refused, unless asked for.
    #expect(throws: MigrationError.self) {
      _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    }
    // Upcasting again, discarding it, brings the new person across.
    _ = try EventStore.upcast(
      at: path, to: try Examples.v2(), mapping: try Examples.mapping(), discardingNewerCommits: true)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(try store.read { s in try s.related(try #require(newPerson), "phones").count } == 1)
  }

  @Test("an empty store upcasts, rolls back and forward")
  func emptyStore() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    _ = try EventStore.create(at: path, model: try Examples.v1())
    let report = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping()).report
    #expect(report.switched && report.commitsRead == 0 && report.commitsWritten == 0)
    #expect(try EventStore(path: path).model.version == 2)
    #expect(try EventStore.rollback(at: path) == 1)
    #expect(try EventStore.rollback(at: path, to: 2) == 2)
    #expect(try exportLines(at: path).isEmpty)
  }

  @Test("a store that was never upcast has nothing to roll back to")
  func nothingToRollBack() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    _ = try seedStore(path)
    let before = try dumpEverything(at: path)
    #expect(throws: MigrationError.self) { try EventStore.rollback(at: path) }
    #expect(throws: MigrationError.self) { try EventStore.rollback(at: path, to: 2) }
    #expect(throws: MigrationError.self) { try EventStore.rollback(at: path, to: 1) }
    #expect(try dumpEverything(at: path) == before)
  }

  @Test("forward to an unfinished upcast is refused")
  func forwardToUnfinished() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    do {
      let store = try EventStore.create(at: path, model: try Examples.v1())
      try Histories.addressBook(store, seed: 32, commits: 20)
      let upcaster = try Upcaster(
        store: store, mapping: try CompiledMapping(try Examples.mapping(), from: store.model, to: try Examples.v2()))
      upcaster.batchEvents = 5
      upcaster.stopAfterBatches = 2
      _ = try upcaster.run()
    }
    let error = try #require(throws: MigrationError.self) { try EventStore.rollback(at: path, to: 2) }
    #expect(error.description.contains("unfinished"), "\(error)")
    #expect(try EventStore(path: path).model.version == 1)
  }
}
