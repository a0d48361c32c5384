import Foundation
import Testing

@testable import EventGraph

@Suite("Fetch: $variables bound from Swift, sorting by key paths through to-one relationships")
struct FetchVariablesTests {
  /// Two companies, four employees (one without a company), salaries 10, 20, 30 and none.
  static func store() throws -> (EventStore, String, [String: ObjectID]) {
    let (store, dir) = try makeStore(try Fixtures.company())
    let ids = try #require(
      store.write { tx -> [String: ObjectID] in
        let zen = try tx.insert(
          "Company", ["name": .string("Zen"), "founded": .date(Date(timeIntervalSince1970: 1_000_000_000))])
        let acme = try tx.insert(
          "Company", ["name": .string("Acme"), "founded": .date(Date(timeIntervalSince1970: 2_000_000_000))])
        var ids = ["zen": zen, "acme": acme]
        for (name, salary, company) in [
          ("ann", 10, zen), ("bob", 20, acme), ("cy", 30, zen), ("dee", nil, nil),
        ] as [(String, Int?, ObjectID?)] {
          let e = try tx.insert("Employee", ["name": .string(name), "salary": salary.map { .decimal(Decimal($0)) }])
          if let company { try tx.setRelationship(e, "company", to: company) }
          ids[name] = e
        }
        return ids
      }.value)
    return (store, dir, ids)
  }

  static func names(_ store: EventStore, _ result: FetchResult) throws -> [String] {
    try store.read { s in try result.objects.map { try s.value($0, "name")?.stringValue ?? "?" } }
  }

  @Test("a predicate's $variables take the values given, typed by them")
  func variables() throws {
    let (store, dir, _) = try Self.store()
    defer { removeDirectory(dir) }
    let rich = try store.fetch(
      "Employee", where: "salary >= $min", variables: ["min": .int64(20)], sortedBy: [.init("name")])
    #expect(try Self.names(store, rich) == ["bob", "cy"])
    let named = try store.fetch(
      "Employee", where: "name IN {$a, $b}", variables: ["a": .string("ann"), "b": .string("dee")])
    #expect(try Self.names(store, named).sorted() == ["ann", "dee"])
    // An absolute date through a variable.
    let old = try store.fetch(
      "Company", where: "founded < $d", variables: ["d": .date(Date(timeIntervalSince1970: 1_500_000_000))])
    #expect(try Self.names(store, old) == ["Zen"])
    // Through a relationship, and compared with nil.
    let zen = try store.fetch("Employee", where: "company.name == $c", variables: ["c": .string("Zen")])
    #expect(try Self.names(store, zen).sorted() == ["ann", "cy"])
  }

  @Test("a variable left unbound, or of a type that does not compare, is refused naming it and where")
  func badVariables() throws {
    let (store, dir, _) = try Self.store()
    defer { removeDirectory(dir) }
    #expect {
      _ = try store.fetch("Employee", where: "salary >= $min AND salary < $max", variables: ["min": .int64(1)])
    } throws: { e in
      guard let q = e as? QueryError else { return false }
      return q.kind == .unknownVariable && "\(q)".contains("$max") && q.offset == 28
    }
    #expect(throws: QueryError.self) {
      _ = try store.fetch("Employee", where: "salary >= $min", variables: ["min": .string("ten")])
    }
  }

  @Test("sort keys follow to-one relationships; an empty one sorts as no value")
  func keyPathSort() throws {
    let (store, dir, _) = try Self.store()
    defer { removeDirectory(dir) }
    let up = try store.fetch("Employee", sortedBy: [.init("company.name"), .init("name", ascending: false)])
    #expect(try Self.names(store, up) == ["dee", "bob", "cy", "ann"])
    let down = try store.fetch("Employee", sortedBy: [.init("company.name", ascending: false), .init("name")])
    #expect(try Self.names(store, down) == ["ann", "cy", "bob", "dee"])
    let byFounded = try store.fetch("Employee", sortedBy: [.init("company.founded"), .init("name")])
    #expect(try Self.names(store, byFounded) == ["dee", "ann", "cy", "bob"])
    // A to-many step on the way, an unknown name, a relationship at the end.
    #expect(throws: StoreError.self) { _ = try store.fetch("Employee", sortedBy: [.init("company.employees.name")]) }
    do {
      _ = try store.fetch("Company", sortedBy: [.init("employees.name")])
      Issue.record("a to-many sort key was accepted")
    } catch let e as StoreError {
      #expect(e.code == .invalidSortKey)
      #expect(
        e.description
          == "cannot sort Company by 'employees.name': Company.employees is to-many; a sort key follows to-one relationships"
      )
    }
    let misspelt = #expect(throws: StoreError.unknownProperty(entity: "Company", property: "nmae", nearest: "name")) {
      _ = try store.fetch("Employee", sortedBy: [.init("company.nmae")])
    }
    #expect(misspelt?.description == "entity 'Company' has no property 'nmae' (did you mean 'name'?)")
    #expect(throws: StoreError.notAnAttribute(entity: "Employee", property: "company")) {
      _ = try store.fetch("Employee", sortedBy: [.init("company")])
    }
  }
}
