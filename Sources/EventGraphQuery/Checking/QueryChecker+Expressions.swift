import EventGraphModel
internal import EventGraphText

extension QueryChecker {
  /// Checks an expression.
  ///
  /// The cases live in functions of their own, so that the frame each level of nesting
  /// puts on the stack stays small.
  func expression(_ e: QueryExpression) throws(QueryError) -> Checked {
    switch e.kind {
    case .literal(let literal): .value(.literal(literal.value), literal.element)
    case .keyPath(let path): try keyPath(path, at: e.sourceOffset)
    case .list(let items): try list(items)
    case .arithmetic(let op, let left, let right): try arithmetic(op, left, right, at: e.sourceOffset)
    case .negation(let operand): try negation(operand, at: e.sourceOffset)
    case .function(let f, let arguments): try function(f, arguments, at: e.sourceOffset)
    case .subquery(let s): try subquery(s, at: e.sourceOffset)
    }
  }

  private func list(_ items: [QueryExpression]) throws(QueryError) -> Checked {
    var codes: [ValueCode] = []
    var element = QueryType.Element.null
    for item in items {
      let (code, itemElement) = try singleValue(item)
      guard let joined = unify(element, itemElement) else { throw listMismatch(item, itemElement, element) }
      element = joined
      codes.append(code)
    }
    return .values(.list(codes), element)
  }

  private func listMismatch(_ item: QueryExpression, _ element: QueryType.Element, _ list: QueryType.Element)
    -> QueryError
  {
    error(
      .typeMismatch, "\(quote(item)) (\(describe(element))) does not fit with the list's \(describe(list)) values",
      at: item.sourceOffset)
  }

  private func arithmetic(_ op: ArithmeticOperator, _ left: QueryExpression, _ right: QueryExpression, at offset: Int?)
    throws(QueryError) -> Checked
  {
    let (l, le) = try singleValue(left)
    let (r, re) = try singleValue(right)
    let type = try arithmeticType(op, (left, le), (right, re))
    return .value(.arithmetic(op, l, r, offset: position(offset)), .attribute(type))
  }

  private func negation(_ operand: QueryExpression, at offset: Int?) throws(QueryError) -> Checked {
    let (code, element) = try singleValue(operand)
    guard case .attribute(let t) = element, t.isNumeric else { throw notNumeric(operand, element) }
    return .value(.negation(code, offset: position(offset)), .attribute(Self.promoted(t)))
  }

  private func notNumeric(_ operand: QueryExpression, _ element: QueryType.Element) -> QueryError {
    error(
      .typeMismatch, "unary minus needs a number, found \(quote(operand)) (\(describe(element)))",
      at: operand.sourceOffset)
  }

  /// The common type of two elements, if they have one (numbers join to the wider kind).
  func unify(_ a: QueryType.Element, _ b: QueryType.Element) -> QueryType.Element? {
    switch (a, b) {
    case (.null, _): return b
    case (_, .null): return a
    case (.attribute(let x), .attribute(let y)):
      if x == y { return a }
      if x.isText && y.isText { return .attribute(.string) }
      guard x.isNumeric && y.isNumeric else { return nil }
      if x == .decimal || y == .decimal { return .attribute(.decimal) }
      if x.isInteger && y.isInteger { return .attribute(.int64) }
      return .attribute(.double)
    default:
      return nil
    }
  }

  /// Integers compute in int64, floats in double.
  static func promoted(_ t: AttributeType) -> AttributeType {
    t.isInteger ? .int64 : t == .float ? .double : t
  }

