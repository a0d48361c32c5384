import EventGraphModel
import Foundation

/// The part of a predicate that an attribute index could serve: comparisons of one indexed
/// attribute (by its ``PropertyID`` in the entity asked about) with constants, joined as
/// the predicate joins them.
///
/// A store reads it to choose index ranges instead of scanning an entity: the objects in
/// the ranges of an ``and(_:)``'s best condition, or of every condition of an ``or(_:)``,
/// include every object the predicate can match (the predicate is still evaluated on each
/// of them). Bounds are values of the attribute's own type, converted exactly from the
/// predicate's literals and `$variables`; a comparison whose constant does not convert
/// exactly (`age == 1.5` on an integer) is left to the evaluator and is not a condition.
public enum IndexCondition: Sendable, Equatable {
  /// The attribute lies in the range: an equality (a range of one value), `<`, `<=`, `>`,
  /// `>=` (open on one side; bounds are inclusive, the evaluator drops an excluded bound),
  /// `BETWEEN`.
  case range(PropertyID, IndexRange)
  /// The attribute is one of the values: `IN`.
  case points(PropertyID, [Value])
  /// The attribute, a string, begins with the text.
  case prefix(PropertyID, String)
  /// Every condition holds: the clauses of an `AND` that are conditions (at least one).
  indirect case and([IndexCondition])
  /// One of the conditions holds: an `OR` whose clauses are all conditions.
  indirect case or([IndexCondition])
}

/// A range of an attribute's values, bounds inclusive; `nil` is open.
public struct IndexRange: Sendable, Equatable {
  /// The lowest value in the range; `nil` is open.
  public let low: Value?
  /// The highest value in the range; `nil` is open.
  public let high: Value?
  /// Whether the range is a single value: an equality.
  public let isPoint: Bool

  init(low: Value?, high: Value?) {
    self.low = low
    self.high = high
    isPoint = false
  }

  init(point: Value) {
    low = point
    high = point
    isPoint = true
  }
}

extension CompiledPredicate {
  /// What an attribute index could serve of the predicate, with `variables` bound
  /// (`age == $a` is read as `age == 30` when `a` is 30); `nil` when nothing can be.
  ///
  /// Only comparisons of a plain indexed attribute of the predicate's own entity (no key
  /// path through a relationship, no quantifier, no `[c]`/`[d]` options) with constants are
  /// conditions: `==`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`, and `BEGINSWITH` on a string.
  public func indexCondition(in entity: Entity, variables: [String: Value] = [:]) -> IndexCondition? {
    IndexConditionReader(entity: entity, variables: variables).condition(predicate)
  }
}

/// Reads a predicate's tree for ``IndexCondition``s.
private struct IndexConditionReader {
  let entity: Entity
  let variables: [String: Value]

  func condition(_ p: QueryPredicate) -> IndexCondition? {
    switch p.kind {
    case .comparison(let c): return comparison(c)
    case .and(let clauses):
      let served = clauses.compactMap(condition)
      return served.isEmpty ? nil : served.count == 1 ? served[0] : .and(served)
    case .or(let clauses):
      var served: [IndexCondition] = []
      for clause in clauses {
        guard let c = condition(clause) else { return nil }
        served.append(c)
      }
      return served.isEmpty ? nil : .or(served)
    default: return nil
    }
  }

  private func comparison(_ c: QueryComparison) -> IndexCondition? {
    guard c.quantifier == nil, c.options.isEmpty else { return nil }
    var op = c.op
    var keyPath = c.left
    var other = c.right
    if constant(c.left) != nil, case .keyPath(let p) = c.right.kind, p.variable == nil {
      keyPath = c.right
      other = c.left
      switch op {
      case .less: op = .greater
      case .lessOrEqual: op = .greaterOrEqual
      case .greater: op = .less
      case .greaterOrEqual: op = .lessOrEqual
      case .equal: break
      default: return nil
      }
    }
    guard case .keyPath(let path) = keyPath.kind, path.variable == nil, path.components.count == 1,
      case .property(let name) = path.components[0], let id = entity.propertyID(named: name),
      entity.indexed[Int(id.rawValue)], let type = entity.attributeTypes[Int(id.rawValue)]
    else { return nil }
    // By identifier and type alone: the attribute itself is not copied out of the model.
    func value(_ e: QueryExpression) -> Value? {
      switch constant(e) {
      case .literal(let l): Self.value(l, type)
      case .bound(let v): Self.value(v, type)
      case nil: nil
      }
    }
    func range(_ low: Value?, _ high: Value?) -> IndexCondition { .range(id, IndexRange(low: low, high: high)) }
    switch op {
    case .equal: return value(other).map { .range(id, IndexRange(point: $0)) }
    case .less, .lessOrEqual: return value(other).map { range(nil, $0) }
    case .greater, .greaterOrEqual: return value(other).map { range($0, nil) }
    case .between:
      guard case .list(let items) = other.kind, items.count == 2, let lo = value(items[0]), let hi = value(items[1])
      else { return nil }
      return range(lo, hi)
    case .beginsWith:
      switch constant(other) {
      case .literal(.string(let p)), .bound(.string(let p)): return type == .string ? .prefix(id, p) : nil
      default: return nil
      }
    case .in:
      guard case .list(let items) = other.kind else { return nil }
      let points = items.compactMap(value)
      guard points.count == items.count else { return nil }
      return .points(id, points)
    default:
      return nil
    }
  }

  /// A comparison's constant side: a literal, or a `$variable` alone with its bound value.
  private enum Constant {
    case literal(QueryLiteral)
    case bound(Value)
  }

  private func constant(_ e: QueryExpression) -> Constant? {
    switch e.kind {
    case .literal(let l): return .literal(l)
    case .keyPath(let p):
      guard let name = p.variable, p.components.isEmpty, let v = variables[name] else { return nil }
      return .bound(v)
    default: return nil
    }
  }

  /// A variable's value as a value of the attribute's type, when it converts exactly.
  ///
  /// The same type, or an integer that fits the attribute's integer type, a decimal, or a
  /// double (up to 2^53). Anything else (a double against an integer, a string against a date)
  /// leaves the comparison to the evaluator on every object.
  private static func value(_ v: Value, _ type: AttributeType) -> Value? {
    if v.type == type { return v.isFinite ? v : nil }
    let n: Int64
    switch v {
    case .int16(let x): n = Int64(x)
    case .int32(let x): n = Int64(x)
    case .int64(let x): n = x
    default: return nil
    }
    switch type {
    case .int16, .int32, .int64, .decimal: return try? v.converted(to: type)
    case .double: return n.magnitude <= 1 << 53 ? .double(Double(n)) : nil
    default: return nil
    }
  }

  /// A literal as a value of the attribute's type, when it converts exactly.
  private static func value(_ l: QueryLiteral, _ type: AttributeType) -> Value? {
    switch (l, type) {
    case (.string(let s), .string): return .string(s)
    case (.boolean(let b), .boolean): return .boolean(b)
    case (.integer(let n), _) where type.isNumeric: return try? Value.int64(n).converted(to: type)
    case (.double(let d), .double), (.double(let d), .float):
      return try? Value.double(d).converted(to: type)
    case (.double(let d), .decimal):
      // As the evaluator reads a literal for a decimal: from its shortest text, so 0.1 is 0.1.
      return Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
    default: return nil
    }
  }
}
