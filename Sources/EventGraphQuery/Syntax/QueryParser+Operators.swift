extension QueryParser {
  /// The binary operators, with their precedence.
  enum Binary {
    case or, and
    case comparison(QueryOperator)
    case arithmetic(ArithmeticOperator)

    /// 1 `OR`, 2 `AND`, (3 is `NOT`), 4 comparisons, 5 `+ -`, 6 `* /`, (7 is unary minus).
    var precedence: Int {
      switch self {
      case .or: 1
      case .and: 2
      case .comparison: 4
      case .arithmetic(let op): op.precedence + 4
      }
    }
  }

  private func binaryOperator(_ t: QueryToken) -> Binary? {
    switch t.kind {
    case .keyword(.or), .symbol(.or): return .or
    case .keyword(.and), .symbol(.and): return .and
    case .symbol(.plus): return .arithmetic(.add)
    case .symbol(.minus): return .arithmetic(.subtract)
    case .symbol(.star): return .arithmetic(.multiply)
    case .symbol(.slash): return .arithmetic(.divide)
    default: return t.comparisonOperator.map { .comparison($0) }
    }
  }

  /// Reads what may follow an operand.
  ///
  /// - Returns: `true` when an operand is expected next (after a binary operator or a
  ///   comma), `false` when a closing bracket made another operand.
  mutating func parseOperatorPosition() throws(QueryError) -> Bool {
    switch token.kind {
    case .symbol(.closeParen), .symbol(.closeBrace):
      try closeGroup(empty: false)
      return false
    case .symbol(.comma):
      try reduce(incoming: 0)
      guard case .group(let group, _)? = frames.last else { throw try unexpected() }
      if case .parenthesis = group { throw expected("')'") }
      let item = try expression(try popOperand())
      items[items.count - 1].append(item)
      try advance()
      return true
    default:
      break
    }
    guard let binary = binaryOperator(token) else { throw try unexpected() }
    if binary.precedence < 5 && !groupAllowsPredicates() { throw try unexpected() }
    try reduce(incoming: binary.precedence)
    switch binary {
    case .or, .and:
      let operand = try popOperand()
      let p = try predicate(operand)
      // A chain of one operator collects its operands in one frame.
      let continues: Bool
      switch (binary, frames.last) {
      case (.or, .or?), (.and, .and?): continues = true
      default: continues = false
      }
      if continues {
        chains[chains.count - 1].append(p)
      } else {
        frames.append(binary.precedence == 1 ? .or(start: operand.start) : .and(start: operand.start))
        chains.append([p])
      }
      try advance()
      return true
    case .comparison(let op):
      var quantifier: (QueryQuantifier, Int)? = nil
      if case .quantifier(let q, let at)? = frames.last {
        frames.removeLast()
        quantifier = (q, at)
      }
      guard let left = operands.last else { throw expected("an expression") }
      try requireExpression(left)
      let operatorOffset = token.start
      try advance()
      let options = try parseOptions()
      frames.append(
        .comparison(quantifier?.0, op, options, start: quantifier?.1 ?? left.start, operatorOffset: operatorOffset))
      guard op == .between else { return true }
      guard token.kind == .symbol(.openBrace) else { throw expected("'{' after BETWEEN") }
      try openGroup(.list(isBetween: true), at: token.start)
      try advance()
      guard token.kind == .symbol(.closeBrace) else { return true }
      try closeGroup(empty: true)
      return false
    case .arithmetic(let op):
      guard let left = operands.last else { throw expected("an expression") }
      try requireExpression(left)
      frames.append(.arithmetic(op, start: left.start))
      try advance()
      return true
    }
  }

  /// An operator that takes a value follows `left`: a comparison just made cannot be
  /// one ("comparisons do not chain"), nor can a parenthesized predicate.
  private mutating func requireExpression(_ left: Operand) throws(QueryError) {
    guard case .predicate = left.node else { return }
    if left.isBare { throw try unexpected() }
    throw fail("expected an expression, found a predicate", at: left.start)
  }

  /// The error for a token that cannot follow here: after finishing what is pending
  /// (whose own errors come first), what the innermost group or the text expects.
  mutating func unexpected() throws(QueryError) -> QueryError {
    try reduce(incoming: 0)
    if let group = innermostGroup() { return expected(group.closer) }
    if mode == .predicate, case .expression? = operands.last?.node { return expected("a comparison operator") }
    return expected(token.comparisonOperator == nil ? "end of input" : "end of input (comparisons do not chain)")
  }

  /// `[c]`, `[d]`, `[cd]` after a comparison operator.
  private mutating func parseOptions() throws(QueryError) -> QueryStringOptions {
    guard token.kind == .symbol(.openBracket) else { return [] }
    try advance()
    guard case .identifier(let letters, escaped: false) = token.kind else {
      throw expected("options 'c', 'd' or 'cd'")
    }
    var options: QueryStringOptions = []
    for letter in letters {
      switch letter {
      case "c", "C": options.insert(.caseInsensitive)
      case "d", "D": options.insert(.diacriticInsensitive)
      default: throw fail("unknown option '\(letter)': the options are c and d", at: token.start)
      }
    }
    try advance()
    guard token.kind == .symbol(.closeBracket) else { throw expected("']'") }
    try advance()
    return options
  }

  // MARK: - Groups

  /// Closes the innermost group at the current `)` or `}`, making its operand.
  ///
  /// - Parameter empty: Whether the group holds nothing (`{}`, `now()`).
  mutating func closeGroup(empty: Bool) throws(QueryError) {
    if !empty { try reduce(incoming: 0) }
    guard case .group(let group, let start)? = frames.last else { throw try unexpected() }
    switch (group, token.kind) {
    case (.parenthesis, .symbol(.closeParen)):
      var inner = try popOperand()
      inner.start = start
      inner.isBare = false
      frames.removeLast()
      items.removeLast()
      operands.append(inner)
      try advance()
    case (.call(let function, let nameStart), .symbol(.closeParen)):
      var collected = items.removeLast()
      if !empty { collected.append(try expression(try popOperand())) }
      frames.removeLast()
      let (minimum, maximum) = function.arity
      if collected.count < minimum || collected.count > (maximum ?? Int.max) {
        let wanted = maximum == nil ? "at least \(minimum)" : "\(minimum)"
        throw fail(
          "\(function.rawValue) takes \(wanted) argument\(minimum == 1 ? "" : "s"), found \(collected.count)",
          at: nameStart)
      }
      let call = try checked(QueryExpression(.function(function, collected), at: nameStart))
      operands.append(Operand(node: .expression(call), start: nameStart, isBare: false))
      try advance()
    case (.method(let nameStart, let isCast), .symbol(.closeParen)):
      var collected = items.removeLast()
      collected.append(try expression(try popOperand()))
      frames.removeLast()
      let f = isCast ? try cast(collected, at: nameStart) : try method(collected, at: nameStart)
      let call = try checked(
        QueryExpression(.function(f, [collected[0]]), at: nameStart))
      operands.append(Operand(node: .expression(call), start: nameStart, isBare: false))
      try advance()
    case (.subquery(let nameStart), .symbol(.closeParen)):
      let collected = items.removeLast()
      guard collected.count == 2 else {
        throw fail(
          "SUBQUERY takes a collection, a $variable and a predicate, as in SUBQUERY(items, $i, $i.price > 250)",
          at: nameStart)
      }
      let inner = try predicate(try popOperand())
      frames.removeLast()
      try advance()
      let s = try subquery(collected[0], collected[1], inner, at: nameStart)
      operands.append(Operand(node: .expression(s), start: nameStart, isBare: false))
    case (.list(let isBetween), .symbol(.closeBrace)):
      var collected = items.removeLast()
      if !empty { collected.append(try expression(try popOperand())) }
      frames.removeLast()
      if isBetween && collected.count != 2 { throw fail("BETWEEN needs exactly two values, {low, high}", at: start) }
      let list = try checked(QueryExpression(.list(collected), at: start))
      operands.append(Operand(node: .expression(list), start: start, isBare: false))
      try advance()
      // Nothing extends BETWEEN's right side: the comparison is complete.
      if isBetween { try reduce(incoming: 4) }
    default:
      throw expected(group.closer)
    }
  }

  // MARK: - Reductions

  /// Applies the pending operators that bind at least as tightly as an incoming
  /// operator of precedence `incoming` (0: everything up to the innermost group).
  mutating func reduce(incoming: Int) throws(QueryError) {
    while let frame = frames.last {
      switch frame {
      case .group:
        return
      case .minus(let at):
        frames.removeLast()
        let operand = try expression(try popOperand())
        let e = try checked(QueryExpression(.negation(operand), at: at))
        operands.append(Operand(node: .expression(e), start: at, isBare: false))
      case .not(let at):
        guard incoming <= 3 else { return }
        frames.removeLast()
        let operand = try predicate(try popOperand())
        let p = try checked(QueryPredicate(.not(operand), at: at))
        operands.append(Operand(node: .predicate(p), start: at, isBare: true))
      case .quantifier:
        // Arithmetic extends the quantified left side; a comparison takes the quantifier.
        guard incoming < 4 else { return }
        throw expected("a comparison operator")
      case .comparison(let quantifier, let op, let options, let start, let operatorOffset):
        guard incoming <= 4 else { return }
        frames.removeLast()
        let right = try expression(try popOperand())
        let left = try expression(try popOperand())
        let c = QueryComparison(quantifier, left, op, options: options, right, operatorOffset: operatorOffset)
        let p = try checked(QueryPredicate(.comparison(c), at: start))
        operands.append(Operand(node: .predicate(p), start: start, isBare: true))
      case .arithmetic(let op, let start):
        guard incoming <= op.precedence + 4 else { return }
        frames.removeLast()
        let right = try expression(try popOperand())
        let left = try expression(try popOperand())
        let e = try checked(QueryExpression(.arithmetic(op, left, right), at: start))
        operands.append(Operand(node: .expression(e), start: start, isBare: false))
      case .and(let start):
        guard incoming < 2 else { return }
        let last = try predicate(try popOperand())
        frames.removeLast()
        var list = chains.removeLast()
        list.append(last)
        let p = try checked(QueryPredicate(.and(list), at: start))
        operands.append(Operand(node: .predicate(p), start: start, isBare: true))
      case .or(let start):
        guard incoming < 1 else { return }
        let last = try predicate(try popOperand())
        frames.removeLast()
        var list = chains.removeLast()
        list.append(last)
        let p = try checked(QueryPredicate(.or(list), at: start))
        operands.append(Operand(node: .predicate(p), start: start, isBare: true))
      }
    }
  }
}
