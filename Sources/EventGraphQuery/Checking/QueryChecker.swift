import EventGraphModel

/// Checks a syntax tree against a model and compiles it in the same walk.
///
/// Every key path is resolved to property IDs once, every comparison's operand types
/// are checked, constants are prepared (strings folded, patterns compiled). Errors
/// carry the position of the part at fault: the unknown name, the operator whose
/// operands do not fit, the `MATCHES` pattern that does not compile.
struct QueryChecker {
  let model: Model
  let entity: Entity
  let variables: [String: QueryType]
  let source: QuerySourceText?

  /// A checked expression: its code and its shape.
  enum Checked {
    case value(ValueCode, QueryType.Element)
    case values(ManyCode, QueryType.Element)
    case objects(ObjectsCode, EntityID)

    var type: QueryType {
      switch self {
      case .value(_, let e): QueryType(e)
      case .values(_, let e): QueryType(e, isToMany: true)
      case .objects(let path, let e): QueryType(.object(e), isToMany: path.isToMany)
      }
    }
  }

  // MARK: - Errors and positions

  func error(_ kind: QueryError.Kind, _ message: String, at utf8Offset: Int?) -> QueryError {
    QueryError(kind, message, offset: position(utf8Offset))
  }

  /// The `Character` offset runtime errors report.
  func position(_ utf8Offset: Int?) -> Int? { source?.characterOffset(utf8Offset) }

  /// An expression as error messages quote it (shortened when long).
  func quote(_ e: QueryExpression) -> String {
    let text = e.description
    let short = text.count <= 40 ? text : text.prefix(37) + "..."
    if case .literal = e.kind { return short }  // already quoted, or a number
    return "'\(short)'"
  }

  func describe(_ element: QueryType.Element) -> String {
    switch element {
    case .null: "nil"
    case .attribute(let t): t.rawValue
    case .object(let e): "\(model.entity(e)?.name ?? "#\(e.rawValue)") object"
    }
  }

  // MARK: - Predicates

  func predicate(_ p: QueryPredicate) throws(QueryError) -> PredicateCode {
    switch p.kind {
    case .constant(let b): .constant(b)
    case .not(let operand): .not(try predicate(operand))
    case .and(let operands): try junction(operands, isAnd: true)
    case .or(let operands): try junction(operands, isAnd: false)
    case .comparison(let c): try comparison(c)
    }
  }

  private func junction(_ operands: [QueryPredicate], isAnd: Bool) throws(QueryError) -> PredicateCode {
    var codes: [PredicateCode] = []
    for operand in operands { codes.append(try predicate(operand)) }
    return Self.balanced(codes[...], empty: isAnd, isAnd ? PredicateCode.and : PredicateCode.or)
  }

  /// Operands joined into a balanced binary tree, in order: a chain of 100,000 `AND`s
  /// evaluates 17 levels deep.
  static func balanced(
    _ codes: ArraySlice<PredicateCode>, empty: Bool, _ join: (PredicateCode, PredicateCode) -> PredicateCode
  ) -> PredicateCode {
    guard codes.count > 1 else { return codes.first ?? .constant(empty) }
    let middle = codes.startIndex + codes.count / 2
    return join(balanced(codes[..<middle], empty: empty, join), balanced(codes[middle...], empty: empty, join))
  }

