import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// What the query module tells the store an index could serve of a predicate: the
/// interface that replaced the store's reading of the syntax tree.
@Suite struct QueryIndexConditionTests {
  static let model: Model = {
    do {
      return try Model(
        name: "IndexConditions", version: 1,
        entities: [
          EntityDescription(
            name: "Employee",
            attributes: [
              AttributeDescription(name: "name", type: .string, isIndexed: true),
              AttributeDescription(name: "salary", type: .int32, isIndexed: true),
              AttributeDescription(name: "rating", type: .double, isOptional: true, isIndexed: true),
              AttributeDescription(name: "note", type: .string, isOptional: true),
            ],
            relationships: [
              RelationshipDescription(name: "manager", destination: "Employee", inverse: "reports"),
              RelationshipDescription(name: "reports", destination: "Employee", isToMany: true, inverse: "manager"),
            ])
        ])
    } catch {
      preconditionFailure("the index-condition test model is invalid: \(error)")
    }
  }()
  var model: Model { Self.model }
  var employee: Entity {
    guard let e = model.entity(named: "Employee") else { preconditionFailure("no Employee") }
    return e
  }
  var salary: PropertyID { attribute("salary") }
  var name: PropertyID { attribute("name") }
  var rating: PropertyID { attribute("rating") }

  func attribute(_ name: String) -> PropertyID {
    guard let a = employee.attribute(named: name) else { preconditionFailure("Employee has no \(name)") }
    return a.id
  }

  func condition(_ text: String, _ variables: [String: Value] = [:]) throws -> IndexCondition? {
    let types = variables.mapValues { QueryType.value($0.type) }
    let p = try CompiledPredicate.compile(text, entity: employee.id, model: model, variables: types)
    return p.indexCondition(in: employee, variables: variables)
  }

  func point(_ v: Value) -> IndexRange { IndexRange(point: v) }

  @Test("comparisons of an attribute with a constant are ranges of the attribute's own type")
  func comparisons() throws {
    #expect(try condition("salary == 10") == .range(salary, point(.int32(10))))
    #expect(try condition("salary <= 10") == .range(salary, IndexRange(low: nil, high: .int32(10))))
    #expect(try condition("salary > 10") == .range(salary, IndexRange(low: .int32(10), high: nil)))
    #expect(
      try condition("salary BETWEEN {5, 9}") == .range(salary, IndexRange(low: .int32(5), high: .int32(9))))
    #expect(try condition("salary IN {1, 2}") == .points(salary, [.int32(1), .int32(2)]))
    #expect(try condition("name BEGINSWITH 'Ta'") == .prefix(name, "Ta"))
    #expect(try condition("rating >= 2") == .range(rating, IndexRange(low: .double(2), high: nil)))
  }

  @Test("a constant on the left turns the comparison around")
  func constantOnTheLeft() throws {
    #expect(try condition("10 < salary") == .range(salary, IndexRange(low: .int32(10), high: nil)))
    #expect(try condition("10 >= salary") == .range(salary, IndexRange(low: nil, high: .int32(10))))
    #expect(try condition("10 == salary") == .range(salary, point(.int32(10))))
  }

  @Test("a variable is read as its bound value; one that does not convert exactly is no condition")
  func variables() throws {
    #expect(try condition("salary == $s", ["s": .int64(7)]) == .range(salary, point(.int32(7))))
    #expect(try condition("salary == $s", ["s": .double(1.5)]) == nil)
    #expect(try condition("salary == 99999999999") == nil)
  }

  @Test("what an index cannot serve is no condition")
  func unserved() throws {
    #expect(try condition("name ==[c] 'taro'") == nil)
    #expect(try condition("manager.salary == 3") == nil)
    #expect(try condition("salary + 1 == 3") == nil)
    #expect(try condition("name CONTAINS 'a'") == nil)
    #expect(try condition("note == 'a'") == nil, "an attribute without an index")
  }

  @Test("AND keeps the clauses that are conditions; OR needs every clause to be one")
  func joins() throws {
    #expect(
      try condition("salary == 1 AND name CONTAINS 'a' AND name BEGINSWITH 'x'")
        == .and([.range(salary, point(.int32(1))), .prefix(name, "x")]))
    #expect(try condition("salary == 1 AND name CONTAINS 'a'") == .range(salary, point(.int32(1))))
    #expect(
      try condition("salary == 1 OR name == 'a'")
        == .or([.range(salary, point(.int32(1))), .range(name, point(.string("a")))]))
    #expect(try condition("salary == 1 OR name CONTAINS 'a'") == nil)
    #expect(try condition("NOT salary == 1") == nil)
  }
}
