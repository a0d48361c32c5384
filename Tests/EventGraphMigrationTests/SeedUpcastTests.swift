import EventGraph
import Foundation
import Testing

@testable import EventGraphMigration

@Suite("The seed's phone split, by upcasting")
struct SeedUpcastTests {
  @Test("the declarative mapping splits the phones into PhoneBook objects with their inverse")
  func declarative() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let ids = try seedStore(path)
    let (report, _) = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    #expect(report.switched)
    #expect(report.commitsRead == 3)
    let store = try EventStore(path: path)
    #expect(store.model.version == 2)
    #expect(
      try phoneList(store) == [
        "桃 太郎 :Tel 090-111-9999", "桃 太郎 :Tel 123-4567-7891", "浦島 太郎 :Tel 090-1234-5678",
      ])
    try store.read { s throws in
      // Identities of the three people are unchanged.
      for id in ids.values { #expect(try s.entity(of: id).name == "AddressBook") }
      #expect(try s.related(try #require(ids["issun"]), "phones").isEmpty)
      let momoPhones = try s.related(try #require(ids["momo"]), "phones")
      #expect(momoPhones.count == 2)
      let types = try momoPhones.map { try s.value($0, "type") }
      #expect(Set(types.compactMap { $0 }) == [.int16(1), .int16(2)])
      for p in momoPhones { #expect(try s.related(p, "addressBook") == [try #require(ids["momo"])]) }
    }
    #expect(try store.verify().isOK)
  }
}

@Suite("Upcasting again")
struct UpcastAgainTests {
  @Test("an upcast again after a rollback refuses to discard commits written in the newer version")
  func keepsNewerCommits() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/book"
    let ids = try seedStore(path)
    _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    do {
      let store = try EventStore(path: path)
      try store.write { tx in try tx.set(try #require(ids["issun"]), "firstName", .string("一寸 (v2)")) }
    }
    try EventStore.rollback(at: path)
    #expect {
      _ = try EventStore.upcast(at: path, to: try Examples.v2(), mapping: try Examples.mapping())
    } throws: { error in
      "\(error)".contains("would discard them")
    }
    // Nothing was lost: forward again, the v2 commit is there.
    try EventStore.rollback(at: path, to: 2)
    let store = try EventStore(path: path)
    try store.read { s throws in #expect(try s.value(try #require(ids["issun"]), "firstName") == .string("一寸 (v2)")) }
  }
}
