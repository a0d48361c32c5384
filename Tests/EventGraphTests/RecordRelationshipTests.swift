import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// The Company model's entities as records.
struct CompanyRecord: Record, Equatable {
  static let entityName = "Company"
  var name: String
  var founded: Date?
  var logo: Data?
  var employees: [Ref<EmployeeRecord>]
  var departments: [Ref<DepartmentRecord>]
}

struct EmployeeRecord: Record, Equatable {
  static let entityName = "Employee"
  var name: String
  var salary: Decimal?
  var badge: UUID?
  var company: Ref<CompanyRecord>?
  var manager: Ref<EmployeeRecord>?
  var reports: [Ref<EmployeeRecord>]
  var department: Ref<DepartmentRecord>?
}

struct DepartmentRecord: Record, Equatable {
  static let entityName = "Department"
  var name: String
  var companies: [Ref<CompanyRecord>]
  var employees: [Ref<EmployeeRecord>]
}

@Suite("Records: relationships as Ref and [Ref]")
struct RecordRelationshipTests {
  @Test("a to-one Ref links both sides, a [Ref] keeps its order, and an update relinks")
  func refs() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let (acme, ids) = try store.write { tx in
      let acme = try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: []))
      let boss = try tx.insert(EmployeeRecord(name: "Ada", company: acme, reports: []))
      let ids = try ["Bo", "Cy", "Di"].map {
        try tx.insert(EmployeeRecord(name: $0, company: acme, manager: boss, reports: []))
      }
      return (acme, [boss] + ids)
    }.value!
    try store.read { s throws in
      #expect(try s.record(acme)?.employees == ids)
      #expect(try s.record(ids[0])?.reports == Array(ids.dropFirst()))
      #expect(try s.record(ids[2])?.manager == ids[0])
      #expect(try s.related(acme.id, "employees") == ids.map(\.id))
    }
    // Reorder the ordered to-many and take one employee out (the cascade is not run by an
    // unlink: the employee stays, without a company).
    let reordered = [ids[3], ids[1], ids[0]]
    try store.write { tx in
      guard var company = try tx.record(acme)?.record else { return }
      company.employees = reordered
      try tx.update(acme, company)
    }
    try store.read { s throws in
      #expect(try s.record(acme)?.employees == reordered)
      #expect(try s.record(ids[2])?.company == nil)
      #expect(try s.record(ids[3])?.company == acme)
    }
  }

  @Test("a Ref to an object of another entity is refused with the relationship named")
  func wrongDestination() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let acme = try store.write { tx in try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: [])) }
    #expect {
      try store.write { tx in
        try tx.insert(EmployeeRecord(name: "X", manager: Ref(acme.value!.id), reports: []))
      }
    } throws: { e in (e as? StoreError)?.code == .wrongDestination && "\(e)".contains("manager") }
  }

  @Test("an update of an object of another entity is refused")
  func updateOtherEntity() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let acme = try store.write { tx in try tx.insert(CompanyRecord(name: "Acme", employees: [], departments: [])) }
    #expect {
      try store.write { tx in
        try tx.update(Ref<EmployeeRecord>(acme.value!.id), EmployeeRecord(name: "X", reports: []))
      }
    } throws: { e in (e as? StoreError)?.code == .noSuchObject }
    #expect(try store.read { try $0.record(EmployeeRecord.self, acme.value!.id) } == nil)
  }
}

/// A record whose own decoding reads a property twice and out of the declared order.
struct CompanyOutOfOrder: Record, Equatable {
  static let entityName = "Company"
  var name: String
  var founded: Date?

  enum CodingKeys: String, CodingKey { case name, founded }

  init(name: String, founded: Date?) {
    self.name = name
    self.founded = founded
  }

  init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    founded = try c.decodeIfPresent(Date.self, forKey: .founded)
    let first = try c.decode(String.self, forKey: .name)
    name = try c.decode(String.self, forKey: .name)
    guard first == name else { throw RecordError.testFailure }
  }
}

@Suite("Records: a hand-written init(from:)")
struct RecordCustomDecodingTests {
  @Test("reads in another order and twice find the same values")
  func outOfOrder() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let when = Date(timeIntervalSince1970: 86_400)
    let ids = try store.write { tx in
      [
        try tx.insert(CompanyOutOfOrder(name: "Acme", founded: when)),
        try tx.insert(CompanyOutOfOrder(name: "Initech", founded: nil)),
      ]
    }.value!
    let read = try store.fetch(CompanyOutOfOrder.self, sortedBy: [.init("name")])
    #expect(read.map(\.id) == ids)
    #expect(
      read.map(\.record) == [CompanyOutOfOrder(name: "Acme", founded: when), .init(name: "Initech", founded: nil)])
  }
}
