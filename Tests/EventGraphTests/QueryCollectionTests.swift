import Foundation
import Testing

@testable import EventGraph

/// Acme with Ann (who manages Bob and Cy), Bob and Cy; Empty Inc with nobody; an address
/// book with two phones.
private struct Graph {
  let objects = QueryMemoryObjects()
  let acme: Int
  let empty: Int
  let ann: Int
  let bob: Int
  let cy: Int
  let taro: Int
  let landline: Int

  init() {
    acme = objects.insert("Company", ["name": .string("Acme"), "founded": .date(Date(timeIntervalSince1970: 0))])
    empty = objects.insert("Company", ["name": .string("Empty Inc")])
    ann = objects.insert(
      "Employee",
      [
        "name": .string("Ann"), "salary": .int32(100), "bonus": .decimal(Decimal(string: "1.5") ?? 0),
        "rating": .double(4),
      ])
    bob = objects.insert("Employee", ["name": .string("Bob"), "salary": .int32(200), "rating": .double(3)])
    cy = objects.insert("Employee", ["name": .string("Cy"), "salary": .int32(300)])
    objects.link(acme, "employees", [ann, bob, cy])
    objects.link(ann, "reports", [bob, cy])
    taro = objects.insert(
      "AddressBook",
      ["firstName": .string("Taro"), "lastName": .string("Yamada"), "phone1": .string("03-1234"), "age": .int16(30)])
    landline = objects.insert("PhoneBook", ["phoneNumber": .string("03-1234"), "type": .int16(1)])
    let mobile = objects.insert("PhoneBook", ["phoneNumber": .string("090-5678"), "type": .int16(2)])
    objects.link(taro, "phones", [landline, mobile])
  }
}

@Suite("Query evaluation: relationships, quantifiers, aggregates, variables")
struct QueryCollectionTests {
  @Test(
    "over a company's employees",
    arguments: [
      ("employees.@count == 3", true), ("employees.@sum.salary == 600", true), ("employees.@avg.salary == 200", true),
      ("employees.@min.salary == 100", true), ("employees.@max.salary == 300", true),
      ("employees.salary.@sum == 600", true),
      ("employees.salary.@count == 3", true), ("employees.@sum.bonus == 1.5", true),
      // Foundation's @avg counts a nil as 0: bonus (1.5 + 0 + 0) / 3, rating (4 + 3 + 0) / 3.
      ("employees.@avg.bonus == 0.5", true), ("employees.@avg.bonus == 1.5", false),
      ("employees.@avg.rating * 3 == 7", true), ("employees.@avg.rating == 3.5", false),
      ("employees.@max.rating == 4", true), ("employees.@min.rating == 3", true), ("employees.@sum.rating == 7", true),
      ("ANY employees.salary > 250", true), ("SOME employees.salary > 300", false), ("ALL employees.salary > 50", true),
      ("ALL employees.salary > 150", false), ("NONE employees.salary > 500", true),
      ("NONE employees.name == 'Bob'", false),
      ("ANY employees.bonus == nil", true), ("ALL employees.name != nil", true),
      ("ANY employees.name IN {'Bob', 'Zed'}", true), ("ALL employees.salary BETWEEN {100, 300}", true),
      ("ANY employees.name BEGINSWITH[c] 'c'", true), ("ANY employees.name LIKE 'B?b'", true),
      ("ANY employees.name MATCHES 'C.'", true), ("ALL employees.name MATCHES '[A-Z][a-z]*'", true),
      ("'Bob' IN employees.name", true), ("'Zed' IN employees.name", false), ("'bob' IN[c] employees.name", true),
      ("ANY employees.manager.name == 'Ann'", true), ("employees.manager.@count == 2", true),
      ("ANY employees.reports.salary > 250", true), ("employees.reports.@sum.salary == 500", true),
      ("employees.@sum.manager.salary == 200", true), ("ANY employees.salary == employees.@max.salary", true),
      ("employees.@sum.salary / employees.@count == employees.@avg.salary", true),
      ("NOT ANY employees.salary > 1000", true), ("founded < now()", true),
    ])
  func company(text: String, expected: Bool) throws {
    let g = Graph()
    #expect(try queryHolds(text, on: g.acme, in: g.objects, entity: QueryTestModel.company) == expected)
  }

