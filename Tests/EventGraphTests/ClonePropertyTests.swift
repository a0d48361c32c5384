import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Random models with cycles and every kind of relationship, random histories, random
/// roots and policies: the laws of clone and snapshot against a reference written here
/// with the public API only.
@Suite("Clone and snapshot on random graphs")
struct ClonePropertyTests {
  @Test("the clone is isomorphic to the subgraph reachable under the policy", arguments: stressCases(40))
  func cloneIsImage(seed: UInt64) throws {
    var rng = SeededGenerator(seed: 1000 + seed)
    let model = try RandomGraph.model(&rng)
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    try RandomGraph.history(store, &rng)
    let end = try store.read { try $0.logEnd().sequence }
    let asOf: UInt64? = rng.next() % 2 == 0 ? nil : end / 3 + rng.next() % (end - end / 3)
    let overrides = RandomGraph.overrides(model, &rng)
    let policy = ReferencePolicy(model: model, overrides: overrides)
    let (expected, before, old) = try store.read { s throws in
      let ids = Set(try allIdentities(s))
      return (try versions(s, ids, asOf: asOf ?? end), try dump(s, only: ids), ids)
    }
    // Mostly the root with the largest subgraph, sometimes any object, sometimes one
    // that is not live then.
    let live = expected.keys.sorted()
    guard !live.isEmpty else { return }
    let root: ObjectID
    switch rng.next() % 10 {
    case 0: root = old.sorted()[Int(rng.next() % UInt64(old.count))]
    case 1, 2: root = live[Int(rng.next() % UInt64(live.count))]
    default:
      root =
        live.max { policy.closure(of: $0, in: expected).count < policy.closure(of: $1, in: expected).count } ?? live[0]
    }
    guard expected[root] != nil else {
      // Not live then: refused, nothing written.
      #expect(throws: StoreError.self) { try store.clone(root: root, policy: overrides, asOf: asOf) }
      #expect(try store.read { try $0.logEnd().sequence } == end)
      return
    }
    // The subgraph: the closure of the root along deep relationships.
    let members = policy.closure(of: root, in: expected)
    let seen = Set(members)
    var steals = false
    var dangles = false
    let liveNow = try store.read { s throws in Set(try allObjects(s)) }
    for o in members {
      let v = try #require(expected[o])
      for r in try #require(model.entity(v.state.entity)).relationships where policy.of(v.state.entity, r) == .reference
      {
        for t in v.relationships[r.id] ?? [] where !seen.contains(t) {
          if r.inverseIsToOne(in: model) { steals = true } else if !liveNow.contains(t) { dangles = true }
        }
      }
    }
    if steals || dangles {
      #expect {
        try store.clone(root: root, policy: overrides, asOf: asOf)
      } throws: { error in
        switch (error as? StoreError)?.code {
        case .referenceWouldMove?: steals
        case .referenceToDeleted?: dangles
        default: false
        }
      }
      #expect(try store.read { try $0.logEnd().sequence } == end)
      return
    }

    let copy = try store.clone(root: root, policy: overrides, asOf: asOf)

