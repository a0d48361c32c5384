extension QueryChecker {
  func expression(_ e: QueryExpression) throws(QueryError) -> Checked {
    switch e.kind {
    case .literal(let literal):
      return .value(.literal(literal.value), literal.element)
    case .keyPath(let path):
      return try keyPath(path, at: e.sourceOffset)
    case .list(let items):
      var codes: [ValueCode] = []
      var element = QueryType.Element.null
      for item in items {
        let (code, itemElement) = try singleValue(item)
        guard let joined = unify(element, itemElement) else {
          throw error(
            .typeMismatch, "\(quote(item)) (\(describe(itemElement))) does not fit with the list's \(describe(element)) values",
            at: item.sourceOffset)
        }
        element = joined
        codes.append(code)
      }
      return .values(.list(codes), element)
    case .arithmetic(let op, let left, let right):
      let (l, le) = try singleValue(left)
      let (r, re) = try singleValue(right)
      let type = try arithmeticType(op, (left, le), (right, re))
      return .value(.arithmetic(op, l, r, offset: position(e.sourceOffset)), .attribute(type))
    case .negation(let operand):
      let (code, element) = try singleValue(operand)
      guard case .attribute(let t) = element, t.isNumeric else {
        throw error(.typeMismatch, "unary minus needs a number, found \(quote(operand)) (\(describe(element)))", at: operand.sourceOffset)
      }
      return .value(.negation(code, offset: position(e.sourceOffset)), .attribute(Self.promoted(t)))
    case .function(let f, let arguments):
      return try function(f, arguments, at: e.sourceOffset)
    }
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
    _ op: ArithmeticOperator, _ left: (QueryExpression, QueryType.Element), _ right: (QueryExpression, QueryType.Element)
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
    func require(_ accepts: (AttributeType) -> Bool, _ what: String) throws(QueryError) {
      for (argument, element) in zip(arguments, elements) {
        if case .attribute(let t) = element, accepts(t) { continue }
        if element == .null { continue }
        throw error(
          .typeMismatch, "\(f.rawValue) needs \(what), found \(quote(argument)) (\(describe(element)))",
          at: argument.sourceOffset)
      }
    }
    let result: QueryType.Element
    switch f {
    case .uppercase, .lowercase, .trim:
      try require(\.isText, "a string")
      result = .attribute(.string)
    case .concat:
      result = .attribute(.string)
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
      result = joined
    case .now:
      result = .attribute(.date)
    case .uuid:
      result = .attribute(.uuid)
    case .length:
      try require({ $0.isText || $0 == .binary }, "a string or binary data")
      result = .attribute(.int64)
    case .abs:
      try require(\.isNumeric, "a number")
      guard case .attribute(let t) = elements[0] else {
        throw error(.typeMismatch, "abs needs a number, found nil", at: arguments[0].sourceOffset)
      }
      result = .attribute(Self.promoted(t))
    }
    return .value(.function(f, codes, offset: position(offset)), result)
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
