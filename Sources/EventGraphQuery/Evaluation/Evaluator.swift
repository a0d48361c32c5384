import EventGraphModel

/// Evaluation of compiled code against any ``QueryObjectSource``.
///
/// The walk is `@inlinable` so that it is specialized for the caller's source type
/// (the store, the migration engine): no existential boxes, no name lookups, no
/// allocation for comparisons of attributes with constants.

extension PredicateCode {
  /// The common cases here; the rest in functions of their own, so that each level of
  /// a nested predicate puts a small frame on the stack.
  @inlinable
  func evaluate<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> Bool {
    switch self {
    case .attributeIsNil(let id, let isNil):
      return (try c.source.value(of: object, attribute: id) == nil) == isNil
    case .attributeTest(let id, let test):
      return test.matches(try c.source.value(of: object, attribute: id))
    case .or(let left, let right):
      return try left.evaluate(object, c) || right.evaluate(object, c)
    case .and(let left, let right):
      return try left.evaluate(object, c) && right.evaluate(object, c)
    case .not(let p):
      return try !p.evaluate(object, c)
    case .constant(let b):
      return b
    case .valueTest(let value, let test):
      return test.matches(try value.evaluate(object, c))
    default:
      return try evaluateOther(object, c)
    }
  }

  @inlinable
  func evaluateOther<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> Bool {
    switch self {
    case .compare(let left, let op, let options, let right):
      return try Comparison.holds(try left.evaluate(object, c), op, options, try right.evaluate(object, c))
    case .member(let value, let options, let collection):
      return Comparison.isMember(try value.evaluate(object, c), of: try collection.evaluate(object, c), options)
    case .between(let value, let options, let low, let high):
      return Comparison.isBetween(
        try value.evaluate(object, c), try low.evaluate(object, c), try high.evaluate(object, c), options)
    case .quantified(let quantifier, let collection, let right):
      return try Self.quantified(quantifier, collection, right, object, c)
    case .objectIsNil(let path, let isNil):
      return (try path.single(object, c) == nil) == isNil
    default:
      return try evaluate(object, c)
    }
  }

  @inlinable
  static func quantified<S: QueryObjectSource>(
    _ quantifier: QueryQuantifier, _ collection: ManyCode, _ right: RightOperand, _ object: S.Object,
    _ c: EvaluationContext<S>
  ) throws -> Bool {
    let values = try collection.evaluate(object, c)
    let test = try right.bind(object, c)
    switch quantifier {
    case .anyOf:
      for v in values where try test.matches(v) { return true }
      return false
    case .allOf:
      for v in values where try !test.matches(v) { return false }
      return true
    case .noneOf:
      for v in values where try test.matches(v) { return false }
      return true
    }
  }
}

extension RightOperand {
  /// The right side with its computed parts computed.
  @inlinable
  func bind<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> BoundRightOperand {
    switch self {
    case .constant(let test): .constant(test)
    case .value(let op, let options, let code): .value(op, options, try code.evaluate(object, c))
    case .collection(let options, let code): .collection(options, try code.evaluate(object, c))
    case .bounds(let options, let low, let high):
      .bounds(options, try low.evaluate(object, c), try high.evaluate(object, c))
    }
  }
}

/// The right side of a quantified comparison, ready to test each element.
@usableFromInline
enum BoundRightOperand {
  case constant(ConstantTest)
  case value(QueryOperator, QueryStringOptions, Value?)
  case collection(QueryStringOptions, [Value?])
  case bounds(QueryStringOptions, Value?, Value?)

  @usableFromInline
  func matches(_ element: Value?) throws -> Bool {
    switch self {
    case .constant(let test): test.matches(element)
    case .value(let op, let options, let right): try Comparison.holds(element, op, options, right)
    case .collection(let options, let items): Comparison.isMember(element, of: items, options)
    case .bounds(let options, let low, let high): Comparison.isBetween(element, low, high, options)
    }
  }
}

extension ValueCode {
  @inlinable
  func evaluate<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> Value? {
    switch self {
    case .literal(let v):
      return v
    case .attribute(let id):
      return try c.source.value(of: object, attribute: id)
    case .attributeOf(let path, let id):
      guard let target = try path.single(object, c) else { return nil }
      return try c.source.value(of: target, attribute: id)
    case .arithmetic(let op, let left, let right, let offset):
      return try Arithmetic.apply(op, try left.evaluate(object, c), try right.evaluate(object, c), offset: offset)
    case .negation(let operand, let offset):
      return try Arithmetic.negate(try operand.evaluate(object, c), offset: offset)
    default:
      return try evaluateOther(object, c)
    }
  }

  @inlinable
  func evaluateOther<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> Value? {
    switch self {
    case .variable(let name, let offset):
      guard case .value(let v) = try c.variable(name, offset: offset) else {
        throw EvaluationContext<S>.wrongShape(name, "one value", offset: offset)
      }
      return v
    case .countObjects(let path):
      return .int64(Int64(try path.objects(object, c).count))
    case .countValues(let collection):
      return .int64(Int64(try collection.evaluate(object, c).count))
    case .aggregate(let op, let collection, let type, let offset):
      return try Aggregates.apply(op, to: try collection.evaluate(object, c), type: type, offset: offset)
    case .function(.coalesce, let arguments, _):
      for argument in arguments {
        if let v = try argument.evaluate(object, c) { return v }
      }
      return nil
    case .function(let f, let arguments, let offset):
      var values: [Value?] = []
      values.reserveCapacity(arguments.count)
      for argument in arguments { values.append(try argument.evaluate(object, c)) }
      return try Functions.call(f, values, offset: offset)
    default:
      return try evaluate(object, c)
    }
  }
}

