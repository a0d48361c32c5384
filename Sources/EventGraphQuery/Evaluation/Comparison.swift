import EventGraphModel
import Foundation

/// The comparison operators on computed values, with NSPredicate's nil rules:
/// `nil == nil` is true, `x == nil` is true only when `x` is nil, an ordering with a nil
/// operand is false, a string operator with a nil operand is false.
@usableFromInline
enum Comparison {
  /// `left op[options] right`, for every operator but `IN` and `BETWEEN`.
  ///
  /// - Throws: ``QueryError`` when a computed `MATCHES` pattern is not a valid
  ///   regular expression.
  @usableFromInline
  static func holds(_ left: Value?, _ op: QueryOperator, _ options: QueryStringOptions, _ right: Value?) throws
    -> Bool
  {
    switch op {
    case .equal:
      return equal(left, right, options)
    case .notEqual:
      return !equal(left, right, options)
    case .less, .lessOrEqual, .greater, .greaterOrEqual:
      guard let left, let right, let order = order(left, right, options) else { return false }
      return satisfies(order, op)
    case .beginsWith, .endsWith, .contains, .like, .matches:
      guard let l = left?.text, let r = right?.text else { return false }
      switch op {
      case .like:
        return LikeMatcher(r, options: options).matches(l)
      case .matches:
        guard let regex = RegexMatcher(r, options: options) else {
          throw QueryError(.invalidRegularExpression, "invalid regular expression '\(r)'", offset: nil)
        }
        return regex.matches(l)
      default:
        return StringMatching.test(op, StringMatching.fold(l, options), StringMatching.fold(r, options))
      }
    case .in, .between:
      return false
    }
  }

  /// Equality under the nil rules, folding strings under `options`.
  @usableFromInline
  static func equal(_ left: Value?, _ right: Value?, _ options: QueryStringOptions) -> Bool {
    guard let left, let right else { return left == nil && right == nil }
    if !options.isEmpty, let l = left.text, let r = right.text {
      return StringMatching.fold(l, options) == StringMatching.fold(r, options)
    }
    return ValueComparison.equal(left, right)
  }

  /// Order, folding strings under `options`.
  @usableFromInline
  static func order(_ left: Value, _ right: Value, _ options: QueryStringOptions) -> ComparisonResult? {
    if !options.isEmpty, let l = left.text, let r = right.text {
      return ValueComparison.order(.string(StringMatching.fold(l, options)), .string(StringMatching.fold(r, options)))
    }
    return ValueComparison.order(left, right)
  }

  @usableFromInline
  static func satisfies(_ order: ComparisonResult, _ op: QueryOperator) -> Bool {
    switch op {
    case .less: order == .orderedAscending
    case .lessOrEqual: order != .orderedDescending
    case .greater: order == .orderedDescending
    case .greaterOrEqual: order != .orderedAscending
    case .equal: order == .orderedSame
    case .notEqual: order != .orderedSame
    default: false
    }
  }

  /// `value IN items`: some item equal under `options`.
  @usableFromInline
  static func isMember(_ value: Value?, of items: [Value?], _ options: QueryStringOptions) -> Bool {
    items.contains { equal(value, $0, options) }
  }

  /// `low <= value <= high`; false when any is nil or unordered.
  @usableFromInline
  static func isBetween(_ value: Value?, _ low: Value?, _ high: Value?, _ options: QueryStringOptions) -> Bool {
    guard let value, let low, let high, let a = order(low, value, options), let b = order(value, high, options)
    else { return false }
    return a != .orderedDescending && b != .orderedDescending
  }
}

extension Value {
  /// The text of a string or URI value.
  @usableFromInline
  var text: String? {
    switch self {
    case .string(let s), .uri(let s): s
    default: nil
    }
  }
}