  @Test(
    "over an empty collection: ANY is false, ALL and NONE are true",
    arguments: [
      ("ANY employees.salary > 0", false), ("ALL employees.salary > 0", true), ("NONE employees.salary > 0", true),
      ("employees.@count == 0", true), ("employees.@sum.salary == 0", true), ("employees.@avg.salary == nil", true),
      ("employees.@max.salary == nil", true), ("employees.@min.salary == nil", true),
      ("employees.@sum.bonus == 0", true),
      ("'Bob' IN employees.name", false),
    ])
  func emptyCompany(text: String, expected: Bool) throws {
    let g = Graph()
    #expect(try queryHolds(text, on: g.empty, in: g.objects, entity: QueryTestModel.company) == expected)
  }

  @Test(
    "along to-one relationships",
    arguments: [
      ("manager.name == 'Ann'", true), ("manager != nil", true), ("manager == nil", false),
      ("manager.manager == nil", true),
      ("manager.manager.name == nil", true), ("manager.manager.name != 'x'", true), ("company.name == 'Acme'", true),
      ("company.employees.@count == 3", true), ("manager.reports.@count == 2", true), ("reports.@count == 0", true),
      ("manager.salary < salary", true), ("company.founded < now()", true),
    ])
  func employee(text: String, expected: Bool) throws {
    let g = Graph()
    #expect(try queryHolds(text, on: g.bob, in: g.objects, entity: QueryTestModel.employee) == expected)
  }

