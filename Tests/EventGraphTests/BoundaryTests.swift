import Foundation
import Testing

@testable import EventGraph

/// The edges of the rules that other tests cross only once: an expected version ahead of
/// the real one, a cascade two links long or one reaching a `deny`, a count exactly at
/// `maxCount` and one past it, a `BETWEEN` at its upper bound.
///
/// Each test here fails under a mutation the rest of the suite lets pass (`==` written
/// `<=` in the writer's expected-version check, `>` written `>=` in the count check, a
/// bound made exclusive).
@Suite("Boundaries of expectations, delete rules, counts and ranges")
struct BoundaryTests {
  // MARK: - Expected versions ahead of the real ones

  @Test("an object's expected version ahead of its real one is a conflict, and nothing is written")
  func objectVersionAhead() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    let id = try #require(try await store.commit { tx in try tx.insert("Item", ["name": .string("a")]) }.value)
    let actual = try store.read { try $0.version(of: id) }
    let end = try store.read { try $0.logEnd() }
    for ahead in [actual + 1, actual + 1000] {
      let refusal = await #expect(throws: ConflictError.self) {
        try await store.commit(expecting: [.object(id, version: ahead)]) { tx in try tx.set(id, "name", .string("b")) }
      }
      #expect(refusal?.expected == ahead)
      #expect(refusal?.actual == actual)
    }
    // An object no commit touched is at version 0: expecting 1 is ahead of it too.
    await #expect(throws: ConflictError.self) {
      try await store.commit(expecting: [.object(ObjectID(999), version: 1)]) { tx in
        try tx.set(id, "name", .string("c"))
      }
    }
    #expect(try store.read { try $0.logEnd() } == end)
    #expect(try store.read { try $0.value(id, "name") } == .string("a"))
    // The real version is accepted.
    _ = try await store.commit(expecting: [.object(id, version: actual)]) { tx in try tx.set(id, "name", .string("d")) }
    #expect(try store.read { try $0.value(id, "name") } == .string("d"))
  }

  @Test("a log end ahead of the real end is a conflict, and nothing is written")
  func logEndAhead() async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model())
    defer { removeDirectory(dir) }
    _ = try await store.commit { tx in try tx.insert("Item", ["name": .string("a")]) }
    let end = try store.read { try $0.logEnd() }
    for ahead in [end.sequence + 1, end.sequence + 1000] {
      let refusal = await #expect(throws: ConflictError.self) {
        try await store.commit(expecting: [.logEnd(ahead)]) { tx in try tx.insert("Item", ["name": .string("x")]) }
      }
      #expect(refusal?.subject == .log)
      #expect(refusal?.expected == ahead)
      #expect(refusal?.actual == end.sequence)
    }
    #expect(try store.read { try $0.logEnd() } == end)
    #expect(try ServiceFixtures.itemNames(store) == ["a"])
    _ = try await store.commit(expecting: [.logEnd(end.sequence)]) { tx in try tx.insert("Item", ["name": .string("b")])
    }
    #expect(try ServiceFixtures.itemNames(store).sorted() == ["a", "b"])
  }

  // MARK: - Delete rules

  /// `A.bs` cascades to `B` and `B.cs` to `C`; `B.d` denies deleting a `B` while it is
  /// linked to a `D` (whose `bs` is a plain nullify).
  static func chainModel() throws -> Model {
    func rel(_ name: String, _ destination: String, inverse: String, toMany: Bool, rule: DeleteRule = .nullify)
      -> RelationshipDescription
    {
      RelationshipDescription(
        name: name, destination: destination, isToMany: toMany, inverse: inverse, deleteRule: rule)
    }
    return try Model(
      name: "Chain", version: 1,
      entities: [
        EntityDescription(name: "A", relationships: [rel("bs", "B", inverse: "a", toMany: true, rule: .cascade)]),
        EntityDescription(
          name: "B",
          relationships: [
            rel("a", "A", inverse: "bs", toMany: false), rel("cs", "C", inverse: "b", toMany: true, rule: .cascade),
            rel("d", "D", inverse: "bs", toMany: false, rule: .deny),
          ]),
        EntityDescription(name: "C", relationships: [rel("b", "B", inverse: "cs", toMany: false)]),
        EntityDescription(name: "D", relationships: [rel("bs", "B", inverse: "d", toMany: true)]),
      ])
  }

  @Test("a chain of cascades deletes every object along it, two links away included")
  func cascadeChain() throws {
    let (store, dir) = try makeStore(try Self.chainModel())
    defer { removeDirectory(dir) }
    let (a, bs, cs) = try store.write { tx throws in
      let a = try tx.insert("A")
      var bs: [ObjectID] = []
      var cs: [ObjectID] = []
      for _ in 0..<2 {
        let b = try tx.insert("B")
        try tx.link(a, "bs", b)
        bs.append(b)
        for _ in 0..<2 {
          let c = try tx.insert("C")
          try tx.link(b, "cs", c)
          cs.append(c)
        }
      }
      return (a, bs, cs)
    }.value!
    try store.write { tx throws in try tx.delete(a) }
    try store.read { s throws in
      for id in [a] + bs + cs { #expect(try s.object(id) == nil) }
      #expect(try s.objects(of: "C").isEmpty)
    }
    #expect(try store.verify().isOK)
  }

  @Test("a cascade that reaches an object whose deny relationship is not empty is refused whole")
  func cascadeReachingDeny() throws {
    let (store, dir) = try makeStore(try Self.chainModel())
    defer { removeDirectory(dir) }
    let (a, b, c, d) = try store.write { tx throws in
      let (a, b, c, d) = (try tx.insert("A"), try tx.insert("B"), try tx.insert("C"), try tx.insert("D"))
      try tx.link(a, "bs", b)
      try tx.link(b, "cs", c)
      try tx.link(b, "d", d)
      return (a, b, c, d)
    }.value!
    let end = try store.read { try $0.logEnd() }
    #expect {
      try store.write { tx throws in try tx.delete(a) }
    } throws: { error in
      guard let e = error as? StoreError, e.code == .validation else { return false }
      return e.object == "B/\(b.rawValue)" && e.property == "d"
    }
    try store.read { s throws in
      #expect(try s.logEnd() == end)
      for id in [a, b, c, d] { #expect(try s.object(id) != nil) }
      #expect(try s.related(a, "bs") == [b])
      #expect(try s.related(b, "cs") == [c])
    }
    // Once B lets go of D, the same cascade goes through, C included; D stays.
    try store.write { tx throws in try tx.unlink(b, "d", d) }
    try store.write { tx throws in try tx.delete(a) }
    try store.read { s throws in
      for id in [a, b, c] { #expect(try s.object(id) == nil) }
      #expect(try s.object(d) != nil)
    }
  }

  // MARK: - Counts

  @Test(
    "a to-many with minCount 2 and maxCount 3 takes 2 and 3, refuses 1 and 4",
    arguments: [(1, "fewer than minCount 2"), (2, nil), (3, nil), (4, "more than maxCount 3")])
  func countBounds(_ members: Int, _ refusal: String?) throws {
    let (store, dir) = try makeStore(try ValidationTests.model())
    defer { removeDirectory(dir) }
    let write = {
      _ = try store.write { tx throws in
        let team = try tx.insert("Team", ["name": .string("t")])
        for _ in 0..<members { try tx.link(try tx.insert("Person"), "team", team) }
      }
    }
    if let refusal {
      #expect {
        try write()
      } throws: { error in
        guard let e = error as? StoreError, e.code == .validation else { return false }
        return e.property == "members" && e.detail?.contains(refusal) == true
      }
      #expect(try store.read { try $0.objects(of: "Team") }.isEmpty)
    } else {
      try write()
      let team = try #require(try store.read { try $0.objects(of: "Team") }.first)
      #expect(try store.read { try $0.related(team, "members").count } == members)
    }
  }

  // MARK: - BETWEEN

  @Test(
    "BETWEEN includes both bounds and nothing past them, through the index and by a scan",
    arguments: ["age", "rank"])
  func betweenBounds(_ attribute: String) throws {
    let (store, dir) = try makeStore(try Self.rangeModel())
    defer { removeDirectory(dir) }
    try store.write { tx throws in
      for n in [17, 18, 40, 65, 66] { _ = try tx.insert("P", ["age": .int64(Int64(n)), "rank": .int64(Int64(n))]) }
    }
    let result = try store.read { s in try s.fetch("P", where: "\(attribute) BETWEEN {18, 65}", sortedBy: []) }
    let values = try store.read { s in try result.objects.map { try s.value($0, attribute)?.integerValue } }
    #expect(values.sorted { ($0 ?? 0) < ($1 ?? 0) } == [18, 40, 65])
    #expect((result.index != nil) == (attribute == "age"))
    // The same bounds as a pair of comparisons, for the scan and the index alike.
    let pair = try store.read { s in
      try s.fetch("P", where: "\(attribute) >= 18 AND \(attribute) <= 65", sortedBy: []).objects.count
    }
    #expect(pair == 3)
  }

  /// People with an indexed `age` and the same number, not indexed, as `rank`.
  static func rangeModel() throws -> Model {
    try Model(
      name: "Ranges", version: 1,
      entities: [
        EntityDescription(
          name: "P",
          attributes: [
            AttributeDescription(name: "age", type: .int64, isIndexed: true),
            AttributeDescription(name: "rank", type: .int64),
          ])
      ])
  }
}
