import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// The models the query tests run on: the seed models (AddressBook/PhoneBook,
/// Company/Employee) and a `Sample` entity with one optional attribute of every type.
enum QueryTestModel {
  static let model: Model = {
    do {
      return try Model(
        name: "QueryTests", version: 1,
        entities: [
          EntityDescription(
            name: "AddressBook",
            attributes: [
              AttributeDescription(name: "firstName", type: .string),
              AttributeDescription(name: "lastName", type: .string),
              AttributeDescription(name: "phone1", type: .string, isOptional: true),
              AttributeDescription(name: "phone2", type: .string, isOptional: true),
              AttributeDescription(name: "age", type: .int16, isOptional: true),
            ],
            relationships: [
              RelationshipDescription(
                name: "phones", destination: "PhoneBook", isToMany: true, inverse: "addressBook",
                deleteRule: .cascade)
            ]),
          EntityDescription(
            name: "PhoneBook",
            attributes: [
              AttributeDescription(name: "phoneNumber", type: .string),
              AttributeDescription(name: "type", type: .int16, defaultValue: .int16(0)),
            ],
            relationships: [
              RelationshipDescription(name: "addressBook", destination: "AddressBook", inverse: "phones")
            ]),
          EntityDescription(
            name: "Company",
            attributes: [
              AttributeDescription(name: "name", type: .string),
              AttributeDescription(name: "founded", type: .date, isOptional: true),
            ],
            relationships: [
              RelationshipDescription(
                name: "employees", destination: "Employee", isToMany: true, isOrdered: true, inverse: "company")
            ]),
          EntityDescription(
            name: "Employee",
            attributes: [
              AttributeDescription(name: "name", type: .string),
              AttributeDescription(name: "salary", type: .int32),
              AttributeDescription(name: "bonus", type: .decimal, isOptional: true),
              AttributeDescription(name: "rating", type: .double, isOptional: true),
              AttributeDescription(name: "hired", type: .date, isOptional: true),
            ],
            relationships: [
              RelationshipDescription(name: "manager", destination: "Employee", inverse: "reports"),
              RelationshipDescription(name: "reports", destination: "Employee", isToMany: true, inverse: "manager"),
              RelationshipDescription(name: "company", destination: "Company", inverse: "employees"),
            ]),
          EntityDescription(
            name: "Sample",
            attributes: [
              AttributeDescription(name: "s", type: .string, isOptional: true),
              AttributeDescription(name: "t", type: .string, isOptional: true),
              AttributeDescription(name: "i16", type: .int16, isOptional: true),
              AttributeDescription(name: "i32", type: .int32, isOptional: true),
              AttributeDescription(name: "i64", type: .int64, isOptional: true),
              AttributeDescription(name: "d", type: .double, isOptional: true),
              AttributeDescription(name: "f", type: .float, isOptional: true),
              AttributeDescription(name: "dec", type: .decimal, isOptional: true),
              AttributeDescription(name: "b", type: .boolean, isOptional: true),
              AttributeDescription(name: "dt", type: .date, isOptional: true),
              AttributeDescription(name: "u", type: .uuid, isOptional: true),
              AttributeDescription(name: "bin", type: .binary, isOptional: true),
              AttributeDescription(name: "link", type: .uri, isOptional: true),
            ]),
        ])
    } catch {
      preconditionFailure("the query test model is invalid: \(error)")
    }
  }()

  static func entity(_ name: String) -> Entity {
    guard let e = model.entity(named: name) else { preconditionFailure("no entity \(name)") }
    return e
  }

  static var addressBook: EntityID { entity("AddressBook").id }
  static var phoneBook: EntityID { entity("PhoneBook").id }
  static var company: EntityID { entity("Company").id }
  static var employee: EntityID { entity("Employee").id }
  static var sample: EntityID { entity("Sample").id }
}

/// An in-memory object graph: objects are numbers, values and links are set by name.
final class QueryMemoryObjects: QueryObjectSource {
  private var entities: [EntityID] = []
  private var values: [[PropertyID: Value]] = []
  private var links: [[PropertyID: [Int]]] = []
  /// How many times the evaluator read an attribute (to check short-circuits).
  private(set) var reads = 0

  /// Adds an object of `entity` with the given attribute values.
  @discardableResult
  func insert(_ entity: String, _ attributes: [String: Value?] = [:]) -> Int {
    let e = QueryTestModel.entity(entity)
    var row: [PropertyID: Value] = [:]
    for (name, value) in attributes {
      guard let a = e.attribute(named: name) else { preconditionFailure("\(entity) has no \(name)") }
      row[a.id] = value
    }
    entities.append(e.id)
    values.append(row)
    links.append([:])
    return entities.count - 1
  }

  /// Links `object` to `targets` through `relationship` (and the inverse back).
  func link(_ object: Int, _ relationship: String, _ targets: [Int]) {
    guard let entity = QueryTestModel.model.entity(entities[object]),
      let r = entity.relationship(named: relationship)
    else { preconditionFailure("no relationship \(relationship)") }
    links[object][r.id, default: []] += targets
    guard let inverse = r.inverse else { return }
    for t in targets { links[t][inverse, default: []].append(object) }
  }

  func value(of object: Int, attribute: PropertyID) throws -> Value? {
    reads += 1
    return values[object][attribute]
  }

  func related(to object: Int, relationship: PropertyID) throws -> [Int] {
    links[object][relationship] ?? []
  }
}

/// Compiles and evaluates in one step, for tables of cases.
func queryHolds(
  _ text: String, on object: Int, in objects: QueryMemoryObjects, entity: EntityID = QueryTestModel.sample,
  variables: [String: QueryType] = [:], bindings: [String: QueryVariable<Int>] = [:]
) throws -> Bool {
  let p = try CompiledPredicate.compile(text, entity: entity, model: QueryTestModel.model, variables: variables)
  return try p.evaluate(object, in: objects, variables: bindings)
}

/// The error `body` throws, as a `QueryError`.
func queryError(_ body: () throws -> Void) -> QueryError? {
  do {
    try body()
    return nil
  } catch let error as QueryError {
    return error
  } catch {
    return nil
  }
}
