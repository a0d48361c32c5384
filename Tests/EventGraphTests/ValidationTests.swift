import Foundation
import Testing

@testable import EventGraph

@Suite("Validation of the objects a commit touched")
struct ValidationTests {
  /// A team of two or three people when it has any; a person must be in a team.
  static func model() throws -> Model {
    try Model(
      name: "Teams", version: 1,
      entities: [
        EntityDescription(
          name: "Team", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "members", destination: "Person", isToMany: true, minCount: 2, maxCount: 3, inverse: "team")
          ]),
        EntityDescription(
          name: "Person", attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)],
          relationships: [
            RelationshipDescription(name: "team", destination: "Team", isOptional: false, inverse: "members")
          ]),
      ])
  }

  /// Whether `body` is refused for `property` with a message that contains `message`.
  static func refused(_ store: EventStore, _ property: String, _ message: String, _ body: (Transaction) throws -> Void)
    -> Bool
  {
    do {
      try store.write { tx throws in try body(tx) }
      return false
    } catch let e as StoreError where e.code == .validation {
      return e.property == property && e.detail?.contains(message) == true
    } catch {
      return false
    }
  }

  @Test("a required relationship left empty, or a count outside minCount...maxCount, is refused")
  func relationshipRules() throws {
    let (store, dir) = try makeStore(try Self.model())
    defer { removeDirectory(dir) }
    #expect(Self.refused(store, "team", "required relationship is empty") { tx in _ = try tx.insert("Person") })
    #expect(Self.refused(store, "name", "required attribute has no value") { tx in _ = try tx.insert("Team") })
    // No members at all is allowed: the relationship is optional.
    let team = try store.write { tx throws in try tx.insert("Team", ["name": .string("t")]) }.value!
    func join(_ tx: Transaction) throws {
      let p = try tx.insert("Person")
      try tx.link(p, "team", team)
    }
    #expect(Self.refused(store, "members", "fewer than minCount 2") { tx in try join(tx) })
    try store.write { tx throws in for _ in 0..<2 { try join(tx) } }
    try store.write { tx throws in try join(tx) }
    #expect(Self.refused(store, "members", "more than maxCount 3") { tx in try join(tx) })
    #expect(try store.read { try $0.related(team, "members").count } == 3)
  }
}