  private func comparison(_ c: QueryComparison) throws(QueryError) -> PredicateCode {
    let left = try expression(c.left)
    if let quantifier = c.quantifier {
      guard case .values(let collection, let element) = left else {
        if case .objects(let path, _) = left, path.isToMany {
          throw error(
            .typeMismatch,
            "\(quantifier.rawValue) compares values: follow \(quote(c.left)) to one of its attributes",
            at: c.left.sourceOffset)
        }
        throw error(
          .toManyKeyPath, "\(quantifier.rawValue) needs a to-many key path on its left, found \(quote(c.left))",
          at: c.left.sourceOffset)
      }
      return .quantified(quantifier, collection, try rightOperand(c, leftElement: element))
    }
    switch left {
    case .values:
      throw toManyError(c.left)
    case .objects(let path, _):
      guard !path.isToMany else { throw toManyError(c.left) }
      guard c.op == .equal || c.op == .notEqual, case .literal(.null) = c.right.kind else {
        throw error(
          .typeMismatch, "\(quote(c.left)) is an object: compare it with nil only, or compare one of its attributes",
          at: c.operatorOffset ?? c.left.sourceOffset)
      }
      return .objectIsNil(path, isNil: c.op == .equal)
    case .value(let code, let element):
      switch try rightOperand(c, leftElement: element) {
      case .constant(let test):
        guard case .attribute(let id) = code else { return .valueTest(code, test) }
        if case .isNil(let isNil) = test { return .attributeIsNil(id, isNil: isNil) }
        return .attributeTest(id, test)
      case .value(let op, let options, let right):
        return .compare(code, op, options, right)
      case .collection(let options, let collection):
        return .member(code, options, collection)
      case .bounds(let options, let low, let high):
        return .between(code, options, low, high)
      }
    }
  }

  func toManyError(_ e: QueryExpression) -> QueryError {
    if case .list = e.kind {
      return error(
        .toManyKeyPath, "a {…} list is a collection: it belongs on the right of IN or BETWEEN", at: e.sourceOffset)
    }
    return error(
      .toManyKeyPath,
      "\(quote(e)) is a to-many key path: use ANY, ALL or NONE, @count, or put it on the right of IN",
      at: e.sourceOffset)
  }

  /// The right side of a comparison, checked against the left side's element type.
  private func rightOperand(_ c: QueryComparison, leftElement: QueryType.Element) throws(QueryError) -> RightOperand {
    let at = c.operatorOffset ?? c.left.sourceOffset
    switch c.op {
    case .in:
      let right = try expression(c.right)
      guard case .values(let collection, let element) = right else {
        if case .objects(let path, _) = right, path.isToMany {
          throw error(
            .typeMismatch, "\(quote(c.right)) is a collection of objects: IN compares values, e.g. of an attribute",
            at: c.right.sourceOffset)
        }
        throw error(
          .typeMismatch,
          "IN needs a collection on its right ({…}, a to-many key path or a collection variable), found \(quote(c.right))",
          at: c.right.sourceOffset)
      }
      try checkOperands(leftElement, element, .equal, c, at: at)
      if case .list(let items) = collection, let constants = literals(items) {
        let prepared = constants.map { (v: Value?) -> Value? in
          guard let v else { return nil }
          guard !c.options.isEmpty, let t = v.text else { return adapt(v, to: leftElement) }
          return .string(StringMatching.fold(t, c.options))
        }
        return .constant(.member(prepared, c.options))
      }
      return .collection(c.options, collection)
    case .between:
      guard case .list(let bounds) = c.right.kind, bounds.count == 2 else {
        throw error(.syntax, "BETWEEN needs exactly two values, {low, high}", at: c.right.sourceOffset)
      }
      let (low, lowElement) = try singleValue(bounds[0])
      let (high, highElement) = try singleValue(bounds[1])
      try checkOperands(leftElement, lowElement, .between, c, at: at)
      try checkOperands(leftElement, highElement, .between, c, at: at)
      if let constants = literals([low, high]) {
        guard let lo = constants[0], let hi = constants[1] else { return .constant(.always(false)) }
        return .constant(.between(adapt(lo, to: leftElement), adapt(hi, to: leftElement), c.options))
      }
      return .bounds(c.options, low, high)
    default:
      let (right, rightElement) = try singleValue(c.right)
      try checkOperands(leftElement, rightElement, c.op, c, at: at)
      guard case .literal(let constant) = right else { return .value(c.op, c.options, right) }
      return .constant(try constantTest(c, constant, leftElement: leftElement))
    }
  }

  /// The values of `codes` when every one is a literal.
  private func literals(_ codes: [ValueCode]) -> [Value?]? {
    var values: [Value?] = []
    for code in codes {
      guard case .literal(let v) = code else { return nil }
      values.append(v)
    }
    return values
  }
}
