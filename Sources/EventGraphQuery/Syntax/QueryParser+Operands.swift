extension QueryParser {
  /// Reads what may stand where an operand is expected.
  ///
  /// - Returns: `true` when still expecting an operand (after a prefix operator or an
  ///   opening bracket), `false` once an operand was pushed.
  mutating func parseOperandPosition() throws(QueryError) -> Bool {
    let start = token.start
    switch token.kind {
    case .keyword(.not), .symbol(.not):
      guard allowsPredicateStart() else { throw expected("an expression") }
      try checkPrefixRun(at: start) { if case .not = $0 { true } else { false } }
      frames.append(.not(at: start))
      try advance()
      return true
    case .keyword(.any), .keyword(.some), .keyword(.all), .keyword(.none):
      guard allowsPredicateStart() else { throw expected("an expression") }
      let q: QueryQuantifier =
        token.kind == .keyword(.all) ? .allOf : token.kind == .keyword(.none) ? .noneOf : .anyOf
      frames.append(.quantifier(q, at: start))
      try advance()
      return true
    case .keyword(.truePredicate), .keyword(.falsePredicate):
      guard allowsPredicateStart() else { throw expected("an expression") }
      let value = token.kind == .keyword(.truePredicate)
      try advance()
      operands.append(
        Operand(node: .predicate(QueryPredicate(.constant(value), at: start)), start: start, isBare: true))
      return false
    case .symbol(.minus):
      try checkPrefixRun(at: start) { if case .minus = $0 { true } else { false } }
      try advance()
      if let literal = try negativeNumber() {
        // A minus right before a number makes a negative literal, so that
        // -9223372036854775808 is Int64.min and -1.5 prints back as itself.
        push(.literal(literal), at: start)
        return false
      }
      frames.append(.minus(at: start))
      return true
    case .symbol(.openParen):
      try openGroup(.parenthesis, at: start)
      try advance()
      return true
    case .symbol(.openBrace):
      try openGroup(.list(isBetween: false), at: start)
      try advance()
      guard token.kind == .symbol(.closeBrace) else { return true }
      try closeGroup(empty: true)
      return false
    case .integer(let n):
      guard n <= UInt64(Int64.max) else { throw fail("integer \(n) is out of range", at: start) }
      try pushLiteral(.integer(Int64(n)))
    case .double(let d): try pushLiteral(.double(d))
    case .string(let s): try pushLiteral(.string(s))
    case .keyword(.nil), .keyword(.null): try pushLiteral(.null)
    case .keyword(.true), .keyword(.yes): try pushLiteral(.boolean(true))
    case .keyword(.false), .keyword(.no): try pushLiteral(.boolean(false))
    case .keyword(.self):
      try advance()
      try pushKeyPath(variable: nil, components: [], offsets: [], start: start)
    case .variable(let name):
      try advance()
      try pushKeyPath(variable: name, components: [], offsets: [], start: start)
    case .aggregate:
      try pushKeyPath(variable: nil, components: [try aggregateComponent()], offsets: [start], start: start)
    case .identifier(let name, let escaped):
      if !escaped, try lexer.peek().kind == .symbol(.openParen) { return try openCall(name) }
      try advance()
      try pushKeyPath(variable: nil, components: [.property(name)], offsets: [start], start: start)
    default:
      throw expected("an expression")
    }
    return false
  }

  /// Whether a predicate may start here: at the start of a group that allows one, or
  /// after `AND`, `OR` or `NOT`.
  private func allowsPredicateStart() -> Bool {
    switch frames.last {
    case nil: mode == .predicate
    case .group(.parenthesis, _)?, .not?, .and?, .or?: true
    case .group(.subquery, _)?: items.last?.count == 2
    default: false
    }
  }

  /// Refuses a run of prefix operators longer than the depth limit as soon as it is.
  private func checkPrefixRun(at offset: Int, _ isSame: (Frame) -> Bool) throws(QueryError) {
    var run = 0
    for frame in frames.reversed() {
      guard isSame(frame) else { break }
      run += 1
      guard run < QueryPredicate.maximumDepth else { throw tooDeep(at: offset) }
    }
  }

  mutating func push(_ kind: QueryExpression.Kind, at start: Int) {
    operands.append(Operand(node: .expression(QueryExpression(kind, at: start)), start: start, isBare: false))
  }

  private mutating func pushLiteral(_ value: QueryLiteral) throws(QueryError) {
    let start = token.start
    try advance()
    push(.literal(value), at: start)
  }

  /// The current number token negated, consumed; `nil` when the token is not a number.
  private mutating func negativeNumber() throws(QueryError) -> QueryLiteral? {
    switch token.kind {
    case .integer(let magnitude):
      guard magnitude <= UInt64(Int64.max) + 1 else {
        throw fail("integer -\(magnitude) is out of range", at: token.start)
      }
      try advance()
      return .integer(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
    case .double(let d):
      try advance()
      return .double(-d)
    default:
      return nil
    }
  }

  mutating func openGroup(_ group: Group, at start: Int) throws(QueryError) {
    guard items.count < QueryPredicate.maximumDepth else { throw tooDeep(at: start) }
    frames.append(.group(group, start: start))
    items.append([])
  }

  /// `name(`: a call, or an error naming the nearest function.
  private mutating func openCall(_ name: String) throws(QueryError) -> Bool {
    let start = token.start
    if name.lowercased() == "subquery" {
      try advance()  // the name
      try openGroup(.subquery(nameStart: start), at: token.start)
      try advance()  // the '('
      return true
    }
    if ["function", "cast"].contains(name.lowercased()) {
      let isCast = name.lowercased() == "cast"
      try advance()  // the name
      try openGroup(.method(nameStart: start, isCast: isCast), at: token.start)
      try advance()  // the '('
      guard token.kind == .symbol(.closeParen) else { return true }
      throw fail(
        isCast
          ? "CAST takes a value and a class name, as in CAST('2026-01-01T00:00:00Z', 'NSDate')"
          : "FUNCTION takes a receiver and a method name, as in FUNCTION(name, 'length')", at: start)
    }
    guard let function = QueryFunction(rawValue: name.lowercased()) else {
      let hint = NameSuggestion.hint(for: name.lowercased(), among: QueryFunction.allCases.map(\.rawValue))
      throw fail("unknown function '\(name)'\(hint)", at: start)
    }
    try advance()  // the name
    try openGroup(.call(function, nameStart: start), at: token.start)
    try advance()  // the '('
    guard token.kind == .symbol(.closeParen) else { return true }
    try closeGroup(empty: true)
    return false
  }

  // MARK: - Key paths

  /// A key path's `.name` and `.@aggregate` steps, read in a loop.
  private mutating func pushKeyPath(
    variable: String?, components: [QueryKeyPath.Component], offsets: [Int], start: Int
  ) throws(QueryError) {
    var components = components
    var offsets = offsets
    if case .aggregate = token.kind {
      // `employees@count`: an aggregate step needs its dot.
      throw expected("'.' before the aggregate")
    }
    try sizeIndex(&components, &offsets)
    try keyPathTail(&components, &offsets)
    push(.keyPath(QueryKeyPath(variable: variable, components: components, offsets: offsets)), at: start)
  }

  /// The `.name`, `.@aggregate` and `[index]` steps that follow.
  mutating func keyPathTail(
    _ components: inout [QueryKeyPath.Component], _ offsets: inout [Int]
  ) throws(QueryError) {
    while token.kind == .symbol(.dot) {
      try advance()
      offsets.append(token.start)
      switch token.kind {
      case .identifier(let name, _):
        components.append(.property(name))
        try advance()
        try sizeIndex(&components, &offsets)
      case .aggregate:
        components.append(try aggregateComponent())
      case .keyword(let k):
        throw fail(
          "expected a property name after '.', found \(k.rawValue) (write #\(k.rawValue) for a property so named)",
          at: token.start)
      default:
        throw expected("a property name or an aggregate after '.'")
      }
    }
  }

  /// Foundation's `[SIZE]` after a name, `children[SIZE]`: the same as `.@count`; and
  /// `[FIRST]`, `[LAST]`, `[n]`: one element of an ordered to-many (the checker says
  /// where they may stand).
  private mutating func sizeIndex(
    _ components: inout [QueryKeyPath.Component], _ offsets: inout [Int]
  ) throws(QueryError) {
    guard token.kind == .symbol(.openBracket), !components.isEmpty else { return }
    let start = token.start
    try advance()
    let component: QueryKeyPath.Component
    switch token.kind {
    case .identifier(let word, _) where word.uppercased() == "SIZE": component = .aggregate(.count)
    case .identifier(let word, _) where word.uppercased() == "FIRST": component = .element(.first)
    case .identifier(let word, _) where word.uppercased() == "LAST": component = .element(.last)
    case .integer(let n):
      guard n <= UInt64(Int64.max) else { throw fail("index \(n) is out of range", at: token.start) }
      component = .element(.at(Int64(n)))
    default:
      throw fail("expected SIZE, FIRST, LAST or an integer index after '['", at: token.start)
    }
    try advance()
    guard token.kind == .symbol(.closeBracket) else { throw expected("']' to close the '[' index") }
    try advance()
    offsets.append(start)
    components.append(component)
  }

  private mutating func aggregateComponent() throws(QueryError) -> QueryKeyPath.Component {
    guard case .aggregate(let name) = token.kind else { throw expected("an aggregate") }
    guard let aggregate = QueryAggregate(rawValue: name.lowercased()) else {
      let hint = NameSuggestion.hint(for: name.lowercased(), among: QueryAggregate.allCases.map(\.rawValue))
      throw fail("unknown aggregate '@\(name)'\(hint)", at: token.start)
    }
    try advance()
    return .aggregate(aggregate)
  }
}