  @Test("the seed mapping's predicates, on an address book")
  func seedMapping() throws {
    let g = Graph()
    let filter = "phone1 != nil || phone2 != nil"
    #expect(try queryHolds(filter, on: g.taro, in: g.objects, entity: QueryTestModel.addressBook))
    #expect(
      try queryHolds("phone1 != nil AND phone1 != ''", on: g.taro, in: g.objects, entity: QueryTestModel.addressBook))
    #expect(
      try queryHolds("phone2 != nil AND phone2 != ''", on: g.taro, in: g.objects, entity: QueryTestModel.addressBook)
        == false)
    #expect(try queryHolds("ANY phones.type == 2", on: g.taro, in: g.objects, entity: QueryTestModel.addressBook))
    #expect(
      try queryHolds(
        "addressBook.lastName == 'Yamada'", on: g.landline, in: g.objects, entity: QueryTestModel.phoneBook))
  }

  @Test("variables: $source objects, values and collections")
  func variables() throws {
    let g = Graph()
    let types: [String: QueryType] = [
      "source": .object(QueryTestModel.addressBook), "limit": .value(.int64), "names": .values(.string),
      "people": .objects(QueryTestModel.employee),
    ]
    let bindings: [String: QueryVariable<Int>] = [
      "source": .object(g.taro), "limit": .value(.int64(250)), "names": .values([.string("Bob"), nil]),
      "people": .objects([g.ann, g.bob]),
    ]
    func check(_ text: String, _ object: Int, _ entity: EntityID) throws -> Bool {
      try queryHolds(text, on: object, in: g.objects, entity: entity, variables: types, bindings: bindings)
    }
    #expect(try check("$source.phone1 == '03-1234'", g.landline, QueryTestModel.phoneBook))
    #expect(try check("phoneNumber == $source.phone1", g.landline, QueryTestModel.phoneBook))
    #expect(try check("$source != nil AND $source.phones.@count == 2", g.landline, QueryTestModel.phoneBook))
    #expect(try check("ANY employees.salary > $limit", g.acme, QueryTestModel.company))
    #expect(try check("ALL employees.salary > $limit", g.acme, QueryTestModel.company) == false)
    #expect(try check("ANY employees.name IN $names", g.acme, QueryTestModel.company))
    #expect(try check("name IN $names", g.bob, QueryTestModel.employee))
    #expect(try check("$people.@sum.salary == 300", g.acme, QueryTestModel.company))
    #expect(try check("ANY $people.name == 'Bob'", g.acme, QueryTestModel.company))
  }

  @Test("an unbound variable, or one bound to the wrong shape, is an error")
  func badBindings() throws {
    let g = Graph()
    let types: [String: QueryType] = ["source": .object(QueryTestModel.addressBook), "limit": .value(.int64)]
    let unbound = queryError {
      _ = try queryHolds("$limit > 1", on: g.taro, in: g.objects, entity: QueryTestModel.addressBook, variables: types)
    }
    #expect(unbound?.kind == .unknownVariable)
    #expect(unbound?.offset == 0)
    let wrong = queryError {
      _ = try queryHolds(
        "age > 1 AND $source.age > 1", on: g.taro, in: g.objects, entity: QueryTestModel.addressBook, variables: types,
        bindings: ["source": .value(.int16(1))])
    }
    #expect(wrong?.kind == .unknownVariable)
    #expect(wrong?.offset == 12)
  }

  @Test("compiled expressions give values, collections and objects")
  func expressions() throws {
    let g = Graph()
    let model = QueryTestModel.model
    let variables: [String: QueryType] = ["source": .object(QueryTestModel.addressBook)]
    let bindings: [String: QueryVariable<Int>] = ["source": .object(g.taro)]
    let phone = try CompiledExpression.compile(
      "$source.phone1", entity: QueryTestModel.addressBook, model: model, variables: variables)
    #expect(try phone.evaluate(g.taro, in: g.objects, variables: bindings) == .string("03-1234"))
    let name = try CompiledExpression.compile(
      "concat($source.firstName, ' ', uppercase($source.lastName))", entity: QueryTestModel.addressBook, model: model,
      variables: variables)
    #expect(try name.evaluate(g.taro, in: g.objects, variables: bindings) == .string("Taro YAMADA"))
    let phones = try CompiledExpression.compile(
      "$source.phones", entity: QueryTestModel.addressBook, model: model, variables: variables)
    #expect(try phones.evaluateObjects(g.taro, in: g.objects, variables: bindings).count == 2)
    let source = try CompiledExpression.compile(
      "$source", entity: QueryTestModel.addressBook, model: model, variables: variables)
    #expect(try source.evaluateObjects(g.landline, in: g.objects, variables: bindings) == [g.taro])
    let names = try CompiledExpression.compile("employees.name", entity: QueryTestModel.company, model: model)
    #expect(try names.evaluateValues(g.acme, in: g.objects) == [.string("Ann"), .string("Bob"), .string("Cy")])
    let literal = try CompiledExpression.compile("2", entity: QueryTestModel.phoneBook, model: model)
    #expect(try literal.evaluate(g.landline, in: g.objects) == .int64(2))
    #expect(try literal.evaluateValues(g.landline, in: g.objects) == [.int64(2)])
    let employees = try CompiledExpression.compile("employees", entity: QueryTestModel.company, model: model)
    #expect(queryError { _ = try employees.evaluate(g.acme, in: g.objects) }?.kind == .wrongResultShape)
    #expect(queryError { _ = try names.evaluateObjects(g.acme, in: g.objects) }?.kind == .wrongResultShape)
  }

  @Test("errors from the object source propagate")
  func sourceErrors() throws {
    struct Broken: QueryObjectSource, Error {
      func value(of object: Int, attribute: PropertyID) throws -> Value? { throw self }
      func related(to object: Int, relationship: PropertyID) throws -> [Int] { throw self }
    }
    let p = try CompiledPredicate.compile("age > 1", entity: QueryTestModel.addressBook, model: QueryTestModel.model)
    #expect(throws: Broken.self) { try p.evaluate(0, in: Broken()) }
    let q = try CompiledPredicate.compile(
      "phones.@count > 1", entity: QueryTestModel.addressBook, model: QueryTestModel.model)
    #expect(throws: Broken.self) { try q.evaluate(0, in: Broken()) }
  }

  @Test("one compiled predicate serves many threads")
  func concurrentEvaluation() async throws {
    struct Rows: QueryObjectSource, Sendable {
      let names: [String]
      func value(of object: Int, attribute: PropertyID) -> Value? { .string(names[object]) }
      func related(to object: Int, relationship: PropertyID) -> [Int] { [] }
    }
    let rows = Rows(names: (0..<1000).map { $0 % 2 == 0 ? "Tanaka \($0)" : "Sato \($0)" })
    let p = try CompiledPredicate.compile(
      "firstName MATCHES[c] 'tanaka [0-9]+' AND firstName LIKE '*0*' OR firstName BEGINSWITH[cd] 'SATO 1'",
      entity: QueryTestModel.addressBook, model: QueryTestModel.model)
    let expected = try (0..<1000).filter { try p.evaluate($0, in: rows) }.count
    let counts = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<4 {
        group.addTask { try (0..<1000).filter { try p.evaluate($0, in: rows) }.count }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(counts == [expected, expected, expected, expected])
  }
}
