import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A typed view of ``LiveQueryTests``' people.
struct LivePerson: Record, Equatable {
  static let entityName = "Person"
  var name: String
  var age: Int32
  var score: Int32
}

/// Live queries (Docs/services.md, "Live queries"): a result kept current from the log's
/// events, told as differences.
@Suite("Live queries")
struct LiveQueryTests {
  static func model() throws -> Model {
    try Model(
      name: "Live", version: 1,
      entities: [
        EntityDescription(
          name: "Person",
          attributes: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .int32),
            AttributeDescription(name: "score", type: .int32),
          ],
          relationships: [RelationshipDescription(name: "team", destination: "Team", inverse: "members")]),
        EntityDescription(
          name: "Team", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(name: "members", destination: "Person", isToMany: true, inverse: "team")
          ]),
        EntityDescription(name: "Audit", attributes: [AttributeDescription(name: "text", type: .string)]),
      ])
  }

  /// One random commit on `store`: mostly audit entries (which no query of people reads),
  /// else people inserted, aged, scored, renamed, moved between teams or deleted.
  static func randomCommit(_ store: EventStore, _ rng: inout SeededGenerator, step: Int) throws {
    let people = try store.read { try $0.objects(of: "Person") }
    let teams = try store.read { try $0.objects(of: "Team") }
    let pick = rng.next() % 100
    let person = people.isEmpty ? nil : people[Int(rng.next() % UInt64(people.count))]
    let age = Value.int32(Int32(rng.next() % 60))
    let score = Value.int32(Int32(rng.next() % 10))
    let team = teams.isEmpty ? nil : teams[Int(rng.next() % UInt64(teams.count))]
    try store.write { tx in
      switch (pick, person) {
      case (0..<55, _):
        _ = try tx.insert("Audit", ["text": .string("entry \(step)")])
      case (55..<70, _), (_, nil):
        let p = try tx.insert("Person", ["name": .string("p\(step)"), "age": age, "score": score])
        if let team { try tx.link(p, "team", team) }
      case (70..<78, let p?): try tx.set(p, "age", age)
      case (78..<86, let p?): try tx.set(p, "score", score)
      case (86..<92, let p?): try tx.set(p, "name", .string("renamed \(step)"))
      case (92..<96, let p?):
        if let team { try tx.link(p, "team", team) }
      case (_, let p?): try tx.delete(p)
      }
    }
  }

  /// Follows `query` through `commits` random commits: after each, the last result equals
  /// a fresh fetch, and each difference applied to the result before gives the next.
  static func follow(
    _ store: EventStore, _ query: LiveQuery, commits: Int, seed: UInt64, stepEvery: Int = 1,
    fresh: () throws -> [ObjectID]
  ) throws -> (evaluations: Int, yielded: Int, landed: Int) {
    var rng = SeededGenerator(seed: seed)
    var iterator = query.makeAsyncIterator()
    let first = try #require(try iterator.step())
    #expect(first.changes.inserted == Array(first.objects.indices))
    var mirror = first.objects
    var yielded = 1
    var landed = 0
    var touched: [ObjectID] = []
    for step in 0..<commits {
      let before = try store.read { try $0.logEnd().sequence }
      try randomCommit(store, &rng, step: step)
      if try store.read({ try $0.logEnd().sequence }) > before { landed += 1 }
      touched += try store.read { s in
        try s.reader.commits(after: before, maxCommits: 1).flatMap(\.events).flatMap { e -> [ObjectID] in
          switch e {
          case .link(let o, _, let t, _), .unlink(let o, _, let t): [o, t]
          default: [e.object]
          }
        }
      }
      guard step % stepEvery == stepEvery - 1 || step == commits - 1 else { continue }
      defer { touched = [] }
      if let result = try iterator.step() {
        yielded += 1
        #expect(!result.changes.isEmpty, "seed \(seed) step \(step): a result without a change")
        let applied = result.changes.apply(to: mirror) { result.objects[$0] }
        #expect(applied == result.objects, "seed \(seed) step \(step): the changes do not make the new result")
        // Updated: exactly the objects in both results that the commit named.
        let kept = Set(mirror).intersection(result.objects)
        let expected = result.objects.indices.filter {
          kept.contains(result.objects[$0]) && touched.contains(result.objects[$0])
        }
        #expect(result.changes.updated == expected, "seed \(seed) step \(step)")
        #expect(result.sequence == (try store.read { try $0.logEnd().sequence }))
        mirror = result.objects
      }
      #expect(mirror == (try fresh()), "seed \(seed) step \(step): the live result is not a fresh fetch's")
      // Nothing more to tell once caught up.
      #expect(try iterator.step() == nil)
    }
    return (iterator.evaluations, yielded, landed)
  }

  @Test(
    "random commits: the live result always equals a fresh fetch, its changes turn each result into the next, and unrelated commits do not run the query",
    arguments: [UInt64(1), 2, 3, 4])
  func ownAttributes(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/s", model: try Self.model())
    try store.write { tx in
      for name in ["red", "blue"] { _ = try tx.insert("Team", ["name": .string(name)]) }
    }
    let sort = [SortDescriptor("score", ascending: false), SortDescriptor("name")]
    let query = try store.observe("Person", where: "age >= $limit", variables: ["limit": .int32(30)], sortedBy: sort)
    let commits = 150
    let (evaluations, yielded, _) = try Self.follow(store, query, commits: commits, seed: seed) {
      try store.fetch("Person", where: "age >= 30", sortedBy: sort).objects
    }
    // About half the commits are audit entries, which never run the query.
    #expect(evaluations < commits * 3 / 4, "seed \(seed): the query ran \(evaluations) times for \(commits) commits")
    #expect(yielded <= evaluations)
    // Several commits between two steps are told as one change.
    let batched = try store.observe("Person", where: "age < 40 AND score != 3", sortedBy: [SortDescriptor("age")])
    _ = try Self.follow(store, batched, commits: 150, seed: seed ^ 0xB, stepEvery: 4) {
      try store.fetch("Person", where: "age < 40 AND score != 3", sortedBy: [SortDescriptor("age")]).objects
    }
  }

  @Test("a predicate through a relationship runs on every commit, and stays exact", arguments: [UInt64(7), 8])
  func throughRelationships(seed: UInt64) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/s", model: try Self.model())
    try store.write { tx in
      for name in ["red", "blue"] { _ = try tx.insert("Team", ["name": .string(name)]) }
    }
    let query = try store.observe("Person", where: "team.name == 'red'", sortedBy: [SortDescriptor("name")])
    let commits = 80
    let (evaluations, _, landed) = try Self.follow(store, query, commits: commits, seed: seed) {
      try store.fetch("Person", where: "team.name == 'red'", sortedBy: [SortDescriptor("name")]).objects
    }
    // Every commit that landed ran it (a write that changed nothing commits nothing).
    #expect(evaluations == landed + 1)
    // A team renamed changes the result though no person changed.
    let red = try #require(try store.fetch("Team", where: "name == 'red'").objects.first)
    var iterator = query.makeAsyncIterator()
    _ = try iterator.step()
    let member = try #require(
      try store.write { tx in
        let p = try tx.insert("Person", ["name": .string("member"), "age": .int32(1), "score": .int32(1)])
        try tx.link(p, "team", red)
        return p
      }.value)
    #expect(try iterator.step()?.objects.contains(member) == true)
    try store.write { tx in try tx.set(red, "name", .string("green")) }
    #expect(try iterator.step()?.objects == [])
  }

  @Test("changes: removals, insertions, the fewest moves and updates, applied in order, give the new result")
  func changeSets() throws {
    let ids = (1...8).map { ObjectID(UInt64($0)) }
    let old = [ids[0], ids[1], ids[2], ids[3], ids[4]]
    let new = [ids[4], ids[0], ids[5], ids[2], ids[3]]
    let changes = ResultChanges.between(old, new, touched: [ids[2], ids[7]])
    #expect(changes.removed == [1])
    #expect(changes.inserted == [2])
    #expect(changes.moved == [ResultChanges.Move(from: 4, to: 0)])
    #expect(changes.updated == [3])
    #expect(changes.apply(to: old) { new[$0] } == new)
    var rng = SeededGenerator(seed: 0xC4A)
    for _ in 0..<300 {
      let pool = (1...12).map { ObjectID(UInt64($0)) }
      let a = pool.filter { _ in rng.next() % 2 == 0 }.shuffled(using: &rng)
      let b = pool.filter { _ in rng.next() % 2 == 0 }.shuffled(using: &rng)
      let c = ResultChanges.between(a, b, touched: [])
      #expect(c.apply(to: a) { b[$0] } == b, "\(a) → \(b)")
      #expect(c.removed.count == Set(a).subtracting(b).count)
    }
  }

  @Test("the typed form yields records read with the result; for-await wakes as commits land")
  func typedAndAsync() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/s", model: try Self.model())
    let other = store
    let live = try store.observe(LivePerson.self, where: "score > 5", sortedBy: [SortDescriptor("name")])
    let writer = Task {
      for i in 0..<20 {
        try other.write { tx in
          _ = try tx.insert(
            "Person", ["name": .string("n\(100 + i)"), "age": .int32(1), "score": .int32(Int32(i % 10))])
        }
        try other.write { tx in _ = try tx.insert("Audit", ["text": .string("a\(i)")]) }
      }
    }
    var seen: [LivePerson] = []
    for try await (records, result) in live {
      #expect(records.map(\.id.id) == result.objects)
      seen = records.map(\.record)
      if seen.count == 8 { break }
    }
    try await writer.value
    #expect(seen.map(\.name) == ["n106", "n107", "n108", "n109", "n116", "n117", "n118", "n119"])
    #expect(seen.allSatisfy { $0.score > 5 })
  }

  @Test(
    "bad input: an unknown entity, a predicate that does not compile, a record the model lacks, a sort key that is no attribute"
  )
  func badInput() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/s", model: try Self.model())
    let unknown = #expect(throws: StoreError.self) { try store.observe("Nobody") }
    #expect(unknown?.code == .unknownEntity)
    #expect(throws: (any Error).self) { try store.observe("Person", where: "age >>= 3") }
    #expect(throws: (any Error).self) { try store.observe("Person", where: "height > 3") }
    #expect(throws: RecordError.self) { try store.observe(Sample.self) }
    let sortKey = #expect(throws: StoreError.self) { try store.observe("Person", sortedBy: [SortDescriptor("height")]) }
    #expect(sortKey?.code == .unknownProperty)
  }
}
