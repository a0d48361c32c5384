import Foundation
import Testing

@testable import EventGraph

/// One `Sample` object with every attribute set, and one with none.
private func samples() -> (objects: QueryMemoryObjects, full: Int, empty: Int) {
  let objects = QueryMemoryObjects()
  let full = objects.insert(
    "Sample",
    [
      "s": .string("Tanaka"), "i16": .int16(5), "i32": .int32(7), "i64": .int64(9_007_199_254_740_993),
      "d": .double(1.5), "f": .float(0.5), "dec": .decimal(Decimal(string: "2.5") ?? 0), "b": .boolean(true),
      "dt": .date(Date(timeIntervalSince1970: 1000)),
      "u": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
      "bin": .binary([1, 2, 3]), "link": .uri("https://example.com/a"),
    ])
  let empty = objects.insert("Sample")
  return (objects, full, empty)
}

@Suite("Query evaluation: nil, numbers, arithmetic, functions")
struct QueryEvaluationTests {
  @Test(
    "nil follows NSPredicate's rules",
    arguments: [
      ("s == nil", false), ("s != nil", true), ("t == nil", true), ("t != nil", false), ("nil == nil", true),
      ("nil != nil", false), ("t == 'x'", false), ("t != 'x'", true), ("t < 'x'", false), ("t > 'x'", false),
      ("t <= nil", false), ("t >= t", false), ("s > nil", false), ("s < nil", false), ("t BEGINSWITH 'x'", false),
      ("t ENDSWITH ''", false), ("t CONTAINS 'x'", false), ("s CONTAINS nil", false), ("t LIKE '*'", false),
      ("t MATCHES '.*'", false), ("t ==[c] 'x'", false), ("t !=[c] 'x'", true), ("t IN {'x'}", false),
      ("t IN {'x', nil}", true), ("t BETWEEN {'a', 'z'}", false), ("s BETWEEN {nil, 'z'}", false),
      ("t == s", false), ("t != s", true), ("s == t", false),
    ])
  func nilRules(text: String, expected: Bool) throws {
    let (objects, full, _) = samples()
    #expect(try queryHolds(text, on: full, in: objects) == expected)
  }

  @Test("every attribute of an empty object is nil")
  func emptyObject() throws {
    let (objects, _, empty) = samples()
    for name in ["s", "i16", "i32", "i64", "d", "f", "dec", "b", "dt", "u", "bin", "link"] {
      #expect(try queryHolds("\(name) == nil", on: empty, in: objects))
      #expect(try queryHolds("\(name) != nil", on: empty, in: objects) == false)
    }
    // Arithmetic and functions on nil give nil.
    for text in [
      "i16 + 1 == nil", "-d == nil", "dec * 2 == nil", "dt + 60 == nil", "abs(i32) == nil", "uppercase(s) == nil",
    ] {
      #expect(try queryHolds(text, on: empty, in: objects), "\(text)")
    }
  }

  @Test(
    "numbers compare by value across their types",
    arguments: [
      ("i16 == 5", true), ("i16 == 5.0", true), ("i16 != 5.0", false), ("i16 < 5.5", true), ("i16 > 4.9999", true),
      ("i16 >= 5", true), ("i16 <= 4", false), ("i16 == i16", true), ("i16 < i32", true), ("i32 > i16", true),
      ("i16 == d", false), ("d == 1.5", true), ("d > i16", false), ("f == 0.5", true), ("f < d", true),
      ("dec == 2.5", true), ("dec > i16", false), ("dec < i32", true), ("dec > d", true), ("dec == 2.50", true),
      ("dec BETWEEN {2, 3}", true), ("dec IN {1, 2.5}", true),
      // 2^53 + 1 is not a double: an exact comparison does not round it.
      ("i64 == 9007199254740993", true), ("i64 == 9007199254740992.0", false), ("i64 > 9007199254740992.0", true),
      ("i64 < 9007199254740994.0", true), ("i64 > 1e300", false), ("i64 > -1e300", true),
      ("b == TRUE", true), ("b == YES", true), ("b != FALSE", true), ("b == NO", false),
      ("dt == dt", true), ("dt < now()", true), ("dt > dt - 1", true), ("dt + 60 > dt", true), ("dt - dt == 0", true),
      ("u == u", true), ("u != uuid()", true), ("bin == bin", true),
      ("link == 'https://example.com/a'", true), ("link BEGINSWITH 'https:'", true),
      ("'https://example.com/a' == link", true),
    ])
  func numbersAndOtherTypes(text: String, expected: Bool) throws {
    let (objects, full, _) = samples()
    #expect(try queryHolds(text, on: full, in: objects) == expected)
  }

  @Test("the largest integers compare exactly with doubles")
  func extremeIntegers() throws {
    let objects = QueryMemoryObjects()
    let max = objects.insert("Sample", ["i64": .int64(.max), "d": .double(9_223_372_036_854_775_808.0)])
    let min = objects.insert("Sample", ["i64": .int64(.min), "d": .double(-9_223_372_036_854_775_808.0)])
    #expect(try queryHolds("i64 == 9223372036854775807", on: max, in: objects))
    #expect(try queryHolds("i64 < d", on: max, in: objects))  // Double(Int64.max) would say equal
    #expect(try queryHolds("i64 != d", on: max, in: objects))
    #expect(try queryHolds("i64 == d", on: min, in: objects))  // -2^63 is a double
    #expect(try queryHolds("i64 == -9223372036854775808", on: min, in: objects))
  }