extension ManyCode {
  @inlinable
  func evaluate<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> [Value?] {
    switch self {
    case .attributeOf(let path, let id):
      let objects = try path.objects(object, c)
      var values: [Value?] = []
      values.reserveCapacity(objects.count)
      for o in objects { values.append(try c.source.value(of: o, attribute: id)) }
      return values
    case .list(let items):
      var values: [Value?] = []
      values.reserveCapacity(items.count)
      for item in items { values.append(try item.evaluate(object, c)) }
      return values
    case .variable(let name, let offset):
      switch try c.variable(name, offset: offset) {
      case .values(let vs): return vs
      case .value(let v): return [v]
      default: throw EvaluationContext<S>.wrongShape(name, "values", offset: offset)
      }
    }
  }
}

extension ObjectsCode {
  /// The one object a to-one path reaches, or `nil`.
  @inlinable
  func single<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> S.Object? {
    var current: S.Object
    switch root {
    case .object:
      current = object
    case .variable(let name, let offset):
      switch try c.variable(name, offset: offset) {
      case .object(let o): current = o
      case .objects(let os):
        guard let first = os.first else { return nil }
        current = first
      default: throw EvaluationContext<S>.wrongShape(name, "an object", offset: offset)
      }
    case .subquery(let collection, let name, let predicate):
      guard let first = try Self.kept(collection, name, predicate, object, c).first else { return nil }
      current = first
    }
    var i = steps.startIndex
    while i < steps.endIndex {
      // An element step follows the relationship it picks from (the checker sees to it).
      guard case .follow(let relationship) = steps[i] else { return nil }
      i += 1
      let next: S.Object?
      if i < steps.endIndex, case .element(let index) = steps[i] {
        next = try c.source.related(to: current, relationship: relationship, at: index)
        i += 1
      } else {
        next = try c.source.related(to: current, relationship: relationship).first
      }
      guard let next else { return nil }
      current = next
    }
    return current
  }

  /// Every object the path reaches, in order, through to-many steps.
  @inlinable
  func objects<S: QueryObjectSource>(_ object: S.Object, _ c: EvaluationContext<S>) throws -> [S.Object] {
    var current: [S.Object]
    switch root {
    case .object:
      current = [object]
    case .variable(let name, let offset):
      switch try c.variable(name, offset: offset) {
      case .object(let o): current = [o]
      case .objects(let os): current = os
      default: throw EvaluationContext<S>.wrongShape(name, "objects", offset: offset)
      }
    case .subquery(let collection, let name, let predicate):
      current = try Self.kept(collection, name, predicate, object, c)
    }
    var i = steps.startIndex
    while i < steps.endIndex {
      let step = steps[i]
      i += 1
      guard case .follow(let step) = step else {
        if case .element(let index) = step { current = index.pick(current).map { [$0] } ?? [] }
        continue
      }
      // One place of one object's ordered list: reached without reading the whole list.
      if current.count == 1, i < steps.endIndex, case .element(let index) = steps[i] {
        current = try c.source.related(to: current[0], relationship: step, at: index).map { [$0] } ?? []
        i += 1
      } else if current.count == 1 {
        current = try c.source.related(to: current[0], relationship: step)
      } else {
        var next: [S.Object] = []
        for o in current { next.append(contentsOf: try c.source.related(to: o, relationship: step)) }
        current = next
      }
    }
    return current
  }
}

extension ObjectsCode {
  /// The elements of `collection` for which `predicate` holds on `object` with `$name`
  /// bound to the element: what `SUBQUERY(collection, $name, predicate)` keeps.
  @inlinable
  static func kept<S: QueryObjectSource>(
    _ collection: ObjectsCode, _ name: String, _ predicate: PredicateCode, _ object: S.Object,
    _ c: EvaluationContext<S>
  ) throws -> [S.Object] {
    var variables = c.variables
    var kept: [S.Object] = []
    for element in try collection.objects(object, c) {
      variables[name] = .object(element)
      if try predicate.evaluate(object, EvaluationContext(source: c.source, variables: variables)) {
        kept.append(element)
      }
    }
    return kept
  }
}

extension QueryElementIndex {
  /// The element this index names in `elements`; `nil` past either end.
  ///
  /// Where Foundation raises, a predicate answers no object. A source that implements
  /// ``QueryObjectSource/related(to:relationship:at:)`` itself falls back on it for the
  /// lists it cannot index.
  @inlinable
  public func pick<Element>(_ elements: [Element]) -> Element? {
    switch self {
    case .first: elements.first
    case .last: elements.last
    case .at(let n): n >= 0 && n < elements.count ? elements[Int(n)] : nil
    }
  }
}