  private func arithmeticType(
    _ op: ArithmeticOperator, _ left: (QueryExpression, QueryType.Element),
    _ right: (QueryExpression, QueryType.Element)
  ) throws(QueryError) -> AttributeType {
    var types: [AttributeType] = []
    for (e, element) in [left, right] {
      guard case .attribute(let t) = element, t.isNumeric || t == .date else {
        throw error(
          .typeMismatch, "\(op.rawValue) needs numbers (or dates), found \(quote(e)) (\(describe(element)))",
          at: e.sourceOffset)
      }
      types.append(t)
    }
    let (a, b) = (types[0], types[1])
    switch (a == .date, b == .date) {
    case (true, true) where op == .subtract: return .double
    case (true, false) where op == .add || op == .subtract: return .date
    case (false, true) where op == .add: return .date
    case (false, false): break
    default:
      throw error(
        .typeMismatch, "cannot compute \(a.rawValue) \(op.rawValue) \(b.rawValue): dates add and subtract seconds",
        at: left.0.sourceOffset)
    }
    if a == .decimal || b == .decimal { return .decimal }
    if op == .divide { return .double }
    return a.isInteger && b.isInteger ? .int64 : .double
  }

  private func function(_ f: QueryFunction, _ arguments: [QueryExpression], at offset: Int?) throws(QueryError)
    -> Checked
  {
    var codes: [ValueCode] = []
    var elements: [QueryType.Element] = []
    for argument in arguments {
      let (code, element) = try singleValue(argument)
      codes.append(code)
      elements.append(element)
    }
    let result = try functionType(f, arguments, elements)
    return .value(.function(f, codes, offset: position(offset)), result)
  }

  /// The result type of a call whose arguments have the given types.
  private func functionType(_ f: QueryFunction, _ arguments: [QueryExpression], _ elements: [QueryType.Element])
    throws(QueryError) -> QueryType.Element
  {
    func require(_ accepts: (AttributeType) -> Bool, _ what: String) throws(QueryError) {
      for (argument, element) in zip(arguments, elements) {
        if case .attribute(let t) = element, accepts(t) { continue }
        if element == .null { continue }
        throw error(
          .typeMismatch, "\(f.rawValue) needs \(what), found \(quote(argument)) (\(describe(element)))",
          at: argument.sourceOffset)
      }
    }
    switch f {
    case .uppercase, .lowercase, .trim:
      try require(\.isText, "a string")
      return .attribute(.string)
    case .concat:
      return .attribute(.string)
    case .coalesce:
      var joined = QueryType.Element.null
      for (argument, element) in zip(arguments, elements) {
        guard let j = unify(joined, element) else {
          throw error(
            .typeMismatch, "coalesce needs arguments of one kind; \(quote(argument)) is \(describe(element))",
            at: argument.sourceOffset)
        }
        joined = j
      }
      return joined
    case .now:
      return .attribute(.date)
    case .uuid:
      return .attribute(.uuid)
    case .date:
      try require({ $0.isText || $0.isNumeric || $0 == .date }, "an ISO 8601 string or a number of seconds")
      if case .literal(.string(let s))? = arguments.first?.kind, ISO8601.parse(s) == nil {
        throw error(.typeMismatch, "'\(s)' is not an ISO 8601 date", at: arguments.first?.sourceOffset)
      }
      return .attribute(.date)
    case .number:
      try require({ $0.isText || $0.isNumeric }, "a string or a number")
      if case .literal(.string(let s))? = arguments.first?.kind, Double(s) == nil {
        throw error(.typeMismatch, "'\(s)' is not a number", at: arguments.first?.sourceOffset)
      }
      return .attribute(.double)
    case .length, .utf16length:
      try require({ $0.isText || $0 == .binary }, "a string or binary data")
      return .attribute(.int64)
    case .abs:
      try require(\.isNumeric, "a number")
      guard case .attribute(let t)? = elements.first else {
        throw error(.typeMismatch, "abs needs a number, found nil", at: arguments.first?.sourceOffset)
      }
      return .attribute(Self.promoted(t))
    }
  }
}

extension QueryLiteral {
  var value: Value? {
    switch self {
    case .null: nil
    case .boolean(let b): .boolean(b)
    case .integer(let n): .int64(n)
    case .double(let d): .double(d)
    case .string(let s): .string(s)
    }
  }

  var element: QueryType.Element {
    switch self {
    case .null: .null
    case .boolean: .attribute(.boolean)
    case .integer: .attribute(.int64)
    case .double: .attribute(.double)
    case .string: .attribute(.string)
    }
  }
}
