/// An operator-precedence parser for predicates and expressions, with explicit stacks.
///
/// Precedence, loosest first: `OR` < `AND` < `NOT` < comparison < `+ -` < `* /` < unary
/// minus. The parser keeps its pending operators (`frames`) and finished operands on
/// arrays instead of the call stack, so no input, however deeply nested, can exhaust
/// the stack; nesting is still bounded by ``QueryPredicate/maximumDepth`` (open
/// parentheses, braces and calls, and the height of the tree), because the trees are
/// walked recursively afterwards.
///
/// A parenthesized group may hold a predicate or an expression (`(a + 1) * 2`, `(a == 1
/// OR b == 2) AND c == 3`), so operands are ``ParsedNode``s and each operator checks
/// the kind it needs; the parser never backtracks and is linear in the text.
struct QueryParser {
  /// Whether the whole text is a predicate or a value expression.
  enum Mode { case predicate, expression }

  /// A node of either kind, until the context says which it must be.
  enum ParsedNode {
    case predicate(QueryPredicate)
    case expression(QueryExpression)
  }

  /// A finished operand: its node, where it starts, and whether it is a predicate made
  /// right here (a comparison, `AND`, `TRUEPREDICATE`) rather than a parenthesized group,
  /// which decides the message when an operator follows it.
  struct Operand {
    var node: ParsedNode
    var start: Int
    var isBare: Bool
  }

  /// What an open group collects.
  enum Group {
    case parenthesis
    case list(isBetween: Bool)
    case call(QueryFunction, nameStart: Int)
    /// Foundation's `FUNCTION(receiver, 'method')`, or with `isCast` its `CAST(value, 'Class')`.
    case method(nameStart: Int, isCast: Bool)
    /// `SUBQUERY(collection, $variable, predicate)`.
    case subquery(nameStart: Int)
  }

  /// A pending operator or open group.
  ///
  /// What a group or an `AND`/`OR` chain has collected so far lives in `items` and
  /// `chains` (the innermost last), so that it grows in place, however long.
  enum Frame {
    case group(Group, start: Int)
    case not(at: Int)
    case minus(at: Int)
    case quantifier(QueryQuantifier, at: Int)
    case comparison(QueryQuantifier?, QueryOperator, QueryStringOptions, start: Int, operatorOffset: Int)
    case arithmetic(ArithmeticOperator, start: Int)
    case and(start: Int)
    case or(start: Int)
  }

  var lexer: QueryLexer
  var token: QueryToken
  let mode: Mode
  var operands: [Operand] = []
  var frames: [Frame] = []
  /// The items of each open group, parallel to the `.group` frames.
  var items: [[QueryExpression]] = []
  /// The operands of each pending `AND` or `OR` chain, parallel to those frames.
  var chains: [[QueryPredicate]] = []
  var source: QuerySourceText { lexer.source }

  init(_ text: String, mode: Mode) throws(QueryError) {
    lexer = QueryLexer(QuerySourceText(text))
    token = try lexer.next()
    self.mode = mode
  }

  // MARK: - Entry points

  mutating func parseWholePredicate() throws(QueryError) -> QueryPredicate {
    let result = try parse()
    guard case .predicate(let p) = result.node else { throw expected("a comparison operator") }
    return p
  }

  mutating func parseWholeExpression() throws(QueryError) -> QueryExpression {
    let result = try parse()
    guard case .expression(let e) = result.node else {
      throw fail("expected an expression, found a predicate", at: result.start)
    }
    return e
  }

  /// Alternates between operand and operator positions until the end of the text.
  private mutating func parse() throws(QueryError) -> Operand {
    while true {
      if try parseOperandPosition() { continue }
      while true {
        if token.kind == .end {
          try reduce(incoming: 0)
          if let open = innermostGroup() { throw expected(open.closer) }
          if mode == .predicate, case .expression = operands.last?.node { throw expected("a comparison operator") }
          guard operands.count == 1, let result = operands.last else { throw expected("end of input") }
          return result
        }
        if try parseOperatorPosition() { break }
      }
    }
  }

  // MARK: - Helpers

  mutating func advance() throws(QueryError) { token = try lexer.next() }

  func fail(_ message: String, at offset: Int?) -> QueryError {
    source.error(.syntax, message, at: offset)
  }

  func fail(_ kind: QueryError.Kind, _ message: String, at offset: Int?) -> QueryError {
    source.error(kind, message, at: offset)
  }

  /// "expected X, found <current token>".
  func expected(_ what: String) -> QueryError {
    fail("expected \(what), found \(token.displayName)", at: token.start)
  }

  func tooDeep(at offset: Int?) -> QueryError {
    fail(.tooDeep, "nested more than \(QueryPredicate.maximumDepth) levels deep", at: offset)
  }

  func checked(_ e: QueryExpression) throws(QueryError) -> QueryExpression {
    guard e.depth <= QueryPredicate.maximumDepth else { throw tooDeep(at: e.sourceOffset) }
    return e
  }

  func checked(_ p: QueryPredicate) throws(QueryError) -> QueryPredicate {
    guard p.depth <= QueryPredicate.maximumDepth else { throw tooDeep(at: p.sourceOffset) }
    return p
  }

  /// The operand's node as an expression; a predicate cannot be a value.
  func expression(_ operand: Operand) throws(QueryError) -> QueryExpression {
    switch operand.node {
    case .expression(let e): return e
    case .predicate: throw fail("expected an expression, found a predicate", at: operand.start)
    }
  }

  /// The operand's node as a predicate; an expression standing alone lacks its comparison.
  func predicate(_ operand: Operand) throws(QueryError) -> QueryPredicate {
    switch operand.node {
    case .predicate(let p): return p
    case .expression: throw expected("a comparison operator")
    }
  }

  mutating func popOperand() throws(QueryError) -> Operand {
    guard let operand = operands.popLast() else { throw expected("an expression") }
    return operand
  }

  /// The innermost open group, if any.
  func innermostGroup() -> Group? {
    for frame in frames.reversed() {
      if case .group(let g, _) = frame { return g }
    }
    return nil
  }

  /// Whether predicates may appear here: inside parentheses, or at the top of a predicate.
  func groupAllowsPredicates() -> Bool {
    switch innermostGroup() {
    case .parenthesis?: true
    case .list?, .call?, .method?: false
    case .subquery?: items.last?.count == 2
    case nil: mode == .predicate
    }
  }
}

extension QueryParser.Group {
  /// What closes the group, as "expected …" says it.
  var closer: String {
    switch self {
    case .parenthesis: "')'"
    case .list: "',' or '}'"
    case .call, .method, .subquery: "',' or ')'"
    }
  }
}
