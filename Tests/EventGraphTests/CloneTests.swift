import Foundation
import Testing

@testable import EventGraph

@Suite("Clone: deep copies by replaying a subgraph")
struct CloneTests {
  @Test("the second seed: a company and its 50 ordered employees are copied in one commit")
  func secondSeed() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store)
    let (before, oldIDs, logBefore) = try store.read { s throws in
      let ids = Set(try allObjects(s))
      return (try dump(s, only: ids), ids, try s.commits())
    }

    var exportBefore: [String] = []
    try store.export(entity: "Company") { exportBefore.append($0) }
    try store.export(entity: "Employee") { exportBefore.append($0) }

    let copy = try store.clone(root: seed.company)

    // The original's export is byte for byte the same: every company and employee line
    // of before is still there (the departments gain the copies, being shared).
    var exportAfter: [String] = []
    try store.export(entity: "Company") { exportAfter.append($0) }
    try store.export(entity: "Employee") { exportAfter.append($0) }
    #expect(Set(exportBefore).isSubset(of: Set(exportAfter)))
    #expect(exportAfter.count == exportBefore.count + 51)
    #expect(copy.count == 51)
    #expect(copy.identities[seed.company] == copy.root)
    #expect(Set(copy.identities.values).isDisjoint(with: oldIDs))
    try store.read { s throws in
      // One commit, recording where it came from.
      let commits = try s.commits(from: copy.commit.firstSequence)
      #expect(commits.count == 1)
      #expect(commits.first?.metadata.clonedFrom == seed.company)
      #expect(try s.commits(to: logBefore.last?.lastSequence ?? 0) == logBefore)

      // 50 new employees, in the same order.
      let copies = try s.related(copy.root, "employees")
      #expect(copies.count == 50)
      #expect(copies == seed.employees.compactMap { copy.identities[$0] })
      #expect(Set(copies).isDisjoint(with: oldIDs))
      for (original, c) in zip(seed.employees, copies) {
        #expect(try s.value(c, "name") == s.value(original, "name"))
        #expect(try s.value(c, "salary") == s.value(original, "salary"))
        #expect(try s.value(c, "badge") == s.value(original, "badge"))
        #expect(try s.related(c, "company") == [copy.root])
        // Managers are re-pointed inside the copy (employee 7 manages themself).
        let manager = try s.related(original, "manager").map { copy.identities[$0] }
        #expect(try s.related(c, "manager") == manager)
        // Departments are referenced, not copied.
        let department = try s.related(original, "department")
        #expect(try s.related(c, "department") == department)
        #expect(try s.related(try #require(department.first), "employees").contains(c))
      }
      #expect(
        try s.related(copy.identities[seed.employees[7]] ?? ObjectID(0), "reports").contains(
          copy.identities[seed.employees[7]] ?? ObjectID(0)))
      // Every attribute, binary and dates included.
      #expect(try s.value(copy.root, "logo") == .binary([0, 1, 2, 0xFF, 0x7F]))
      #expect(try s.value(copy.root, "founded") == s.value(seed.company, "founded"))
      #expect(try s.related(copy.root, "departments") == s.related(seed.company, "departments"))
      #expect(try s.objects(of: "Department").count == 3)

      try expectInversesHold(s, try allObjects(s))
      // The original is untouched: every old object, with its links among old objects.
      #expect(try dump(s, only: oldIDs) == before)
    }
    #expect(try store.verify().isOK)
  }

  @Test("the copy of a subgraph is its exact image, identities renamed")
  func exactImage() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store)
    let copy = try store.clone(root: seed.company)
    try store.read { s throws in
      for (original, c) in copy.identities {
        expectRenamed(
          try #require(try currentVersion(s, original)), try #require(try currentVersion(s, c)), map: copy.identities,
          model: s.model)
      }
    }
  }

  @Test("a clone as of a past sequence equals the state at that sequence")
  func asOfPast() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store)
    let then = seed.sequence
    let past = try store.read { s throws in
      try versions(s, try allObjects(s), asOf: then)
    }
    // Later: a rename, a reordering, a firing, a hiring, new managers.
    try store.write { tx throws in
      try tx.set(seed.company, "name", .string("ACME 2"))
      try tx.link(seed.company, "employees", seed.employees[40], at: 0)
      try tx.delete(seed.employees[3])
      let n = try tx.insert("Employee", ["name": .string("newcomer")])
      try tx.link(seed.company, "employees", n, at: 5)
      try tx.setRelationship(seed.employees[10], "manager", to: n)
      try tx.setRelationship(seed.employees[11], "manager", to: nil)
    }
    let copy = try store.clone(root: seed.company, asOf: then)
    #expect(copy.sourceSequence == then)
    #expect(copy.count == 51)
    #expect(copy.identities[seed.employees[3]] != nil)
    try store.read { s throws in
      let pastCompany = try #require(past[seed.company])
      #expect(try s.value(copy.root, "name") == .string("ACME"))
      for (original, c) in copy.identities {
        let was = try #require(past[original])
        expectRenamed(
          was, try #require(try currentVersion(s, c)), map: copy.identities, model: s.model)
      }
      #expect(
        try s.related(copy.root, "employees")
          == (pastCompany.relationships[
            try #require(s.model.entity(named: "Company")?.relationship(named: "employees")).id] ?? []).compactMap {
            copy.identities[$0]
          })
    }
    #expect(try store.verify().isOK)
  }

  @Test("a clone of a clone equals a clone, up to the renaming of identities")
  func cloneOfClone() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store)
    let first = try store.clone(root: seed.company)
    let second = try store.clone(root: first.root)
    let direct = try store.clone(root: seed.company)
    #expect(second.count == first.count)
    try store.read { s throws in
      // second ∘ first and direct are both images of the original: compare them
      // through the renaming direct(o) ↦ second(first(o)).
      var rename: [ObjectID: ObjectID] = [:]
      for (o, d) in direct.identities {
        rename[d] = first.identities[o].flatMap { second.identities[$0] }
      }
      #expect(rename.count == direct.count)
      for (d, c) in rename {
        expectRenamed(
          try #require(try currentVersion(s, d)), try #require(try currentVersion(s, c)), map: rename, model: s.model)
      }
    }
    #expect(try store.verify().isOK)
  }

  @Test("a clone into another store copies the subgraph and nothing else")
  func crossStore() throws {
    let (source, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let target = try EventStore.create(at: dir + "/target", model: try Fixtures.company())
    let seed = try CompanySeed.build(source)
    // Departments are referenced by default: another store cannot see them.
    #expect {
      try source.clone(root: seed.company, into: target)
    } throws: { error in
      guard let e = error as? StoreError, e.code == .referenceOutsideStore else { return false }
      return e.object == "Company/\(seed.company.rawValue)" && e.property == "departments"
    }
    #expect(try target.read { try $0.logEnd() } == (0, 0))

    // Copy the departments along, but not their other companies and employees.
    let policy: [String: CopyPolicy] = [
      "departments": .deep, "Employee.department": .deep, "Department.companies": .skip,
      "Department.employees": .skip,
    ]
    let copy = try source.clone(root: seed.company, policy: policy, into: target)
    let used = try source.read { s throws in Set(try seed.employees.flatMap { try s.related($0, "department") }) }
    #expect(copy.count == 51 + used.union(seed.departments[0...1]).count)
    let (sourceDump, targetDump) = try (
      source.read { s throws in try canonical(s, root: seed.company, only: Set(copy.identities.keys)) },
      target.read { s throws in try canonical(s, root: copy.root) }
    )
    #expect(sourceDump == targetDump)
    try target.read { s throws in
      #expect(try allObjects(s).count == copy.count)
      try expectInversesHold(s, try allObjects(s))
      let departments = try s.objects(of: "Department")
      for d in departments {
        // Only the copied company and its copied employees: the rest stayed home.
        #expect(try s.related(d, "companies").allSatisfy { $0 == copy.root })
        for e in try s.related(d, "employees") { #expect(try s.related(e, "company") == [copy.root]) }
      }
      let commit = try #require(try s.commits().last)
      #expect(commit.metadata.extra["clonedFromStore"] == source.storeID)
    }
    #expect(try target.verify().isOK)
  }

  @Test("attributes can be replaced or computed for the copy")
  func attributeOverrides() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store, employees: 5)
    let copy = try store.clone(
      root: seed.company,
      overrides: [
        "Company.name": .appending(" (copy)"),
        "badge": .newUUID,
        "Company.founded": .now,
        "Employee.name": AttributeOverride { c in .string("\(c.value?.stringValue ?? "") #\(c.copy.rawValue)") },
        "salary": .value(.int64(7)),  // converted to the attribute's decimal
      ])
    try store.read { s throws in
      #expect(try s.value(copy.root, "name") == .string("ACME (copy)"))
      #expect(try s.value(seed.company, "name") == .string("ACME"))
      guard case .date(let founded)? = try s.value(copy.root, "founded") else {
        Issue.record("founded is not a date")
        return
      }
      #expect(abs(founded.timeIntervalSince(copy.commit.time)) < 2)
      for (o, c) in copy.identities where o != seed.company {
        #expect(try s.value(c, "badge") != nil)
        #expect(try s.value(c, "badge") != s.value(o, "badge"))
        #expect(try s.value(c, "salary") == .decimal(7))
        let name = try #require(try s.value(o, "name")?.stringValue)
        #expect(try s.value(c, "name") == .string("\(name) #\(c.rawValue)"))
      }
    }
  }

  @Test("a relationship may be overridden by name, qualified or bare")
  func policyOverrides() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let seed = try CompanySeed.build(store, employees: 6)
    // Copy departments deep: new departments, shared with the other company, because
    // Department.companies is a reference; the copied company is re-pointed inside.
    let c = try store.clone(root: seed.company, policy: ["Company.departments": .deep, "department": .deep])
    // Skip managers on both sides: the copies have none.
    let a = try store.clone(root: seed.company, policy: ["manager": .skip, "Employee.reports": .skip])
    // Skip only the employees: a company copy without people.
    let b = try store.clone(root: seed.company, policy: ["Company.employees": .skip])
    try store.read { s throws in
      let departments = try s.related(c.root, "departments")
      #expect(departments.count == 2)
      #expect(Set(departments).isDisjoint(with: seed.departments))
      for d in departments {
        #expect(try Set(s.related(d, "companies")) == [c.root, seed.otherCompany])
        for e in try s.related(d, "employees") { #expect(try s.related(e, "company") == [c.root]) }
      }
      for (o, x) in a.identities where o != seed.company {
        #expect(try s.related(x, "manager").isEmpty)
        #expect(try s.related(x, "reports").isEmpty)
      }
      #expect(b.count == 1)
      #expect(try s.related(b.root, "employees").isEmpty)
      #expect(try s.related(b.root, "departments") == s.related(seed.company, "departments"))
      try expectInversesHold(s, try allObjects(s))
    }
    #expect(try store.verify().isOK)
  }

  @Test("ordered many-to-many relationships keep their order on both sides, even in a cycle")
  func orderedBothSides() throws {
    let model = try Model(
      name: "Net", version: 1,
      entities: [
        EntityDescription(
          name: "Group", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "members", destination: "Node", isToMany: true, isOrdered: true, inverse: "groups",
              deleteRule: .cascade)
          ]),
        EntityDescription(
          name: "Node", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "groups", destination: "Group", isToMany: true, isOrdered: true, inverse: "members"),
            RelationshipDescription(
              name: "friends", destination: "Node", isToMany: true, isOrdered: true, inverse: "friends"),
          ]),
      ])
    let (store, dir) = try makeStore(model)
    defer { removeDirectory(dir) }
    let (g, nodes) = try store.write { tx throws in
      let g = try tx.insert("Group", ["name": .string("g")])
      let g2 = try tx.insert("Group", ["name": .string("g2")])
      let n = try ["a", "b", "c"].map { try tx.insert("Node", ["name": .string($0)]) }
      for x in n { try tx.link(g, "members", x) }
      try tx.link(g2, "members", n[2])
      try tx.link(g2, "members", n[0])
      // a: [b, c], b: [c, a], c: [a, b]: no order of plain appends builds this.
      try tx.link(n[0], "friends", n[1])
      try tx.link(n[0], "friends", n[2])
      try tx.link(n[1], "friends", n[2], at: 0)
      return (g, n)
    }.value!
    let copy = try store.clone(root: g)
    #expect(copy.count == 4)
    try store.read { s throws in
      #expect(try s.related(nodes[1], "friends") == [nodes[2], nodes[0]])
      for o in [g] + nodes {
        let c = try #require(copy.identities[o])
        expectRenamed(
          try #require(try currentVersion(s, o)), try #require(try currentVersion(s, c)), map: copy.identities,
          model: model)
      }
      try expectInversesHold(s, try allObjects(s))
    }
    #expect(try store.verify().isOK)
  }
}

