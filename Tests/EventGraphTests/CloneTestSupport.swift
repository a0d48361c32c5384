import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The second seed: a company with ordered employees, managers among them, and
/// departments shared with another company.
struct CompanySeed {
  var company: ObjectID
  var employees: [ObjectID]
  var departments: [ObjectID]
  var otherCompany: ObjectID
  var otherEmployees: [ObjectID]
  /// The last sequence of the commit that finished the seed.
  var sequence: UInt64

  /// Builds the seed in two commits (people and departments, then managers).
  static func build(_ store: EventStore, employees count: Int = 50, seed: UInt64 = 2) throws -> CompanySeed {
    var rng = SeededGenerator(seed: seed)
    var s = try #require(
      store.write { tx throws in
        let departments = try ["R&D", "Sales", "Support"].map { try tx.insert("Department", ["name": .string($0)]) }
        let other = try tx.insert("Company", ["name": .string("Other Co")])
        try tx.setRelationship(other, "departments", to: departments)
        var otherEmployees: [ObjectID] = []
        for i in 0..<3 {
          let e = try tx.insert("Employee", ["name": .string("other \(i)")])
          try tx.link(other, "employees", e)
          try tx.link(e, "department", departments[i])
          otherEmployees.append(e)
        }
        let acme = try tx.insert(
          "Company",
          [
            "name": .string("ACME"), "founded": .date(Date(timeIntervalSince1970: 1_234_567_890.5)),
            "logo": .binary([0, 1, 2, 0xFF, 0x7F]),
          ])
        try tx.link(acme, "departments", departments[0])
        try tx.link(acme, "departments", departments[1])
        var people: [ObjectID] = []
        for i in 0..<count {
          let e = try tx.insert(
            "Employee",
            [
              "name": .string("employee \(i)"),
              "salary": .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(100_025 + 100 * i))),
              "badge": i % 7 == 3 ? nil : .uuid(randomUUID(&rng)),
            ])
          // Hired in a scrambled order, so that the list order is not the identity order.
          let at = people.isEmpty ? 0 : Int(rng.next() % UInt64(people.count + 1))
          try tx.link(acme, "employees", e, at: at)
          people.insert(e, at: at)
          try tx.link(e, "department", departments[Int(rng.next() % 3)])
        }
        return CompanySeed(
          company: acme, employees: people, departments: departments, otherCompany: other,
          otherEmployees: otherEmployees, sequence: 0)
      }.value)
    let managers = try store.write { tx throws in
      for (i, e) in s.employees.enumerated() {
        // Everyone but the first reports to someone; employee 7 is their own manager.
        guard i > 0 else { continue }
        let m = i == 7 ? e : s.employees[Int(rng.next() % UInt64(s.employees.count))]
        try tx.setRelationship(e, "manager", to: m)
      }
    }
    s.sequence = try #require(managers.commit).lastSequence
    return s
  }
}

func randomUUID(_ rng: inout SeededGenerator) -> UUID {
  let a = rng.next()
  let b = rng.next()
  func byte(_ v: UInt64, _ i: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: v >> (8 * i)) }
  return UUID(
    uuid: (
      byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6), byte(a, 7),
      byte(b, 0), byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7)
    ))
}

// MARK: - Reading the graph for comparisons

/// Every live object of a graph, each with its exact entity.
func allObjects(_ g: some GraphReading) throws -> [ObjectID] {
  var result: [ObjectID] = []
  for e in g.model.entities {
    for o in try g.objects(of: e.id) where try g.entityID(of: o) == e.id { result.append(o) }
  }
  return result.sorted()
}

/// A canonical text of the graph: one line per live object with its values and its
/// relationships (in stored order), naming only the objects in `only` when given.
func dump(_ g: some GraphReading, only: Set<ObjectID>? = nil) throws -> [String] {
  var lines: [String] = []
  for o in try allObjects(g) where only?.contains(o) ?? true {
    let s = try g.requireObject(o)
    let e = try g.entity(of: o)
    var line = "\(e.name)/\(o.rawValue)"
    for a in e.attributes { line += " \(a.name)=\(s[a.id].map { "\($0)" } ?? "nil")" }
    for r in e.relationships {
      let targets = try g.related(o, r.id).filter { only?.contains($0) ?? true }
      line += " \(r.name)=[\(targets.map { String($0.rawValue) }.joined(separator: ","))]"
    }
    lines.append(line)
  }
  return lines
}

/// The version of every object as of `sequence`, read through the public time-travel API.
func versions(_ s: Snapshot, _ ids: some Sequence<ObjectID>, asOf sequence: UInt64) throws -> [ObjectID: ObjectVersion]
{
  var result: [ObjectID: ObjectVersion] = [:]
  for o in ids { if let v = try s.object(o, asOf: sequence) { result[o] = v } }
  return result
}

/// The current version of an object, read through the public API.
func currentVersion(_ g: some GraphReading, _ o: ObjectID) throws -> ObjectVersion? {
  guard let s = try g.object(o), let e = g.model.entity(s.entity) else { return nil }
  var rels: [PropertyID: [ObjectID]] = [:]
  for r in e.relationships {
    let t = try g.related(o, r.id)
    if !t.isEmpty { rels[r.id] = t }
  }
  return ObjectVersion(state: s, relationships: rels)
}

/// Checks that both sides of every link of `objects` agree.
func expectInversesHold(_ g: some GraphReading, _ objects: some Sequence<ObjectID>) throws {
  for o in objects {
    let e = try g.entity(of: o)
    for r in e.relationships {
      guard let inv = r.inverse else { continue }
      for t in try g.related(o, r.id) {
        #expect(try g.related(t, inv).contains(o), "\(g.display(o)).\(r.name) → \(g.display(t)) lacks its inverse")
      }
    }
  }
}

/// Values equal, ignoring identity.
func sameValues(_ a: ObjectState, _ b: ObjectState) -> Bool {
  a.entity == b.entity && a.values == b.values
}

/// Checks that `copy` is `original` with identities renamed by `map` (objects outside it
/// keep their identity): equal values, and each relationship equal after renaming, in
/// order for ordered relationships and as a set otherwise.
func expectRenamed(
  _ original: ObjectVersion, _ copy: ObjectVersion, map: [ObjectID: ObjectID], model: Model,
  keep: (Relationship, ObjectID) -> Bool = { _, _ in true }, sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(
    sameValues(original.state, copy.state), "values of #\(original.state.id.rawValue)", sourceLocation: sourceLocation)
  guard let e = model.entity(original.state.entity) else { return }
  for r in e.relationships {
    let expected = (original.relationships[r.id] ?? []).filter { keep(r, $0) }.map { map[$0] ?? $0 }
    let actual = copy.relationships[r.id] ?? []
    if r.isOrdered {
      #expect(actual == expected, "\(e.name).\(r.name) of #\(copy.state.id.rawValue)", sourceLocation: sourceLocation)
    } else {
      #expect(
        Set(actual) == Set(expected), "\(e.name).\(r.name) of #\(copy.state.id.rawValue)",
        sourceLocation: sourceLocation)
      #expect(actual.count == expected.count, sourceLocation: sourceLocation)
    }
  }
}
