import Foundation
import Testing

@testable import EventGraph

@Suite("Snapshots: a store or a subgraph written to a new store, with or without history")
struct CloneSnapshotTests {
  /// The seed, then a history of changes: renames, reorders, a firing, a hiring, an
  /// employee moving to the other company, new managers and departments.
  static func seedWithHistory(_ store: EventStore) throws -> CompanySeed {
    var seed = try CompanySeed.build(store, employees: 12)
    try store.write { tx throws in try tx.set(seed.company, "name", .string("ACME Corp")) }
    try store.write { tx throws in
      try tx.link(seed.company, "employees", seed.employees[9], at: 0)
      try tx.link(seed.company, "employees", seed.employees[2], at: 5)
    }
    try store.write { tx throws in try tx.delete(seed.employees[4]) }
    let hired = try #require(
      store.write { tx throws in
        let n = try tx.insert("Employee", ["name": .string("newcomer")])
        try tx.link(seed.company, "employees", n, at: 3)
        try tx.setRelationship(n, "manager", to: seed.employees[1])
        try tx.link(n, "department", seed.departments[2])
        return n
      }.value)
    // An employee leaves for the other company (the to-one inverse moves them).
    try store.write { tx throws in try tx.link(seed.otherCompany, "employees", seed.employees[6]) }
    try store.write { tx throws in
      try tx.setRelationship(seed.employees[0], "manager", to: hired)
      try tx.link(seed.company, "departments", seed.departments[2])
      try tx.unlink(seed.company, "departments", seed.departments[0])
      try tx.set(seed.departments[1], "name", .string("Sales & Marketing"))
    }
    // Changes elsewhere, which a subgraph snapshot leaves out.
    try store.write { tx throws in
      let e = try tx.insert("Employee", ["name": .string("other new")])
      try tx.link(seed.otherCompany, "employees", e)
    }
    seed.employees.append(hired)
    seed.sequence = try store.read { try $0.logEnd().sequence }
    return seed
  }

  @Test("a whole-store snapshot without history is a compaction with the same state")
  func compaction() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    _ = try Self.seedWithHistory(store)
    let result = try store.snapshot(to: dir + "/compact")
    let compact = try EventStore(path: dir + "/compact")
    #expect(compact.model == store.model)
    let (original, commits) = try store.read { s throws in (try dump(s), try s.commits().count) }
    try compact.read { s throws in
      #expect(try dump(s) == original)
      #expect(try s.commits().count == 1)
      #expect(try s.commits().first?.metadata.extra["snapshotOf"] == store.storeID)
    }
    #expect(commits > 1)
    #expect(result.commits == 1)
    #expect(result.objects == original.count)
    #expect(try compact.verify().isOK)
    // The snapshot is a store like any other: it takes new objects after the old ones.
    let next = try compact.write { tx throws in try tx.insert("Department", ["name": .string("New")]) }.value!
    #expect(try store.read { s throws in try allObjects(s).allSatisfy { $0 < next } })
  }

  @Test("a whole-store snapshot as of a past sequence holds the state of then")
  func pastState() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try Self.seedWithHistory(store)
    let cut = seed.sequence * 2 / 3
    try store.snapshot(asOf: cut, to: dir + "/then")
    let then = try EventStore(path: dir + "/then")
    let past = try store.read { s throws in try versions(s, try allIdentities(s), asOf: cut) }
    try then.read { s throws in
      #expect(try Set(allObjects(s)) == Set(past.keys))
      for (o, v) in past { #expect(try currentVersion(s, o) == v) }
    }
    #expect(try then.verify().isOK)
  }

  @Test("a subgraph snapshot holds the subgraph and what it references, nothing else")
  func subgraphState() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try Self.seedWithHistory(store)
    let result = try store.snapshot(root: seed.company, to: dir + "/acme")
    let acme = try EventStore(path: dir + "/acme")
    let (included, expected) = try store.read { s throws in
      let people = try s.related(seed.company, "employees")
      var ids = Set(people + [seed.company])
      ids.formUnion(try s.related(seed.company, "departments"))
      for p in people {
        ids.formUnion(try s.related(p, "department"))
        ids.formUnion(try s.related(p, "manager"))
      }
      return (ids, try dump(s, only: ids))
    }
    try acme.read { s throws in
      #expect(try Set(allObjects(s)) == included)
      #expect(try dump(s) == expected)
      #expect(try s.objects(of: "Company") == [seed.company])
    }
    #expect(result.objects == included.count)
    #expect(try acme.verify().isOK)
  }

  @Test("a snapshot with history time-travels to the same states for its subgraph")
  func subgraphHistory() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try Self.seedWithHistory(store)
    let result = try store.snapshot(root: seed.company, to: dir + "/acme", withHistory: true)
    #expect(result.withHistory)
    let acme = try EventStore(path: dir + "/acme")
    let end = seed.sequence
    #expect(try acme.verify().isOK)
    try store.read { original throws in
      try acme.read { snapshot throws in
        let kept = Set(try allIdentities(snapshot))
        #expect(!kept.contains(try #require(try original.objects(of: "Employee").last)))  // other new
        for s in 0...end {
          let image = try #require(result.sequence(forOriginal: s))
          let was = try reachable(original, from: seed.company, asOf: s)
          let is_ = try reachable(snapshot, from: seed.company, asOf: image)
          #expect(Set(was.keys) == Set(is_.keys), "objects reachable at sequence \(s)")
          for (o, v) in was {
            var restricted = v
            restricted.relationships = v.relationships.mapValues { $0.filter(kept.contains) }.filter { !$1.isEmpty }
            #expect(is_[o] == restricted, "\(original.display(o)) at sequence \(s) (snapshot \(image))")
          }
        }
        // Each replayed commit says which original commit it came from.
        let commits = try snapshot.commits()
        #expect(commits.count == result.commits)
        #expect(commits.allSatisfy { $0.metadata.sourceCommit != nil })
      }
    }
  }

  @Test("a whole-store snapshot with history replays every commit")
  func wholeHistory() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try Self.seedWithHistory(store)
    let cut = seed.sequence - 3  // in the middle of the last commit
    let result = try store.snapshot(asOf: cut, to: dir + "/all", withHistory: true)
    let all = try EventStore(path: dir + "/all")
    #expect(result.events == Int(cut))
    try store.read { original throws in
      let ids = try allIdentities(original)
      try all.read { copy throws in
        #expect(try copy.logEnd().sequence == cut)
        for s in stride(from: UInt64(0), through: cut, by: 7) {
          #expect(result.sequence(forOriginal: s) == s)
          #expect(try versions(original, ids, asOf: s) == versions(copy, ids, asOf: s))
        }
      }
    }
    #expect(try all.verify().isOK)
  }
}

/// The objects reachable from `root` along the default `deep` relationships as of a
/// sequence, read through the public time-travel API.
func reachable(_ s: Snapshot, from root: ObjectID, asOf sequence: UInt64) throws -> [ObjectID: ObjectVersion] {
  var found: [ObjectID: ObjectVersion] = [:]
  guard let v = try s.object(root, asOf: sequence) else { return found }
  found[root] = v
  var queue = [v]
  while let v = queue.popLast() {
    guard let e = s.model.entity(v.state.entity) else { continue }
    for r in e.relationships where r.defaultCopyPolicy(in: s.model) == .deep {
      for t in v.relationships[r.id] ?? [] where found[t] == nil {
        let tv = try #require(try s.object(t, asOf: sequence))
        found[t] = tv
        queue.append(tv)
      }
    }
  }
  return found
}

/// Every identity the store ever gave, deleted objects included.
func allIdentities(_ s: Snapshot) throws -> [ObjectID] {
  let last = try s.reader.lastObjectID()
  guard last > 0 else { return [] }
  return try (1...last).map { ObjectID($0) }.filter { try s.entityID(of: $0) != nil }
}
