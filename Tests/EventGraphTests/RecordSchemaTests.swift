import Foundation
import TestSupport
import Testing

@testable import EventGraph

// Record types that do not fit the Company model, each in one way.

struct NameAsNumber: Record {
  static let entityName = "Company"
  var name: Int64
}

struct UnknownProperty: Record {
  static let entityName = "Company"
  var name: String
  var motto: String?
}

struct RequiredForOptional: Record {
  static let entityName = "Company"
  var name: String
  var founded: Date
}

struct ToOneForToMany: Record {
  static let entityName = "Company"
  var name: String
  var employees: Ref<EmployeeRecord>?
}

struct WrongTarget: Record {
  static let entityName = "Employee"
  var name: String
  var company: Ref<DepartmentRecord>?
}

struct AttributeAsRef: Record {
  static let entityName = "Employee"
  var name: Ref<CompanyRecord>
}

struct NestedValue: Record {
  struct Money: Codable { var amount: Int }
  static let entityName = "Employee"
  var name: String
  var salary: Money?
}

struct RequiredRef: Record {
  static let entityName = "Employee"
  var name: String
  var company: Ref<CompanyRecord>
}

struct NoSuchEntity: Record {
  static let entityName = "Planet"
  var name: String
}

@Suite("Records: a record type that does not fit the model is refused at its first use")
struct RecordSchemaTests {
  /// Each case: the fetch to try, and the error's property, Swift type and a part of its detail.
  static let cases: [(@Sendable (Snapshot) throws -> Void, String?, String?, String)] = [
    ({ _ = try $0.fetch(NameAsNumber.self) }, "name", "Int64", "attribute name has type string"),
    ({ _ = try $0.fetch(UnknownProperty.self) }, "motto", "String?", "the entity has no property motto"),
    ({ _ = try $0.fetch(RequiredForOptional.self) }, "founded", "Date", "must be an optional"),
    ({ _ = try $0.fetch(ToOneForToMany.self) }, "employees", "Ref<EmployeeRecord>?", "to-many"),
    ({ _ = try $0.fetch(WrongTarget.self) }, "company", "Ref<DepartmentRecord>?", "not a kind of Department"),
    ({ _ = try $0.fetch(AttributeAsRef.self) }, "name", "Ref<CompanyRecord>", "not a relationship"),
    ({ _ = try $0.fetch(NestedValue.self) }, "salary", "Money?", "holds no value of this type"),
    ({ _ = try $0.fetch(RequiredRef.self) }, "company", "Ref<CompanyRecord>", "relationship company is optional"),
    ({ _ = try $0.fetch(NoSuchEntity.self) }, nil, nil, "the model has no entity Planet"),
  ]

  @Test("the error names the entity, the property and the Swift type", arguments: 0..<9)
  func mismatch(index: Int) throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let (fetch, property, swiftType, detail) = Self.cases[index]
    // An empty store: the check runs before any object is read.
    do {
      try store.read { try fetch($0) }
      Issue.record("no error for case \(index)")
    } catch let e as RecordError {
      #expect(e.property == property)
      #expect(e.swiftType == swiftType)
      #expect(e.detail.contains(detail), "\(e)")
      #expect(["Company", "Employee", "Planet"].contains(e.entity))
      // A nested container is a type no record holds; every other case is the model's.
      #expect(e.code == (index == 6 ? .unsupportedType : .doesNotFitModel), "\(e)")
    }
  }

  @Test("an insert of a record type that does not fit writes nothing")
  func insertRefused() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    #expect(throws: RecordError.self) {
      try store.write { tx in try tx.insert(NameAsNumber(name: 3)) }
    }
    #expect(try store.read { try $0.logEnd().commit } == 0)
  }

  @Test("the check is made once per record type and model, and again for another model")
  func cached() throws {
    let model = try Fixtures.company()
    let first = try RecordSchema.of(CompanyRecord.self, in: model)
    let again = try RecordSchema.of(CompanyRecord.self, in: model)
    #expect(first.entity === again.entity)
    #expect(first.fields.map(\.key) == ["name", "founded", "logo", "employees", "departments"])
    // Another model whose Company has no logo: the cached schema is not used for it.
    var descriptions = model.descriptions
    descriptions[0] = EntityDescription(
      name: "Company", attributes: descriptions[0].attributes.filter { $0.name != "logo" },
      relationships: descriptions[0].relationships)
    let other = try Model(name: "Company", version: 2, entities: descriptions)
    #expect(throws: RecordError.self) { try RecordSchema.of(CompanyRecord.self, in: other) }
  }
}

/// A record type only the cache test uses, so that no other test touches its entries.
struct CacheProbeRecord: Record {
  static let entityName = "Department"
  var name: String
}

@Suite("Records: the check's cache")
struct RecordSchemaCacheTests {
  @Test("keeps the checks of the last few models of a type, dropping the oldest")
  func bounded() throws {
    let first = try Fixtures.company()
    let kept = try RecordSchema.of(CacheProbeRecord.self, in: first)
    #expect(try RecordSchema.of(CacheProbeRecord.self, in: first) === kept)
    // Models loaded again are other instances: each gets its own check.
    let others = try (0..<8).map { _ in try Fixtures.company() }
    for m in others { _ = try RecordSchema.of(CacheProbeRecord.self, in: m) }
    #expect(try RecordSchema.of(CacheProbeRecord.self, in: others[7]) !== kept)
    #expect(try RecordSchema.of(CacheProbeRecord.self, in: first) !== kept)
  }
}
