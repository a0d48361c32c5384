import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// Foundation's `CAST(value, 'NSDate')` and `CAST(value, 'NSNumber')`: absolute dates in a
/// predicate, from ISO 8601 text or seconds since Foundation's reference date (2001-01-01).
@Suite("Query: CAST to dates and numbers")
struct QueryCastTests {
  @Test("CAST gives absolute dates and numbers, as Foundation reads them")
  func casts() throws {
    let (store, dir, _) = try FetchVariablesTests.store()
    defer { removeDirectory(dir) }
    // Zen was founded at 1e9 s after 1970 (2001-09-09), Acme at 2e9 (2033-05-18).
    for (predicate, expected) in [
      ("founded < CAST('2020-01-01T00:00:00Z', 'NSDate')", ["Zen"]),
      ("founded > CAST('2020-01-01T09:00:00+09:00', 'NSDate')", ["Acme"]),
      ("founded > CAST(0, 'NSDate')", ["Acme", "Zen"]),  // 2001-01-01T00:00:00Z
      ("founded < CAST(10000000, 'NSDate')", []),  // 2001-04-26
      ("founded < CAST(21686400, 'NSDate')", []),  // 2001-09-09T00:00:00Z, just before Zen
      ("founded < CAST(21693000, 'NSDate')", ["Zen"]),  // 2001-09-09T01:50:00Z, just after
      ("CAST('12', 'NSNumber') == 12 AND name == 'Zen'", ["Zen"]),
      ("date(0) == CAST('2001-01-01T00:00:00Z', 'NSDate') AND name == 'Acme'", ["Acme"]),
    ] {
      let result = try store.fetch("Company", where: predicate, sortedBy: [.init("name")])
      #expect(try FetchVariablesTests.names(store, result) == expected, "\(predicate)")
    }
    let rich = try store.fetch("Employee", where: "salary > CAST('15', 'NSNumber')", sortedBy: [.init("name")])
    #expect(try FetchVariablesTests.names(store, rich) == ["bob", "cy"])
  }

  @Test("a CAST that cannot be is refused where it stands")
  func refused() throws {
    let model = try Fixtures.company()
    let e = try #require(model.entity(named: "Company"))
    for (text, message) in [
      ("founded < CAST('tomorrow', 'NSDate')", "'tomorrow' is not an ISO 8601 date"),
      ("founded < CAST(1, 'NSString')", "CAST to 'NSString': this language casts to NSDate, NSNumber"),
      ("founded < CAST(1)", "CAST takes a value and a class name, found 1"),
      ("founded < CAST()", "CAST takes a value and a class name"),
      ("founded < CAST(1, NSDate)", "CAST's class is named by a string"),
      ("CAST('twelve', 'NSNumber') > 1", "'twelve' is not a number"),
      ("founded < CAST(name, 'NSDate') AND CAST(logo, 'NSDate') == nil", "date needs an ISO 8601 string or a number"),
    ] {
      do {
        _ = try CompiledPredicate.compile(text, entity: e.id, model: model)
        Issue.record("\(text) compiled")
      } catch {
        #expect("\(error)".contains(message), "\(text): \(error)")
      }
    }
  }
}
