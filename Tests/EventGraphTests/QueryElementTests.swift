import Foundation
import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("Query: [FIRST], [LAST] and [n] of an ordered to-many relationship")
struct QueryElementTests {
  /// Zen employs ann (salary 10) then cy (30), in that order; Acme employs bob (20); dee
  /// works nowhere (``FetchVariablesTests/store()``).
  @Test("the element at a place of an ordered to-many, as NSArray's firstObject, lastObject and index give")
  func elements() throws {
    let (store, dir, _) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    for (entity, predicate, expected) in [
      ("Company", "employees[FIRST].name == 'ann'", ["Zen"]),
      ("Company", "employees[LAST].name == 'cy'", ["Zen"]),
      // One employee is both the first and the last.
      ("Company", "employees[FIRST].name == 'bob' AND employees[LAST].name == 'bob'", ["Acme"]),
      ("Company", "employees[0].name == 'ann'", ["Zen"]),
      ("Company", "employees[1].name == 'cy'", ["Zen"]),
      ("Company", "employees[first].salary > 15", ["Acme"]),
      ("Company", "employees[LAST].salary > 15", ["Acme", "Zen"]),
      // Past the end there is no object: nil, never a trap.
      ("Company", "employees[1] == nil", ["Acme"]),
      ("Company", "employees[1] != nil", ["Zen"]),
      ("Company", "employees[2] == nil", ["Acme", "Zen"]),
      ("Company", "employees[9223372036854775807].name == 'ann'", []),
      ("Company", "employees[1].name == nil", ["Acme"]),
      // Key paths go on from the element, through to-one and to-many steps.
      ("Company", "employees[FIRST].company.name == 'Zen'", ["Zen"]),
      ("Company", "employees[LAST].reports.@count == 0", ["Acme", "Zen"]),
      ("Employee", "company.employees[FIRST].name == 'ann'", ["ann", "cy"]),
      // dee has no company: nil == nil, as in Foundation.
      ("Employee", "company.employees[LAST].salary == salary", ["bob", "cy", "dee"]),
      ("Employee", "company.employees[1] == nil", ["bob", "dee"]),
    ] as [(String, String, [String])] {
      let r = try store.fetch(entity, where: predicate, sortedBy: [.init("name")])
      #expect(try FetchVariablesTests.names(store, r) == expected, "\(predicate)")
    }
  }

  @Test("in a list long enough to keep counts, every place answers the member an array has there")
  func elementsOfALongList() throws {
    let (store, dir) = try makeStore(try Fixtures.company())
    defer { removeDirectory(dir) }
    var g = SeededGenerator(seed: 7)
    var names: [String] = []
    let company = try store.write { tx in
      let c = try tx.insert("Company", ["name": .string("Long")])
      for i in 0..<(OrderRanks.threshold * 2) {
        let p = g.int(0...names.count)
        try tx.link(c, "employees", try tx.insert("Employee", ["name": .string("e\(i)")]), at: p)
        names.insert("e\(i)", at: p)
      }
      return c
    }.value!
    let found = { (predicate: String) in try store.fetch("Company", where: predicate).objects }
    for n in stride(from: 0, to: names.count, by: 17) + [names.count - 1] {
      #expect(try found("employees[\(n)].name == '\(names[n])'") == [company], "employees[\(n)]")
      let other = names[(n + 1) % names.count]
      #expect(try found("employees[\(n)].name == '\(other)'").isEmpty, "employees[\(n)] is not \(other)")
    }
    #expect(try found("employees[FIRST].name == '\(names[0])'") == [company])
    #expect(try found("employees[LAST].name == '\(names[names.count - 1])'") == [company])
    #expect(try found("employees[\(names.count)] == nil") == [company])
  }

  @Test("an expression ending at an element answers that one object")
  func expression() throws {
    let (store, dir, ids) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    let model = try Fixtures.company()
    let company = try #require(model.entity(named: "Company"))
    let name = try CompiledExpression.compile("employees[LAST].name", entity: company.id, model: model)
    #expect(name.description == "employees[LAST].name")
    let zen = try #require(ids["zen"])
    let (value, first) = try store.read { s in
      let source = ProjectionSource(reader: s.reader)
      let first = try CompiledExpression.compile("employees[FIRST]", entity: company.id, model: model)
      return (try name.evaluate(zen, in: source), try first.evaluateObjects(zen, in: source))
    }
    #expect(value == .string("cy"))
    #expect(first == [try #require(ids["ann"])])
  }

  @Test("the forms print back as written and parse to the same tree")
  func roundTrip() throws {
    for text in [
      "employees[FIRST].name == \"a\"", "employees[LAST] == nil", "employees[0].salary > 1",
      "company.employees[12].reports.@count == 2", "#ANY[FIRST].name == nil",
    ] {
      let p = try QueryPredicate(parsing: text)
      #expect(p.description == text)
      #expect(try QueryPredicate(parsing: p.description) == p)
    }
    #expect(try QueryPredicate(parsing: "a[first] == 1").description == "a[FIRST] == 1")
  }

  @Test("where an element cannot be taken, the error names the relationship and the place")
  func refused() throws {
    let model = try Fixtures.company()
    let cases: [(entity: String, text: String, offset: Int, words: [String])] = [
      // Unordered: Foundation's answer on an NSSet is undefined.
      ("Company", "departments[FIRST].name == 'x'", 11, ["Company.departments", "unordered"]),
      ("Employee", "reports[0] == nil", 7, ["Employee.reports", "unordered"]),
      // A to-one relationship, an attribute, an aggregate.
      ("Employee", "company[LAST].name == 'x'", 7, ["Employee.company", "to-one"]),
      ("Company", "name[0] == 'x'", 4, ["Company.name", "attribute"]),
      // After an aggregate a bracket is not read at all.
      ("Company", "employees.@count[0] == 1", 16, ["'['"]),
      // From a path that is already to-many: whose first would it be?
      ("Department", "companies.employees[FIRST].name == 'x'", 19, ["Company.employees", "already to-many"]),
      ("Company", "employees[FIRST].@count == 1", 17, ["@count", "to-many"]),
      // Not an index.
      ("Company", "employees[-1] == nil", 10, ["SIZE, FIRST, LAST or an integer"]),
      ("Company", "employees[MIDDLE] == nil", 10, ["SIZE, FIRST, LAST or an integer"]),
      ("Company", "employees[1.5] == nil", 10, ["SIZE, FIRST, LAST or an integer"]),
      ("Company", "employees[FIRST == nil", 16, ["']'"]),
      ("Company", "employees[99999999999999999999] == nil", 10, ["out of range"]),
    ]
    try Self.expectRefused(cases, model: model)
  }

  /// Each text, compiled for the entity named, is refused at the offset given with a
  /// message holding every word given.
  static func expectRefused(
    _ cases: [(entity: String, text: String, offset: Int, words: [String])], model: Model
  ) throws {
    for (entity, text, offset, words) in cases {
      let e = try #require(model.entity(named: entity))
      #expect {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: model)
      } throws: { error in
        guard let q = error as? QueryError else { return false }
        let message = "\(q)"
        return q.offset == offset && words.allSatisfy { message.contains($0) }
      }
    }
  }
}
