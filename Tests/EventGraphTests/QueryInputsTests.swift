import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("What a compiled query reads")
struct QueryInputsTests {
  let model = QueryTestModel.model
  var book: Entity { QueryTestModel.entity("AddressBook") }
  func ids(_ names: String...) -> Set<PropertyID> { Set(names.compactMap { book.property(named: $0)?.id }) }

  func predicate(_ text: String) throws -> Set<PropertyID>? {
    try CompiledPredicate.compile(text, entity: book.id, model: model, variables: ["source": .object(book.id)])
      .ownAttributes(selves: ["source"])
  }

  func expression(_ text: String) throws -> Set<PropertyID>? {
    try CompiledExpression.compile(text, entity: book.id, model: model, variables: ["source": .object(book.id)])
      .ownAttributes(selves: ["source"])
  }

  @Test("own attributes, directly or through a variable bound to the object itself")
  func ownAttributes() throws {
    #expect(try predicate("phone1 != nil || phone2 != nil") == ids("phone1", "phone2"))
    #expect(try predicate("phone1 != nil AND phone1 != ''") == ids("phone1"))
    #expect(try predicate("$source.age > 3 AND lastName BEGINSWITH[c] 'ta'") == ids("age", "lastName"))
    #expect(try predicate("TRUEPREDICATE") == [])
    #expect(try expression("$source.phone1") == ids("phone1"))
    #expect(try expression("concat(uppercase($source.firstName), ' ', lastName)") == ids("firstName", "lastName"))
    #expect(try expression("coalesce($source.phone1, $source.phone2, 'none')") == ids("phone1", "phone2"))
    #expect(try expression("1") == [])
  }

  @Test("anything else (relationships, other objects, now() and uuid()) is not known")
  func readsMore() throws {
    #expect(try predicate("phones.@count > 0") == nil)
    #expect(try predicate("ANY phones.phoneNumber BEGINSWITH '090'") == nil)
    #expect(try expression("$source.phones") == nil)
    #expect(try expression("now()") == nil)
    #expect(try expression("uuid()") == nil)
    #expect(try predicate("phone1 != nil OR now() != nil") == nil)
    // A variable bound to something other than the object itself.
    let other = try CompiledPredicate.compile(
      "$other.age > 3", entity: book.id, model: model, variables: ["other": .object(book.id)])
    #expect(other.ownAttributes(selves: ["source"]) == nil)
    #expect(other.ownAttributes(selves: ["other"]) == ids("age"))
  }

  @Test("an expression that is the object itself")
  func isSelf() throws {
    let source = try CompiledExpression.compile(
      "$source", entity: book.id, model: model, variables: ["source": .object(book.id)])
    #expect(source.isSelf(selves: ["source"]))
    #expect(!source.isSelf(selves: []))
    let phones = try CompiledExpression.compile(
      "$source.phones", entity: book.id, model: model, variables: ["source": .object(book.id)])
    #expect(!phones.isSelf(selves: ["source"]))
  }
}