/// A canonical text of the subgraph reached from `root` along every relationship (within
/// `only` when given), with
/// identities replaced by their order of discovery, so two copies compare equal.
func canonical(_ g: some GraphReading, root: ObjectID, only: Set<ObjectID>? = nil) throws -> [String] {
  var order: [ObjectID] = [root]
  var label: [ObjectID: Int] = [root: 0]
  var lines: [String] = []
  var next = 0
  while next < order.count {
    let o = order[next]
    next += 1
    let s = try g.requireObject(o)
    let e = try g.entity(of: o)
    var line = "\(label[o] ?? -1): \(e.name)"
    for a in e.attributes { line += " \(a.name)=\(s[a.id].map { "\($0)" } ?? "nil")" }
    for r in e.relationships {
      var targets = try g.related(o, r.id).filter { only?.contains($0) ?? true }
      if !r.isOrdered {
        // Unordered lists are kept by identity: order them by content instead.
        let keys = try targets.map { "\(try g.requireObject($0).values)" }
        targets = zip(keys, targets).sorted { $0.0 < $1.0 }.map(\.1)
      }
      var names: [Int] = []
      for t in targets {
        if label[t] == nil {
          label[t] = order.count
          order.append(t)
        }
        names.append(label[t] ?? -1)
      }
      line += " \(r.name)=\(names)"
    }
    lines.append(line)
  }
  return lines
}