    #expect(Set(copy.identities.keys) == seen)
    try store.read { s throws in
      for o in members {
        let original = try #require(expected[o])
        let c = try #require(copy.identities[o])
        let actual = try #require(try currentVersion(s, c))
        expectRenamed(original, actual, map: copy.identities, model: model) { r, t in
          if let _ = copy.identities[t] {
            guard let inv = r.inverse, let te = expected[t]?.state.entity,
              case .relationship(let back)? = model.entity(te)?.property(inv)?.kind
            else { return policy.of(original.state.entity, r) != .skip }
            return policy.of(original.state.entity, r) != .skip || policy.of(te, back) != .skip
          }
          return policy.of(original.state.entity, r) == .reference
        }
      }
      try expectInversesHold(s, try allObjects(s))
      // The original is untouched.
      #expect(try dump(s, only: old) == before)
    }
    #expect(try store.verify().isOK)
  }

  @Test("reading the past through per-object history equals object(_:asOf:)", arguments: stressCases(10))
  func pastReader(seed: UInt64) throws {
    var rng = SeededGenerator(seed: 2000 + seed)
    let model = try RandomGraph.model(&rng)
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    try RandomGraph.history(store, &rng)
    try store.read { s throws in
      let ids = try allIdentities(s)
      let end = try s.logEnd().sequence
      for sequence in stride(from: 0, through: end, by: max(1, Int(end) / 15)).map({ UInt64($0) }) + [end] {
        var reader = VersionReader(reader: s.reader, asOf: sequence)
        for o in ids { #expect(try reader.version(o) == s.object(o, asOf: sequence)) }
        if sequence == end {
          let now = VersionReader(reader: s.reader, asOf: nil)
          for o in ids { #expect(try now.current(o) == currentVersion(s, o)) }
        }
      }
    }
  }

  @Test("a snapshot with history time-travels like the original, on random graphs", arguments: stressCases(25))
  func snapshotHistory(seed: UInt64) throws {
    var rng = SeededGenerator(seed: 3000 + seed)
    let model = try RandomGraph.model(&rng)
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    try RandomGraph.history(store, &rng)
    guard let root = try RandomGraph.root(store, &rng) else { return }
    let result = try store.snapshot(root: root, to: dir + "/snap", withHistory: true)
    let snap = try EventStore(path: dir + "/snap")
    #expect(try snap.verify().isOK)
    try store.read { original throws in
      try snap.read { snapshot throws in
        let kept = Set(try allIdentities(snapshot))
        for s in 0...result.sourceSequence {
          let image = try #require(result.sequence(forOriginal: s))
          let was = try reachable(original, from: root, asOf: s)
          let is_ = try reachable(snapshot, from: root, asOf: image)
          #expect(Set(was.keys) == Set(is_.keys), "seed \(seed), sequence \(s)")
          for (o, v) in was {
            var restricted = v
            restricted.relationships = v.relationships.mapValues { $0.filter(kept.contains) }.filter { !$1.isEmpty }
            #expect(is_[o] == restricted, "seed \(seed): \(original.display(o)) at \(s) (snapshot \(image))")
          }
        }
      }
    }
  }

  @Test("a subgraph snapshot is the restriction of the state to the subgraph", arguments: stressCases(15))
  func snapshotState(seed: UInt64) throws {
    var rng = SeededGenerator(seed: 4000 + seed)
    let model = try RandomGraph.model(&rng)
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    try RandomGraph.history(store, &rng)
    guard let root = try RandomGraph.root(store, &rng) else { return }
    try store.snapshot(root: root, to: dir + "/snap")
    let snap = try EventStore(path: dir + "/snap")
    #expect(try snap.verify().isOK)
    let kept = try snap.read { try Set(allObjects($0)) }
    let expected = try store.read { s throws in
      // The deep closure, and what its members reference.
      var members = try reachable(s, from: root, asOf: s.logEnd().sequence)
      for v in Array(members.values) {
        for r in try #require(model.entity(v.state.entity)).relationships
        where r.defaultCopyPolicy(in: model) == .reference {
          for t in v.relationships[r.id] ?? [] where members[t] == nil { members[t] = try currentVersion(s, t) }
        }
      }
      #expect(Set(members.keys) == kept, "seed \(seed)")
      return try dump(s, only: kept)
    }
    #expect(try snap.read { try dump($0) } == expected)
  }
}

/// The copy policies of a call, computed the way the documentation states them.
struct ReferencePolicy {
  let model: Model
  let overrides: [String: CopyPolicy]

  func of(_ entity: EntityID, _ r: Relationship) -> CopyPolicy {
    var e = model.entity(entity)
    while let x = e {
      if let p = overrides["\(x.name).\(r.name)"] { return p }
      e = x.parent.flatMap { model.entity($0) }
    }
    if let p = overrides[r.name] { return p }
    if let p = r.copyPolicy { return p }
    if r.deleteRule == .cascade { return .deep }
    guard let inv = r.inverse, case .relationship(let back)? = model.entity(r.destination)?.property(inv)?.kind
    else { return .reference }
    return back.isToMany ? .reference : .skip
  }

  /// The objects reached from `root` along deep relationships, root first.
  func closure(of root: ObjectID, in versions: [ObjectID: ObjectVersion]) -> [ObjectID] {
    var members: [ObjectID] = [root]
    var seen: Set<ObjectID> = [root]
    var next = 0
    while next < members.count {
      guard let v = versions[members[next]], let e = model.entity(v.state.entity) else { return members }
      next += 1
      for r in e.relationships where of(e.id, r) == .deep {
        for t in v.relationships[r.id] ?? [] where seen.insert(t).inserted { members.append(t) }
      }
    }
    return members
  }
}

/// Random models and histories.
enum RandomGraph {
  static func int(_ rng: inout SeededGenerator, _ range: Range<Int>) -> Int {
    range.lowerBound + Int(rng.next() % UInt64(range.count))
  }

  static func chance(_ rng: inout SeededGenerator, _ percent: UInt64) -> Bool { rng.next() % 100 < percent }

  static let types: [AttributeType] = [.string, .int16, .int64, .double, .decimal, .boolean, .date, .binary, .uuid]

  /// 2–4 entities (one may be a sub-entity), optional attributes of every type, and
  /// relationships of every kind: to-one, to-many, ordered, with or without an inverse,
  /// self-referencing, with random delete rules and copy policies.
  static func model(_ rng: inout SeededGenerator) throws -> Model {
    let count = int(&rng, 2..<5)
    var entities: [EntityDescription] = (0..<count).map { i in
      EntityDescription(name: "E\(i)", parent: i == 3 && count == 4 ? "E1" : nil)
    }
    for i in entities.indices {
      for a in 0..<int(&rng, 1..<4) {
        entities[i].attributes.append(
          AttributeDescription(
            name: "a\(i)_\(a)", type: types[int(&rng, 0..<types.count)], isOptional: true, isIndexed: chance(&rng, 30)))
      }
    }
    let rules: [DeleteRule] = [.nullify, .cascade, .noAction, .nullify, .deny]
    // Deep copies are what make subgraphs large: favour them.
    let policies: [CopyPolicy] = [.deep, .deep, .deep, .reference, .skip]
    func side(_ rng: inout SeededGenerator, _ name: String, _ dest: Int, _ inverse: String?) -> RelationshipDescription
    {
      let toMany = chance(&rng, 50)
      return RelationshipDescription(
        name: name, destination: "E\(dest)", isToMany: toMany, isOrdered: toMany && chance(&rng, 50),
        inverse: inverse, deleteRule: rules[int(&rng, 0..<rules.count)],
        copyPolicy: chance(&rng, 50) ? policies[int(&rng, 0..<policies.count)] : nil)
    }
    for k in 0..<int(&rng, 2..<7) {
      let a = int(&rng, 0..<count)
      let b = chance(&rng, 25) ? a : int(&rng, 0..<count)
      if chance(&rng, 75) {
        entities[a].relationships.append(side(&rng, "r\(k)", b, "r\(k)back"))
        entities[b].relationships.append(side(&rng, "r\(k)back", a, "r\(k)"))
      } else {
        entities[a].relationships.append(side(&rng, "r\(k)", b, nil))
      }
    }
    return try Model(name: "Random", version: 1, entities: entities)
  }

  static func value(_ type: AttributeType, _ rng: inout SeededGenerator) -> Value {
    let n = rng.next()
    switch type {
    case .string: return .string("s\(n % 1000)")
    case .int16: return .int16(Int16(truncatingIfNeeded: n))
    case .int32: return .int32(Int32(truncatingIfNeeded: n))
    case .int64: return .int64(Int64(truncatingIfNeeded: n))
    case .double: return .double(Double(n % 100_000) / 8)
    case .float: return .float(Float(n % 1000) / 4)
    case .decimal: return .decimal(Decimal(Int(n % 100_000)) / 100)
    case .boolean: return .boolean(n % 2 == 0)
    case .date: return .date(Date(timeIntervalSince1970: Double(n % 2_000_000_000)))
    case .binary: return .binary((0..<(n % 6)).map { UInt8(truncatingIfNeeded: $0 &* n) })
    case .uuid: return .uuid(randomUUID(&rng))
    case .uri: return .uri("https://example.com/\(n % 100)")
    }
  }

  /// 20 commits of random inserts, sets, links (at random positions), unlinks and
  /// deletes; a commit the model refuses (a denied delete) is simply not made.
  static func history(_ store: EventStore, _ rng: inout SeededGenerator) throws {
    let model = store.model
    for _ in 0..<20 {
      var local = rng
      _ = try? store.write { tx throws in
        for _ in 0..<int(&local, 3..<14) {
          let live = try allObjects(tx)
          let op = live.count < 4 ? 0 : int(&local, 0..<14)
          switch op {
          case 0..<3:
            let e = model.entities[int(&local, 0..<model.entities.count)]
            let o = try tx.insert(e.name)
            for a in e.attributes where chance(&local, 70) { try tx.set(o, a.name, value(a.type, &local)) }
          case 3..<5:
            let o = live[int(&local, 0..<live.count)]
            let e = try tx.entity(of: o)
            let a = e.attributes[int(&local, 0..<e.attributes.count)]
            try tx.set(o, a.name, chance(&local, 20) ? nil : value(a.type, &local))
          case 5..<12:
            let o = live[int(&local, 0..<live.count)]
            let e = try tx.entity(of: o)
            guard !e.relationships.isEmpty else { continue }
            let r = e.relationships[int(&local, 0..<e.relationships.count)]
            let targets = try live.filter { model.isKind(try tx.entity(of: $0).id, of: r.destination) }
            guard !targets.isEmpty else { continue }
            let t = targets[int(&local, 0..<targets.count)]
            let current = try tx.related(o, r.id)
            let count = current.contains(t) ? current.count - 1 : current.count
            let position = r.isOrdered && chance(&local, 60) ? int(&local, 0..<(count + 1)) : nil
            try tx.link(o, r.name, t, at: position)
          case 12:
            let o = live[int(&local, 0..<live.count)]
            let e = try tx.entity(of: o)
            guard let r = e.relationships.first, let t = try tx.related(o, r.id).first else { continue }
            try tx.unlink(o, r.name, t)
          default:
            try tx.delete(live[int(&local, 0..<live.count)])
          }
        }
      }
      rng = local
    }
  }

  /// A live object: mostly the one with the largest subgraph under the default policies.
  static func root(_ store: EventStore, _ rng: inout SeededGenerator) throws -> ObjectID? {
    let now = try store.read { s throws in
      var result: [ObjectID: ObjectVersion] = [:]
      for o in try allObjects(s) { result[o] = try currentVersion(s, o) }
      return result
    }
    let live = now.keys.sorted()
    guard !live.isEmpty else { return nil }
    if chance(&rng, 30) { return live[int(&rng, 0..<live.count)] }
    let policy = ReferencePolicy(model: store.model, overrides: [:])
    return live.max { policy.closure(of: $0, in: now).count < policy.closure(of: $1, in: now).count }
  }

  /// Up to two qualified or bare policy overrides.
  static func overrides(_ model: Model, _ rng: inout SeededGenerator) -> [String: CopyPolicy] {
    var result: [String: CopyPolicy] = [:]
    for _ in 0..<int(&rng, 0..<3) {
      let e = model.entities[int(&rng, 0..<model.entities.count)]
      guard !e.relationships.isEmpty else { continue }
      let r = e.relationships[int(&rng, 0..<e.relationships.count)]
      let key = chance(&rng, 70) ? "\(e.name).\(r.name)" : r.name
      result[key] = [CopyPolicy.deep, .deep, .reference, .skip][int(&rng, 0..<4)]
    }
    return result
  }
}
