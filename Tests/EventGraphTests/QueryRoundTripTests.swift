import TestSupport
import Testing

@testable import EventGraph
@testable import EventGraphQuery

/// Random syntax trees of the shapes the parser produces.
struct QueryTreeGenerator {
  var random: SeededGenerator

  private mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }
  private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

  mutating func name() -> String {
    pick([
      "a", "phone1", "lastName", "_x", "名前", "été", "x9", "salary", "employees",
      "AND", "in", "Some", "nil", "true", "self", "TRUEPREDICATE", "uppercase", "now",
    ])
  }

  mutating func string() -> String {
    let pieces = [
      "a", "Z", " ", "'", "\"", "\\", "\n", "\t", "\r", "\r\n", "\0", "\u{1}", "\u{7F}", "é", "e\u{301}", "\u{301}",
      "桃太郎", "😀", "👨‍👩‍👧", "ß", "*", "?", "{", "}", "$", "#", "@",
    ]
    var s = ""
    for _ in 0..<Int.random(in: 0...6, using: &random) { s += pick(pieces) }
    return s
  }

  mutating func literal() -> QueryLiteral {
    switch Int.random(in: 0..<8, using: &random) {
    case 0: return .null
    case 1: return .boolean(chance(50))
    case 2: return .integer(pick([0, 1, -1, 42, .max, .min, -9_000_000_000]))
    case 3: return .integer(Int64.random(in: .min ... .max, using: &random))
    case 4: return .double(pick([0.5, -1.25, 1e-5, 1e16, 2.0, -0.0, 123456.789, .ulpOfOne, .greatestFiniteMagnitude]))
    case 5: return .double(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF) * (chance(50) ? 1 : -1))
    default: return .string(string())
    }
  }

  mutating func keyPath() -> QueryKeyPath {
    let variable: String? = chance(25) ? pick(["source", "limit", "AND", "x1"]) : nil
    var components: [QueryKeyPath.Component] = []
    let count = Int.random(in: (variable == nil ? 0 : 0)...3, using: &random)
    for _ in 0..<count {
      if chance(20) {
        components.append(.aggregate(pick(QueryAggregate.allCases)))
        continue
      }
      components.append(.property(name()))
      // `[FIRST]`, `[LAST]`, `[n]` follow a name.
      if chance(15) {
        components.append(.element(pick([.first, .last, .at(0), .at(7), .at(.max)])))
      }
    }
    return QueryKeyPath(variable: variable, components: components)
  }

  mutating func expression(depth: Int) -> QueryExpression {
    if depth <= 0 || chance(30) {
      return chance(50) ? QueryExpression(.literal(literal())) : QueryExpression(.keyPath(keyPath()))
    }
    if depth >= 2 && chance(10) { return subquery(depth: depth) }
    switch Int.random(in: 0..<4, using: &random) {
    case 0:
      return QueryExpression(
        .arithmetic(pick(ArithmeticOperator.allCases), expression(depth: depth - 1), expression(depth: depth - 1)))
    case 1:
      return QueryExpression(.negation(expression(depth: depth - 1)))
    case 2:
      let f = pick(QueryFunction.allCases)
      let (minimum, maximum) = f.arity
      let count = Int.random(in: minimum...(maximum ?? 4), using: &random)
      return QueryExpression(.function(f, (0..<count).map { _ in expression(depth: depth - 1) }))
    default:
      return QueryExpression(
        .list((0..<Int.random(in: 0...3, using: &random)).map { _ in expression(depth: depth - 1) }))
    }
  }

  /// `SUBQUERY(collection, $x, comparison)` and a tail, its parts two levels shallower.
  mutating func subquery(depth: Int) -> QueryExpression {
    var collection = keyPath()
    if collection.variable == nil && collection.components.isEmpty {
      collection = QueryKeyPath(variable: nil, components: [.property(name())])
    }
    let inner = QueryComparison(
      expression(depth: depth - 2), pick(QueryOperator.allCases.filter { $0 != .between }), options: [],
      expression(depth: depth - 2), quantifier: nil)
    let tail = QueryKeyPath(variable: nil, components: chance(50) ? [.aggregate(.count)] : keyPath().components)
    return QueryExpression(
      .subquery(
        QuerySubquery(
          collection: QueryExpression(.keyPath(collection)), variable: pick(["x", "item", "AND"]),
          predicate: QueryPredicate(.comparison(inner)), tail: tail)))
  }

  mutating func comparison(depth: Int) -> QueryComparison {
    let op = pick(QueryOperator.allCases)
    let right =
      op == .between
      ? QueryExpression(.list([expression(depth: depth - 1), expression(depth: depth - 1)]))
      : expression(depth: depth - 1)
    var options: QueryStringOptions = []
    if chance(20) { options.insert(.caseInsensitive) }
    if chance(20) { options.insert(.diacriticInsensitive) }
    let quantifier: QueryQuantifier? = chance(20) ? pick(QueryQuantifier.allCases) : nil
    return QueryComparison(expression(depth: depth - 1), op, options: options, right, quantifier: quantifier)
  }

  mutating func predicate(depth: Int) -> QueryPredicate {
    if depth <= 0 || chance(35) {
      return chance(5) ? QueryPredicate(.constant(chance(50))) : QueryPredicate(.comparison(comparison(depth: 3)))
    }
    switch Int.random(in: 0..<3, using: &random) {
    case 0: return QueryPredicate(.not(predicate(depth: depth - 1)))
    case 1:
      return QueryPredicate(.and((0..<Int.random(in: 2...4, using: &random)).map { _ in predicate(depth: depth - 1) }))
    default:
      return QueryPredicate(.or((0..<Int.random(in: 2...4, using: &random)).map { _ in predicate(depth: depth - 1) }))
    }
  }
}

@Suite("Query round trip")
struct QueryRoundTripTests {
  @Test("printing a random predicate and parsing the text gives the same tree", arguments: [1, 2, 3, 4] as [UInt64])
  func predicates(seed: UInt64) {
    var generator = QueryTreeGenerator(random: SeededGenerator(seed: seed))
    for i in 0..<500 {
      let tree = generator.predicate(depth: 4)
      let text = tree.description
      guard let parsed = parse(text, seed: seed, i: i, QueryPredicate.init(parsing:)) else { continue }
      #expect(parsed == tree, "seed \(seed) case \(i): \(text)")
      #expect(parsed.description == text)
    }
  }

  @Test("printing a random expression and parsing the text gives the same tree", arguments: [5, 6, 7, 8] as [UInt64])
  func expressions(seed: UInt64) {
    var generator = QueryTreeGenerator(random: SeededGenerator(seed: seed))
    for i in 0..<500 {
      let tree = generator.expression(depth: 5)
      let text = tree.description
      guard let parsed = parse(text, seed: seed, i: i, QueryExpression.init(parsing:)) else { continue }
      #expect(parsed == tree, "seed \(seed) case \(i): \(text)")
      #expect(parsed.description == text)
    }
  }

  /// The parsed tree, or `nil` after recording which text failed.
  private func parse<T>(_ text: String, seed: UInt64, i: Int, _ parse: (String) throws(QueryError) -> T) -> T? {
    do {
      return try parse(text)
    } catch {
      Issue.record("seed \(seed) case \(i): \(text) does not parse: \(error)")
      return nil
    }
  }

  @Test("SeededGenerator gives the published sequence for seed 0")
  func splitMix() {
    var g = SeededGenerator(seed: 0)
    #expect(g.next() == 0xE220_A839_7B1D_CDAF)
    #expect(g.next() == 0x6E78_9E6A_A1B9_65F4)
  }
}
