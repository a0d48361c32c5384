import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

@Suite("Query: SUBQUERY(collection, $x, predicate)")
struct QuerySubqueryTests {
  /// Zen employs ann (salary 10) then cy (30); Acme employs bob (20); dee works nowhere and
  /// earns nothing (``FetchVariablesTests/store()``).
  @Test("the elements for which the predicate holds, counted, aggregated and quantified over")
  func answers() throws {
    let (store, dir, _) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    for (entity, predicate, expected) in [
      ("Company", "SUBQUERY(employees, $e, $e.salary > 5).@count >= 2", ["Zen"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary > 25).@count == 0", ["Acme"]),
      ("Company", "SUBQUERY(employees, $e, $e.name BEGINSWITH 'a' OR $e.salary == 20).@count == 1", ["Acme", "Zen"]),
      // The outer object's key paths inside.
      ("Company", "SUBQUERY(employees, $e, $e.salary > 15 AND name == 'Zen').@count == 1", ["Zen"]),
      ("Company", "SUBQUERY(employees, $e, $e.company.name == name).@count == employees.@count", ["Acme", "Zen"]),
      // Where a to-many collection of objects can stand.
      ("Company", "ANY SUBQUERY(employees, $e, $e.salary > 15).name == 'cy'", ["Zen"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary > 5).@sum.salary == 40", ["Zen"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary < 25).salary.@max == 20", ["Acme"]),
      // Nested: the employees exactly one colleague earns less than.
      (
        "Company",
        "SUBQUERY(employees, $e, SUBQUERY($e.company.employees, $f, $f.salary < $e.salary).@count == 1).@count == 1",
        ["Zen"]
      ),
      ("Employee", "SUBQUERY(reports, $r, TRUEPREDICATE).@count == 0", ["ann", "bob", "cy", "dee"]),
      ("Employee", "SUBQUERY(company.employees, $c, $c.salary > salary).@count == 1", ["ann"]),
      ("Employee", "SUBQUERY(company.employees, $c, $c != nil).@count == 2", ["ann", "cy"]),
      // Served by Company.name's index, the rest evaluated on each candidate.
      ("Company", "name == 'Zen' AND SUBQUERY(employees, $e, $e.salary > 15).@count == 1", ["Zen"]),
      ("Company", "name >= 'A' AND SUBQUERY(employees, $e, $e.salary > 15).@count == 1", ["Acme", "Zen"]),
      ("Company", "name >= 'A' AND employees[LAST].name == 'cy'", ["Zen"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary > 15).@count == 1 AND employees[FIRST].name == 'bob'", ["Acme"]),
    ] as [(String, String, [String])] {
      let r = try store.fetch(entity, where: predicate, sortedBy: [.init("name")])
      #expect(try FetchVariablesTests.names(store, r) == expected, "\(predicate)")
      // The fetch (index-served or not) agrees with evaluating every object.
      try store.read { s in
        let e = try #require(s.model.entity(named: entity))
        let compiled = try CompiledPredicate.compile(predicate, entity: e.id, model: s.model)
        let source = ProjectionSource(reader: s.reader)
        let scanned = try s.objects(of: e.id).filter { try compiled.evaluate($0, in: source) }
        let fetched = try s.fetch(entity, where: predicate)
        #expect(Set(fetched.objects) == Set(scanned), "\(predicate)")
        #expect((fetched.index != nil) == predicate.hasPrefix("name "), "\(predicate)")
      }
    }
  }

  @Test("as an expression, and from a caller's object variable")
  func expression() throws {
    let (store, dir, ids) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    let model = try Fixtures.company()
    let employee = try #require(model.entity(named: "Employee"))
    let company = try #require(model.entity(named: "Company"))
    let count = try CompiledExpression.compile(
      "SUBQUERY($c.employees, $e, $e.salary > salary).@count", entity: employee.id, model: model,
      variables: ["c": .init(.object(company.id))])
    let kept = try CompiledExpression.compile(
      "SUBQUERY(company.employees, $e, $e.salary >= 10)", entity: employee.id, model: model)
    let (ann, zen, cy) = (try #require(ids["ann"]), try #require(ids["zen"]), try #require(ids["cy"]))
    let (above, objects) = try store.read { s in
      let source = ProjectionSource(reader: s.reader)
      return (
        try count.evaluate(ann, in: source, variables: ["c": .object(zen)]),
        try kept.evaluateObjects(ann, in: source)
      )
    }
    #expect(above == .int64(1))  // cy earns more than ann
    #expect(objects == [ann, cy])  // in the relationship's order
  }

  @Test("the form prints back as written and parses to the same tree")
  func roundTrip() throws {
    for text in [
      "SUBQUERY(employees, $e, $e.salary > 15).@count == 1",
      "ANY SUBQUERY(items, $i, $i.price > 250 AND NOT $i.name == \"x\").name == \"a\"",
      "SUBQUERY(a.b, $x, SUBQUERY($x.c, $y, $y.d == $x.d).@count > 0).@avg.e < -SUBQUERY(f, $z, TRUEPREDICATE).@count",
    ] {
      let p = try QueryPredicate(parsing: text)
      #expect(p.description == text)
      #expect(try QueryPredicate(parsing: p.description) == p)
    }
    #expect(
      try QueryPredicate(parsing: "subquery(items,$i,$i.price>1).@count=2").description
        == "SUBQUERY(items, $i, $i.price > 1).@count == 2")
  }

  @Test("bad subqueries are refused naming what and where")
  func refused() throws {
    let model = try Fixtures.company()
    let cases: [(entity: String, text: String, offset: Int, words: [String])] = [
      ("Employee", "SUBQUERY(company, $c, $c.name == 'x').@count == 1", 9, ["to-many"]),
      ("Company", "SUBQUERY(employees, $e, $x.salary > 1).@count == 1", 24, ["$x"]),
      ("Company", "SUBQUERY(employees, $e, salary > 1).@count == 1", 24, ["salary"]),
      ("Company", "SUBQUERY(employees, $e).@count == 1", 0, ["SUBQUERY takes"]),
      ("Company", "SUBQUERY(employees, e, e.salary > 1).@count == 1", 20, ["$variable"]),
      ("Company", "SUBQUERY(1, $e, TRUEPREDICATE).@count == 1", 9, ["to-many key path"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary > 1", 37, ["')'"]),
      ("Company", "SUBQUERY(employees, $e, $e.salary > 1).@cont == 1", 39, ["count"]),
    ]
    try QueryElementTests.expectRefused(cases, model: model)
    // Without a use after it, the collection cannot be compared.
    let company = try #require(model.entity(named: "Company"))
    #expect(throws: QueryError.self) {
      _ = try CompiledPredicate.compile(
        "SUBQUERY(employees, $e, $e.salary > 1) == 1", entity: company.id, model: model)
    }
    // A variable of the caller's is not hidden.
    #expect {
      _ = try CompiledPredicate.compile(
        "SUBQUERY(employees, $e, $e.salary > 1).@count == 1", entity: company.id, model: model,
        variables: ["e": .init(.attribute(.int64))])
    } throws: { error in "\(error)".contains("already a variable") }
  }
}
