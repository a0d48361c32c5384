import Foundation
import Testing

@testable import EventGraph

@Suite("Query: [SIZE] after a to-many key path")
struct QuerySizeTests {
  @Test("employees[SIZE] is employees.@count; a bracket that is not closed is refused naming where")
  func size() throws {
    let (store, dir, _) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    for (predicate, expected) in [
      ("employees[SIZE] == 2", ["Zen"]), ("employees[size] == employees.@count", ["Acme", "Zen"]),
      ("employees[SIZE] > 1 OR name == 'Acme'", ["Acme", "Zen"]), ("departments[SIZE] == 0", ["Acme", "Zen"]),
    ] {
      let r = try store.fetch("Company", where: predicate, sortedBy: [.init("name")])
      #expect(try FetchVariablesTests.names(store, r) == expected, "\(predicate)")
    }
    let e = try #require(try Fixtures.company().entity(named: "Company"))
    let compiled = try CompiledPredicate.compile("employees[SIZE] > 1", entity: e.id, model: try Fixtures.company())
    #expect(compiled.description == "employees.@count > 1")
    #expect {
      _ = try CompiledPredicate.compile("employees[SIZE > 1", entity: e.id, model: try Fixtures.company())
    } throws: { error in
      guard let q = error as? QueryError else { return false }
      return q.offset == 15 && "\(q)".contains("']'")
    }
    // [SIZE] of a to-one is refused as @count of a to-one is.
    let employee = try #require(try Fixtures.company().entity(named: "Employee"))
    #expect(throws: QueryError.self) {
      _ = try CompiledPredicate.compile("company[SIZE] == 1", entity: employee.id, model: try Fixtures.company())
    }
  }
}
