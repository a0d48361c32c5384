import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// `name.length` answers as Foundation's NSString does (UTF-16 code units), binary data's
/// in bytes; `length(name)` keeps counting characters.
@Suite("Query: the .length key path")
struct QueryLengthTests {
  @Test(
    "name.length counts UTF-16 code units, length(name) characters",
    arguments: [
      ("a", 1, 1), ("桃太郎", 3, 3), ("😀", 2, 1), ("e\u{301}", 2, 1), ("", 0, 0), ("🇯🇵x", 5, 2),
    ])
  func lengths(_ text: String, _ utf16: Int, _ characters: Int) throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let o = try store.write { tx in
      let c = try tx.insert("Company", ["name": .string(text), "logo": .binary([1, 2, 3])])
      let e = try tx.insert("Employee", ["name": .string(text)])
      try tx.setRelationship(e, "company", to: c)
      return e
    }.value!
    for (predicate, expected) in [
      ("name.length == \(utf16)", true), ("name.length == \(utf16 + 1)", false),
      ("length(name) == \(characters)", true), ("company.name.length == \(utf16)", true),
      ("company.logo.length == 3", true), ("company.name.length > \(utf16)", false),
    ] {
      let found = try store.fetch("Employee", where: predicate).objects
      #expect(found == (expected ? [o] : []), "\(predicate) on '\(text)'")
    }
  }

  @Test("length after a number, a relationship or a to-many path is refused where it stands")
  func refused() throws {
    let model = try Fixtures.company()
    let e = try #require(model.entity(named: "Employee"))
    for (text, offset) in [("salary.length > 1", 7), ("company.employees.name.length > 1", 23)] {
      #expect(throws: QueryError.self, "\(text)") {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: model)
      }
      do {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: model)
      } catch {
        #expect(error.offset == offset, "\(text): \(error)")
      }
    }
    #expect(throws: QueryError.self) {
      _ = try CompiledPredicate.compile("manager.length > 1", entity: e.id, model: model)
    }
  }

  @Test("FUNCTION(receiver, 'method') answers Foundation's methods: length, uppercaseString, lowercaseString")
  func function() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    let o = try store.write { tx in try tx.insert("Employee", ["name": .string("Momo😀")]) }.value!
    for predicate in [
      "FUNCTION(name, 'length') == 6", "function(name, \"length\") == name.length",
      "FUNCTION(name, 'uppercaseString') == 'MOMO😀'", "FUNCTION(name, 'lowercaseString') BEGINSWITH 'momo'",
    ] {
      #expect(try store.fetch("Employee", where: predicate).objects == [o], "\(predicate)")
    }
    // It prints as the function that answers it, and reads back the same.
    let e = try #require(try Fixtures.company().entity(named: "Employee"))
    let compiled = try CompiledPredicate.compile(
      "FUNCTION(name, 'length') > 2", entity: e.id, model: try Fixtures.company())
    #expect(compiled.description == "utf16length(name) > 2")
    for (text, message) in [
      ("FUNCTION(name, 'size') > 2", "no method 'size' here (length, lowercaseString, uppercaseString)"),
      ("FUNCTION(name, length) > 2", "FUNCTION's method is named by a string"),
      ("FUNCTION(name) > 2", "FUNCTION takes a receiver and a method name, found 1"),
      ("FUNCTION() > 2", "FUNCTION takes a receiver and a method name"),
    ] {
      #expect(throws: QueryError.self, "\(text)") {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: try Fixtures.company())
      }
      do {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: try Fixtures.company())
      } catch {
        #expect("\(error)".contains(message), "\(text): \(error)")
      }
    }
  }
}
