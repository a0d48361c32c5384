import EventGraph
import Foundation
import Testing

@testable import EventGraphMigration

@Suite("Chains: v1 to v3 in one streaming pass")
struct ChainTests {
  static func v3() throws -> Model { try Model(contentsOf: Examples.root + "/AddressBook.v3.model.json") }
  static func mapping23() throws -> MappingModel {
    try MappingModel(contentsOf: Examples.root + "/AddressBook.v2-v3.mapping.json")
  }

  static func history(_ path: String) throws {
    let ids = try seedStore(path)
    let store = try EventStore(path: path)
    let momo = try #require(ids["momo"])
    try store.write { tx in try tx.set(momo, "phone2", .string("080-2222-3333")) }
    try store.write { tx in try tx.set(try #require(ids["issun"]), "phone1", .string("0120-000-111")) }
    try store.write { tx in try tx.delete(try #require(ids["urashima"])) }
  }

  static func export(_ path: String) throws -> [String] {
    var lines: [String] = []
    try EventStore(path: path).export { lines.append($0) }
    return lines
  }

  @Test("one pass through v2 gives the same v3 state as two upcasts, without a v2 log")
  func chainEqualsTwoSteps() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.history(dir + "/chain")
    try Self.history(dir + "/steps")
    let (report, _) = try EventStore.upcast(
      at: dir + "/chain", through: [try Examples.v2(), try Self.v3()],
      mappings: [try Examples.mapping(), try Self.mapping23()])
    #expect(report.switched)
    #expect(report.destinationVersion == 3)
    _ = try EventStore.upcast(at: dir + "/steps", to: try Examples.v2(), mapping: try Examples.mapping())
    _ = try EventStore.upcast(at: dir + "/steps", to: try Self.v3(), mapping: try Self.mapping23())
    let chained = try Self.export(dir + "/chain")
    #expect(chained == (try Self.export(dir + "/steps")))
    #expect(chained.contains { $0.contains(#""displayName": "太郎 桃""#) })
    #expect(chained.contains { $0.contains(#""label": "tel:080-2222-3333""#) })
    let store = try EventStore(path: dir + "/chain")
    #expect(try store.verify().isOK)
    // The chain's v3 commits come from the v1 commits, one for one, with their times.
    let commits = try store.read { try $0.commits() }
    #expect(commits.count == 6)
    #expect(commits.allSatisfy { $0.metadata.sourceCommit != nil && $0.modelVersion == 3 })
  }

  @Test("a mapping that is no step of the chain is refused before anything is written")
  func strayMapping() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.history(dir + "/s")
    let before = try Self.export(dir + "/s")
    #expect(throws: MappingError.self) {
      _ = try EventStore.upcast(at: dir + "/s", through: [try Examples.v2()], mappings: [try Self.mapping23()])
    }
    #expect(try Self.export(dir + "/s") == before)
  }
}
