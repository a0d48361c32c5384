import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// A comparison against a `$variable` is planned with the variable's value, so an index
/// serves `age == $a` as it serves `age == 30`.
@Suite("Fetch: $variables bound before the index is chosen")
struct FetchVariableTests {
  /// A clause with its variables' values: the value's type is random among those the
  /// evaluator compares with the attribute (an `int16` or a double for an `int64` age, ...).
  static func clause(_ g: inout SeededGenerator, _ n: Int) -> (String, [String: Value]) {
    let v = "v\(n)"
    let age = Int64(g.int(-10...29))
    let ageValue: Value = g.pick([
      .int64(age), .int16(Int16(age)), .int32(Int32(age)), .double(Double(age)), .double(Double(age) + 0.5),
    ])
    switch g.int(0...8) {
    case 0: return ("age == $\(v)", [v: ageValue])
    case 1: return ("age >= $\(v)", [v: ageValue])
    case 2: return ("$\(v) > age", [v: ageValue])
    case 3: return ("age BETWEEN {$\(v), 20}", [v: ageValue])
    case 4: return ("name == $\(v)", [v: .string(g.pick(FetchTests.names))])
    case 5: return ("name IN {$\(v), 'apple'}", [v: .string(g.pick(FetchTests.names))])
    case 6:
      return ("score < $\(v)", [v: g.pick([.double(Double(g.int(-100...100)) / 4), .int64(Int64(g.int(-25...25)))])])
    case 7: return ("flag == $\(v)", [v: .boolean(g.chance(0.5))])
    default: return ("name BEGINSWITH $\(v)", [v: .string(g.pick(["", "a", "Ap", "é", "e\u{301}", "桃", "zz"]))])
    }
  }

  @Test("for random predicates with variables, the fetch returns what evaluating every object returns")
  func variablesEqualScan() throws {
    let (store, dir) = try makeStore(try FetchTests.model())
    defer { removeDirectory(dir) }
    try FetchTests.fill(store, seed: 41, count: 400)
    var g = SeededGenerator(seed: 42)
    let usedIndex = try FetchTests.fetchesEqualScans(store, count: 300) {
      let (a, va) = Self.clause(&g, 1)
      let (b, vb) = Self.clause(&g, 2)
      return (g.pick([a, "\(a) AND \(b)", "\(a) OR \(b)", "\(a) AND NOT (\(b))"]), va.merging(vb) { x, _ in x })
    }
    #expect(usedIndex > 100)
  }

  @Test(
    "age == $a reads the index as age == 30 does; a value of another kind is left to the evaluator",
    arguments: [
      (Value.int64(12), "age"), (.int16(12), "age"), (.int32(12), "age"), (.double(12), nil), (.double(12.5), nil),
    ] as [(Value, String?)])
  func equalityUsesIndex(value: Value, index: String?) throws {
    let (store, dir) = try makeStore(try FetchTests.model())
    defer { removeDirectory(dir) }
    try store.write { tx in
      for i in 0..<50 { _ = try tx.insert("Item", ["name": .string("n\(i)"), "age": .int64(Int64(i % 25))]) }
    }
    let literal = try store.fetch("Item", where: "age == 12")
    let r = try store.fetch("Item", where: "age == $a", variables: ["a": value])
    #expect(r.index == index)
    #expect(r.objects == (value == .double(12.5) ? [] : literal.objects) && literal.objects.count == 2)
    #expect(r.examined == (index == nil ? 50 : 2))
  }
}
