import EventGraphLocking
import Foundation
import Testing

@testable import EventGraph

@Suite("Clone and snapshot refuse bad input clearly, writing nothing")
struct CloneBadInputTests {
  /// A store with the seed, and a check that a failed call left it as it was.
  struct Fixture {
    let store: EventStore
    let dir: String
    let seed: CompanySeed
    let end: UInt64

    init(_ label: String = #function) throws {
      (store, dir) = try makeStore(try Fixtures.company(), label: label)
      seed = try CompanySeed.build(store, employees: 5)
      end = try store.read { try $0.logEnd().sequence }
    }

    func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) throws {
      #expect(try store.read { try $0.logEnd().sequence } == end, sourceLocation: sourceLocation)
    }
  }

  @Test("an unknown root")
  func unknownRoot() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    #expect(throws: StoreError.noSuchObject("#999")) { try f.store.clone(root: ObjectID(999)) }
    try f.expectUnchanged()
  }

  @Test("a root that was deleted, or did not exist yet at the sequence asked for")
  func deletedRoot() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    let gone = f.seed.otherEmployees[0]
    try f.store.write { tx throws in try tx.delete(gone) }
    let end = try f.store.read { try $0.logEnd().sequence }
    #expect(throws: StoreError.deletedObject("Employee/\(gone.rawValue)", asOf: nil)) { try f.store.clone(root: gone) }
    #expect(throws: StoreError.deletedObject("Company/\(f.seed.company.rawValue)", asOf: 2)) {
      try f.store.clone(root: f.seed.company, asOf: 2)
    }
    #expect(try f.store.read { try $0.logEnd().sequence } == end)
    // Before its deletion it can be copied: the past is still there.
    let copy = try f.store.clone(root: gone, policy: ["company": .skip, "department": .skip], asOf: f.end)
    #expect(try f.store.read { try $0.value(copy.root, "name") } == .string("other 0"))
  }

  @Test("a sequence beyond the log")
  func beyondLog() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    #expect(throws: StoreError.sequenceBeyondLog(f.end + 1, last: f.end)) {
      try f.store.clone(root: f.seed.company, asOf: f.end + 1)
    }
    try f.expectUnchanged()
  }

  @Test(
    "a policy or override name the model does not have, named with its entity",
    arguments: [
      (
        ["bogus": CopyPolicy.deep], [String: AttributeOverride](),
        StoreError.unknownProperty(entity: "Company", property: "bogus")
      ),
      (["Employee.bogus": .deep], [:], .unknownProperty(entity: "Employee", property: "bogus")),
      (["Nope.employees": .deep], [:], .unknownEntity("Nope")),
      (["Company.name": .deep], [:], .notARelationship(entity: "Company", property: "name")),
      (["name": .deep], [:], .notARelationship(entity: "Company", property: "name")),
      ([:], ["Company.employees": .value(nil)], .notAnAttribute(entity: "Company", property: "employees")),
      ([:], ["colour": .value(nil)], .unknownProperty(entity: "Company", property: "colour")),
    ])
  func unknownNames(policy: [String: CopyPolicy], overrides: [String: AttributeOverride], expected: StoreError) throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    #expect(throws: expected) { try f.store.clone(root: f.seed.company, policy: policy, overrides: overrides) }
    try f.expectUnchanged()
  }

  @Test("a reference that would take the target from the original, unless skipped")
  func stealingReference() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    let first = f.seed.employees[0]
    #expect(
      throws: StoreError.referenceWouldMove(
        object: "Company/\(f.seed.company.rawValue)", relationship: "employees", target: "Employee/\(first.rawValue)",
        inverse: "company")
    ) { try f.store.clone(root: f.seed.company, policy: ["employees": .reference]) }
    try f.expectUnchanged()
    let copy = try f.store.clone(root: f.seed.company, policy: ["employees": .skip])
    try f.store.read { s throws in
      #expect(try s.related(copy.root, "employees").isEmpty)
      #expect(try s.related(f.seed.company, "employees") == f.seed.employees)
    }
  }

  @Test("a reference to an object deleted since the sequence copied")
  func danglingReference() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    let employee = f.seed.employees[0]
    let department = try f.store.read { try #require(try $0.related(employee, "department").first) }
    try f.store.write { tx throws in
      for e in try tx.related(department, "employees") { try tx.setRelationship(e, "department", to: nil) }
      try tx.delete(department)
    }
    #expect(throws: StoreError.self) { try f.store.clone(root: f.seed.company, asOf: f.end) }
    do {
      try f.store.clone(root: f.seed.company, asOf: f.end)
    } catch let e as StoreError {
      guard e.code == .referenceToDeleted else { throw e }
      #expect(e.target == "Department/\(department.rawValue)")
    }
    let copy = try f.store.clone(
      root: f.seed.company, policy: ["department": .skip, "departments": .skip], asOf: f.end)
    #expect(copy.count == 6)
  }

  @Test("an override of the wrong type")
  func wrongType() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    #expect {
      try f.store.clone(root: f.seed.company, overrides: ["Company.founded": .value(.binary([1]))])
    } throws: { error in
      guard let e = error as? StoreError, e.code == .wrongType else { return false }
      // The copy is named by its original: its identity was never committed.
      return e.property == "founded" && e.object?.origin == .copy(of: f.seed.company)
        && e.description.hasPrefix("the copy of Company/\(f.seed.company.rawValue).founded: ")
    }
    try f.expectUnchanged()
  }

  @Test("a store of another model version")
  func otherModel() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    let other = try EventStore.create(at: f.dir + "/v1", model: try Fixtures.addressBookV1())
    #expect(throws: StoreError.modelMismatch(source: "Company v1", target: "AddressBook v1 (defined differently)")) {
      try f.store.clone(root: f.seed.company, into: other)
    }
    #expect(try other.read { try $0.logEnd().sequence } == 0)
    try f.expectUnchanged()
  }

  @Test("a snapshot into a directory that exists, or of bad input, makes no directory")
  func snapshotBadInput() throws {
    let f = try Fixture()
    defer { removeDirectory(f.dir) }
    let existing = f.dir + "/existing"
    try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true)
    #expect(throws: StoreError.alreadyExists(path: existing)) { try f.store.snapshot(to: existing) }
    #expect(try FileManager.default.contentsOfDirectory(atPath: existing).isEmpty)
    let out = f.dir + "/out"
    #expect(throws: StoreError.noSuchObject("#999")) { try f.store.snapshot(root: ObjectID(999), to: out) }
    #expect(throws: StoreError.sequenceBeyondLog(f.end + 5, last: f.end)) {
      try f.store.snapshot(asOf: f.end + 5, to: out, withHistory: true)
    }
    #expect(throws: StoreError.unknownProperty(entity: "Company", property: "bogus")) {
      try f.store.snapshot(root: f.seed.company, to: out, policy: ["bogus": .skip])
    }
    #expect(!FileManager.default.fileExists(atPath: out))
  }
}

@Suite("Clone progress")
struct CloneProgressTests {
  @Test("a large clone reports the objects read as it collects them")
  func progressIsReported() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let department = try store.write { tx in
      let d = try tx.insert("Department", ["name": .string("big")])
      for i in 0..<5000 {
        let e = try tx.insert("Employee", ["name": .string("e\(i)")])
        try tx.link(e, "department", d)
      }
      return d
    }.value!
    let seen = Locked<[Int]>([])
    let copy = try store.clone(root: department, policy: ["Department.employees": .deep]) { n in
      seen.withLock { $0.append(n) }
    }
    #expect(copy.count == 5001)
    let reports = seen.withLock { $0 }
    #expect(reports == [4096])
  }
}