  @Test("NaN is unordered and unequal to everything, itself included")
  func notANumber() throws {
    let objects = QueryMemoryObjects()
    let nan = objects.insert("Sample", ["d": .double(.nan), "dec": .decimal(1)])
    for (text, expected) in [
      ("d == d", false), ("d != d", true), ("d < 1", false), ("d > 1", false), ("d == nil", false),
      ("dec < d", false), ("d BETWEEN {0, 1}", false), ("d IN {1, 2}", false),
    ] {
      #expect(try queryHolds(text, on: nan, in: objects) == expected, "\(text)")
    }
  }

  @Test("a decimal and a double literal compare through the literal's text")
  func decimalAndDouble() throws {
    let objects = QueryMemoryObjects()
    let o = objects.insert("Sample", ["dec": .decimal(Decimal(string: "0.1") ?? 0), "d": .double(0.1)])
    #expect(try queryHolds("dec == 0.1", on: o, in: objects))
    #expect(try queryHolds("dec == d", on: o, in: objects))
    #expect(try queryHolds("dec < 0.10000001", on: o, in: objects))
  }

  @Test(
    "arithmetic follows NSExpression",
    arguments: [
      ("i16 + i32 == 12", true), ("i32 - i16 * 2 == -3", true), ("(i16 + 1) * 2 == 12", true),
      ("i32 / i16 == 1.4", true), ("i32 / 2 == 3.5", true), ("7 / 2 == 3.5", true), ("-i16 == -5", true),
      ("- -i16 == 5", true), ("i16 * d == 7.5", true), ("dec * 2 == 5", true), ("dec / 2 == 1.25", true),
      ("dec + d == 4", true), ("i16 + i16 > i32", true), ("abs(0 - i16) == 5", true),
      ("abs(-1.5) == 1.5", true), ("abs(0 - dec) == dec", true), ("1 + 2 * 3 - 4 / 2 == 5", true),
      ("f * 4 == 2", true), ("i64 - 9007199254740992 == 1", true),
    ])
  func arithmetic(text: String, expected: Bool) throws {
    let (objects, full, _) = samples()
    #expect(try queryHolds(text, on: full, in: objects) == expected)
  }

  @Test(
    "division by zero and overflow are errors",
    arguments: [
      ("i16 / 0 == 1", QueryError.Kind.divisionByZero, 0), ("d / (i16 - 5) > 1", .divisionByZero, 0),
      ("dec / 0 == 1", .divisionByZero, 0), ("2 > 1 / (i16 - i16)", .divisionByZero, 4),
      ("i64 * i64 > 0", .overflow, 0), ("9223372036854775807 + i16 > 0", .overflow, 0),
      ("-(-9223372036854775808) > 0", .overflow, 0), ("abs(-9223372036854775808) > 0", .overflow, 0),
    ])
  func arithmeticErrors(text: String, kind: QueryError.Kind, offset: Int) throws {
    let (objects, full, _) = samples()
    let error = queryError { _ = try queryHolds(text, on: full, in: objects) }
    #expect(error?.kind == kind)
    #expect(error?.offset == offset)
  }

  @Test(
    "functions",
    arguments: [
      ("uppercase(s) == 'TANAKA'", true), ("lowercase(s) == 'tanaka'", true), ("uppercase('école') == 'ÉCOLE'", true),
      ("uppercase('straße') == 'STRASSE'", true), ("trim('  x \\n\\t') == 'x'", true), ("trim(t) == nil", true),
      ("concat(s, '-', i16, '-', b) == 'Tanaka-5-true'", true), ("concat(s, t, '!') == 'Tanaka!'", true),
      ("concat(dt) == '1970-01-01T00:16:40.000Z'", true), ("concat(d, '/', dec) == '1.5/2.5'", true),
      ("coalesce(t, s) == 'Tanaka'", true), ("coalesce(t, nil) == nil", true), ("coalesce(i16, 0) == 5", true),
      ("coalesce(t, 'x') == 'x'", true), ("length(s) == 6", true), ("length('桃太郎') == 3", true),
      ("length('e\\u{301}') == 1", true), ("length(bin) == 3", true), ("length(t) == nil", true),
      ("abs(i16) == 5", true), ("now() > dt", true), ("uuid() != uuid()", true), ("uuid() != nil", true),
      ("lowercase(uppercase(s)) ==[c] s", true),
    ])
  func functions(text: String, expected: Bool) throws {
    let (objects, full, _) = samples()
    #expect(try queryHolds(text, on: full, in: objects) == expected)
  }

  @Test("AND and OR stop at the first answer")
  func shortCircuit() throws {
    let (objects, full, _) = samples()
    _ = try queryHolds("TRUEPREDICATE OR s == 'x' OR i16 == 1", on: full, in: objects)
    #expect(objects.reads == 0)
    _ = try queryHolds("FALSEPREDICATE AND s == 'x'", on: full, in: objects)
    #expect(objects.reads == 0)
    _ = try queryHolds("s == 'Tanaka' OR i16 == 1", on: full, in: objects)
    #expect(objects.reads == 1)
  }

  @Test("a long chain of AND evaluates without deep recursion")
  func longChain() throws {
    let (objects, full, _) = samples()
    let text = Array(repeating: "i16 == 5", count: 20_000).joined(separator: " AND ")
    #expect(try queryHolds(text, on: full, in: objects))
    #expect(try queryHolds(text + " AND i16 == 6", on: full, in: objects) == false)
    let or = Array(repeating: "i16 == 6", count: 20_000).joined(separator: " OR ")
    #expect(try queryHolds(or, on: full, in: objects) == false)
  }
}
